"""What every format module provides, and the helpers they share.

A format module is a plain module with ``NAME``, ``DESCRIPTION``, ``detect()`` and ``load()``
(pre-commit style: the registry in ``analyzer.ingest`` is a dict of such modules).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

import orjson
from pydantic import BaseModel

from analyzer.events import Counts, Diagnostic, Event, Level, Session, ToolEvent

HEAD_BYTES = 64 * 1024
"""How much of a file ``detect()`` sees."""

MAX_LINE_BYTES = 256 * 1024 * 1024
"""Lines longer than this are reported and skipped instead of parsed (a 100 MB line still parses)."""

MAX_OUTPUT_CHARS = 1024 * 1024
"""A tool output longer than this keeps its first and last half (``cap_output``): the world reads
launch failures, ready lines, PIDs and probe answers near the start and the end of an output, and
the agent itself saw at most ~30,000 characters of it. Without a cap, one ``cat`` of a huge log
is held whole for the rest of the run (sessions of 500+ MB exist)."""


class FormatModule(Protocol):
    """The interface of one ingest format (a module)."""

    NAME: str
    """Registry key, e.g. ``claude-code``."""
    DESCRIPTION: str
    """One line: what files it reads."""

    def detect(self, path: Path, head: bytes) -> str | None:
        """Return why ``path`` is in this format (a short reason), or None.

        ``head`` is the first ``HEAD_BYTES`` of a file, or b"" for a folder. Decide from content,
        never from the file name alone.
        """
        ...

    def load(self, path: Path) -> Session:
        """Read the whole session. Never raise on bad records: add diagnostics instead."""
        ...


class IngestError(Exception):
    """Nothing could be read from the input. The message names the file and says why."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")
        self.reason = message


