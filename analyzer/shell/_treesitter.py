"""tree-sitter-bash → the small syntax tree, with the shim for the grammar's known bugs and the
self-check of shell-semantics §4 (appendix B) folded into the same walk.

Shim (§4 step 2):
  (a) a ``redirected_statement`` whose body is a list or pipeline: the redirects bind to its last
      command (tree-sitter-bash #345);
  (b) a ``file_redirect`` with several destinations: the first is the target, the rest go back
      into argv (#233);
  (c) inside ``heredoc_redirect``: nested ``file_redirect`` s belong to the command, a nested
      ``pipeline`` / ``&&`` tail is the rest of the line, an ``ERROR`` holding only ``&`` means
      background;
  (d) ``cat <<EOF | X`` (heredoc to X) is done where pipelines are flattened (``_lower``).

Self-check: the result is *suspect* when the tree has an ERROR/MISSING node, a ``list`` is a
direct child of a ``pipeline`` (#347 and the ``a|b|c && d`` precedence bug), or text between
the children of a command / redirect / declaration / heredoc first line is not blank (a token no
node covers: the dropped ``-`` of ``python3 - <<'PY'``, a line glued onto a command).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from analyzer.shell import _lexical
from analyzer.shell._ast import AndOr, CharOffsets, Cmd, Compound, Pipeline, Redir, Seq, Subst, Word, splice
from analyzer.shell._ast import Node as AstNode
from analyzer.shell._unquote import decode_ansi_c, has_glob, unescape_dq, unescape_word

# one parser per process: building it costs more than parsing a command
_PARSER = Parser(Language(tree_sitter_bash.language()))

_GAP_OK = re.compile(rb"(?:[ \t]|\\\r?\n)*")
_ESCAPED = re.compile(r"\\.", re.DOTALL)
MAX_DEPTH = 60
"""Nested lists (subshells, groups, ``$( … )``, loop bodies) converted as a tree; below this
depth the commands are read flat by ``_lexical`` and the level is ``truncated``: deeper than
any real command, far from Python's stack limit."""

_BLANK = re.compile(r"[ \t\n]")


def _joined(a: Word, b: Word) -> Word:
    """Two adjacent words as the one word the shell sees."""
    return Word(text=a.text + b.text, raw=a.raw + b.raw, start=a.start, end=b.end,
                dynamic=a.dynamic or b.dynamic, quoted=a.quoted or b.quoted, substs=a.substs + b.substs)


_SEPARATORS = {";", ";;", ";&", ";;&", "&"}
_REDIRECT_TYPES = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_FILE_OPS = {"<", ">", ">>", "&>", "&>>", "<&", ">&", ">|", "<>"}
_STATEMENT_IN_COMMAND = {"subshell", "compound_statement", "pipeline", "list", "redirected_statement"}
_SUBST_OPEN = {"$(": "$(", "`": "`", "$`": "`", "<(": "<(", ">(": ">("}


@dataclass(slots=True)
class TsResult:
    seq: Seq
    problems: list[str] = field(default_factory=list)
    """Why the self-check flags the tree; empty when it looks right."""
    has_error: bool = False
    truncated: bool = False
    """Lists nested deeper than ``MAX_DEPTH`` were read flat (``_lexical``)."""


# tree-sitter-bash 0.25's scanner calls C `isdigit()` on the character after `{` (and after
# `{1..`) when it looks for a brace expansion: with a non-ASCII code point that indexes past
# glibc's ctype table and can segfault the process (e.g. "{" + chr(0xEE7A8)). Such characters are
# word characters to the grammar either way, so the bytes tree-sitter sees get ASCII filler of
# the same length there; the text the words are cut from is the original.
_BRACE_HAZARD = re.compile(rb"(\{[0-9]*(?:\.\.[0-9]*)?)([\x80-\xff]+)")


def _safe_bytes(src: bytes) -> bytes:
    return _BRACE_HAZARD.sub(lambda m: m.group(1) + b"x" * len(m.group(2)), src)


