"""The compiled code of the methods ``@dataclass`` writes and of string annotations, kept in the
user's cache folder.

``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``… as source text and
compiles it while the class is made: ~680 compiles, ~50 ms of every command's start-up, as much as
the rest of the analyzer's own module bodies. The text is the key, so a hit runs exactly the code a
compile of it gives: it is compiled the way ``dataclasses``' own ``exec`` compiles it (no future
flags inherited), and the file name carries the interpreter's bytecode magic number, so another
Python never reads it. Every dataclass made after ``import analyzer`` uses it, pydantic's and
annotated_types' too (~210 more of the compiles): the same text gives the same code whoever asks.
``typing.ForwardRef`` compiles each string annotation the same way (~1,000 per command, most of
them the fields of pydantic models under ``from __future__ import annotations``), so it is served
from the same file. A missing, foreign or unreadable file is no cache.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import marshal
import sys
import typing
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from analyzer._usercache import private_dir, read_private, write_private

_LIMIT = 4096
"""Entries kept: a file that grew past it (many versions' texts) keeps only this process's."""
_NAME = f"generated-code-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.marshal"

_codes: dict[str, CodeType] | None = None
_used: set[str] = set()
_dirty = False


def _path() -> Path | None:
    folder = private_dir("bytecode")
    return None if folder is None else folder / _NAME


def _read() -> dict[str, CodeType]:
    path = _path()
    data = None if path is None else read_private(path)
    try:
        codes = marshal.loads(data) if data else {}
    except (EOFError, ValueError, TypeError):  # truncated, or not marshal data
        return {}
    if not isinstance(codes, dict):
        return {}
    return {k: v for k, v in codes.items() if isinstance(k, str) and isinstance(v, CodeType)}


def _write() -> None:
    """At exit: keep what this process compiled."""
    path = _path() if _dirty and _codes is not None else None
    if path is None or _codes is None:
        return
    codes = _codes if len(_codes) <= _LIMIT else {k: _codes[k] for k in _used}
    write_private(path, lambda fh: fh.write(marshal.dumps(codes)))


def _compiled(source: str, mode: str) -> CodeType:
    global _codes, _dirty
    if _codes is None:
        _codes = _read()
    key = f"{mode}\0{source}"
    code = _codes.get(key)
    if code is None:
        # dont_inherit: the callers' modules have no future imports, this module has
        code = _codes[key] = builtins.compile(source, "<string>", mode, dont_inherit=True)
        _dirty = True
    _used.add(key)
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


def install() -> None:
    """Route ``dataclasses``' one ``exec`` and ``typing``'s one ``compile`` (a string annotation's
    ``ForwardRef``, ~1,000 of them from pydantic's models) through the cache, once per process."""
    if getattr(dataclasses, "exec", None) is not _exec:
        # a module global shadows the builtin for that module only
        dataclasses.exec = _exec  # type: ignore[attr-defined]
        typing.compile = _compile  # type: ignore[attr-defined]
        atexit.register(_write)