@dataclass
class SessionBuilder:
    """Collects events and diagnostics while a format reads its input, then numbers them.

    Formats append events in the order the log records them; ``build()`` assigns ``index``.
    """

    path: Path
    format: str
    session: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    records: int = 0
    skipped: int = 0
    lost: int = 0
    """Records lost to error diagnostics (``Counts.lost``)."""
    sources: list[str] = field(default_factory=list)
    parts: list[_Part] = field(default_factory=list)
    """Where each session of a multi-session file starts (empty: the file is one session)."""

    def add(self, event: Event) -> Event:
        self.events.append(event)
        return event

    def diag(
        self, level: Level | str, message: str, line: int | None = None, file: str | None = None,
        records: int = 1,
    ) -> None:
        """Record a diagnostic; an error one means ``records`` records were lost."""
        level = Level(level)
        if level is Level.error:
            self.lost += records
        self.diagnostics.append(Diagnostic(level=level, message=message, line=line, file=file))

    def begin_part(self, line: int) -> None:
        """Another session starts at ``line`` of the same file (a harness concatenated runs); call it
        while reading that record, after it was counted. ``session`` starts again for the new part
        (``agent`` kept): what the reader sets from here on is that part's."""
        if not self.parts:
            self.parts.append(_Part(line=1, event=0, records=0, skipped=0, lost=0, session=self.session))
        self.parts.append(_Part(line=line, event=len(self.events), records=self.records - 1,
                                skipped=self.skipped, lost=self.lost,
                                session={k: v for k, v in self.session.items() if k == "agent"}))
        self.session = self.parts[-1].session

    def output(self, text: str, line: int | None = None, file: str | None = None) -> str:
        """A tool output as the session keeps it: cut by ``cap_output``, with an info diagnostic
        when it was cut (never silently)."""
        kept, elided = cap_output(text, MAX_OUTPUT_CHARS)
        if elided:
            self.diag(Level.info, f"tool output of {len(text):,} characters: only its first and last "
                      f"{MAX_OUTPUT_CHARS // 2 // 1024} KiB are kept and analyzed ({elided:,} characters "
                      "elided)", line, file)
        return kept

    def _cap_outputs(self) -> None:
        # every format's outputs end up capped; Claude Code caps while reading (``output``)
        for ev in self.events:
            if isinstance(ev, ToolEvent) and ev.output is not None and len(ev.output) > MAX_OUTPUT_CHARS:
                ev.output = self.output(ev.output, ev.result_line or ev.line, ev.source)

    def _sanitize(self) -> None:
        # what any reader kept must survive every renderer: no lone surrogates (the stdlib JSON
        # fallback and YAML accept them; spaCy, UTF-8 files and orjson do not) and no nesting
        # orjson cannot dump (255 levels)
        for ev in self.events:
            fixed: list[tuple[str, Any]] = []  # set after the walk over the fields, not during it
            for name, value in ev.__dict__.items():
                if value is None:  # most fields of most events; then text, nearly always ASCII
                    continue
                if isinstance(value, str):
                    if not value.isascii() and not _is_utf8(value):
                        fixed.append((name, scrub_text(value)))
                elif isinstance(value, dict | list):
                    clean, cut = _clean_tree(value, MAX_DEPTH)
                    if clean is not value:
                        fixed.append((name, clean))
                    if cut:
                        self.diag(Level.warning, f"{name} nested over {MAX_DEPTH} levels: the deeper part is "
                                  "replaced by a marker", ev.line, ev.source)
            for name, value in fixed:
                setattr(ev, name, value)
        self.diagnostics = [d if _is_utf8(d.message) else d.model_copy(update={"message": scrub_text(d.message)})
                            for d in self.diagnostics]  # messages quote the log's own values
        for fields in [self.session, *(part.session for part in self.parts)]:
            for key, value in fields.items():
                if key in _TEXT_FIELDS and value is not None and not isinstance(value, str):
                    value = fields[key] = as_id(value)  # `session_id: [..]`, `model: true`
                if isinstance(value, str) and not _is_utf8(value):
                    fields[key] = scrub_text(value)

    def build(self) -> Session:
        """The whole file as one session (its parts, if any, in one timeline, each start marked)."""
        self._sanitize()
        self._cap_outputs()
        for i, ev in enumerate(self.events):
            set_fields(ev, {"index": i})
        for n, part in enumerate(self.parts[1:], 2):
            sid = part.session.get("session_id")
            self.diag(Level.info, f"session {n} of {len(self.parts)} in this file" + (f" ({sid})" if sid else "")
                      + " starts here; read into the same timeline (`analyzer check` reads each on its own)",
                      part.line)
        return self._session(self.events, self.diagnostics, self.records, self.skipped, self.lost,
                             self.parts[0].session if self.parts else self.session)

    def build_all(self) -> list[Session]:
        """One session per part of a multi-session file (``[build()]`` for a file that is one). Each
        keeps the file's path and line numbers and says which part it is (``Session.part``)."""
        if not self.parts:
            return [self.build()]
        self._sanitize()
        self._cap_outputs()
        out: list[Session] = []
        for n, (part, nxt) in enumerate(zip(self.parts, [*self.parts[1:], None], strict=True), 1):
            end = nxt.event if nxt else len(self.events)
            events = self.events[part.event:end]
            for i, ev in enumerate(events):
                ev.index = i
            last_line = nxt.line if nxt else None
            # file-level diagnostics (no line) go with the first part
            diags = [d for d in self.diagnostics
                     if (n == 1 if d.line is None or d.file is not None else part.line <= d.line and (last_line is None or d.line < last_line))]
            session = self._session(
                events, diags, (nxt.records if nxt else self.records) - part.records,
                (nxt.skipped if nxt else self.skipped) - part.skipped, (nxt.lost if nxt else self.lost) - part.lost,
                part.session)
            session.part = n
            out.append(session)
        return out

    def _session(self, events: list[Event], diagnostics: list[Diagnostic], records: int, skipped: int, lost: int,
                 fields: dict[str, Any]) -> Session:
        return Session(
            path=str(self.path),
            format=self.format,
            events=events,
            diagnostics=diagnostics,
            counts=Counts(records=records, events=len(events), skipped=skipped, diagnostics=len(diagnostics),
                          lost=lost),
            sources=self.sources or [str(self.path)],
            **fields,
        )


def set_fields(model: BaseModel, values: dict[str, Any]) -> None:
    """Set fields of an event a reader has already checked, at once: what pydantic's ``__setattr__``
    does for a plain field of a model that neither validates assignments nor is frozen (the value
    in ``__dict__``, the name in the fields set), without its two calls per field (~1 µs: a tenth
    of reading a Claude Code tool result). Any other model is set field by field, as before."""
    config = model.model_config
    if config.get("validate_assignment") or config.get("frozen"):
        for name, value in values.items():
            setattr(model, name, value)
        return
    model.__dict__.update(values)
    model.__pydantic_fields_set__.update(values)


