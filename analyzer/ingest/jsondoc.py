"""Whole-document JSON, read as hostile input: what the JSON-document formats share (chat arrays,
Gemini ``.json`` recordings, opencode exports, OpenHands trajectories, SWE-agent ``.traj``, Cline).

``json_prefix`` reads the value at the start of some text as far as it goes: a head cut off by a
byte limit, for ``detect()``, keeps the records read so far (``Prefix.cut``), and a syntax error
ends the value there (``Prefix.error``) instead of losing it. ``load_document`` reads a whole file:
a clean document through orjson; a damaged one through this module's parser, which also *reads on
past* a damaged record (``resync``): the record is left out (a ``Lost`` placeholder keeps the
numbering of the records after it) and an error diagnostic names the line of the syntax error.

Reading on finds the next sibling of the damaged record or member: in a pretty-printed document, the
next line with the same indentation that starts a value (a JSON string cannot hold a raw newline, so
a line of a deeper value never has that indentation); in a compact array, the next ``,`` followed by
the damaged item's opening character, on the same line, whose parse is an object sharing a key with
the item before it (past that line, the container that spans lines reads on). A compact object does
not read on: a later record's member looks the same as its own. Both searches are bounded
(``_MAX_TRIES``), so a document damaged everywhere costs a few passes over it, not a parse per
character.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import Level
from analyzer.ingest.base import IngestError, SessionBuilder, open_regular, read_regular, strip_bom

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS: tuple[tuple[str, Any], ...] = (("true", True), ("false", False), ("null", None))
_MAX_DEPTH = 400
_MAX_TRIES = 64
"""Candidate restart points tried per damaged record before giving up on reading past it."""
_VALUE_START = frozenset('{["-0123456789tfn')
_RECORD_DEPTH = 1
"""Arrays this deep or less hold records (``[…]``, ``{messages: […]}``, ``{trajectory: […]}``):
a damaged item there leaves a ``Lost`` place; deeper (content blocks) it is only left out."""
_NOTHING: Any = object()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]  # C-accelerated, untyped


class _Cut(Exception):
    """The input ended inside a value; ``value`` is what was read of it."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _Bad(Exception):
    """Not JSON from ``pos`` on."""

    def __init__(self, pos: int, reason: str) -> None:
        self.pos = pos
        self.reason = reason


@dataclass(frozen=True)
class Lost:
    """The place of a record a syntax error made unreadable (its siblings keep their numbers)."""

    line: int
    """1-based file line of the syntax error."""


@dataclass(frozen=True)
class Damage:
    """One syntax error read past: where it is and where reading went on."""

    line: int
    column: int
    reason: str
    resumed: int
    """1-based file line where the next readable record starts."""


@dataclass
class Prefix:
    """A JSON value read from the start of some text, possibly cut off by its end or a syntax error."""

    value: Any
    complete: bool = True
    cut: set[int] = field(default_factory=set)
    """``id()`` of every container the end of input cut off (their last item may be partial)."""
    damage: list[Damage] = field(default_factory=list)
    """Syntax errors read past (``resync``): each left one record out."""
    error: Damage | None = None
    """The syntax error the value ends at (not read past), if it ended at one."""

    def is_cut(self, value: Any) -> bool:
        """``value`` (a dict or list inside ``self.value``) was cut off before its end."""
        return isinstance(value, dict | list) and id(value) in self.cut


