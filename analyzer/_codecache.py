"""What deterministic compilers make at every start-up, kept in the user's cache folder: the code of
the methods ``@dataclass`` writes, of string annotations, and the programs of regular expressions.

A command's start-up compiled the same things each time:

- ``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``… as source text and
  compiles it while the class is made (~680 compiles: ours, pydantic's, annotated_types');
- ``typing.ForwardRef`` compiles each string annotation (~1,000, most of them pydantic models'
  fields under ``from __future__ import annotations``);
- ``re`` parses and compiles every pattern in pure Python (~200 at import, ours and our
  dependencies': PyYAML's, email's, tomllib's…).

Together ~100 ms of a small check. Each is kept keyed by its exact input, so a hit is what the
compiler would make of it: code is compiled as its caller compiles it (no future flags inherited),
a regex program is made by ``re``'s own steps, and a process's first one is checked against ``re``'s
own compile (a Python whose ``re`` internals differ keeps none), and the file names carry the interpreter's
bytecode magic and ``_sre``'s, so another Python never reads them. Every caller in the process uses
them once ``analyzer`` is imported: the same input gives the same output whoever asks (a warning
the regex parser gives of a pattern is given by the run that compiles it, not by later ones). A
missing, foreign or unreadable file is no cache.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # re's C engine: no stubs
import atexit
import builtins
import dataclasses
import marshal
import re
import sys
import typing
from collections.abc import Callable
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]
from types import CodeType
from typing import Any

from analyzer._usercache import private_dir, read_private, write_private

_LIMIT = 4096
"""Entries kept per file: a file that grew past it (many versions' inputs) keeps only this
process's, at most this many of them."""
_TAG = f"{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}"


class _Kept:
    """One marshal file of compiled things keyed by their input, read when first asked and
    written at exit when something was added."""

    def __init__(self, prefix: str, tag: str, valid: Callable[[object, object], bool]) -> None:
        self.prefix = prefix
        """Files of this table for other interpreters start so too; they are removed on a write."""
        self.name = f"{prefix}-{tag}.marshal"
        self.valid = valid
        self.table: dict[Any, Any] | None = None
        self.used: dict[Any, None] = {}
        """The keys this process asked for or added, in that order."""
        self.dirty = False

    def _path(self) -> Path | None:
        try:
            folder = private_dir("bytecode")
        except Exception:  # no home folder to find (Path.home), an odd environment: no cache
            return None
        return None if folder is None else folder / self.name

    def _read(self) -> dict[Any, Any]:
        # every regex compile of the process comes through here: nothing may escape but an empty table
        try:
            path = self._path()
            data = None if path is None else read_private(path)
            table = marshal.loads(data) if data else {}
            if not isinstance(table, dict):
                return {}
            return {k: v for k, v in table.items() if self.valid(k, v)}
        except Exception:  # truncated, not marshal data, unreadable
            return {}

    def get(self, key: Any) -> Any:
        if self.table is None:
            self.table = self._read()
        found = self.table.get(key)
        if found is not None:
            self.used[key] = None
        return found

    def put(self, key: Any, value: Any) -> None:
        if self.table is None:
            self.table = self._read()
        self.table[key] = value
        self.used[key] = None
        self.dirty = True

    def write(self) -> None:
        """Keep what this process added (atomically; a failure keeps the old file)."""
        path = self._path() if self.dirty and self.table is not None else None
        if path is None or self.table is None:
            return
        # past the limit: this process's entries only, its latest if it alone made more (a session
        # full of distinct patterns must not grow the file with it)
        table = self.table if len(self.table) <= _LIMIT else {k: self.table[k] for k in list(self.used)[-_LIMIT:]}
        # another Python's files, left by an upgrade, are never read again
        write_private(path, lambda fh: fh.write(marshal.dumps(table)), supersedes=f"{self.prefix}-*.marshal")


def _valid_code(key: object, value: object) -> bool:
    return isinstance(key, str) and isinstance(value, CodeType)


def _valid_program(key: object, value: object) -> bool:
    return (isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str | bytes)
            and isinstance(key[1], int) and isinstance(value, tuple) and len(value) == 5
            and isinstance(value[1], list) and isinstance(value[3], dict))


