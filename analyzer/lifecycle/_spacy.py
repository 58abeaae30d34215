"""Import spaCy without its command line.

``spacy/__init__`` imports ``spacy.cli.info`` for the ``spacy.info`` shortcut, and with it the
whole command line: weasel, typer, httpx, requests. That is ~0.15 s of the ~0.5 s the import costs,
paid by every process that reads a message, for code the analyzer never runs. ``import_spacy``
lets that one import find a placeholder, then takes the placeholder away again, so ``spacy.cli``
imports for real when anyone asks for it, and ``spacy.info`` still works (it imports on first call).
If spaCy's ``__init__`` changes so that the placeholder does not do, spaCy is imported the normal
way: only the saving is lost.

``load_cached`` / ``store_cached`` keep what a pipeline build makes (the vocabulary and the built
matchers) in the user's cache folder (``analyzer._usercache``) between processes, under a key of everything the build reads
(``cache_key``: the pattern data's source, spaCy's and Python's versions; computed without importing
spaCy, so that ``analyzer.lifecycle.language.store`` can check its readings in a process that never
imports it). A missing, unreadable,
read-only, foreign or stale cache is never an error: the caller builds, as without a cache.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import pickle
import sys
import types
from pathlib import Path
from typing import Any

from analyzer._usercache import cache_dir, private_dir, read_private, write_private

_CLI, _INFO = "spacy.cli", "spacy.cli.info"


def _info(*args: Any, **kwargs: Any) -> Any:
    """``spacy.info``, imported when first called."""
    from spacy.cli.info import info

    return info(*args, **kwargs)


def import_spacy() -> types.ModuleType:
    """``import spacy``, without importing ``spacy.cli`` when it is not imported yet."""
    if "spacy" in sys.modules:
        return sys.modules["spacy"]
    cli, info = types.ModuleType(_CLI), types.ModuleType(_INFO)
    info.info = _info  # type: ignore[attr-defined]
    cli.__path__ = []  # a package, so that ``from .cli.info import …`` resolves
    cli.info = info  # type: ignore[attr-defined]
    sys.modules[_CLI], sys.modules[_INFO] = cli, info
    try:
        import spacy
    except Exception:  # spaCy's __init__ wants more of its CLI: import it plainly
        for name in [m for m in sys.modules if m == "spacy" or m.startswith("spacy.")]:
            del sys.modules[name]
        import spacy
    finally:
        for name, stub in ((_INFO, info), (_CLI, cli)):
            if sys.modules.get(name) is stub:
                del sys.modules[name]
    if spacy.__dict__.get("cli") is cli:
        del spacy.__dict__["cli"]  # the next ``import spacy.cli`` (or attribute access after it) gets the real one
    return spacy


# --- the pipeline cache --------------------------------------------------------------------------------

_FORMAT = b"pipeline-cache-1"
"""Bumped when what is stored changes shape, so that old files are stale."""


def spacy_release() -> bytes:
    """spaCy's ``about.py`` (its version), read without importing spaCy: the readings cache is
    checked by processes that never import it. Empty when spaCy is not installed."""
    spec = importlib.util.find_spec("spacy")  # a top-level package: found, not imported
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        try:
            return (Path(folder) / "about.py").read_bytes()
        except OSError:
            continue
    return b""


def cache_key(*parts: bytes | str) -> str:
    """A hex digest of ``parts`` together with spaCy's, Python's and pickle's versions."""
    digest = hashlib.sha256(_FORMAT)
    for part in (spacy_release(), sys.version, str(pickle.HIGHEST_PROTOCOL), *parts):
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()


def _path(name: str, key: str, folder: Path) -> Path:
    return folder / f"{name}-{key[:32]}.pickle"


def load_cached(name: str, key: str) -> Any | None:
    """What ``store_cached(name, key, …)`` stored, or None: no cache, no file, a file another user
    could have written (it is unpickled, so only the user's own private files are trusted), a
    file stored under another key, or any error reading it."""
    folder = cache_dir()
    if folder is None:
        return None
    # srsly's msgpack loader (spaCy's string store and lookups) calls gc.enable() whatever the state
    # was: with threshold 0 nothing is collected meanwhile, and the caller's state is put back
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    gc.set_threshold(0)
    try:
        data = read_private(_path(name, key, folder))
        if data is None:
            return None
        stored_key, value = pickle.loads(data)
    except Exception:  # missing, unreadable, truncated, or made by another version: build instead
        return None
    finally:
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()
    return value if stored_key == key else None


def store_cached(name: str, key: str, value: Any) -> bool:
    """Keep ``value`` under ``name`` and ``key``, replacing the files of ``name`` under other keys.
    Written to a temporary file and renamed, so a reader never sees half a file. False (and
    nothing raised) when the folder cannot be made or written."""
    folder = private_dir()
    if folder is None:
        return False
    target = _path(name, key, folder)
    return write_private(target, lambda fh: pickle.dump((key, value), fh, protocol=pickle.HIGHEST_PROTOCOL),
                         supersedes=f"{name}-*.pickle")