@dataclass(frozen=True)
class _Part:
    """Where one session of a multi-session file starts: its first line, and the builder's counters
    (events, records, skipped, lost) before it."""

    line: int
    event: int
    records: int
    skipped: int
    lost: int
    session: dict[str, Any]
    """The part's own ``Session`` fields (session_id, model…)."""


_TEXT_FIELDS = frozenset({"session_id", "agent", "model", "cwd"})
"""``Session`` fields that are text (readers copy them from the log as they are)."""

MAX_DEPTH = 64
"""Nesting kept in an event's fields (tool inputs); deeper parts become ``DEEP_MARKER``. orjson
dumps at most 255 levels, and no real tool input comes near 64."""

DEEP_MARKER = "[… nested too deep …]"


def _is_utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def scrub_text(text: str) -> str:
    """``text`` with lone surrogates (which no UTF-8 output can hold) replaced by U+FFFD."""
    # through UTF-16: a surrogate pair (YAML's "\\ud83d\\ude00") joins, each lone one is one U+FFFD
    return text if _is_utf8(text) else text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _clean_tree(value: Any, room: int) -> tuple[Any, bool]:
    """``value`` with strings scrubbed and containers deeper than ``room`` levels replaced by
    ``DEEP_MARKER``; the same object when nothing changed; and whether anything was cut."""
    if isinstance(value, str):
        return (value, False) if _is_utf8(value) else (scrub_text(value), False)
    if not isinstance(value, dict | list):
        return value, False
    if room <= 0:
        return DEEP_MARKER, True
    cut = changed = False
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            ck = scrub_text(k) if isinstance(k, str) else k
            cv, c = _clean_tree(v, room - 1)
            cut |= c
            changed |= cv is not v or ck is not k
            out[ck] = cv
        return (out if changed else value), cut
    items: list[Any] = []
    for v in value:
        cv, c = _clean_tree(v, room - 1)
        cut |= c
        changed |= cv is not v
        items.append(cv)
    return (items if changed else value), cut


def dumps_text(value: Any) -> str:
    """A parsed JSON value as compact JSON text, for a field a format stores as an object where
    the session keeps text. Never raises: lone surrogates and nesting orjson cannot dump (past
    255 levels) are scrubbed and cut as in ``SessionBuilder.build``."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return orjson.dumps(_clean_tree(value, MAX_DEPTH)[0], default=str).decode()


BOM = b"\xef\xbb\xbf"


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark (Windows editors and PowerShell's
    ``Out-File`` write one; orjson and the format probes reject it)."""
    return data[3:] if data.startswith(BOM) else data


