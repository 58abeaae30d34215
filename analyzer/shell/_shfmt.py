"""mvdan/sh (``shfmt --to-json``) → the small syntax tree: the parser for commands the tree-sitter
self-check flags (shell-semantics §4 step 4). One subprocess per parse (~2 ms), so it only runs
for flagged commands. Optional: without the binary, ``available()`` is False.

JSON notes: offsets are bytes; empty values are omitted; a ``Hdoc`` span includes the terminator
line, so heredoc bodies are rebuilt from their parts.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from analyzer.shell import _lexical
from analyzer.shell._ast import (
    AndOr,
    CharOffsets,
    Cmd,
    Compound,
    Node,
    Pipeline,
    Redir,
    Seq,
    Subst,
    Word,
    splice,
)
from analyzer.shell._unquote import decode_ansi_c, has_glob, unescape_dq, unescape_word

_TIMEOUT_S = 10
_MEMORY_LIMIT = 1 << 30
"""Address space for the shfmt process (a Go binary reserves far less than this for any command)."""
_MAX_DEPTH = 60  # as the tree-sitter converter: deeper lists are read flat

Json = dict[str, Any]


@functools.cache
def binary() -> str | None:
    """The ``shfmt`` executable: on PATH, or next to the running Python (a venv's bin/)."""
    found = shutil.which("shfmt")
    if found:
        return found
    beside = Path(sys.executable).parent / ("shfmt.exe" if sys.platform == "win32" else "shfmt")
    return str(beside) if beside.is_file() else None


def available() -> bool:
    return binary() is not None


def parse(text: str) -> tuple[Seq | None, str]:
    """(tree, "") or (None, why) when shfmt rejects the text or cannot run; (tree, note) when
    lists nested deeper than the converter follows were read flat (the level is truncated)."""
    exe = binary()
    if exe is None:
        return None, "shfmt not installed"
    src = text.encode("utf-8")
    try:
        proc = subprocess.run([exe, "--to-json", "-ln", "bash"], input=src, capture_output=True,
                              timeout=_TIMEOUT_S, check=False,
                              preexec_fn=_limit_memory if os.name == "posix" else None)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"shfmt failed to run: {exc}"
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "mvdan/sh: " + (err[0] if err else f"exit {proc.returncode}")
    try:
        doc = orjson.loads(proc.stdout)
        conv = _Converter(text, src)
        seq = conv.stmts(doc.get("Stmts") or [])
        return seq, (f"lists nested deeper than {_MAX_DEPTH} levels: the commands below read flat"
                     if conv.truncated else "")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        return None, f"shfmt output not understood: {exc!r}"


def _limit_memory() -> None:
    """In the child before exec: a hostile command must not take the machine's memory."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (_MEMORY_LIMIT, _MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass


def _off(node: Json, key: str) -> int:
    pos = node.get(key)
    return int(pos.get("Offset", 0)) if isinstance(pos, dict) else 0


class _Converter:
    def __init__(self, text: str, src: bytes) -> None:
        self.text = text
        self.c = CharOffsets(text, src)
        self.depth = 0
        self.truncated = False

    def raw(self, node: Json) -> str:
        return self.text[self.c(_off(node, "Pos")) : self.c(_off(node, "End"))]

    # statements ------------------------------------------------------------------------------

    def stmts(self, stmts: list[Json]) -> Seq:
        seq = Seq()
        if self.depth > _MAX_DEPTH:
            self.truncated = True
            if not stmts:
                return seq
            start, end = self.c(_off(stmts[0], "Pos")), self.c(_off(stmts[-1], "End"))
            return _lexical.seq(self.text[start:end], start)
        self.depth += 1
        try:
            for i, st in enumerate(stmts):
                node = self.stmt(st)
                if node is None:
                    continue
                if st.get("Background"):
                    sep = "&"
                elif "Semicolon" in st:
                    sep = ";"
                else:
                    sep = "\n" if i < len(stmts) - 1 else ""
                seq.items.append(node)
                seq.seps.append(sep)
            if seq.seps and seq.seps[-1] == "\n":
                seq.seps[-1] = ""
        finally:
            self.depth -= 1
        return seq

    def stmt(self, st: Json) -> Node | None:
        cmd = st.get("Cmd")
        redirs = [self.redir(r) for r in st.get("Redirs") or []]
        if cmd is None:
            return None  # a redirect alone: `> file`
        node = self.cmd(cmd)
        if node is None:
            return None
        if redirs:
            if isinstance(node, Cmd):
                node.redirs.extend(redirs)
                ends = [_off(r["Word"], "End") for r in st.get("Redirs") or [] if r.get("Word")]
                node.end = max(node.end, self.c(max(ends, default=0)))  # the span covers its redirects
            elif isinstance(node, Compound):
                node.redirs.extend(redirs)
        return node

    def cmd(self, c: Json) -> Node | None:
        ty = c.get("Type")
        start, end = self.c(_off(c, "Pos")), self.c(_off(c, "End"))
        if ty == "CallExpr":
            assigns = [(a.get("Name", {}).get("Value", ""), self.word_or_empty(a.get("Value"), a))
                       for a in c.get("Assigns") or []]
            return Cmd(words=[self.word(w) for w in c.get("Args") or []], assigns=assigns,
                       start=start, end=end)
        if ty == "BinaryCmd":
            op = c.get("Op", "")
            left = self.stmt(c.get("X") or {})
            right = self.stmt(c.get("Y") or {})
            parts = [n for n in (left, right) if n is not None]
            if op in ("|", "|&"):
                members: list[Node] = []
                ops: list[str] = []
                for part in parts:
                    splice(members, ops, part, op, Pipeline)
                return Pipeline(members, ops)
            items: list[Node] = []
            aops: list[str] = []
            for part in parts:
                splice(items, aops, part, op, AndOr)
            return AndOr(items, aops)
        if ty == "Subshell":
            return Compound("subshell", [(None, self.stmts(c.get("Stmts") or []))], start=start, end=end)
        if ty == "Block":
            return Compound("group", [(None, self.stmts(c.get("Stmts") or []))], start=start, end=end)
        if ty == "IfClause":
            parts_if: list[tuple[str | None, Seq]] = []
            clause: Json | None = c
            while clause:
                if clause.get("Cond"):
                    parts_if.append((None, self.stmts(clause["Cond"])))
                if clause.get("Then"):
                    parts_if.append((None, self.stmts(clause["Then"])))
                clause = clause.get("Else")
            return Compound("if", parts_if, start=start, end=end)
        if ty == "WhileClause":
            return Compound("loop", [("condition", self.stmts(c.get("Cond") or [])),
                                     ("loop", self.stmts(c.get("Do") or []))], start=start, end=end)
        if ty == "ForClause":
            loop = c.get("Loop") or {}
            words = [self.word(w) for w in loop.get("Items") or []]
            if loop.get("Type") == "CStyleLoop":
                words = self.subst_words(loop)
            return Compound("loop", [("loop", self.stmts(c.get("Do") or []))], words=words,
                            start=start, end=end)
        if ty == "CaseClause":
            words = [self.word(c["Word"])] if c.get("Word") else []
            parts_case = [(None, self.stmts(item.get("Stmts") or [])) for item in c.get("Items") or []]
            return Compound("case", parts_case, words=words, start=start, end=end)  # type: ignore[arg-type]
        if ty == "FuncDecl":
            body = self.stmt(c.get("Body") or {})
            seq = Seq([body], [""]) if body is not None else Seq()
            return Compound("function", [("function", seq)], name=(c.get("Name") or {}).get("Value"),
                            start=start, end=end)
        if ty == "DeclClause":
            words = [Word(text=(c.get("Variant") or {}).get("Value", ""), raw="", start=start, end=start)]
            words[0].raw = words[0].text
            for a in c.get("Args") or []:
                words.append(self.decl_arg(a))
            return Cmd(words=words, start=start, end=end)
        if ty == "TimeClause":
            inner = self.stmt(c.get("Stmt") or {})
            if isinstance(inner, Cmd) and inner.words:
                inner.words.insert(0, Word(text="time", raw="time", start=start, end=start + 4))
            return inner
        if ty == "CoprocClause":
            return self.stmt(c.get("Stmt") or {})
        if ty in ("TestClause", "ArithmCmd", "LetClause"):
            return Compound("test" if ty == "TestClause" else "arith", [], words=self.subst_words(c),
                            start=start, end=end)
        return None

    def decl_arg(self, a: Json) -> Word:
        name = (a.get("Name") or {}).get("Value")
        value = a.get("Value")
        if a.get("Naked"):
            if value is not None:
                return self.word(value)
            return Word(text=name or "", raw=name or "", start=self.c(_off(a, "Pos")), end=self.c(_off(a, "End")))
        w = self.word_or_empty(value, a)
        if a.get("Array") is not None:
            w.text = self.raw(a["Array"])
        w.text = f"{name}{'+=' if a.get('Append') else '='}{w.text}"
        w.raw = self.raw(a)
        w.start, w.end = self.c(_off(a, "Pos")), self.c(_off(a, "End"))
        return w

    def subst_words(self, node: Json) -> list[Word]:
        """Substitutions anywhere under ``node`` (test expressions, arithmetic), as words."""
        out: list[Word] = []
        stack: list[Any] = [node]
        while stack:
            cur = stack.pop()
            if isinstance(cur, list):
                stack.extend(reversed(cur))
            elif isinstance(cur, dict):
                if cur.get("Type") in ("CmdSubst", "ProcSubst"):
                    w = Word(text=self.raw(cur), raw=self.raw(cur), start=self.c(_off(cur, "Pos")),
                             end=self.c(_off(cur, "End")), dynamic=True)
                    w.substs += (self.subst(cur),)
                    out.append(w)
                else:
                    stack.extend(v for v in reversed(cur.values()) if isinstance(v, (dict, list)))
        return out

    def subst(self, part: Json) -> Subst:
        if part.get("Type") == "ProcSubst":
            kind = "<(" if part.get("Op") in ("<(", 0x48, None) else ">("
            return Subst(kind=kind, body=self.stmts(part.get("Stmts") or []), raw=self.raw(part))  # type: ignore[arg-type]
        return Subst(kind="`" if part.get("Backquotes") else "$(", body=self.stmts(part.get("Stmts") or []),
                     raw=self.raw(part))

    # words -----------------------------------------------------------------------------------

    def word_or_empty(self, w: Json | None, owner: Json) -> Word:
        if w is None:
            end = self.c(_off(owner, "End"))
            return Word(text="", raw="", start=end, end=end)
        return self.word(w)

    def word(self, w: Json) -> Word:
        raw = self.raw(w)
        out = Word(text="", raw=raw, start=self.c(_off(w, "Pos")), end=self.c(_off(w, "End")))
        out.text = "".join(self.part(p, out, in_dq=False) for p in w.get("Parts") or [])
        return out

    def part(self, p: Json, w: Word, in_dq: bool) -> str:
        ty = p.get("Type")
        if ty == "Lit":
            value = p.get("Value", "")
            if in_dq:
                return unescape_dq(value)
            if "\\" in value:
                w.quoted = True
            if has_glob(value.replace("\\\\", "").replace("\\*", "").replace("\\?", "").replace("\\[", "")):
                w.dynamic = True
            return unescape_word(value)
        if ty == "SglQuoted":
            w.quoted = True
            value = p.get("Value", "")
            return decode_ansi_c(value) if p.get("Dollar") else value
        if ty == "DblQuoted":
            w.quoted = True
            return "".join(self.part(q, w, in_dq=True) for q in p.get("Parts") or [])
        w.dynamic = True
        if ty in ("CmdSubst", "ProcSubst"):
            w.substs += (self.subst(p),)
        else:
            w.substs += tuple(s for sw in self.subst_words(p) for s in sw.substs)
        return self.raw(p)

    # redirects -------------------------------------------------------------------------------

    def redir(self, r: Json) -> Redir:
        op = str(r.get("Op", ">"))
        n = r.get("N")
        fd = int(n["Value"]) if isinstance(n, dict) and str(n.get("Value", "")).isdigit() else None
        target = self.word(r["Word"]) if r.get("Word") else None
        redir = Redir(op=op, fd=fd, target=target)
        if op in ("<<", "<<-"):
            hdoc = r.get("Hdoc")
            quoted = target is not None and target.quoted
            if target is not None:
                target.text = target.text.replace("'", "").replace('"', "")
            redir.heredoc_quoted = quoted
            body = ""
            if hdoc:
                body = "".join(
                    part.get("Value", "") if part.get("Type") == "Lit" else self.raw(part)
                    for part in hdoc.get("Parts") or []
                )
                if target is not None and not quoted:
                    # substitutions in an unquoted heredoc run in the local shell
                    target.substs += tuple(s for sw in self.subst_words(hdoc) for s in sw.substs)
            redir.heredoc = body
        return redir
