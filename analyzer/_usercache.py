"""The user's cache folder: what one process builds and the next can load instead (the spaCy
pipeline, compiled report templates, the readings of messages).

``$SESSION_ANALYZER_CACHE_DIR`` if set (empty: no cache), else ``session-analyzer`` in the user's
cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``; ``~/Library/Caches`` on macOS,
``%LOCALAPPDATA%`` on Windows). Never inside the package, which may be read-only or shared. What is
kept there is code or pickles that get loaded, so a folder other users could write to is not used.
Every caller treats a missing or unusable cache as no cache: the same results, only slower.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

CACHE_ENV = "SESSION_ANALYZER_CACHE_DIR"
"""Overrides the cache folder; an empty value turns the cache off."""


def cache_dir() -> Path | None:
    """The cache folder (it may not exist yet), or None when the cache is off or there is no home
    folder to put it in."""
    override = os.environ.get(CACHE_ENV)
    if override is not None:
        return Path(override) if override else None
    try:
        return _default_dir()
    except RuntimeError:  # Path.home(): no home folder to be found (no HOME, no passwd entry)
        return None


def _default_dir() -> Path:
    if sys.platform == "win32":
        root = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        root = str(Path.home() / "Library" / "Caches")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        root = xdg if os.path.isabs(xdg) else str(Path.home() / ".cache")  # the spec ignores a relative one
    return Path(root) / "session-analyzer"


def private(info: os.stat_result) -> bool:
    """Whether a cache file or folder is only the user's own: theirs, and not group- or world-writable."""
    return not info.st_mode & 0o022 and (not hasattr(os, "getuid") or info.st_uid == os.getuid())


def private_dir(*parts: str) -> Path | None:
    """The cache folder (or a folder below it), made private if missing; None when the cache is
    off, the folder cannot be made, or it is not private."""
    root = cache_dir()
    return None if root is None else private_folder(root.joinpath(*parts))


def private_folder(folder: Path) -> Path | None:
    """``folder``, made private if missing; None when it cannot be made or is not private."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError:
        return None
    return folder if stat.S_ISDIR(info.st_mode) and private(info) else None


def read_private(path: Path) -> bytes | None:
    """The bytes of ``path`` if it is a regular file only the user could have written (what is
    kept here gets loaded as code or pickles); None when it is missing, unreadable or not so."""
    try:
        with open(path, "rb") as fh:
            info = os.fstat(fh.fileno())
            if not stat.S_ISREG(info.st_mode) or not private(info):
                return None
            return fh.read()
    except OSError:
        return None


def read_private_json(path: Path | None) -> Any:
    """The JSON value ``read_private`` finds in ``path``; None when there is none or it is no JSON."""
    data = None if path is None else read_private(path)
    try:
        return None if data is None else json.loads(data)
    except ValueError:  # damaged: the caller makes it again
        return None


def write_private(path: Path, write: Callable[[BinaryIO], object], *, supersedes: str | None = None) -> bool:
    """Replace ``path`` with what ``write`` writes, through a private temporary file in the same
    folder and a rename, so a reader never sees half a file. False (and nothing raised) when the
    folder cannot be written; the old file, if any, stays. ``supersedes``: a glob of the files in
    that folder this one makes stale (another key's, another Python's), removed once it is written."""
    import tempfile  # only a process with something new to keep writes

    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, path)
    except Exception:  # full, read-only meanwhile, or a value that cannot be written
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    if supersedes is not None:
        with contextlib.suppress(OSError):  # a folder that cannot be listed keeps the old files
            for old in path.parent.glob(supersedes):
                if old != path:
                    old.unlink(missing_ok=True)
    return True
