"""Finding sessions under folders, in every layout the formats write:

* Claude Code ``~/.claude/projects/<proj>/<session>.jsonl``: the ``<session>/`` folder beside it
  (``subagents/agent-*.jsonl``, tool results) is read with the main file, never on its own;
* Codex ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``, Gemini ``chats/session-*.json``, …: any
  file some format in ``FORMATS`` detects from its head (``detect()`` reads 64 KiB, never the file);
* opencode: a ``storage/`` folder (``session/``, ``message/``, ``part/``) holds many sessions, each
  found as its ``session/<project>/<id>.json`` file; ``opencode.db`` holds many sessions, each
  found as the database plus a ``member`` id; sub-agent (child) sessions load with their parent;
* OpenHands event store: a ``sessions/<sid>/`` folder with ``events/<id>.json`` is one session;
* ``*.session.yaml`` fixtures (never ``*.cases.yaml``: rule cases hold many sessions).

Files named like a session that no format reads (a garbled ``rollout-*.jsonl``, any JSONL) are
found too, so that loading them reports why; other unreadable files are skipped quietly.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from analyzer.ingest import FORMATS, IngestError, detect
from analyzer.ingest.base import open_regular

_SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".cache", ".npm", ".cargo", ".rustup",
    "site-packages", ".idea", ".gradle", ".m2",
})
"""Folders that hold tools' own files, never agent logs (hidden folders like ``.claude`` are walked)."""

_SKIP_SUFFIXES = frozenset({
    ".py", ".pyc", ".pyo", ".so", ".o", ".a", ".dll", ".dylib", ".exe", ".class", ".jar", ".whl",
    ".html", ".htm", ".css", ".js", ".ts", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico",
    ".pdf", ".zip", ".gz", ".bz2", ".xz", ".zst", ".tar", ".7z", ".mp3", ".mp4", ".mov", ".wav",
    ".toml", ".cfg", ".ini", ".lock", ".pt", ".bin", ".safetensors", ".gguf", ".onnx", ".npy", ".parquet",
})
"""Suffixes no format reads: skipped without opening the file."""


@dataclass(frozen=True)
class Found:
    """One session found under a given path."""

    path: Path
    """What to load: a file, a Claude Code session folder, or an opencode database."""
    root: Path
    """The folder (or file) it was found under, as given: output names are relative to it."""
    member: str | None = None
    """The session id inside a database holding many (``opencode.db``); None otherwise."""

    @property
    def relative(self) -> str:
        """``path`` relative to ``root`` (the file name when ``root`` is the file), POSIX style."""
        rel = self.path.name if self.path == self.root else self.path.relative_to(self.root).as_posix()
        return f"{rel}#{self.member}" if self.member else rel


def _loaded_by_parent(path: Path) -> bool:
    return path.parent.name == "subagents" and path.name.startswith("agent-")


def _claude_session_folder(folder: Path) -> bool:
    """``<session>/`` beside ``<session>.jsonl``: sub-agents and tool results of that session."""
    return folder.with_name(folder.name + ".jsonl").is_file()


def _is_storage_root(folder: Path) -> bool:
    return (folder / "session").is_dir() and (folder / "message").is_dir()


_HARNESS_FILES = frozenset({(".claude", "history.jsonl"), (".codex", "history.jsonl")})
"""JSONL files harnesses keep beside their sessions that are not sessions (prompt histories)."""


def _named_like_session(path: Path) -> bool:
    """The name says it is a session log (any JSONL: most agents write JSONL): worth reporting
    when no format reads it, instead of leaving it out without a word."""
    name = path.name
    if (path.parent.name, name) in _HARNESS_FILES:
        return False
    return (
        path.suffix in (".jsonl", ".traj", ".cast")
        or name.endswith((".session.yaml", ".aider.chat.history.md"))
        or (path.parent.name == "chats" and name.startswith("session-") and path.suffix == ".json")
    )


def _storage_sessions(root: Path, given: Path) -> Iterator[Found]:
    """The top-level sessions of a storage folder; child sessions load with their parent."""
    from analyzer.ingest import opencode  # its reader, only where a walk meets its storage

    try:
        refs = opencode.list_sessions(root)
    except (IngestError, OSError):
        return
    ids = {r.id for r in refs}
    for ref in sorted(refs, key=lambda r: r.id):
        if ref.parent_id and ref.parent_id in ids:
            continue
        info = sorted((root / "session").glob(f"*/{ref.id}.json"))
        yield Found(info[0] if info else root / "message" / ref.id, given)


