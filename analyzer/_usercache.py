"""The user's cache folder: what one process builds and the next can load instead (the spaCy
pipeline, compiled report templates, the readings of messages).

``$SESSION_ANALYZER_CACHE_DIR`` if set (empty: no cache), else ``session-analyzer`` in the user's
cache folder (``$XDG_CACHE_HOME``, else ``~/.cache``; ``~/Library/Caches`` on macOS,
``%LOCALAPPDATA%`` on Windows). Never inside the package, which may be read-only or shared. What is
kept there is code or pickles that get loaded, so a folder other users could write to is not used.
Every caller treats a missing or unusable cache as no cache: the same results, only slower.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

CACHE_ENV = "SESSION_ANALYZER_CACHE_DIR"
"""Overrides the cache folder; an empty value turns the cache off."""


def cache_dir() -> Path | None:
    """The cache folder (it may not exist yet), or None when the cache is off."""
    override = os.environ.get(CACHE_ENV)
    if override is not None:
        return Path(override) if override else None
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