_CODE = _Kept("generated-code", _TAG, _valid_code)
_REGEX = _Kept("regex-programs", f"{_TAG}-{_sre.MAGIC}", _valid_program)
_stock_regex_compile = _compiler.compile
_regex_on = True
"""Off for the rest of the process once a program made here differs from ``re``'s own."""
_checked = False
"""Whether this process's first program was checked against ``re``'s own compile."""


def _compiled(source: str, mode: str) -> CodeType:
    key = f"{mode}\0{source}"
    code: CodeType | None = _CODE.get(key)
    if code is None:
        # dont_inherit: the callers' modules have no future imports, this module has
        code = builtins.compile(source, "<string>", mode, dont_inherit=True)
        _CODE.put(key, code)
    return code


def _exec(source: Any, globals: dict[str, Any] | None = None, locals: Any = None, /) -> None:
    """``exec`` as ``dataclasses`` calls it, with the compiled text looked up first."""
    if type(source) is not str:
        return builtins.exec(source, globals, locals)
    return builtins.exec(_compiled(source, "exec"), globals, locals)


def _compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
    """``compile`` as ``typing.ForwardRef`` calls it for a string annotation, looked up first."""
    if type(source) is not str or filename != "<string>" or mode != "eval" or args or kwargs:
        return builtins.compile(source, filename, mode, *args, **kwargs)
    return _compiled(source, mode)


def _program(pattern: str | bytes, flags: int) -> tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]:
    """What ``re._compiler.compile`` hands ``_sre.compile`` for ``pattern`` (its own steps)."""
    parsed = _parser.parse(pattern, flags)
    code = [int(op) for op in _compiler._code(parsed, flags)]  # opcodes are int subclasses marshal refuses
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _regex_compile(pattern: Any, flags: int = 0) -> Any:
    """``re._compiler.compile``, with the program of a pattern looked up first (``re`` keeps its
    own cache of Pattern objects in front of this, so each pattern comes here once a process).
    ``_program`` takes ``re``'s own steps; the first program a process makes is checked against
    ``re``'s own compile (the same pattern, flags and code), and a difference turns the cache off
    for the process, so a Python whose ``re`` internals differ keeps nothing."""
    global _checked, _regex_on
    flags = int(flags)
    if type(pattern) not in (str, bytes) or flags & re.DEBUG or not _regex_on:  # parsed; DEBUG prints
        return _stock_regex_compile(pattern, flags)
    key = (pattern, flags)
    program = _REGEX.get(key)
    if program is not None:
        try:
            return _sre.compile(pattern, *program)
        except Exception:  # a damaged entry (_sre validates the code): compile it anew below
            pass
    if not _checked:
        stock = _stock_regex_compile(pattern, flags)  # raises re.error as re.compile does
        try:
            agrees = _sre.compile(pattern, *_program(pattern, flags)) == stock
        except Exception:  # internals that differ on this Python
            agrees = False
        if not agrees:
            _regex_on = False
            return stock
        _checked = True
    program = _program(pattern, flags)  # raises re.error as re.compile does, nothing kept
    _REGEX.put(key, program)
    return _sre.compile(pattern, *program)


def install() -> None:
    """Route ``dataclasses``' one ``exec``, ``typing``'s one ``compile`` and ``re``'s compiler
    through the caches, once per process."""
    if getattr(dataclasses, "exec", None) is _exec:
        return
    # a module global shadows the builtin for that module only
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    typing.compile = _compile  # type: ignore[attr-defined]
    atexit.register(_CODE.write)
    _compiler.compile = _regex_compile
    atexit.register(_REGEX.write)
