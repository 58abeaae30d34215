"""glibc's ``regcomp``/``regexec`` through ctypes: the native half of :mod:`analyzer.shell.ere`.

A module of its own so that ctypes and ``ctypes.util`` (~6 ms of CPU to import) and
``find_library`` (``ldconfig``, ~30 ms of wall time) are paid only by a process that evaluates a
pattern; ``ere`` imports it on first use and keeps the bounds, the dispatch and the translator.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache
from typing import Literal

from analyzer.shell.ere import _CACHE_SIZE, _to_c

_LC_ALL_MASK = 8127  # glibc: (1 << 13) - 1 without LC_ALL's own bit 6


class _RegexT(ctypes.Structure):
    # opaque to us; 64 bytes on x86-64 glibc, so 256 is ample and 8-byte aligned
    _fields_ = [("opaque", ctypes.c_uint64 * 32)]


class _RegMatch(ctypes.Structure):
    _fields_ = [("rm_so", ctypes.c_int), ("rm_eo", ctypes.c_int)]  # glibc regoff_t is int


@dataclass(slots=True)
class _Glibc:
    lib: ctypes.CDLL
    locale: int | None
    """A ``newlocale`` handle for C.UTF-8 (None: the C library lacks it; the process locale is used)."""


def _load_glibc() -> _Glibc | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        lib = ctypes.CDLL(name)
    except OSError:
        return None
    # only glibc: BSD/macOS libcs use other flag values and another engine (TRE)
    if not all(hasattr(lib, f) for f in ("gnu_get_libc_version", "regcomp", "regexec", "regfree")):
        return None
    lib.regcomp.argtypes = [ctypes.POINTER(_RegexT), ctypes.c_char_p, ctypes.c_int]
    lib.regcomp.restype = ctypes.c_int
    lib.regexec.argtypes = [
        ctypes.POINTER(_RegexT), ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(_RegMatch), ctypes.c_int,
    ]
    lib.regexec.restype = ctypes.c_int
    lib.regfree.argtypes = [ctypes.POINTER(_RegexT)]
    lib.regfree.restype = None
    handle: int | None = None
    if hasattr(lib, "newlocale") and hasattr(lib, "uselocale"):
        lib.newlocale.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
        lib.newlocale.restype = ctypes.c_void_p
        lib.uselocale.argtypes = [ctypes.c_void_p]
        lib.uselocale.restype = ctypes.c_void_p
        # pgrep runs setlocale(LC_ALL, ""), which is a UTF-8 locale on every modern system
        for loc in (b"C.UTF-8", b"C.utf8", b"en_US.UTF-8"):
            got = lib.newlocale(_LC_ALL_MASK, loc, None)
            if got:
                handle = int(got)
                break
    return _Glibc(lib, handle)


@cache
def load() -> _Glibc | None:
    """glibc, loaded once; None when the C library is not glibc (BSD, macOS, musl)."""
    return _load_glibc()


class _Compiled:
    """One regcomp'd pattern; freed on eviction from the cache and at exit."""

    __slots__ = ("regex", "valid")

    def __init__(self, regex: _RegexT, valid: bool) -> None:
        self.regex = regex
        self.valid = valid

    def free(self) -> None:
        if self.valid and (glibc := load()) is not None:
            glibc.lib.regfree(ctypes.byref(self.regex))
            self.valid = False


# regexec on one regex_t is internally locked by glibc, but compile, eviction and the
# thread-local locale switch are ours: one lock keeps it simple and is never contended much
_LOCK = threading.Lock()
_CACHE: OrderedDict[tuple[bytes, int], _Compiled] = OrderedDict()


def _free_all() -> None:
    with _LOCK:
        for entry in _CACHE.values():
            entry.free()
        _CACHE.clear()


atexit.register(_free_all)


def search(pattern: str, subject: str, flags: int) -> tuple[int, int] | Literal[False] | None:
    """(start, end) in characters of the leftmost match, False for no match, None if invalid."""
    glibc = load()
    assert glibc is not None
    lib = glibc.lib
    key = (_to_c(pattern), flags)
    subj = _to_c(subject)
    with _LOCK:
        old = lib.uselocale(glibc.locale) if glibc.locale is not None else None
        try:
            entry = _CACHE.get(key)
            if entry is None:
                regex = _RegexT()
                rc = lib.regcomp(ctypes.byref(regex), key[0], flags)
                entry = _Compiled(regex, rc == 0)
                _CACHE[key] = entry
                if len(_CACHE) > _CACHE_SIZE:
                    _, evicted = _CACHE.popitem(last=False)
                    evicted.free()
            else:
                _CACHE.move_to_end(key)
            if not entry.valid:
                return None
            match = _RegMatch()
            rc = lib.regexec(ctypes.byref(entry.regex), subj, 1, ctypes.byref(match), 0)
        finally:
            if old is not None:
                lib.uselocale(old)
    if rc != 0:
        return False
    # byte offsets -> character offsets (REG_NOSUB is not set, so offsets are filled)
    start = len(subj[: match.rm_so].decode("utf-8", "replace"))
    end = start + len(subj[match.rm_so : match.rm_eo].decode("utf-8", "replace"))
    return (start, end)
