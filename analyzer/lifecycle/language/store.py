"""Readings kept between processes, so that a second ``check`` or ``report`` of a session imports
no spaCy at all.

The reading of a message is a pure function of its text, of whether documents are looked for
(``read_message``'s ``documents``), of the reader's code and pattern data and of spaCy's
tokenizer; ``reader_key`` hashes the last two (every module of this package, ``_spacy``, spaCy's
release and Python's version). The readings live in one SQLite file of the user's cache folder
(``analyzer._usercache``) named after that key, rows keyed by a digest of the text; the key is
stored in the file too and checked on open, and a file under another key is removed when the
next one is made. The same rules as the pipeline cache: a missing, read-only, corrupt, foreign (a
file or folder another user could write: the values are unpickled) or stale store is never an
error, the reader reads as without it. New readings are written in batches (``flush``: when
``FLUSH_EVERY`` are waiting, and at exit), in one transaction each.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import pickle
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from analyzer._usercache import cache_dir, private, private_folder
from analyzer.lifecycle import _spacy
from analyzer.lifecycle.language.model import MessageReading

if TYPE_CHECKING:
    import sqlite3

_FORMAT: Final = b"readings-1"
"""Bumped when what a row holds changes shape."""
NAME: Final = "readings"
FLUSH_EVERY: Final = 500
MAX_ROWS: Final = 200_000
"""Past this, the oldest rows are dropped (a row is a few hundred bytes)."""


def reader_key() -> str:
    """The key of every reading: the reader's source and spaCy's and Python's versions."""
    sources = [*sorted(Path(__file__).parent.glob("*.py")), Path(_spacy.__file__)]
    return _spacy.cache_key(_FORMAT, *(p.name.encode() + b"\0" + p.read_bytes() for p in sources))


def text_digest(text: str, documents: bool) -> bytes:
    """The row key of one message (lone surrogates of a badly encoded log included)."""
    return hashlib.sha256((b"d" if documents else b"p") + text.encode("utf-8", "surrogatepass")).digest()


class Store:
    """One open readings file: lookups, and the readings waiting to be written."""

    def __init__(self, folder: Path, key: str, db: sqlite3.Connection | None) -> None:
        self.folder = folder
        self.key = key
        self.db = db
        """None until something is stored when no file existed (nothing to look up)."""
        self.pending: dict[bytes, bytes] = {}
        self.broken = False
        """Set on the first error: the store is then left alone for the rest of the process."""
        self.pid = os.getpid()
        """A forked child (a batch worker) opens its own: an SQLite connection must not cross a fork."""
        self.finalizer = False

    def get(self, text: str, documents: bool) -> MessageReading | None:
        digest = text_digest(text, documents)
        data = self.pending.get(digest)
        if data is None and self.db is not None and not self.broken:
            try:
                row = self.db.execute("SELECT reading FROM readings WHERE digest = ?", (digest,)).fetchone()
            except Exception:  # corrupt or locked away: read as without a store
                self.broken = True
                return None
            data = row[0] if row is not None else None
        if data is None:
            return None
        try:
            reading = pickle.loads(data)
        except Exception:
            return None
        return reading if isinstance(reading, MessageReading) else None

    def put(self, text: str, documents: bool, reading: MessageReading) -> None:
        if self.broken:
            return
        if not self.finalizer and "multiprocessing" in sys.modules:
            # a pool worker ends through multiprocessing, which runs its finalizers but not atexit
            from multiprocessing import util

            self.finalizer = True
            util.Finalize(self, self.flush, exitpriority=10)
        self.pending[text_digest(text, documents)] = pickle.dumps(reading, protocol=pickle.HIGHEST_PROTOCOL)
        if len(self.pending) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Write the waiting readings in one transaction; on any error keep nothing and go on."""
        if not self.pending or self.broken or self.pid != os.getpid():
            return
        rows, self.pending = list(self.pending.items()), {}
        try:
            if self.db is None:
                self.db = _create(self.folder, self.key)
                if self.db is None:
                    self.broken = True
                    return
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO readings (digest, reading) VALUES (?, ?)", rows)
                last = self.db.execute("SELECT max(rowid) FROM readings").fetchone()[0] or 0
                self.db.execute("DELETE FROM readings WHERE rowid <= ?", (last - MAX_ROWS,))
        except Exception:  # read-only, full, locked by another writer for too long, corrupt
            self.broken = True


def _path(folder: Path, key: str) -> Path:
    return folder / f"{NAME}-{key[:32]}.sqlite"


def _connect(path: Path, *, uri_mode: str) -> sqlite3.Connection:
    import sqlite3

    db = sqlite3.connect(f"{path.as_uri()}?mode={uri_mode}", uri=True, timeout=2.0,
                         isolation_level="DEFERRED", check_same_thread=False)
    db.execute("PRAGMA synchronous = OFF")  # a cache: a file a crash corrupts is rebuilt
    return db


def _stored_key(db: sqlite3.Connection) -> Any:
    row = db.execute("SELECT value FROM meta WHERE name = 'key'").fetchone()
    return row[0] if row is not None else None


def _open(folder: Path, key: str) -> sqlite3.Connection | None:
    """The existing file under ``key``, if it is the user's own, readable and holds ``key``."""
    path = _path(folder, key)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or not private(info) or not private(folder.stat()):
            return None
        db = _connect(path, uri_mode="rw")
        if _stored_key(db) == key:
            return db
        db.close()
    except Exception:  # missing, unreadable or corrupt
        return None
    return None


def _create(folder: Path, key: str) -> sqlite3.Connection | None:
    """A new file under ``key`` (replacing a stale or corrupt one), and the files of other keys gone."""
    if private_folder(folder) is None:
        return None
    path = _path(folder, key)
    for old in folder.glob(f"{NAME}-*.sqlite*"):
        old.unlink(missing_ok=True)  # other keys' files, and a corrupt one under this key
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)  # never another user's file
    os.close(fd)
    db = _connect(path, uri_mode="rw")
    with db:
        db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)")
        db.execute("CREATE TABLE readings (digest BLOB PRIMARY KEY, reading BLOB NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('key', ?)", (key,))
    return db


_STORES: dict[Path, Store] = {}
_INHERITED: list[Store] = []


def store() -> Store | None:
    """The process's store for the current cache folder, or None when the cache is off."""
    folder = cache_dir()
    if folder is None:
        return None
    found = _STORES.get(folder)
    if found is not None and found.pid != os.getpid():
        _INHERITED.append(found)  # kept, never closed or written here: it is the parent's
        found = None
    if found is None:
        key = reader_key()
        found = _STORES[folder] = Store(folder, key, _open(folder, key))
    return found


def flush_all() -> None:
    """Write every store's waiting readings (at exit, and for tests)."""
    for s in _STORES.values():
        if s.pid == os.getpid():
            s.flush()


def forget() -> None:
    """Write what waits and close every store (tests that change the cache folder)."""
    flush_all()
    for s in _STORES.values():
        if s.db is not None and s.pid == os.getpid():
            s.db.close()
    _STORES.clear()


atexit.register(flush_all)