def parse(text: str) -> TsResult:
    """Parse ``text`` (already free of lone surrogates) into the small tree."""
    src = text.encode("utf-8")
    tree = _PARSER.parse(src if len(src) == len(text) else _safe_bytes(src))
    root = tree.root_node
    conv = _Converter(text, src)
    seq = conv.statements(root.children)
    problems = conv.problems
    if root.has_error:
        where = _first_error(root)
        problems.insert(0, f"syntax error at offset {conv.c(where)}" if where is not None else "syntax error")
    return TsResult(seq, problems, root.has_error, conv.truncated)


def _first_error(root: Node) -> int | None:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return int(n.start_byte)
        if n.has_error:
            stack.extend(reversed(n.children))
    return None


@dataclass(slots=True)
class _Tail:
    """What a heredoc line carries after the delimiter besides redirects (shim c)."""

    redirs: list[Redir] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    pipe: tuple[str, AstNode] | None = None
    andor: tuple[str, AstNode] | None = None
    background: bool = False


class _Converter:
    def __init__(self, text: str, src: bytes) -> None:
        self.text = text
        self.src = src
        self.problems: list[str] = []
        self.depth = 0
        self.truncated = False
        self.c = CharOffsets(text, src)
        self.ident = self.c.identity

    # offsets ---------------------------------------------------------------------------------

    def t(self, n: Node) -> str:
        if self.ident:
            return self.text[n.start_byte : n.end_byte]
        return self.text[self.c(n.start_byte) : self.c(n.end_byte)]

    def _gap_check(self, n: Node, heredoc: bool = False, children: list[Node] | None = None) -> None:
        prev = n.start_byte
        for ch in n.children if children is None else children:
            if heredoc and ch.type == "heredoc_body":
                break
            start = ch.start_byte
            if start > prev and _GAP_OK.fullmatch(self.src, prev, start) is None:
                self.problems.append(f"uncovered text at offset {self.c(prev)}")
            prev = ch.end_byte

    # statements ------------------------------------------------------------------------------

    def statements(self, nodes: list[Node]) -> Seq:
        seq = Seq()
        if self.depth > MAX_DEPTH:
            # never an empty "ok": what is below the limit is kept, flat and without contexts
            if not self.truncated:
                self.problems.append(f"lists nested deeper than {MAX_DEPTH} levels: the commands below read flat")
            self.truncated = True
            if not nodes:
                return seq
            start, end = self.c(nodes[0].start_byte), self.c(nodes[-1].end_byte)
            return _lexical.seq(self.text[start:end], start)
        self.depth += 1
        try:
            for ch in nodes:
                ty = ch.type
                if not ch.is_named:
                    if seq.items and ty in _SEPARATORS:
                        if ty == "&":
                            seq.seps[-1] = "&"
                        elif seq.seps[-1] != "&":
                            seq.seps[-1] = ";"
                    continue
                if ty == "comment":
                    continue
                node = self.statement(ch)
                if node is None:
                    continue
                if seq.items and not seq.seps[-1]:
                    seq.seps[-1] = "\n"
                seq.items.append(node)
                seq.seps.append("")
        finally:
            self.depth -= 1
        return seq

    def statement(self, n: Node) -> AstNode | None:
        ty = n.type
        if ty == "command":
            return self.command(n)
        if ty == "redirected_statement":
            return self.redirected(n)
        if ty == "pipeline":
            return self.pipeline(n)
        if ty == "list":
            return self.andor(n)
        if ty == "declaration_command" or ty == "unset_command":
            if ty == "declaration_command":
                self._gap_check(n)
            words = [self.word(ch) for ch in n.children if ch.type != "comment"]
            return Cmd(words=words, start=self.c(n.start_byte), end=self.c(n.end_byte))
        if ty == "variable_assignment":
            return Cmd(words=[], assigns=[self.assignment(n)], start=self.c(n.start_byte),
                       end=self.c(n.end_byte))
        if ty == "variable_assignments":
            assigns = [self.assignment(ch) for ch in n.children if ch.type == "variable_assignment"]
            return Cmd(words=[], assigns=assigns, start=self.c(n.start_byte), end=self.c(n.end_byte))
        if ty == "negated_command":
            inner = [ch for ch in n.children if ch.is_named]
            return self.statement(inner[0]) if inner else None
        if ty == "subshell":
            return self.compound(n, "subshell", [(None, self.statements(n.children))])
        if ty == "compound_statement":
            return self.compound(n, "group", [(None, self.statements(n.children))])
        if ty == "test_command":
            return self.test(n)
        if ty in ("for_statement", "c_style_for_statement"):
            return self.for_loop(n)
        if ty == "while_statement":
            return self.while_loop(n)
        if ty == "if_statement":
            return self.if_stmt(n)
        if ty == "case_statement":
            return self.case(n)
        if ty == "function_definition":
            return self.function(n)
        if ty == "ERROR":
            inner_seq = self.statements(n.children)
            return inner_seq if inner_seq.items else None
        return None

    def compound(self, n: Node, kind: Any, parts: list[tuple[str | None, Seq]],
                 words: list[Word] | None = None, name: str | None = None) -> Compound:
        return Compound(kind=kind, parts=parts, words=words or [], name=name,
                        start=self.c(n.start_byte), end=self.c(n.end_byte))

    def command(self, n: Node) -> Cmd:
        children = n.children
        self._gap_check(n, children=children)
        cmd = Cmd(words=[], start=self.c(n.start_byte), end=self.c(n.end_byte))
        for ch in children:
            ty = ch.type
            if ty == "word":
                w = self.word(ch)
                if w.raw == "{" and len(cmd.words) == 1 and cmd.words[0].text == "time":
                    self.problems.append(f"`time {{` at offset {w.start}")  # no `time` keyword in the grammar
                elif _BLANK.search(w.raw) and "\\" not in w.raw:
                    # the grammar's error recovery can make one word of `} }` (seen on PowerShell input)
                    self.problems.append(f"a word holding blanks at offset {w.start}")
                cmd.words.append(w)
            elif ty == "variable_assignment":
                if cmd.words:
                    cmd.words.append(self.word(ch))
                else:
                    cmd.assigns.append(self.assignment(ch))
            elif ty in _REDIRECT_TYPES:
                tail = _Tail()
                cmd.redirs.append(self.redirect(ch, tail))
                cmd.redirs.extend(tail.redirs)
                cmd.words.extend(tail.words)
            elif ty == "command_name":
                inner = ch.children
                cmd.words.append(self.word(inner[0]) if len(inner) == 1 else self.word(ch))
            elif ty == "comment":
                continue
            elif ty in _STATEMENT_IN_COMMAND:
                # `time (a; b)` / `time { a; }`: the grammar has no `time` keyword
                self.problems.append(f"{ty} inside a command at offset {self.c(ch.start_byte)}")
                cmd.words.append(self.word(ch))
            else:
                cmd.words.append(self.word(ch))
        return cmd

    def assignment(self, n: Node) -> tuple[str, Word]:
        name_node = n.child_by_field_name("name")
        value = n.child_by_field_name("value")
        name = self.t(name_node) if name_node is not None else ""
        if value is None:
            end = self.c(n.end_byte)
            return name, Word(text="", raw="", start=end, end=end)
        return name, self.word(value)

    def redirected(self, n: Node) -> AstNode | None:
        self._gap_check(n)
        body_node = n.child_by_field_name("body")
        tail = _Tail()
        redirs: list[Redir] = []
        redir_end = 0
        for ch in n.children:
            if ch.type in _REDIRECT_TYPES:
                redirs.append(self.redirect(ch, tail))
                redirs.extend(tail.redirs)
                tail.redirs = []
                if ch.type == "heredoc_redirect":
                    start = ch.child_by_field_name("descriptor") or ch
                    heads = [c for c in ch.children if c.type in ("heredoc_start", "file_redirect")]
                    redir_end = max(redir_end, *(h.end_byte for h in heads), start.end_byte if not heads else 0)
                else:
                    redir_end = max(redir_end, ch.end_byte)
        body = self.statement(body_node) if body_node is not None else None
        if body is None:
            return None
        last = _last_command(body)
        if isinstance(last, Cmd):
            last.end = max(last.end, self.c(redir_end))  # the span covers its redirects
            last.words.extend(tail.words)
            last.redirs.extend(redirs)
            last.background = last.background or tail.background
        elif isinstance(last, Compound):
            last.redirs.extend(redirs)
        node: AstNode = body
        if tail.pipe is not None:
            op, rest = tail.pipe
            node = _join_pipeline(node, op, rest)
        if tail.andor is not None:
            op, rest = tail.andor
            node = _join_andor(node, op, rest)
        return node

    def pipeline(self, n: Node) -> Pipeline:
        members: list[AstNode] = []
        ops: list[str] = []
        pending = "|"
        for ch in n.children:
            ty = ch.type
            if not ch.is_named:
                if ty in ("|", "|&"):
                    pending = ty
                continue
            if ty == "list":
                self.problems.append(f"list inside a pipeline at offset {self.c(ch.start_byte)}")
            node = self.statement(ch) if ty != "comment" else None
            if node is None:
                continue
            splice(members, ops, node, pending, Pipeline)
            pending = "|"
        return Pipeline(members, ops)

    def andor(self, n: Node) -> AndOr:
        items: list[AstNode] = []
        ops: list[str] = []
        pending = "&&"
        for ch in n.children:
            ty = ch.type
            if not ch.is_named:
                if ty in ("&&", "||"):
                    pending = ty
                continue
            node = self.statement(ch) if ty != "comment" else None
            if node is None:
                continue
            splice(items, ops, node, pending, AndOr)
            pending = "&&"
        return AndOr(items, ops)

    def test(self, n: Node) -> AstNode:
        words = self._leaf_words(n)
        first = n.children[0].type if n.children else ""
        if first == "[" and words:
            # `[ … ]` is the command `[`; `[[ … ]]` and `(( … ))` are syntax
            return Cmd(words=words, start=self.c(n.start_byte), end=self.c(n.end_byte))
        return self.compound(n, "test", [], words=words)

    def _leaf_words(self, n: Node) -> list[Word]:
        out: list[Word] = []
        for ch in n.children:
            ty = ch.type
            if ty in ("binary_expression", "unary_expression", "parenthesized_expression",
                      "ternary_expression", "postfix_expression", "redirected_statement"):
                words = self._leaf_words(ch)
            elif ty == "comment":
                continue
            else:
                words = [self.word(ch)]
            for w in words:
                if out and out[-1].end == w.start:
                    # leaves with no blank between them are one shell word: the grammar reads
                    # `[ -f ~/x ]` as the operator `~` before the word `/x`
                    out[-1] = _joined(out[-1], w)
                else:
                    out.append(w)
        return out

    def for_loop(self, n: Node) -> Compound:
        words: list[Word] = []
        body = Seq()
        for ch in n.children:
            if ch.type == "do_group" or ch.type == "compound_statement":
                body = self.statements(ch.children)
            elif ch.is_named and ch.type not in ("variable_name", "comment"):
                words.append(self.word(ch))
        return self.compound(n, "loop", [("loop", body)], words=words)

    def while_loop(self, n: Node) -> Compound:
        cond: list[Node] = []
        body = Seq()
        for i, ch in enumerate(n.children):
            if n.field_name_for_child(i) == "condition":
                cond.append(ch)
            elif ch.type == "do_group":
                body = self.statements(ch.children)
        return self.compound(n, "loop", [("condition", self.statements(cond)), ("loop", body)])

    def if_stmt(self, n: Node) -> Compound:
        parts: list[tuple[str | None, Seq]] = []
        current: list[Node] = []
        for ch in n.children:
            ty = ch.type
            if ty in ("then", "fi", "if"):
                if current:
                    parts.append((None, self.statements(current)))
                current = []
            elif ty == "elif_clause" or ty == "else_clause":
                if current:
                    parts.append((None, self.statements(current)))
                current = []
                sub: list[Node] = []
                for gc in ch.children:
                    if gc.type in ("then", "elif", "else"):
                        if sub:
                            parts.append((None, self.statements(sub)))
                        sub = []
                    else:
                        sub.append(gc)
                if sub:
                    parts.append((None, self.statements(sub)))
            else:
                current.append(ch)
        if current:
            parts.append((None, self.statements(current)))
        return self.compound(n, "if", parts)

    def case(self, n: Node) -> Compound:
        words: list[Word] = []
        parts: list[tuple[str | None, Seq]] = []
        for i, ch in enumerate(n.children):
            if n.field_name_for_child(i) == "value":
                words.append(self.word(ch))
            elif ch.type == "case_item":
                body = [gc for j, gc in enumerate(ch.children) if ch.field_name_for_child(j) != "value"]
                parts.append((None, self.statements(body)))
        return self.compound(n, "case", parts, words=words)

    def function(self, n: Node) -> Compound:
        name_node = n.child_by_field_name("name")
        body_node = n.child_by_field_name("body")
        seq = Seq()
        if body_node is not None:
            body = self.statement(body_node)
            if body is not None:
                seq = Seq([body], [""])
        comp = self.compound(n, "function", [("function", seq)],
                             name=self.t(name_node) if name_node is not None else None)
        for ch in n.children:
            if ch.type == "file_redirect":
                comp.redirs.append(self.redirect(ch, _Tail()))
        return comp

    # redirects -------------------------------------------------------------------------------

    def redirect(self, n: Node, tail: _Tail) -> Redir:
        ty = n.type
        fd: int | None = None
        op = ""
        if ty == "heredoc_redirect":
            self._gap_check(n, heredoc=True)
            redir = Redir(op="<<")
            for i, ch in enumerate(n.children):
                cty = ch.type
                if cty == "file_descriptor":
                    redir.fd = _int(self.t(ch))
                elif cty in ("<<", "<<-"):
                    redir.op = cty
                elif cty == "heredoc_start":
                    raw = self.t(ch)
                    redir.target = Word(text=_delimiter(raw), raw=raw, start=self.c(ch.start_byte),
                                        end=self.c(ch.end_byte), quoted=any(q in raw for q in "'\"\\"))
                    redir.heredoc_quoted = redir.target.quoted
                elif cty == "heredoc_body":
                    body = self.t(ch)
                    redir.heredoc = _strip_tabs(body) if redir.op == "<<-" else body
                    if redir.target is not None and not redir.heredoc_quoted:
                        self._collect_substs(ch, redir.target)  # the local shell runs them
                elif cty == "file_redirect":
                    tail.redirs.append(self.redirect(ch, tail))
                elif cty == "pipeline":
                    op_tok = ch.children[0].type if ch.children else "|"
                    rest = self.statements([c for c in ch.children if c.is_named])
                    if rest.items:
                        tail.pipe = (op_tok if op_tok in ("|", "|&") else "|", _single(rest))
                elif n.field_name_for_child(i) == "right":
                    rest_node = self.statement(ch)
                    op_node = n.child_by_field_name("operator")
                    if rest_node is not None:
                        tail.andor = (op_node.type if op_node is not None else "&&", rest_node)
                elif cty == "ERROR":
                    if self.t(ch).strip() == "&":
                        tail.background = True
                    else:
                        for gc in ch.children:
                            if gc.is_named and gc.type not in ("heredoc_body", "heredoc_end"):
                                tail.words.append(self.word(gc))
            if redir.heredoc is None:
                redir.heredoc = ""
            return redir
        if ty == "herestring_redirect":
            target: Word | None = None
            for ch in n.children:
                if ch.type == "file_descriptor":
                    fd = _int(self.t(ch))
                elif ch.is_named and target is None:
                    target = self.word(ch)
            return Redir(op="<<<", fd=fd, target=target)
        # file_redirect
        self._gap_check(n)
        target = None
        for ch in n.children:
            cty = ch.type
            if cty == "file_descriptor":
                fd = _int(self.t(ch))
            elif not ch.is_named and cty in _FILE_OPS:
                op = cty
            elif ch.is_named:
                if cty == "ERROR":
                    continue
                w = self.word(ch)
                if target is None:
                    target = w
                else:
                    tail.words.append(w)  # shim (b): `echo >&2 hello world`
        return Redir(op=op or ">", fd=fd, target=target)

    # words -----------------------------------------------------------------------------------

    def word(self, n: Node) -> Word:
        if self.ident:
            start, end = n.start_byte, n.end_byte
        else:
            start, end = self.c(n.start_byte), self.c(n.end_byte)
        raw = self.text[start:end]
        w = Word(text=raw, raw=raw, start=start, end=end)
        self._fill(n, w, raw)
        return w

    def _fill(self, n: Node, w: Word, raw: str) -> None:
        """Set ``w.text``/flags from node ``n`` whose source is ``raw``."""
        ty = n.type
        if ty == "word" or ty == "number" or not n.is_named:
            w.text = unescape_word(raw)
            w.quoted = "\\" in raw
            if has_glob(_ESCAPED.sub("", raw) if "\\" in raw else raw):
                w.dynamic = True
            return
        if ty == "raw_string":
            w.text = raw[1:-1] if len(raw) >= 2 and raw.endswith("'") else raw[1:]
            w.quoted = True
            return
        if ty == "ansi_c_string":
            body = raw[2:-1] if len(raw) >= 3 and raw.endswith("'") else raw[2:]
            w.text = decode_ansi_c(body)
            w.quoted = True
            return
        if ty == "string":
            w.quoted = True
            w.text = self._string(n, w)
            return
        if ty == "translated_string":
            w.quoted = True
            inner = [ch for ch in n.children if ch.type == "string"]
            w.text = self._string(inner[0], w) if inner else raw
            return
        if ty == "concatenation":
            parts: list[str] = []
            for ch in n.children:
                sub = Word(text="", raw="", start=0, end=0)
                self._fill(ch, sub, self.t(ch))
                parts.append(sub.text)
                w.dynamic = w.dynamic or sub.dynamic
                w.quoted = w.quoted or sub.quoted
                w.substs += sub.substs
            w.text = "".join(parts)
            return
        if ty in ("command_substitution", "process_substitution"):
            w.dynamic = True
            w.text = raw
            kind = _SUBST_OPEN.get(n.children[0].type, "$(") if n.children else "$("
            w.substs += (Subst(kind=kind, body=self.statements(n.children), raw=raw),)  # type: ignore[arg-type]
            return
        if ty == "variable_assignment":
            # `export A=1`, or an assignment-looking argument after the command name
            name = n.child_by_field_name("name")
            value = n.child_by_field_name("value")
            op = next((ch.type for ch in n.children if ch.type in ("=", "+=")), "=")
            sub = Word(text="", raw="", start=0, end=0)
            if value is not None:
                self._fill(value, sub, self.t(value))
            w.text = (self.t(name) if name is not None else "") + op + sub.text
            w.dynamic, w.quoted, w.substs = sub.dynamic, sub.quoted, sub.substs
            return
        # expansions and everything else: source text; substitutions inside still run
        w.text = raw
        if ty in ("simple_expansion", "expansion", "arithmetic_expansion", "brace_expression"):
            w.dynamic = True
        self._collect_substs(n, w)

    def _collect_substs(self, n: Node, w: Word) -> None:
        stack = list(reversed(n.children))
        while stack:
            ch = stack.pop()
            if ch.type in ("command_substitution", "process_substitution"):
                w.dynamic = True
                kind = _SUBST_OPEN.get(ch.children[0].type, "$(") if ch.children else "$("
                w.substs += (Subst(kind=kind, body=self.statements(ch.children), raw=self.t(ch)),)  # type: ignore[arg-type]
            elif ch.type in ("simple_expansion", "expansion"):
                w.dynamic = True
                stack.extend(reversed(ch.children))
            else:
                stack.extend(reversed(ch.children))

    def _string(self, n: Node, w: Word) -> str:
        """Text of a double-quoted string: escapes processed, expansions kept as source."""
        out: list[str] = []
        children = n.children
        pos = n.start_byte + 1
        end = n.end_byte
        if children and children[-1].type == '"' and not children[-1].is_missing:
            end = children[-1].start_byte
        for ch in children:
            ty = ch.type
            if ty == '"':
                continue
            s, e = ch.start_byte, ch.end_byte
            if s > pos:
                out.append(unescape_dq(self.text[self.c(pos) : self.c(s)]))
            if ty == "string_content" or (not ch.is_named and ty != "$"):
                out.append(unescape_dq(self.t(ch)))
            else:
                out.append(self.t(ch))
                if ty != "$":
                    w.dynamic = True
                if ty in ("command_substitution", "process_substitution"):
                    kind = _SUBST_OPEN.get(ch.children[0].type, "$(") if ch.children else "$("
                    w.substs += (Subst(kind=kind, body=self.statements(ch.children), raw=self.t(ch)),)  # type: ignore[arg-type]
                else:
                    self._collect_substs(ch, w)
            pos = max(pos, e)
        if end > pos:
            out.append(unescape_dq(self.text[self.c(pos) : self.c(end)]))
        return "".join(out)


