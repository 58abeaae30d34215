"""The small syntax tree both parser backends (tree-sitter, mvdan/sh) produce.

It keeps only what the model needs: statements, and-or lists, pipelines, compounds with the
context they give (loop, condition, function, subshell), simple commands with unquoted words,
assignments and redirections. Offsets are character offsets into the text that was parsed.
Nodes are never mutated after a backend built them: parsed levels are cached and shared.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Literal

SubstKind = Literal["$(", "`", "<(", ">("]
CompoundKind = Literal["group", "subshell", "loop", "if", "case", "function", "test", "arith"]


@dataclass(slots=True)
class Subst:
    """A command or process substitution inside a word."""

    kind: SubstKind
    body: Seq
    raw: str = ""
    """Its source text (``$(pgrep -f x)``)."""


@dataclass(slots=True)
class Word:
    text: str
    """The value after quote removal; expansions kept as their source text."""
    raw: str
    """The source text."""
    start: int
    end: int
    dynamic: bool = False
    """Holds ``$VAR``, ``$(…)``, backticks, an unquoted glob or brace expansion."""
    quoted: bool = False
    """Some part was quoted or escaped (a heredoc delimiter like ``'EOF'`` or ``\\EOF``)."""
    substs: tuple[Subst, ...] = ()
    """A tuple, empty for almost every word: one allocation fewer per word on the hot path."""


@dataclass(slots=True)
class Redir:
    op: str
    """``>``, ``>>``, ``<``, ``&>``, ``&>>``, ``>&``, ``<&``, ``<>``, ``>|``, ``<<``, ``<<-``, ``<<<``."""
    fd: int | None = None
    target: Word | None = None
    """The file or fd word; the here-string word; the delimiter word for a heredoc."""
    heredoc: str | None = None
    """The heredoc body as written (delimiter line excluded)."""
    heredoc_quoted: bool = False
    """The delimiter was quoted, so the body is literal (no expansion, no backslash removal)."""


@dataclass(slots=True)
class Cmd:
    words: list[Word]
    assigns: list[tuple[str, Word]] = field(default_factory=list)
    """``VAR=value`` words before the command name (or the whole statement when there is none)."""
    redirs: list[Redir] = field(default_factory=list)
    start: int = 0
    end: int = 0
    background: bool = False
    """Set by the tree-sitter shim when ``&`` was swallowed by a heredoc line (``cmd <<EOF &``)."""


@dataclass(slots=True)
class Pipeline:
    members: list[Node]
    ops: list[str]
    """``|`` or ``|&`` before each member after the first."""


@dataclass(slots=True)
class AndOr:
    items: list[Node]
    ops: list[str]
    """``&&`` or ``||`` before each item after the first."""


@dataclass(slots=True)
class Compound:
    kind: CompoundKind
    parts: list[tuple[str | None, Seq]]
    """Bodies in execution order, each with the context it adds (``condition`` for an if test,
    ``loop`` for a loop body…), or None."""
    words: list[Word] = field(default_factory=list)
    """Words of the header (``for x in WORDS``, ``case WORD``, test operands): their
    substitutions run before the bodies."""
    redirs: list[Redir] = field(default_factory=list)
    """Redirections of the whole compound; they apply to every command inside."""
    name: str | None = None
    start: int = 0
    end: int = 0


@dataclass(slots=True)
class Seq:
    """Statements run one after the other. ``seps[i]`` ends ``items[i]``: ``;``, ``&``
    (background), ``\\n``, or ``""`` for the last one."""

    items: list[Node] = field(default_factory=list)
    seps: list[str] = field(default_factory=list)


Node = Cmd | Pipeline | AndOr | Compound | Seq


def splice(items: list[Node], ops: list[str], node: Node, op: str, same: type[Pipeline] | type[AndOr]) -> None:
    """Append ``node`` to a chain joined by ``op``; a chain of the same kind is spliced in flat
    (``a | (b | c)`` is ``a | b | c``), as both parsers nest binary operators."""
    if items:
        ops.append(op)
    if isinstance(node, Pipeline) and same is Pipeline:
        items.extend(node.members)
        ops.extend(node.ops)
    elif isinstance(node, AndOr) and same is AndOr:
        items.extend(node.items)
        ops.extend(node.ops)
    else:
        items.append(node)


class CharOffsets:
    """Byte offset → character offset in ``text`` (identity for ASCII)."""

    __slots__ = ("_n", "_starts", "_text_len")

    def __init__(self, text: str, src: bytes) -> None:
        self._n = len(src)
        self._text_len = len(text)
        self._starts: list[int] | None = None
        if len(src) != len(text):
            starts, pos = [], 0
            for ch in text:
                starts.append(pos)
                o = ord(ch)
                pos += 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
            self._starts = starts

    @property
    def identity(self) -> bool:
        return self._starts is None

    def __call__(self, byte_off: int) -> int:
        if self._starts is None:
            return byte_off
        if byte_off >= self._n:
            return self._text_len
        return max(0, bisect_right(self._starts, byte_off) - 1)