def _database_sessions(path: Path, given: Path) -> Iterator[Found]:
    from analyzer.ingest import opencode

    try:
        refs = opencode.list_sessions(path)
    except (IngestError, OSError, ValueError):
        yield Found(path, given)  # loading it reports why
        return
    ids = {r.id for r in refs}
    top = sorted(r.id for r in refs if not (r.parent_id and r.parent_id in ids))
    if not top:
        yield Found(path, given)
    for sid in top:
        yield Found(path, given, member=sid)


def _is_database(path: Path) -> bool:
    from analyzer.ingest import opencode

    try:
        with open_regular(path) as fh:  # a FIFO named *.db must not block the walk
            return fh.read(len(opencode.SQLITE_MAGIC)) == opencode.SQLITE_MAGIC
    except OSError:
        return False


Known = Callable[[Path, os.stat_result], bool]
"""Whether a file (with the stat the walk just took) is known to be a one-session file unchanged
since it was last found (the batch cache knows): it is not opened and detected again."""


def _file(path: Path, given: Path, walking: bool, known: Known | None = None) -> Iterator[Found]:
    """The sessions one file holds. Found by walking, a file must be detected (or named like a
    session); given by name, it is always yielded: loading it reports its error."""
    if walking:
        if path.suffix.lower() in _SKIP_SUFFIXES or _loaded_by_parent(path) or path.name.endswith(".cases.yaml"):
            return
        try:
            st = path.stat()
        except OSError:
            return
        if st.st_size == 0:
            return
        if known is not None and known(path, st):
            yield Found(path, given)
            return
        try:
            fmt, _ = detect(path)
        except IngestError:
            if _named_like_session(path):
                yield Found(path, given)
            return
    else:
        try:
            fmt, _ = detect(path)
        except IngestError:
            yield Found(path, given)
            return
    if fmt.NAME == "opencode" and _is_database(path):
        yield from _database_sessions(path, given)
    else:
        yield Found(path, given)


def _walk(folder: Path, given: Path, exclude: frozenset[Path], seen: set[Path],
          known: Known | None = None) -> Iterator[Found]:
    """Sorted, depth-first; symlinked folders are followed once (``seen`` holds real paths)."""
    try:
        real = folder.resolve()
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (OSError, RuntimeError):
        return
    if real in seen or real in exclude:
        return
    seen.add(real)
    subdirs: list[Path] = []
    for entry in entries:
        p = Path(entry.path)
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
        except OSError:
            continue
        if is_dir:
            if entry.name not in _SKIP_DIRS and not _claude_session_folder(p):
                subdirs.append(p)
        elif is_file:
            yield from _file(p, given, walking=True, known=known)
    for sub in subdirs:
        if _is_storage_root(sub):
            yield from _storage_sessions(sub, given)
        elif FORMATS["openhands"].detect(sub, b""):  # sessions/<sid>/events/*.json of OpenHands: one session
            yield Found(sub, given)
        else:
            yield from _walk(sub, given, exclude, seen, known)


def discover_sessions(paths: Iterable[str | Path], exclude: Iterable[str | Path] = (),
                      excluded: Callable[[Path], bool] | None = None, known: Known | None = None) -> Iterator[Found]:
    """Every session under ``paths``, each once, in a stable order (sorted walk of each path).

    ``exclude``: folders not to enter (the batch's own output); ``excluded``: which session paths
    to skip among those a walk finds (``Config.excluded``, as ``check`` uses it; a file given by
    name is never skipped); ``known``: files found before and unchanged, taken
    without reading their head again.
    """
    skip = frozenset(Path(e).resolve() for e in exclude)
    seen: set[tuple[Path, str | None]] = set()
    for given in paths:
        p = Path(given)
        if p.is_dir():
            if _is_storage_root(p):
                found: Iterator[Found] = _storage_sessions(p, p)
            elif FORMATS.claim(p, b"") is not None and not (p / "storage").is_dir():
                found = iter([Found(p, p)])  # a folder a format reads whole (Claude Code session folder)
            else:
                found = _walk(p, p, skip, set(), known)
        else:
            found = _file(p, p, walking=False)
        for f in found:
            key = (f.path.resolve(), f.member)
            named = f.path == p  # a file given by name is meant: exclude globs are for what a walk finds
            if key in seen or (not named and excluded is not None and excluded(f.path)):
                continue
            seen.add(key)
            yield f


def discover(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every session under ``paths`` as a path to load. A database holding many sessions is
    yielded once (loading it reads the most recent); ``discover_sessions`` lists each."""
    last: Path | None = None
    for f in discover_sessions(paths):
        if f.member is not None and f.path == last:
            continue
        last = f.path
        yield f.path