def where(text: str, pos: int) -> tuple[int, int]:
    """1-based (line, column) of ``pos`` in ``text``."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


@dataclass
class _Parser:
    s: str
    resync: bool
    cut: set[int] = field(default_factory=set)
    damage: list[Damage] = field(default_factory=list)

    def ws(self, i: int) -> int:
        m = _WS.match(self.s, i)
        return m.end() if m else i

    def string(self, i: int) -> tuple[str, int]:
        try:
            text, end = _scanstring(self.s, i + 1)
            return str(text), int(end)
        except json.JSONDecodeError as exc:
            if "Unterminated" in exc.msg or exc.pos >= len(self.s) - 6:
                raise _Cut(self.s[i + 1:]) from None
            raise _Bad(exc.pos, exc.msg) from None

    def value(self, i: int, depth: int) -> tuple[Any, int]:
        s = self.s
        if depth > _MAX_DEPTH:
            raise _Bad(i, "nested too deeply")
        i = self.ws(i)
        if i >= len(s):
            raise _Cut(_NOTHING)
        c = s[i]
        if c == "{":
            return self.obj(i + 1, depth)
        if c == "[":
            return self.arr(i + 1, depth)
        if c == '"':
            return self.string(i)
        m = _NUMBER.match(s, i)
        if m:
            if m.end() == len(s):
                raise _Cut(_NOTHING)
            text = m.group()
            return (float(text) if any(ch in text for ch in ".eE") else int(text)), m.end()
        for word, val in _LITERALS:
            piece = s[i: i + len(word)]  # never slice to the end: that would copy the rest of a big file
            if piece == word:
                return val, i + len(word)
            if i + len(piece) == len(s) and word.startswith(piece):
                raise _Cut(_NOTHING)
        raise _Bad(i, "Expecting value")

    def member(self, i: int, obj: dict[str, Any], depth: int) -> tuple[int, Any]:
        """One ``"key": value`` of an object at ``i`` into ``obj``: (the index after it, the value)."""
        s = self.s
        if s[i] != '"':
            raise _Bad(i, "Expecting property name enclosed in double quotes")
        key, i = self.string(i)
        i = self.ws(i)
        if i >= len(s):
            raise _Cut(_NOTHING)
        if s[i] != ":":
            raise _Bad(i, "Expecting ':' delimiter")
        try:
            obj[key], i = self.value(i + 1, depth + 1)
        except _Cut as inner:
            if inner.value is not _NOTHING:
                obj[key] = inner.value
            raise _Cut(_NOTHING) from None
        return i, obj[key]

    def obj(self, i: int, depth: int) -> tuple[dict[str, Any], int]:
        s = self.s
        obj: dict[str, Any] = {}
        first: int | None = None  # where the first member starts: its siblings' indentation

        def member(p: int) -> tuple[int, Any]:
            return self.member(p, obj, depth)

        while True:
            i = self.ws(i)
            if i >= len(s):
                break
            if s[i] == "}":
                return obj, i + 1
            first = i if first is None else first
            try:
                i, _ = member(i)
            except _Cut:
                break
            except _Bad as bad:
                i, _ = self.read_past(bad, first, "}", member, None)
                continue
            i = self.ws(i)
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] != "}":
                i, _ = self.read_past(_Bad(i, "Expecting ',' delimiter"), first, "}", member, None)
        self.cut.add(id(obj))
        raise _Cut(obj)

    def arr(self, i: int, depth: int) -> tuple[list[Any], int]:
        s = self.s
        arr: list[Any] = []
        first: int | None = None  # where the first item starts: its siblings' indentation

        def item(p: int) -> tuple[int, Any]:
            value, end = self.value(p, depth + 1)
            return end, value

        while True:
            i = self.ws(i)
            if i >= len(s):
                break
            if s[i] == "]":
                return arr, i + 1
            first = i if first is None else first
            start = i
            try:
                i, got = item(i)
            except _Cut as inner:
                if inner.value is not _NOTHING:
                    arr.append(inner.value)
                break
            except _Bad as bad:
                like = next((x for x in reversed(arr) if isinstance(x, dict)), None)
                i, got = self.read_past(bad, first, "]", item, like)
                if depth <= _RECORD_DEPTH:  # a record's place: the records after it keep their numbers
                    arr.append(Lost(where(s, bad.pos)[0]))
                arr.append(got)
                continue
            arr.append(got)
            i = self.ws(i)
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] != "]":  # the item ran on into damage: go past it
                if self.resync and _indent(s, start) != _indent(s, first):
                    arr.pop()  # not a sibling but a piece of the damaged record before it
                i, got = self.read_past(_Bad(i, "Expecting ',' delimiter"), first, "]", item, None)
                arr.append(got)
        self.cut.add(id(arr))
        raise _Cut(arr)

    def read_past(self, bad: _Bad, start: int, close: str, read: Callable[[int], tuple[int, Any]],
                  like: dict[str, Any] | None) -> tuple[int, Any]:
        """Where a container goes on after a damaged member or item (its siblings look like the one
        at ``start``): the index after the next sibling that ``read`` reads whole (followed by ``,``
        or ``close``), and that sibling's value. Raises ``bad`` again when reading past is off or no
        sibling is found."""
        if not self.resync:
            raise bad
        s = self.s
        indent = _indent(s, start)
        pretty = not indent.strip()
        if pretty:  # siblings start lines at this indentation, before the first line indented less
            pattern = re.compile("\n" + re.escape(indent) + r"(?=[^\s\]}])")
            opens = frozenset('"') if close == "}" else _VALUE_START
            less = re.compile(f"\n[ \t]{{0,{len(indent) - 1}}}(?=[^ \t\r\n])").search(s, bad.pos) if indent else None
            stop = less.start() + 1 if less is not None else len(s)
        elif close == "}":  # a compact member cannot be told from a later record's
            raise bad
        else:  # compact array: after a comma, with the items' opening character, on the damaged line
            pattern = re.compile(r",[ \t\r\n]*(?=" + re.escape(s[start]) + ")")
            opens = frozenset(s[start])
            stop = s.find("\n", bad.pos) + 1 or len(s)  # past it, a container that spans lines reads on
        tries = 0
        for m in pattern.finditer(s, max(bad.pos, start + 1), stop):
            p = m.end()
            if s[p] not in opens:
                continue
            tries += 1
            if tries > _MAX_TRIES:
                break
            try:
                after, value = read(p)
            except (_Bad, _Cut, RecursionError):
                continue
            after = self.ws(after)
            trusted = pretty or like is None or not isinstance(value, dict) or bool(value.keys() & like.keys())
            if after < len(s) and s[after] in (",", close) and trusted:
                line, column = where(s, bad.pos)
                self.damage.append(Damage(line, column, bad.reason, where(s, p)[0]))
                return (after + 1 if s[after] == "," else after), value
        raise bad


def _indent(s: str, pos: int) -> str:
    """What precedes ``pos`` on its line (whitespace when ``pos`` starts the line's text)."""
    return s[s.rfind("\n", 0, pos) + 1:pos]


def json_prefix(data: bytes | str, *, resync: bool = False) -> Prefix | None:
    """The JSON value at the start of ``data`` as far as it goes, or None if it is not JSON.

    A container cut off by the end of ``data`` keeps what was read of it (and is listed in
    ``Prefix.cut``), so ``detect()`` can look at the first record of a 500 MB array from its head.
    A syntax error ends the value there (``Prefix.error``), or, with ``resync``, costs only the
    record it is in (``Prefix.damage``). Text after a complete value (the next JSONL line) is ignored.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.lstrip("\ufeff")
    parser = _Parser(text, resync)
    error: Damage | None = None
    try:
        value, _ = parser.value(0, 0)
    except _Cut as exc:
        if exc.value is _NOTHING:
            return None
        return Prefix(exc.value, complete=False, cut=parser.cut, damage=parser.damage)
    except _Bad as bad:
        if bad.pos <= 0:
            return None
        line, column = where(text, bad.pos)
        error = Damage(line, column, bad.reason, line)
        before = json_prefix(text[: bad.pos], resync=resync)  # what was read up to the break
        if before is None:
            return None
        before.error = error
        return before
    except RecursionError:
        return None
    return Prefix(value, damage=parser.damage)


def load_document(path: Path, builder: SessionBuilder) -> Prefix:
    """The whole JSON document at ``path``. A damaged record costs that record (an error diagnostic
    names the line of the syntax error); a document cut off part-way is read up to that spot;
    nothing readable at all raises ``IngestError`` naming the line of the first syntax error."""
    try:
        data = read_regular(path)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    try:
        return Prefix(orjson.loads(data))
    except orjson.JSONDecodeError:
        pass
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        return Prefix(json.loads(text))  # orjson rejects some documents json reads (lone surrogates)
    except json.JSONDecodeError as exc:
        first = exc
    except RecursionError:
        raise IngestError(path, "JSON nested too deeply to read") from None
    doc = json_prefix(text, resync=True)
    if doc is None or not _read_something(doc, doc.value):
        raise IngestError(path, f"not valid JSON: {first.msg} at line {first.lineno} column {first.colno}",
                          line=first.lineno)
    for d in doc.damage:  # the reader counts the record at its ``Lost`` place
        builder.diag(Level.error, f"JSON broken at line {d.line} column {d.column} ({d.reason}): the record "
                     f"there was skipped, reading went on at line {d.resumed}", d.line)
    if doc.error is not None:
        e = doc.error
        builder.diag(Level.error, f"JSON document broken at line {e.line} column {e.column} ({e.reason}); "
                     "records before it were read, the rest is lost", e.line)
    elif not doc.complete:
        line, column = where(text, len(text.rstrip()))
        builder.diag(Level.error, f"JSON document cut off at line {line} column {column} ({first.msg}); "
                     "records before it were read, the rest is lost", line)
    if not doc.complete or doc.error is not None:
        doc.complete = False
        doc.cut.add(id(doc.value))
    return doc


def _read_something(doc: Prefix, value: Any) -> bool:
    """A salvaged value holds at least one whole record (list item) or field (object value)."""
    if isinstance(value, list):
        return any(not isinstance(item, Lost) and not doc.is_cut(item) for item in value)
    if isinstance(value, dict):
        return any(not doc.is_cut(v) or _read_something(doc, v) for v in value.values())
    return False


def complete_items(doc: Prefix, items: list[Any], builder: SessionBuilder) -> list[Any]:
    """``items`` without a last record the end of a broken document cut in half (counted as read).
    ``Lost`` places stay, so the records after them keep their numbers: readers skip them (their
    records were counted and diagnosed when the document was read)."""
    if items and doc.is_cut(items) and doc.is_cut(items[-1]):
        builder.records += 1
        return items[:-1]
    return items


MAX_VALUE_CHARS = 8 * 1024 * 1024
"""A single JSON record longer than this (an opencode part holding a 900 MB tool output) is read as
its first and last ``MAX_VALUE_CHARS // 2`` characters: the session keeps at most
``MAX_OUTPUT_CHARS`` of an output anyway, and its head and tail are what ``cap_output`` keeps."""


def join_cut(head: str, tail: str, elided: int) -> Any:
    """The JSON value of a record whose middle was not read: ``head`` and ``tail`` joined by an
    elision marker inside the string that spans the cut (the usual case: one huge output field).
    When the cut is not inside one string, the value as far as ``head`` goes (``json_prefix``);
    None when not even that is JSON."""
    marker = f"[… {elided} characters not read …]"
    for back in range(6):  # a cut inside an escape (``\\u00e9``, ``\\"``) breaks the string: move off it
        for ahead in range(6):
            try:
                return orjson.loads(head[: len(head) - back] + marker + tail[ahead:])
            except orjson.JSONDecodeError:
                continue
    doc = json_prefix(head)
    return doc.value if doc is not None else None


def load_bounded(path: Path, limit: int = MAX_VALUE_CHARS) -> tuple[Any, int]:
    """The JSON value of the file at ``path`` and how many bytes of its middle were not read (0: the
    whole file): a file over ``limit`` bytes is read as its first and last ``limit // 2``, never
    whole. Raises ``OSError`` (unreadable, not a regular file) or ``orjson.JSONDecodeError``."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size <= limit:
            return orjson.loads(strip_bom(fh.read())), 0
        half = limit // 2
        head = strip_bom(fh.read(half)).decode("utf-8", "replace")
        fh.seek(size - half)
        tail = fh.read(half).decode("utf-8", "replace")
    value = join_cut(head, tail, size - 2 * half)
    if value is None:
        raise orjson.JSONDecodeError("not JSON in its first bytes", head[:200], 0)
    return value, size - 2 * half
