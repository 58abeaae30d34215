"""One text → one syntax tree, choosing the parser as shell-semantics §4 says:

1. tree-sitter-bash plus the shim; if the self-check finds nothing, done (``ok``);
2. flagged → mvdan/sh (``shfmt --to-json``); if it parses, done (``ok``, parser ``shfmt``);
   without shfmt a flagged tree with no syntax error is kept (``ok``, ``tree-sitter (unchecked)``);
3. still failing (cut or unbalanced text) → append the first closer that parses (``recovered``);
4. last resort: tree-sitter's error-recovered tree (``recovered``); nothing → ``failed``.

Bounds (each one makes the level ``truncated``, keeping what it can, never ``ok`` and empty):

- input size: ``MAX_CHARS``; the text after it is dropped;
- tree-sitter's memory: its error recovery is quadratic on long pipe chains (100 KB of ``a|a|…|``
  took 24 GB); a text with more than ``IN_PROCESS_PIPES`` pipes is parsed in a forked child
  capped at ``_isolate.MEMORY_LIMIT`` and ``_isolate.TIMEOUT_S``; if the child is stopped the
  text is read by ``_lexical`` (flat, linear);
- repair work: the closers tried re-parse the whole text, so they stop after ``REPAIR_BUDGET``
  bytes parsed in all (2,000 unclosed heredocs made 240 parses);
- nesting: lists deeper than ``_treesitter.MAX_DEPTH`` are read flat by ``_lexical``.

Results are cached per distinct text and shared: never mutate a ``ParsedLevel``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from analyzer.shell import _isolate, _lexical, _repair, _treesitter
from analyzer.shell._ast import AndOr, Cmd, Compound, Node, Pipeline, Seq
from analyzer.shell.model import ParseStatus

MAX_CHARS = 1_000_000
"""Longer texts are cut here: tree-sitter is linear but a multi-megabyte "command" is a file dump."""
_PAIR_REPAIR_MAX = 20_000
IN_PROCESS_PIPES = 1_500
"""More ``|`` than this and tree-sitter runs in a capped child: 1,500 pipes stay under ~40 MB
even when the chain is broken, 8,000 took 1 GB."""
REPAIR_BUDGET = 150_000
"""Bytes tree-sitter may re-parse in all while trying closers on one text."""
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class ParsedLevel:
    seq: Seq
    status: ParseStatus
    parser: str
    notes: tuple[str, ...] = ()


def sanitize(text: str) -> str:
    """Lone surrogates (from a broken log) become U+FFFD: one character for one, so offsets hold."""
    return _SURROGATE.sub("\ufffd", text) if not text.isascii() else text


def parse_level_uncached(text: str) -> ParsedLevel:
    try:
        return _parse(text)
    except RecursionError:
        return ParsedLevel(Seq(), "failed", "none", ("nesting too deep to parse",))


# nested scripts repeat across commands (the same `ssh h '…'` string, the same script file); a
# top-level text is cached once, as its ShellScript, by `parse`. Bounded: every cached tree is
# scanned by each full garbage collection.
parse_level = functools.lru_cache(maxsize=2048)(parse_level_uncached)


def _parse(text: str) -> ParsedLevel:
    notes: list[str] = []
    work = sanitize(text)
    truncated = False
    if len(work) > MAX_CHARS:
        work = work[:MAX_CHARS]
        truncated = True
        notes.append(f"text cut at {MAX_CHARS} characters")
    work, marker_note = _repair.strip_marker(work)
    if marker_note:
        truncated = True
        notes.append(marker_note)
    cut_at = len(work) if truncated else None
    status: ParseStatus = "recovered" if truncated else "ok"

    ts = _bounded_parse(work)
    if ts is None:
        notes.append("tree-sitter ran out of its memory or time budget: commands read flat (lexical)")
        return _done(_lexical.seq(work), "truncated", "lexical", notes, cut_at)
    if ts.truncated:
        status = "truncated"
    if not ts.problems:
        return _done(ts.seq, status, "tree-sitter", notes, cut_at)
    flagged = "tree-sitter self-check: " + "; ".join(dict.fromkeys(ts.problems))
    # the oracle is imported by the first flagged command only: most sessions have none, and it
    # and subprocess are ~4 ms of imports
    from analyzer.shell import _shfmt

    if _shfmt.available():
        seq, why = _shfmt.parse(work)
        if seq is not None:
            notes.append(flagged + "; parsed with mvdan/sh (shfmt)")
            if why:  # parsed, but nested deeper than the converter follows
                status = "truncated"
                notes.append(f"mvdan/sh: {why}")
            return _done(seq, status, "shfmt", notes, cut_at)
        notes.append(f"{flagged}; {why}")
        if not ts.has_error:
            # tree-sitter saw no syntax error but mvdan/sh rejected the text: keep tree-sitter's view
            return _done(ts.seq, _worse(status, "recovered"), "tree-sitter", notes, cut_at)
    elif not ts.has_error:
        notes.append(f"{flagged}; mvdan/sh (shfmt) not installed, result unchecked")
        return _done(ts.seq, status, "tree-sitter (unchecked)", notes, cut_at)
    else:
        notes.append(f"{flagged}; mvdan/sh (shfmt) not installed")

    budget = [REPAIR_BUDGET]

    def parses(candidate: str) -> bool:
        if budget[0] <= 0:
            return False
        budget[0] -= len(candidate)
        got = _bounded_parse(candidate)
        return got is not None and not got.has_error

    if len(work) <= _PAIR_REPAIR_MAX:
        repaired = _repair.close(work, parses)
    else:
        repaired = next(((work + c, c) for c in _repair.closers(work) if parses(work + c)), None)
    if budget[0] <= 0:
        notes.append(f"repair stopped after {REPAIR_BUDGET} bytes re-parsed")
    ts2 = _bounded_parse(repaired[0]) if repaired is not None else None
    if repaired is not None and ts2 is not None:
        text2, closer = repaired
        seq2, parser = ts2.seq, "tree-sitter+repair"
        if ts2.problems and _shfmt.available():
            seq_sh, _ = _shfmt.parse(text2)
            if seq_sh is not None:
                seq2, parser = seq_sh, "shfmt+repair"
        notes.append(f"unbalanced or cut text: appended {closer!r} to parse it")
        return _done(seq2, _worse(status, "recovered", ts2.truncated), parser, notes, len(work))
    if _has_command(ts.seq):
        notes.append("no closer made it parse: using tree-sitter's error-recovered tree")
        return _done(ts.seq, _worse(status, "recovered"), "tree-sitter (error-recovered)", notes, len(work))
    if not work.strip() or (work.lstrip().startswith("#") and "\n" not in work.strip()):
        return _done(Seq(), status, "tree-sitter", notes, None)
    notes.append("nothing usable could be parsed")
    return ParsedLevel(Seq(), "failed", "none", tuple(notes))


def _bounded_parse(text: str) -> _treesitter.TsResult | None:
    """tree-sitter, in a capped child when the text may blow its memory; None when stopped."""
    if text.count("|") <= IN_PROCESS_PIPES:
        return _treesitter.parse(text)
    got = _isolate.call(_treesitter.parse, text)  # no fork (Windows): not parsed at all, read flat
    return got.value if got.status == "done" else None


def _worse(status: ParseStatus, other: ParseStatus, truncated: bool = False) -> ParseStatus:
    """``truncated`` (a bound was hit) outranks ``recovered``: both are said, the bound first."""
    return "truncated" if truncated or "truncated" in (status, other) else other


def _done(seq: Seq, status: ParseStatus, parser: str, notes: list[str], cut_at: int | None) -> ParsedLevel:
    if cut_at is not None:
        _drop_cut_command(seq, cut_at, notes)
    return ParsedLevel(seq, status, parser, tuple(notes))


def _commands(node: Node) -> list[Cmd]:
    out: list[Cmd] = []
    stack: list[Node] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Cmd):
            out.append(n)
            for w in [*n.words, *(v for _, v in n.assigns), *(r.target for r in n.redirs if r.target)]:
                stack.extend(s.body for s in w.substs)
        elif isinstance(n, Seq):
            stack.extend(n.items)
        elif isinstance(n, Pipeline):
            stack.extend(n.members)
        elif isinstance(n, AndOr):
            stack.extend(n.items)
        elif isinstance(n, Compound):
            stack.extend(p for _, p in n.parts)
            stack.extend(s.body for w in n.words for s in w.substs)
    return out


def _has_command(seq: Seq) -> bool:
    return any(c.words for c in _commands(seq))


def _drop_cut_command(seq: Seq, cut_at: int, notes: list[str]) -> None:
    """The text was cut: a command whose *name* reaches the cut (``… && break; sle``) is a
    fragment, not a program; its arguments being cut is fine (the name is whole)."""
    cmds = [c for c in _commands(seq) if c.words]
    if not cmds:
        return
    last = max(cmds, key=lambda c: c.start)
    if last.words[0].end >= cut_at:
        notes.append(f"dropped {last.words[0].text!r}: its name is cut off by the end of the text")
        last.words.clear()
        last.assigns.clear()
