"""Sessions behind fsspec URLs (``s3://``, ``gs://``, ``memory://``, ``file://``…): listing them,
detecting their format from heads read through fsspec, and fetching one session's files into a
local folder, since the format readers read paths. fsspec is imported here, on first use only.

Read from URLs: every single-file format, and Claude Code sessions with their
``<session>/subagents/agent-*.jsonl`` files. Not read from URLs: opencode storage folders and
``opencode.db`` (thousands of small files, or SQLite): each is listed as one session that fails
with a message saying to pass a local copy.
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PosixPath, PurePosixPath
from typing import Any

from analyzer.ingest import FORMATS, IngestError, opencode
from analyzer.ingest.base import HEAD_BYTES
from analyzer.ingest.discover import _SKIP_DIRS, _SKIP_SUFFIXES, _loaded_by_parent, _named_like_session

INSTALL_HINT = "pip install 'session-analyzer[dask]'"

RemoteStat = list[int]
"""``[size, mtime_ns, tag]`` of a listed file (``mtime_ns`` 0 and ``tag`` 0 when the store has
none; ``tag`` is a hash of the ETag or checksum): what the batch cache compares."""

STORAGE_UNSUPPORTED = ("opencode storage folders are read from local paths only (a session spans many "
                       "small files): copy or mount the folder and pass its local path")
EVENT_STORE_UNSUPPORTED = ("OpenHands event-store folders are read from local paths only (a session is a "
                           "folder of one file per event): copy or mount the folder and pass its local path")
DATABASE_UNSUPPORTED = ("SQLite databases (opencode.db) are read from local paths only: copy the file "
                        "and pass its local path")

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_SUBAGENTS = "subagents"


class RemoteError(Exception):
    """A URL root that cannot be read at all: fsspec or the store's package missing, no such path."""


def is_url(path: str | Path) -> bool:
    """``scheme://…``: read through fsspec. A ``Path`` never is (it would have lost a slash)."""
    return isinstance(path, str) and _URL.match(path) is not None


def filesystem(url: str) -> tuple[Any, str]:
    """The fsspec filesystem of ``url`` and the path inside it."""
    try:
        from fsspec.core import url_to_fs
    except ImportError:
        raise RemoteError(f"{url}: reading URLs needs fsspec: {INSTALL_HINT}") from None
    try:
        fs, path = url_to_fs(url)
    except (ImportError, ValueError) as exc:  # e.g. "Install s3fs to access S3", unknown protocol
        raise RemoteError(f"{url}: {exc}") from None
    return fs, str(path)