def _int(s: str) -> int | None:
    return int(s) if s.isdigit() else None


def _delimiter(raw: str) -> str:
    return unescape_word(raw.replace("'", "").replace('"', ""))


def _strip_tabs(body: str) -> str:
    return "".join(line.lstrip("\t") for line in body.splitlines(keepends=True))


def _single(seq: Seq) -> AstNode:
    return seq.items[0] if len(seq.items) == 1 else seq


def _last_command(node: AstNode) -> AstNode:
    """The node a trailing redirect binds to: the last pipeline member / list item."""
    while True:
        if isinstance(node, Pipeline) and node.members:
            node = node.members[-1]
        elif isinstance(node, AndOr) and node.items:
            node = node.items[-1]
        else:
            return node


def _join_pipeline(left: AstNode, op: str, right: AstNode) -> AstNode:
    # `a && cat <<EOF | x`: the pipe binds tighter than &&, so it joins the last item
    if isinstance(left, AndOr) and left.items:
        left.items[-1] = _join_pipeline(left.items[-1], op, right)
        return left
    members = left.members if isinstance(left, Pipeline) else [left]
    ops = left.ops if isinstance(left, Pipeline) else []
    if isinstance(right, Pipeline):
        return Pipeline([*members, *right.members], [*ops, op, *right.ops])
    if isinstance(right, AndOr) and right.items:
        first = _join_pipeline(Pipeline(list(members), list(ops)), op, right.items[0])
        return AndOr([first, *right.items[1:]], list(right.ops))
    return Pipeline([*members, right], [*ops, op])


def _join_andor(left: AstNode, op: str, right: AstNode) -> AstNode:
    items = left.items if isinstance(left, AndOr) else [left]
    ops = left.ops if isinstance(left, AndOr) else []
    if isinstance(right, AndOr):
        return AndOr([*items, *right.items], [*ops, op, *right.ops])
    return AndOr([*items, right], [*ops, op])