def open_regular(path: Path, buffering: int = -1) -> IO[bytes]:
    """``path`` opened for binary reading, only if it is a regular file. A FIFO, a device or a
    socket (a sub-agent file linked to ``/dev/zero``, a FIFO as an event file) would block or
    never end: it raises ``OSError`` like an unreadable file. Opened non-blocking, so a FIFO
    without a writer does not hang the open itself."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.ENXIO, "not a regular file (a FIFO, device or socket)", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    """The whole of a regular file, without a BOM (``open_regular``: raises ``OSError`` for
    anything else)."""
    with open_regular(path) as fh:
        return strip_bom(fh.read())


READ_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class Record:
    """One parsed JSONL line."""

    line: int
    value: Any


def iter_jsonl(
    path: Path, builder: SessionBuilder, file: str | None = None
) -> Iterator[Record]:
    """Stream a JSONL file: one parsed value per good line; bad lines become diagnostics.

    Reads in binary line by line, so a 500 MB file is never held whole, and invalid UTF-8 or
    binary junk on one line does not stop the next. A line is never read past
    ``MAX_LINE_BYTES``: a longer one is drained in chunks and reported. A line with a few bytes
    of invalid UTF-8 is still read (bytes replaced by U+FFFD, with a warning) because losing a
    whole tool result to one bad byte loses more than it protects. A run of binary lines is
    reported once, at its first line.
    """
    binary_run: list[int] = []  # [first line, count] of the current run of binary lines

    def flush_binary() -> None:
        if binary_run:
            first, count = binary_run
            extent = f" ({count} lines)" if count > 1 else ""
            builder.diag(Level.error, f"binary data, not JSON{extent}; skipped", first, file, records=count)
            binary_run.clear()

    # 1 MiB buffer: agent log lines are often several KiB, and readline() over the default 8 KiB
    # buffer refills it many times a line (3.5x slower over a 50 MB session)
    try:
        fh = open_regular(path, buffering=READ_BUFFER)
    except OSError as exc:
        if file is None:  # the session's own file: the caller says why nothing was read
            raise
        builder.diag(Level.error, f"file not read: {exc.strerror or exc}", None, file)
        return
    with fh:
        readline = fh.readline
        lineno = 0
        while raw := readline(MAX_LINE_BYTES + 1):
            lineno += 1
            if lineno == 1:
                raw = strip_bom(raw)
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                size = len(raw)
                while not raw.endswith(b"\n"):  # drain the rest of the line without holding it
                    raw = readline(1 << 20)
                    if not raw:
                        break
                    size += len(raw)
                builder.records += 1
                flush_binary()
                builder.diag(
                    Level.error, f"line of {size // 2**20} MiB skipped (over the "
                    f"{MAX_LINE_BYTES // 2**20} MiB limit)", lineno, file,
                )
                continue
            if raw.isspace():  # a blank line (ASCII whitespace, as bytes.strip): no copy of the line
                continue
            builder.records += 1
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                if "surrogate" in str(exc) and (value := _loads_lone_surrogates(raw)) is not None:
                    flush_binary()
                    builder.diag(Level.warning, "lone UTF-16 surrogate escape (\\ud800-\\udfff) read as U+FFFD",
                                 lineno, file)
                    yield Record(lineno, value)
                    continue
                reason = describe_bad_line(raw, exc, at_eof=not raw.endswith(b"\n"))
                if reason.startswith("binary data"):
                    if binary_run:
                        binary_run[1] += 1
                    else:
                        binary_run.extend((lineno, 1))
                    continue
                flush_binary()
                if reason.startswith("invalid UTF-8"):
                    try:
                        value = orjson.loads(raw.decode("utf-8", "replace"))
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        builder.diag(Level.warning, reason.replace("line skipped", "read with the bad "
                                     "bytes replaced by U+FFFD"), lineno, file)
                        yield Record(lineno, value)
                        continue
                builder.diag(Level.error, reason, lineno, file)
                continue
            flush_binary()
            yield Record(lineno, value)
    flush_binary()


def _loads_lone_surrogates(raw: bytes) -> Any:
    """A line orjson refuses only for a lone surrogate escape (``"\\ud800"``), read by the stdlib
    parser, which accepts them (``SessionBuilder.build`` replaces them); None if it is no JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _looks_binary(raw: bytes) -> bool:
    """Mostly control bytes or undecodable bytes: not a damaged text line but something else."""
    sample = raw[:4096]
    if b"\x00" in sample:
        return True
    text = sample.decode("utf-8", "replace")
    odd = sum(1 for ch in text if ch == "\ufffd" or (ord(ch) < 32 and ch not in "\t\r\n"))
    return odd >= max(2, len(text) // 10)


def describe_bad_line(raw: bytes, exc: Exception, at_eof: bool) -> str:
    """A short reason for a line that is not JSON: truncated, invalid UTF-8, binary, or syntax."""
    if _looks_binary(raw):
        return "binary data, not a JSON line; skipped"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as ude:
        return f"invalid UTF-8 at byte {ude.start}; line skipped"
    if at_eof:
        return f"truncated JSON at end of file ({len(raw)} bytes); line skipped"
    return f"not valid JSON ({str(exc).splitlines()[0]}); line skipped"


def read_head(path: Path) -> bytes:
    """The first ``HEAD_BYTES`` of a file (without a BOM), b"" for a folder. ``OSError`` for a
    file that is not a regular one (``open_regular``)."""
    if path.is_dir():
        return b""
    with open_regular(path) as fh:
        return strip_bom(fh.read(HEAD_BYTES))


def first_json_line(head: bytes) -> Any:
    """The first complete non-blank line of ``head`` as JSON, or None."""
    for raw in head.split(b"\n")[:-1] or [head]:
        if raw.strip():
            try:
                return orjson.loads(raw)
            except orjson.JSONDecodeError:
                return None
    return None


def parse_ts(value: Any) -> datetime | None:
    """ISO-8601 strings (``Z`` or offset; naive means UTC) and epoch seconds/milliseconds."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float):
            secs = value / 1000 if value > 1e11 else value
            return datetime.fromtimestamp(secs, tz=UTC)
        if isinstance(value, str):
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return dt if dt.tzinfo else dt.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def join_argv(argv: Sequence[str]) -> str:
    """An argv as one shell command string. ``[bash, -lc, SCRIPT]`` becomes SCRIPT: the harness's
    wrapper shell is not part of what the agent wrote."""
    args = [str(a) for a in argv]
    if len(args) == 3 and Path(args[0]).name in {"bash", "sh", "zsh", "dash"} and args[1] in {
        "-c", "-lc", "-ic"
    }:
        return args[2]
    return shlex.join(args)


def text_of(content: Any) -> str:
    """Text of a message content that may be a string or a list of typed blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                t = block.get("text")
                if isinstance(t, str):
                    parts.append(t)
                elif isinstance(block.get("content"), str | list):
                    parts.append(text_of(block["content"]))
        return "\n".join(parts)
    if isinstance(content, dict):
        return text_of(content.get("text") or content.get("content"))
    return str(content)


_CATEGORIES: dict[str, str] = {
    # shell tools, by the names the formats give them
    **dict.fromkeys(
        ["bash", "shell", "shell_command", "exec_command", "local_shell_call", "run_shell_command",
         "execute_bash", "cmdrun", "terminal", "run_command", "execute_command"], "shell"),
    **dict.fromkeys(["bashoutput", "taskoutput", "write_stdin"], "task_output"),
    **dict.fromkeys(["killbash", "killshell", "taskstop"], "task_stop"),
    **dict.fromkeys(["task", "agent", "spawn_agent"], "subagent"),
    **dict.fromkeys(
        ["read", "write", "edit", "multiedit", "glob", "grep", "ls", "notebookedit", "apply_patch",
         "read_file", "write_file", "replace", "str_replace_editor", "list_directory", "edit_file",
         "patch", "view", "create"], "file"),
}


_HARNESS_CUT = re.compile(
    r"\.\.\.\d+ (?:bytes|lines|chars) truncated\.\.\."  # opencode's Truncate.output
    r"|\.\.\. \[\d+ (?:characters|lines) truncated\] \.\.\."  # Claude Code's Bash results
)
_PERSISTED = re.compile(r"\s*<persisted-output>\s*Output too large")  # Claude Code: a preview, the rest saved


def harness_cut(text: str) -> bool:
    """Whether a tool output carries a harness's own "the middle/rest was cut" marker
    (``ToolEvent.truncated``)."""
    # both in-text markers hold the literal: a substring test is ~50x cheaper than the regex's scan
    # of every position of every output (a quarter of reading a large session)
    return ("truncated" in text and _HARNESS_CUT.search(text) is not None) \
        or _PERSISTED.match(text) is not None


def categorize(tool_name: str) -> str:
    """The ``ToolEvent.category`` for a tool name from any format (case-insensitive)."""
    return _CATEGORIES.get(tool_name.lower(), "other")


_MARKER_ROOM = 64
"""Longer than ``[… N characters elided …]\n`` for any N."""


def cap_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> tuple[str, int]:
    """``text`` if it has at most ``limit`` characters (plus room for the marker, so a cut text is
    never cut again), else its first and last ``limit // 2`` (cut at line ends where there are
    any) joined by a ``[… N characters elided …]`` line; and N."""
    if len(text) <= limit + _MARKER_ROOM:
        return text, 0
    half = limit // 2
    head_end = text.rfind("\n", 0, half) + 1 or half
    tail_start = text.find("\n", len(text) - half) + 1 or len(text) - half
    elided = tail_start - head_end
    return f"{text[:head_end]}[… {elided} characters elided …]\n{text[tail_start:]}", elided


def as_dict(value: Any) -> dict[str, Any]:
    """A log field that should be an object; {} for anything else (logs drift: never trust types)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """A log field that should be an array; [] for anything else."""
    return value if isinstance(value, list) else []


def kind_of(record: Any, key: str = "type") -> str | None:
    """A record's discriminator field (``type``, ``role``…) if it is a string, else None: a list
    or object there must not reach a set lookup (unhashable) or a comparison."""
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def as_id(value: Any) -> str | None:
    """An id or name as text; None for anything that is not a string or number."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value)
