"""opencode sessions (sst/opencode, anomalyco/opencode): a session is messages, a message is parts.

Inputs, all read into the same events:

* ``opencode export <id>`` JSON ``{info, messages: [{info, parts}]}``;
* a bare messages array ``[{info, parts}]`` (share pages, viewers);
* the JSON storage folder (``~/.local/share/opencode/storage``, through early 2026):
  ``session/<projectID>/<sessionID>.json``, ``message/<sessionID>/<messageID>.json``,
  ``part/<messageID>/<partID>.json``. Give the storage root (or the data folder holding
  ``storage/``) to load the most recently updated top-level session, or a
  ``session/<projectID>/<sessionID>.json`` file or a ``message/<sessionID>/`` folder to load that
  session;
* ``opencode run --format json`` output: JSONL events (``step_start``, ``text``, ``tool_use``,
  ``step_finish``, ``error``) each carrying one finished part; parts are grouped into the assistant
  messages they name (``part.messageID``), and ``line`` is the line of a message's first part. The
  prompt is the command's argument, not in the stream: such a session has no user message;
* the SQLite database ``opencode.db`` (2026+; tables ``session``, ``message``, ``part`` whose
  ``data`` column holds the JSON minus ids): ``load()`` reads the most recently updated top-level
  session. ``list_sessions()`` lists every session of a database or storage folder and
  ``load_session()`` reads any one of them (for batch runs).

A session info file with no messages around it is an ``IngestError``: there is nothing to analyze.

What becomes what: text parts of user messages are UserEvents (``synthetic`` ones, injected by
opencode, and a sub-agent's prompt have origin ``meta``), text parts of assistant messages are AssistantEvents carrying the
message's preceding ``reasoning`` parts as ``thinking``; a tool part (call and result in one
object) is a ToolEvent with ``ref`` = ``callID``: bash ``state.input.command``, ``state.output``,
``state.metadata.exit``; status ``error`` is ``is_error``; tool ``task`` starts a sub-agent (its
child session id is ``task_id``). A bash part after the synthetic "The following tool was executed
by the user" message is the user's own ``!cmd`` (``by_user``). An aborted assistant message
(``MessageAbortedError``) is a user interrupt. An output opencode cut ("…N bytes truncated…",
``metadata.truncated``) is ``truncated``. Times are epoch milliseconds. ``line`` is the 1-based message number (export, array,
database); in the storage layout ``source`` is the part file. Child sessions (sub-agents) found in a
storage folder or database follow the ``task`` call that started them, with ``agent`` = the child
session id.
"""

from __future__ import annotations

import contextlib
import errno
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    HEAD_BYTES,
    IngestError,
    SessionBuilder,
    as_dict,
    as_id,
    categorize,
    first_json_line,
    harness_cut,
    iter_jsonl,
    kind_of,
    open_regular,
    parse_ts,
    strip_bom,
)
from analyzer.ingest.jsondoc import (
    MAX_VALUE_CHARS,
    Lost,
    complete_items,
    join_cut,
    load_bounded,
    load_document,
)

NAME = "opencode"
DESCRIPTION = ("opencode: `opencode export` JSON, [{info, parts}] arrays, the storage folder, opencode.db, "
               "`opencode run --format json` output")

SQLITE_MAGIC = b"SQLite format 3\x00"
USER_SHELL_MARKER = "The following tool was executed by the user"
"""The synthetic user text opencode writes before a bash part the user ran with ``!``."""