def _mtime_ns(info: dict[str, Any]) -> int:
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        value = info.get(key)
        if isinstance(value, datetime):
            return int((value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp() * 1e9)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value * 1e9)
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            return int((parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp() * 1e9)
    return 0


def _tag(info: dict[str, Any]) -> int:
    for key in ("ETag", "etag", "md5Hash", "crc32c", "checksum", "generation", "VersionId", "version_id"):
        value = info.get(key)
        if value:
            return int.from_bytes(hashlib.sha256(str(value).encode()).digest()[:7], "big")
    return 0


def stat_of_info(info: dict[str, Any]) -> RemoteStat:
    size = info.get("size")
    return [int(size) if isinstance(size, int | float) else -1, _mtime_ns(info), _tag(info)]


@dataclass
class Listing:
    """The files under the URL roots of a run, with their stats: one ``fs.find`` per root, so the
    cache and ``--since`` ask the store nothing more."""

    files: dict[str, RemoteStat] = field(default_factory=dict)
    """URL → stat."""
    _children: dict[str, list[str]] = field(default_factory=dict)

    def add(self, url: str, stat: RemoteStat) -> None:
        self.files[url] = stat
        parent, _, name = url.rpartition("/")
        self._children.setdefault(parent, []).append(name)

    def stat(self, url: str) -> RemoteStat | None:
        """A file's stat; for a folder, ``[files, 0, hash of their names]`` (a new file changes it)."""
        if url in self.files:
            return self.files[url]
        names = self._children.get(url.rstrip("/"))
        if not names:
            return None
        digest = hashlib.sha256("\0".join(sorted(names)).encode("utf-8", "surrogatepass")).digest()
        return [len(names), 0, int.from_bytes(digest[:7], "big")]

    def mtime_ns(self, url: str) -> int | None:
        st = self.files.get(url)
        return st[1] if st and st[1] else None

    def dependencies(self, url: str, fmt: str | None) -> dict[str, RemoteStat | None]:
        """What a session read besides its main file, as ``batch.signature.dependencies`` keeps it
        for local files: a Claude Code session's sub-agent files and their folder."""
        if not url.endswith(".jsonl") or fmt not in (None, "claude-code"):
            return {}
        folder = f"{url[:-len('.jsonl')]}/{_SUBAGENTS}"
        deps: dict[str, RemoteStat | None] = {
            f"{folder}/{n}": self.files[f"{folder}/{n}"] for n in self._children.get(folder, [])
            if fnmatch.fnmatchcase(n, "agent-*.jsonl")
        }
        deps[folder] = self.stat(folder)
        return dict(sorted(deps.items()))


@dataclass(frozen=True)
class RemoteFound:
    """One session found under a URL root."""

    url: str
    relative: str
    """Its path below the root (the file name when the root is the file), POSIX style."""
    unsupported: str | None = None
    """Why it cannot be read from a URL (opencode storage, databases); None when it can."""


class _Listed(PosixPath):
    """A listed file's name for the formats' ``detect()``: never a local folder, never opened."""

    def is_dir(self) -> bool:
        return False


def _detect(head: bytes, rel: str) -> bool:
    name = _Listed(rel)
    return any(fmt.detect(name, head) for fmt in FORMATS.values())


def _head(fs: Any, path: str) -> bytes:
    data = fs.cat_file(path, start=0, end=HEAD_BYTES)
    return bytes(data)


def _file(fs: Any, path: str, url: str, rel: str, walking: bool) -> RemoteFound | None:
    """Like ``discover._file`` for a listed file: found by walking it must be detected (or named
    like a session); given by name it always is (loading it reports why it cannot be read)."""
    p = PurePosixPath(rel)
    if walking and (p.suffix.lower() in _SKIP_SUFFIXES or _loaded_by_parent(Path(rel))
                    or p.name.endswith(".cases.yaml")):
        return None
    try:
        head = _head(fs, path)
    except OSError:
        return RemoteFound(url, rel) if not walking or _named_like_session(Path(rel)) else None
    if walking and not head:
        return None
    if head.startswith(opencode.SQLITE_MAGIC):
        return RemoteFound(url, rel, DATABASE_UNSUPPORTED) if p.suffix == ".db" or not walking else None
    if not walking or _detect(head, rel) or _named_like_session(Path(rel)):
        return RemoteFound(url, rel)
    return None


def _storage_roots(dirs: set[str]) -> set[str]:
    """Folders holding ``session/`` and ``message/``: opencode storage ("" for the root itself)."""
    return {posixpath.dirname(d) for d in dirs
            if posixpath.basename(d) == "session" and posixpath.join(posixpath.dirname(d), "message") in dirs}


def _event_stores(files: Iterable[str]) -> set[str]:
    """Session folders holding ``events/<id>.json``: an OpenHands event store."""
    stores = set()
    for rel in files:
        folder, name = posixpath.split(rel)
        if posixpath.basename(folder) == "events" and name.endswith(".json") and name[:-5].isdigit():
            stores.add(posixpath.dirname(folder))
    return stores


def _under(rel: str, folders: set[str]) -> bool:
    parts = rel.split("/")
    return any("/".join(parts[:i]) in folders for i in range(len(parts)))


def discover_remote(url: str, listing: Listing,
                    excluded: Callable[[str, str], bool] | None = None) -> list[RemoteFound]:
    """Every session under the URL ``url`` in path order; its files' stats go into ``listing``.
    ``excluded(url, relative)`` skips a session a listing finds (``Config.excluded_remote``); a URL
    naming one file is never skipped. Raises ``RemoteError`` when the root cannot be listed."""
    fs, root = filesystem(url)
    try:
        info = fs.info(root)
    except FileNotFoundError:
        raise RemoteError(f"{url}: no such file or folder") from None
    except OSError as exc:
        raise RemoteError(f"{url}: cannot read: {exc}") from None
    if info.get("type") != "directory":
        listing.add(url, stat_of_info(info))
        name = posixpath.basename(root.rstrip("/"))
        single = _file(fs, root, url, name, walking=False)
        return [single] if single else []
    try:
        entries: dict[str, dict[str, Any]] = fs.find(root, detail=True)
    except OSError as exc:
        raise RemoteError(f"{url}: cannot list: {exc}") from None
    prefix = root.rstrip("/") + "/"
    base = url if url.endswith("/") else url + "/"
    files: dict[str, tuple[str, dict[str, Any]]] = {}
    for path, entry in entries.items():
        if entry.get("type", "file") == "file" and path.startswith(prefix):
            files[path[len(prefix):]] = (path, entry)
    dirs = {a for rel in files for a in _ancestors(posixpath.dirname(rel))}
    storage = _storage_roots(dirs)
    claude_folders = {d for d in dirs if f"{d}.jsonl" in files}
    stores = _event_stores(files)  # "" when the URL itself is a store
    unsupported = {**{s: STORAGE_UNSUPPORTED for s in storage}, **{s: EVENT_STORE_UNSUPPORTED for s in stores}}
    found: list[RemoteFound] = [RemoteFound(base + s if s else url, s or posixpath.basename(root.rstrip("/")),
                                            why) for s, why in sorted(unsupported.items())
                                if not any(part in _SKIP_DIRS for part in s.split("/"))]
    for rel in sorted(files):
        path, entry = files[rel]
        file_url = base + rel
        listing.add(file_url, stat_of_info(entry))
        folder_parts = rel.split("/")[:-1]
        if any(part in _SKIP_DIRS for part in folder_parts) or _under(rel, storage | claude_folders | stores):
            continue
        if entry.get("size") == 0:
            continue
        hit = _file(fs, path, file_url, rel, walking=True)
        if hit is not None:
            found.append(hit)
    if excluded is not None:
        found = [f for f in found if not excluded(f.url, f.relative)]
    return sorted(found, key=lambda f: f.url)


def _ancestors(folder: str) -> list[str]:
    """``a/b/c`` → ``a``, ``a/b``, ``a/b/c`` (``""`` for the root)."""
    if not folder:
        return [""]
    parts = folder.split("/")
    return ["", *("/".join(parts[:i]) for i in range(1, len(parts) + 1))]


def parent_url(url: str) -> str:
    return url.rstrip("/").rpartition("/")[0]


def fetch(url: str, dest: Path) -> Path:
    """Copy the session at ``url`` into ``dest`` (a Claude Code session with its sub-agent files,
    laid out as beside the original) and return the local path to load. Raises ``IngestError``."""
    try:
        fs, path = filesystem(url)
    except RemoteError as exc:
        raise IngestError(url, str(exc).removeprefix(f"{url}: ")) from None
    name = posixpath.basename(path.rstrip("/")) or "session"
    local = dest / name
    try:
        if fs.isdir(path):
            raise IngestError(url, "a folder: only files are read from URLs")
        fs.get_file(path, str(local))
        if name.endswith(".jsonl"):
            folder = f"{path[:-len('.jsonl')]}/{_SUBAGENTS}"
            try:
                subs = [str(p) for p in fs.ls(folder, detail=False)]
            except (FileNotFoundError, NotADirectoryError):
                subs = []
            agents = sorted(p for p in subs if fnmatch.fnmatchcase(posixpath.basename(p), "agent-*.jsonl"))
            for sub in agents:
                target = dest / name[:-len(".jsonl")] / _SUBAGENTS / posixpath.basename(sub)
                target.parent.mkdir(parents=True, exist_ok=True)
                fs.get_file(sub, str(target))
    except FileNotFoundError:
        raise IngestError(url, "no such file") from None
    except OSError as exc:
        raise IngestError(url, f"cannot read: {exc}") from None
    return local