_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"info"\s*:\s*\{')
_ARRAY_HEAD = re.compile(rb'^\s*\[\s*\{\s*"info"\s*:\s*\{')
_SESSION_ID = re.compile(rb'"(?:id|sessionID)"\s*:\s*"ses_')
_INFO_HEAD = re.compile(rb'^\s*\{\s*"id"\s*:\s*"ses_')
_TASK_ID = re.compile(r"task_id:\s*(ses_\w+)")
_INTERRUPTED = re.compile(
    r"\(Command was aborted\)|User aborted the command|\(Command timed out after|"
    r"terminated command after exceeding timeout|Tool execution (?:was )?(?:aborted|interrupted)",
    re.I,
)
_BAD_DATA = (KeyError, TypeError, ValueError, AttributeError)
"""What a record with fields of the wrong type raises while it is read (pydantic's too)."""
_SKIPPED_PARTS = frozenset({"step-start", "step-finish", "snapshot", "patch", "file", "agent", "subtask",
                            "retry"})


# ------------------------------------------------------------------------------------- input model

@dataclass
class Part:
    data: dict[str, Any]
    source: str | None = None
    """The part's own file (storage layout)."""
    line: int | None = None
    """The part's own line (``run --format json`` stream), else the message's."""


@dataclass
class Message:
    info: dict[str, Any]
    parts: list[Part]
    line: int | None = None
    """1-based message number (export, array, database)."""
    source: str | None = None
    """The message's own file (storage layout)."""
    header: bool = True
    """The message is a record of its own (counted skipped: its parts become the events); False
    when it was put together from its parts (a ``run --format json`` stream)."""


@dataclass(frozen=True)
class SessionRef:
    """One session of a database or storage folder, for choosing which to load."""

    id: str
    title: str | None
    parent_id: str | None
    updated: datetime | None
    directory: str | None


class _Store(Protocol):
    """Where sessions come from (a file, a storage folder, a database)."""

    def infos(self) -> list[dict[str, Any]]:
        """Every session's info (listing, and choosing the latest)."""

    def info(self, session_id: str) -> dict[str, Any] | None:
        """One session's info: a database answers it without reading every session."""

    def children(self, session_id: str) -> list[dict[str, Any]]:
        """The infos of the sessions ``session_id`` started (its sub-agents)."""

    def messages(self, session_id: str, b: SessionBuilder) -> list[Message]: ...


class _Listed:
    """``info`` and ``children`` of a store that lists all its sessions cheaply (a file, a folder)."""

    def infos(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def info(self, session_id: str) -> dict[str, Any] | None:
        return next((i for i in self.infos() if i.get("id") == session_id), None)

    def children(self, session_id: str) -> list[dict[str, Any]]:
        return [i for i in self.infos() if i.get("parentID") == session_id]




def _stat_key(path: Path) -> tuple[int, int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, -1, 0)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _ref(info: dict[str, Any]) -> SessionRef:
    t = as_dict(info.get("time"))
    return SessionRef(str(info.get("id")), info.get("title"), info.get("parentID"),
                      parse_ts(t.get("updated") or t.get("created")), info.get("directory"))


def _loads(raw: bytes | str) -> Any:
    return orjson.loads(raw)


def _text(value: Any) -> str:
    """A database value as text (a BLOB row decodes with U+FFFD, like every text column)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# ----------------------------------------------------------------------------------------- stores

@dataclass
class _JsonStore(_Listed):
    """An export or a bare messages array: one session, no sub-agent sessions."""

    session_info: dict[str, Any]
    raw_messages: list[Any]
    path: Path
    reading: SessionBuilder | None = None
    """What reading the document found (a damaged record, a cut-off end): for the session's diagnostics."""

    def infos(self) -> list[dict[str, Any]]:
        return [self.session_info]

    def messages(self, session_id: str, b: SessionBuilder) -> list[Message]:
        if session_id != self.session_info.get("id"):
            return []
        if self.reading is not None:
            b.diagnostics.extend(self.reading.diagnostics)
            b.records += self.reading.records
            b.lost += self.reading.lost
        out: list[Message] = []
        for n, m in enumerate(self.raw_messages, start=1):
            b.records += 1
            if isinstance(m, Lost):  # damaged JSON: diagnosed where the document was read
                continue
            if not isinstance(m, dict) or not isinstance(m.get("info"), dict):
                b.diag(Level.error, "message is not an object with `info`; skipped", n)
                continue
            parts = m.get("parts")
            if not isinstance(parts, list):
                b.diag(Level.warning, "message without a `parts` list", n)
                parts = []
            good: list[Part] = []
            for p in parts:
                if isinstance(p, dict):
                    good.append(Part(p))
                else:
                    b.records += 1
                    b.diag(Level.error, "part is not an object; skipped", n)
            out.append(Message(m["info"], good, line=n))
        return out


STREAM_EVENTS = frozenset({"step_start", "text", "tool_use", "step_finish", "error", "reasoning"})
"""The event types of ``opencode run --format json``."""


def _is_stream_event(value: Any) -> bool:
    return isinstance(value, dict) and kind_of(value) in STREAM_EVENTS and isinstance(value.get("sessionID"), str) \
        and (isinstance(value.get("part"), dict) or value.get("type") == "error")


@dataclass
class _StreamStore(_Listed):
    """``opencode run --format json`` output: one session, its assistant messages from the parts."""

    path: Path
    session_id: str

    def infos(self) -> list[dict[str, Any]]:
        return [{"id": self.session_id}]

    def messages(self, session_id: str, b: SessionBuilder) -> list[Message]:
        if session_id != self.session_id:
            return []
        by_id: dict[str, Message] = {}
        reading = SessionBuilder(path=self.path, format=NAME)  # the emitter counts the parts as records
        for record in iter_jsonl(self.path, reading):
            ev = record.value
            if not _is_stream_event(ev):
                reading.diag(Level.error, "not an `opencode run --format json` event; skipped", record.line)
                continue
            if ev["type"] == "error":
                error = as_dict(ev.get("error"))
                message = as_dict(error.get("data")).get("message") or error.get("message") or error.get("name")
                reading.diag(Level.warning, f"opencode reported an error: {message or 'error'}", record.line)
                continue
            part = ev["part"]
            mid = as_id(part.get("messageID")) or f"line-{record.line}"
            msg = by_id.get(mid)
            if msg is None:
                msg = by_id[mid] = Message({"id": mid, "role": "assistant", "sessionID": ev["sessionID"],
                                            "time": {"created": ev.get("timestamp")}}, [], line=record.line,
                                           header=False)
            msg.parts.append(Part(part, line=record.line))
        # every line is a record; the parts are counted again as the emitter reads them
        b.records += reading.records - sum(len(m.parts) for m in by_id.values())
        b.diagnostics.extend(reading.diagnostics)  # in line order: unreadable lines, error events
        return list(by_id.values())


@dataclass
class _Listing:
    """A storage folder's sessions as one read of its info files found them."""

    key: tuple[tuple[str, int], ...]
    """The mtimes of the folders whose entries make the listing (a session added, removed or
    renamed changes its folder's)."""
    infos: list[dict[str, Any]]
    files: dict[str, Path]
    stats: dict[Path, tuple[int, int, int]]
    """Each info file's (inode, size, mtime) when read: ``info`` re-reads one that changed since."""
    unreadable: dict[str, SessionBuilder]


_LISTINGS: dict[Path, _Listing] = {}
"""The last listing of each storage folder this process read. Loading one session lists every
session (its sub-agents are found by their ``parentID``): without this a batch over N sessions of
one folder parses N² info files (800 sessions: 30 s)."""


@dataclass
class _StorageStore(_Listed):
    """The JSON storage folder: ``session/``, ``message/``, ``part/``."""

    root: Path
    _infos: list[dict[str, Any]] | None = None
    _stats: dict[Path, tuple[int, int, int]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    unreadable: dict[str, SessionBuilder] = field(default_factory=dict)
    """Session id → what reading its damaged info file found (told to that session's builder)."""

    def _read(self, path: Path, b: SessionBuilder | None) -> dict[str, Any] | None:
        try:
            value, elided = load_bounded(path, MAX_VALUE_CHARS)  # a 900 MB part file: its two ends, not all of it
        except (OSError, orjson.JSONDecodeError) as exc:
            if b is not None:
                b.diag(Level.error, f"unreadable JSON file ({str(exc).splitlines()[0]}); skipped",
                       getattr(exc, "lineno", None), str(path))  # the syntax error's line in that file
            return None
        if elided and b is not None:
            b.diag(Level.warning, f"{elided // 2**20} MiB in the middle of this JSON file were not read "
                   f"(over {MAX_VALUE_CHARS // 2**20} MiB: its first and last halves were)", file=str(path))
        if not isinstance(value, dict):
            if b is not None:
                b.diag(Level.error, "file does not hold a JSON object; skipped", file=str(path))
            return None
        return value

    def _listing_key(self) -> tuple[tuple[str, int], ...]:
        folders = [self.root / "session", self.root / "message"]
        with contextlib.suppress(OSError):
            folders += sorted(d for d in (self.root / "session").iterdir() if d.is_dir())
        key = []
        for d in folders:
            with contextlib.suppress(OSError):
                key.append((d.name, d.stat().st_mtime_ns))
        return tuple(key)

    def infos(self) -> list[dict[str, Any]]:
        if self._infos is None:
            key = self._listing_key()
            listing = _LISTINGS.get(self.root.resolve())
            if listing is None or listing.key != key:
                listing = _LISTINGS[self.root.resolve()] = self._list(key)
            self._infos, self.files, self.unreadable = listing.infos, listing.files, listing.unreadable
            self._stats = listing.stats
        return self._infos

    def _list(self, key: tuple[tuple[str, int], ...]) -> _Listing:
        listing = _Listing(key, [], {}, {}, {})
        for f in sorted((self.root / "session").glob("*/ses_*.json")):
            found = SessionBuilder(path=f, format=NAME)
            info = self._read(f, found)
            if found.diagnostics:  # its title and parent are lost; its messages are still read
                listing.unreadable[f.stem] = found
            if info is not None and isinstance(info.get("id"), str):
                listing.files[info["id"]] = f
                listing.stats[f] = _stat_key(f)
                listing.infos.append(info)
        known = {i["id"] for i in listing.infos}
        for d in sorted((self.root / "message").glob("ses_*")):  # messages whose info is gone
            if d.is_dir() and d.name not in known:
                listing.infos.append({"id": d.name})
        return listing

    def info(self, session_id: str) -> dict[str, Any] | None:
        """The session's info as its file holds it now (a listing read earlier may predate an
        update of its title or times)."""
        info = super().info(session_id)
        f = self.files.get(session_id)
        if info is not None and f is not None and _stat_key(f) != self._stats.get(f):
            info = self._read(f, None) or info
        return info

    def _part_files(self, message_id: str, file: Path, b: SessionBuilder) -> list[Path]:
        """The part files of one message; none, with an error, for an id that names no folder
        (over 255 bytes, a path separator: another tool's or a damaged message file)."""
        try:
            if "/" in message_id or message_id in {"", ".", ".."}:
                raise OSError(errno.EINVAL, "not a file name")
            return sorted((self.root / "part" / message_id).glob("*.json"))
        except OSError as exc:
            b.diag(Level.error, f"message id {message_id[:60]!r} names no part folder ({exc.strerror}); its parts "
                   "are not read", file=str(file))
            return []

    def messages(self, session_id: str, b: SessionBuilder) -> list[Message]:
        if session_id in self.files:
            b.sources.append(str(self.files[session_id]))
        if session_id in self.unreadable:
            b.records += 1
            b.diagnostics.extend(self.unreadable[session_id].diagnostics)
            b.lost += self.unreadable[session_id].lost
        out: list[Message] = []
        for f in sorted((self.root / "message" / session_id).glob("*.json")):
            b.records += 1
            b.sources.append(str(f))
            info = self._read(f, b)
            if info is None:
                continue
            parts: list[Part] = []
            for pf in self._part_files(str(info.get("id", f.stem)), f, b):
                b.sources.append(str(pf))
                data = self._read(pf, b)
                if data is None:
                    b.records += 1
                    continue
                parts.append(Part(data, source=str(pf)))
            out.append(Message(info, parts, source=str(f)))
        return out


@dataclass
class _DbStore:
    """``opencode.db``: message and part rows hold their JSON in ``data``, minus the ids."""

    path: Path

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A read-only connection. Text that is not UTF-8 reads with U+FFFD (sqlite3 would raise for
        the whole query); a query the database cannot answer (another opencode version's schema, a
        damaged file) is an ``IngestError`` naming the database."""
        try:
            con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)
            try:
                con.row_factory = sqlite3.Row
                con.text_factory = lambda raw: raw.decode("utf-8", "replace")
                yield con
            finally:
                con.close()
        except sqlite3.Error as exc:
            raise IngestError(self.path, f"opencode database not readable ({exc})") from exc

    def _sessions(self, where: str = "", params: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Session infos of the rows ``where`` selects (all without it). A database without the
        column ``where`` names (another opencode version) answers from every row instead."""
        with self._connect() as con:
            try:
                rows = con.execute(f"SELECT * FROM session {where}", params).fetchall()
            except sqlite3.OperationalError:
                if not where:
                    raise
                column = where.split()[1]
                rows = [r for r in map(dict, con.execute("SELECT * FROM session")) if r.get(column) == params[0]]
        out = []
        for row in rows:
            r = dict(row)
            if not isinstance(r.get("id"), str) or not r["id"]:
                continue  # a NULL or numeric id names no session (messages refer to sessions by text id)
            info: dict[str, Any] = {}
            if isinstance(r.get("data"), str | bytes):  # a layout that kept the whole info as JSON
                try:
                    data = _loads(r["data"])
                    info.update(data if isinstance(data, dict) else {})
                except orjson.JSONDecodeError:
                    pass
            info.update({
                "id": r.get("id"), "projectID": r.get("project_id"), "parentID": r.get("parent_id"),
                "directory": r.get("directory"), "title": r.get("title"), "version": r.get("version"),
                "time": {"created": r.get("time_created"), "updated": r.get("time_updated")},
            })
            if isinstance(r.get("model"), str):
                with contextlib.suppress(orjson.JSONDecodeError):
                    info["model"] = _loads(r["model"])
            out.append({k: v for k, v in info.items() if v is not None})
        return out

    def infos(self) -> list[dict[str, Any]]:
        return self._sessions()

    def info(self, session_id: str) -> dict[str, Any] | None:
        # one row, not the table: batch loads each of 10,000 sessions on its own
        found = self._sessions("WHERE id = ?", (session_id,))
        return found[0] if found else None

    def children(self, session_id: str) -> list[dict[str, Any]]:
        return self._sessions("WHERE parent_id = ?", (session_id,))

    def messages(self, session_id: str, b: SessionBuilder) -> list[Message]:
        by_message: dict[str, list[Part]] = {}
        with self._connect() as con:
            msgs = con.execute(
                "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,)
            ).fetchall()
            lines = {row["id"]: n for n, row in enumerate(msgs, start=1)}
            # row by row, and a part's JSON over MAX_VALUE_CHARS as its two ends only: a 900 MB
            # tool output must not be held whole (and then parsed into a second copy)
            half = MAX_VALUE_CHARS // 2
            parts = con.execute(
                "SELECT id, message_id, length(data) AS size, "
                "CASE WHEN length(data) > ? THEN substr(data, 1, ?) ELSE data END AS head, "
                "CASE WHEN length(data) > ? THEN substr(data, -?) END AS tail "
                "FROM part WHERE session_id = ? ORDER BY message_id, id",
                (MAX_VALUE_CHARS, half, MAX_VALUE_CHARS, half, session_id),
            )
            for row in parts:
                data = self._part(row, lines.get(row["message_id"]), b)
                if data is None:
                    b.records += 1
                    continue
                data.update(id=row["id"], messageID=row["message_id"], sessionID=session_id)
                by_message.setdefault(row["message_id"], []).append(Part(data))
        out = []
        for n, row in enumerate(msgs, start=1):
            b.records += 1
            try:
                info = _loads(row["data"])
            except orjson.JSONDecodeError:
                b.diag(Level.error, f"message {row['id']}: data is not valid JSON; skipped", n)
                continue
            if not isinstance(info, dict):
                b.diag(Level.error, f"message {row['id']}: data is not a JSON object; skipped", n)
                continue
            info.update(id=row["id"], sessionID=session_id)
            out.append(Message(info, by_message.get(row["id"], []), line=n))
        return out

    @staticmethod
    def _part(row: sqlite3.Row, line: int | None, b: SessionBuilder) -> dict[str, Any] | None:
        """A part row's JSON object; None (with an error) when it is not one."""
        head, tail, size = row["head"], row["tail"], row["size"]
        try:
            if tail is None:
                data = _loads(head)
            else:
                elided = int(size) - len(head) - len(tail)
                data = join_cut(_text(head), _text(tail), elided)
                b.diag(Level.warning, f"part {row['id']}: {int(size) // 2**20} MiB of JSON; read its first and "
                       f"last {len(head) // 2**20} MiB, {elided} characters between them were not read", line)
        except (orjson.JSONDecodeError, TypeError):
            b.diag(Level.error, f"part {row['id']}: data is not valid JSON; skipped", line)
            return None
        if not isinstance(data, dict):
            b.diag(Level.error, f"part {row['id']}: data is not a JSON object; skipped", line)
            return None
        return data


# -------------------------------------------------------------------------------------- detection

def _is_db(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC)


def _db_tables(path: Path) -> set[str]:
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    except sqlite3.Error:
        return set()


def _storage_root(path: Path) -> tuple[Path, str | None] | None:
    """(storage root, session id to load or None for the latest) for a folder or session file."""
    def is_root(p: Path) -> bool:
        return (p / "session").is_dir() and (p / "message").is_dir()

    if path.is_dir():
        if is_root(path):
            return path, None
        if is_root(path / "storage"):
            return path / "storage", None
        if path.name.startswith("ses_") and path.parent.name == "message" and is_root(path.parent.parent):
            return path.parent.parent, path.name
        return None
    if path.suffix == ".json" and path.parent.parent.name == "session" and is_root(path.parent.parent.parent):
        return path.parent.parent.parent, path.stem
    return None


def _looks_like_export(head: bytes, whole: Any) -> str | None:
    if isinstance(whole, dict):
        if isinstance(whole.get("info"), dict) and isinstance(whole.get("messages"), list):
            return "opencode export: {info, messages: [{info, parts}]}"
        if str(whole.get("id", "")).startswith("ses_") and "projectID" in whole:
            return "opencode session info (no messages)"
        return None
    if isinstance(whole, list):
        first = whole[0] if whole else None
        if isinstance(first, dict) and isinstance(first.get("info"), dict) and "parts" in first:
            return "opencode messages array: [{info, parts}]"
        return None
    # a file longer than the head: judge by its opening
    if _EXPORT_HEAD.match(head) and _SESSION_ID.search(head):
        return "opencode export: {info, messages: [{info, parts}]}"
    if _ARRAY_HEAD.match(head) and _SESSION_ID.search(head) and b'"parts"' in head:
        return "opencode messages array: [{info, parts}]"
    if _INFO_HEAD.match(head) and b'"projectID"' in head:
        return "opencode session info (no messages)"
    return None


def detect(path: Path, head: bytes) -> str | None:
    if path.is_dir():
        found = _storage_root(path)
        return "opencode storage folder (session/, message/, part/)" if found else None
    if _is_db(head):
        if {"session", "message", "part"} <= _db_tables(path):
            return "opencode SQLite database (session, message, part tables)"
        return None
    if head.lstrip()[:1] not in (b"{", b"["):
        return None
    if _is_stream_event(first_json_line(head)):
        return "opencode run --format json event stream (JSONL of parts)"
    whole: Any = None
    if len(head) < HEAD_BYTES:  # the head is the whole file
        try:
            whole = _loads(head)
        except orjson.JSONDecodeError:
            whole = None  # damaged: judged by its opening, like a long file
    return _looks_like_export(head, whole)


# ------------------------------------------------------------------------------------------ events

def _time(d: Any, key: str) -> datetime | None:
    return parse_ts(d.get(key)) if isinstance(d, dict) else None


class _Emitter:
    """Turns the messages of a session (and its sub-agent sessions) into events."""

    def __init__(self, b: SessionBuilder, store: _Store) -> None:
        self.b = b
        self.store = store
        self.done: set[str] = set()

    def session(self, info: dict[str, Any], agent: str = "main") -> None:
        sid = str(info.get("id"))
        self.done.add(sid)
        user_shell_next = False
        for msg in self.store.messages(sid, self.b):
            role = msg.info.get("role")
            if role == "user":
                user_shell_next = self.user(msg, agent)
            elif role == "assistant":
                self.assistant(msg, agent, by_user=user_shell_next)
                user_shell_next = False
            else:
                self.b.diag(Level.warning, f"message with unknown role {role!r}; skipped", msg.line,
                            msg.source)
                self.b.skipped += 1 + len(msg.parts)
                self.b.records += len(msg.parts)
        for child in sorted(self.store.children(sid), key=lambda i: str(i.get("id"))):
            if str(child.get("id")) not in self.done:  # a sub-agent no task call pointed at
                self.session(child, agent=str(child.get("id")))

    def _common(self, msg: Message, part: Part | None, agent: str) -> dict[str, Any]:
        source = part.source if part and part.source else msg.source
        return {"line": part.line if part and part.line else msg.line, "source": source, "agent": agent}

    def user(self, msg: Message, agent: str) -> bool:
        self.b.skipped += msg.header  # the message header; its parts are the records that become events
        created = _time(msg.info.get("time"), "created")
        user_shell = False
        for part in msg.parts:
            self.b.records += 1
            try:
                user_shell = self._user_part(msg, part, agent, created) or user_shell
            except _BAD_DATA as exc:
                self._bad_part(msg, part, exc)
        return user_shell

    def _user_part(self, msg: Message, part: Part, agent: str, created: datetime | None) -> bool:
        d = part.data
        kind = as_id(d.get("type"))
        if kind == "text":
            text = str(d.get("text") or "")
            # a sub-agent's prompt was written by the parent agent, not typed by the user
            origin = "meta" if d.get("synthetic") or agent != "main" else "prompt"
            self.b.add(UserEvent(text=text, origin=origin, ref=as_id(d.get("id")), ts=created,
                                 **self._common(msg, part, agent)))
            return bool(d.get("synthetic")) and text.strip() == USER_SHELL_MARKER
        if kind == "compaction":
            self.b.add(SystemEvent(subtype="compaction", text="auto" if d.get("auto") else "",
                                   ref=as_id(d.get("id")), ts=created, **self._common(msg, part, agent)))
        elif kind in _SKIPPED_PARTS:
            self.b.skipped += 1
        else:
            self._unknown_part(msg, part)
        return False

    def _bad_part(self, msg: Message, part: Part, exc: Exception) -> None:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        self.b.diag(Level.error, f"unreadable {as_id(part.data.get('type')) or ''} part ({reason}); skipped",
                    msg.line, part.source)

    def _unknown_part(self, msg: Message, part: Part) -> None:
        self.b.skipped += 1
        self.b.diag(Level.info, f"part of unknown type {as_id(part.data.get('type'))!r} skipped", msg.line,
                    part.source)

    def assistant(self, msg: Message, agent: str, by_user: bool) -> None:
        self.b.skipped += msg.header
        info = msg.info
        model = as_id(info.get("modelID")) or as_id(as_dict(info.get("model")).get("modelID")) or None
        cwd = as_id(as_dict(info.get("path")).get("cwd"))
        created = _time(info.get("time"), "created")
        parts = msg.parts
        thinking: list[str] = []
        for i, part in enumerate(parts):
            self.b.records += 1
            d = part.data
            kind = as_id(d.get("type"))
            try:
                ts = _time(d.get("time"), "start") or created
                if kind == "reasoning":
                    text = str(d.get("text") or "")
                    if text:
                        thinking.append(text)
                    later_text = any(p.data.get("type") == "text" for p in parts[i + 1:])
                    if later_text or not thinking:
                        self.b.skipped += 1
                        continue
                    # reasoning with no text after it in this message: keep it as a silent turn
                    self.b.add(AssistantEvent(text="", thinking="\n\n".join(thinking), model=model,
                                              ref=as_id(d.get("id")), ts=ts, **self._common(msg, part, agent)))
                    thinking = []
                elif kind == "text":
                    self.b.add(AssistantEvent(text=str(d.get("text") or ""),
                                              thinking="\n\n".join(thinking) or None, model=model,
                                              ref=as_id(d.get("id")), ts=ts, **self._common(msg, part, agent)))
                    thinking = []
                elif kind == "tool":
                    ev = self.tool(msg, part, agent, cwd, by_user)
                    self.b.add(ev)
                    child = self._child(ev.task_id) if ev.category == "subagent" else None
                    if child is not None:
                        self.session(child, agent=str(child.get("id")))
                elif kind in _SKIPPED_PARTS:
                    self.b.skipped += 1
                else:
                    self._unknown_part(msg, part)
            except _BAD_DATA as exc:
                self._bad_part(msg, part, exc)
        err = as_dict(info.get("error"))
        if err:
            name = str(err.get("name") or "error")
            text = str(as_dict(err.get("data")).get("message") or err.get("message") or name)
            done = _time(info.get("time"), "completed") or created
            if name == "MessageAbortedError":
                self.b.add(UserEvent(text=f"[{name}] {text}" if text != name else f"[{name}]",
                                     origin="interrupt", ref=as_id(info.get("id")), ts=done,
                                     **self._common(msg, None, agent)))
            else:
                self.b.add(SystemEvent(subtype="api_error", text=f"{name}: {text}", ref=as_id(info.get("id")),
                                       ts=done, **self._common(msg, None, agent)))

    def _child(self, session_id: str | None) -> dict[str, Any] | None:
        if session_id is None or session_id in self.done:
            return None
        info = self.store.info(session_id)
        return info if info is not None and isinstance(info.get("parentID"), str) else None

    def tool(self, msg: Message, part: Part, agent: str, cwd: str | None, by_user: bool) -> ToolEvent:
        d = part.data
        name = as_id(d.get("tool")) or "?"
        state = as_dict(d.get("state"))
        status = state.get("status")
        inp = as_dict(state.get("input"))
        meta = as_dict(state.get("metadata")) or as_dict(d.get("metadata"))
        times = state.get("time")
        ev = ToolEvent(
            name=name, category=categorize(name), input=inp, ref=as_id(d.get("callID")) or as_id(d.get("id")),
            ts=_time(times, "start") or _time(msg.info.get("time"), "created"),
            cwd=as_id(inp.get("workdir")) or cwd, by_user=by_user, **self._common(msg, part, agent),
        )
        if ev.category == "shell" and isinstance(inp.get("command"), str):
            ev.command = inp["command"]
        if status == "completed":
            out = state.get("output")
            ev.output = out if isinstance(out, str) else as_id(meta.get("output"))
            code = meta.get("exit")
            ev.exit_code = code if isinstance(code, int) else None
            ev.is_error = ev.exit_code not in (None, 0) if ev.category == "shell" else False
            ev.result_ts = _time(times, "end")
        elif status == "error":
            ev.output = str(state.get("error") or "")
            ev.is_error = True
            ev.result_ts = _time(times, "end")
            code = meta.get("exit")
            ev.exit_code = code if isinstance(code, int) else None
        elif status not in ("pending", "running"):
            self.b.diag(Level.warning, f"tool part with unknown status {status!r}", msg.line, part.source)
        if ev.output is not None and _INTERRUPTED.search(ev.output):
            ev.interrupted = True
        # Truncate.output: "…N bytes truncated… Full output saved to …", and metadata.truncated
        ev.truncated = meta.get("truncated") is True or (ev.output is not None and harness_cut(ev.output))
        if ev.category == "subagent":
            sid = meta.get("sessionId") or meta.get("sessionID")
            if not isinstance(sid, str) and ev.output:
                m = _TASK_ID.search(ev.output)
                sid = m.group(1) if m else None
            ev.task_id = sid if isinstance(sid, str) else None
        return ev


# ---------------------------------------------------------------------------------------- loading

def _open(path: Path) -> tuple[_Store, str | None]:
    """The store ``path`` names and the session it asks for (None: the most recent)."""
    found = _storage_root(path)
    if found is not None:
        return _StorageStore(found[0]), found[1]
    if path.is_dir():
        raise IngestError(path, "not an opencode storage folder (needs session/ and message/)")
    try:
        with open_regular(path) as fh:
            head = strip_bom(fh.read(HEAD_BYTES))
        if head.startswith(SQLITE_MAGIC):
            if not {"session", "message", "part"} <= _db_tables(path):
                raise IngestError(path, "SQLite database without opencode's session/message/part tables")
            return _DbStore(path), None
        first = first_json_line(head)
        if _is_stream_event(first):
            return _StreamStore(path, first["sessionID"]), first["sessionID"]
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    reading = SessionBuilder(path=path, format=NAME)
    whole = load_document(path, reading)  # a damaged message costs that message
    doc = whole.value
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        info = as_dict(doc.get("info"))
        if not info.get("id"):
            info = {**info, "id": _first_session_id(doc["messages"]) or "?"}
        return _JsonStore(info, complete_items(whole, doc["messages"], reading), path, reading), str(info["id"])
    if isinstance(doc, list):
        sid = _first_session_id(doc) or "?"
        return _JsonStore({"id": sid}, complete_items(whole, doc, reading), path, reading), sid
    if isinstance(doc, dict) and str(doc.get("id", "")).startswith("ses_"):
        raise IngestError(
            path, f"opencode session info without messages (session {doc['id']}): export the session "
            f"with `opencode export {doc['id']}`, or give the storage folder or opencode.db it came from",
        )
    raise IngestError(path, "not an opencode export, messages array, storage folder or database")


def _first_session_id(messages: list[Any]) -> str | None:
    for m in messages:
        sid = as_dict(as_dict(m).get("info")).get("sessionID")
        if isinstance(sid, str):
            return sid
    return None


def _recency(ref: SessionRef) -> tuple[float, str]:
    return (ref.updated.timestamp() if ref.updated else float("-inf"), ref.id)


def _latest(infos: list[dict[str, Any]]) -> dict[str, Any] | None:
    top = [i for i in infos if not i.get("parentID")] or infos
    return max(top, key=lambda i: _recency(_ref(i))) if top else None


def list_sessions(path: Path) -> list[SessionRef]:
    """Every session in an export, storage folder or database, most recently updated first."""
    store, _ = _open(Path(path))
    _forget_listing(store)  # titles and times as the files hold them now
    return sorted((_ref(i) for i in store.infos()), key=_recency, reverse=True)


def _forget_listing(store: _Store) -> None:
    if isinstance(store, _StorageStore):
        _LISTINGS.pop(store.root.resolve(), None)


def load_session(path: Path, session_id: str | None) -> Session:
    """One session of ``path`` (None: the most recently updated top-level one)."""
    path = Path(path)
    store, asked = _open(path)
    wanted = session_id or asked
    infos: list[dict[str, Any]] | None = None
    if wanted is None:
        _forget_listing(store)  # "the most recently updated" by the times the files hold now
        infos = store.infos()
        info = _latest(infos)
        if info is None:
            raise IngestError(path, "no opencode sessions in it")
    else:  # one session of many (a batch member): only its rows are read
        found = store.info(wanted)
        if found is None:
            raise IngestError(path, f"no session {wanted!r} in it")
        info = found
    b = SessionBuilder(path=path, format=NAME)
    if isinstance(store, _DbStore):
        b.sources.append(str(path))
    emitter = _Emitter(b, store)
    emitter.session(info)
    others = [i for i in infos or [] if i.get("id") not in emitter.done and not i.get("parentID")]
    if infos is not None and others:
        b.diag(Level.info, f"{len(infos)} sessions here; loaded the most recently updated, {info['id']} "
                           "(list_sessions() / load_session() read the others)")
    model = as_id(as_dict(info.get("model")).get("id"))
    directory = as_id(info.get("directory"))
    for ev in b.events:
        if isinstance(ev, AssistantEvent) and ev.model and ev.agent == "main":
            model = model or ev.model
            break
    if directory is None:
        directory = next((ev.cwd for ev in b.events if isinstance(ev, ToolEvent) and ev.cwd), None)
    if not b.events and not b.diagnostics:
        b.diag(Level.warning, "the session has no messages")
    b.session.update(session_id=str(info.get("id")), agent="opencode", model=model, cwd=directory)
    return b.build()


def load(path: Path) -> Session:
    return load_session(path, None)
