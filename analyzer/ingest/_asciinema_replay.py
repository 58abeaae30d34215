"""The replay of an asciinema cast through pyte, the terminal emulator: the body of
``analyzer.ingest.asciinema`` (whose docstring describes the reading). A module of its own so that
pyte and wcwidth (~40 ms of imports) load only when a cast is read, not in every process that loads
the format registry."""

from __future__ import annotations

import copy
import re
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pyte

from analyzer.events import Level, Session, SystemEvent, ToolEvent
from analyzer.ingest.asciinema import NAME
from analyzer.ingest.base import (
    READ_BUFFER,
    IngestError,
    SessionBuilder,
    describe_bad_line,
    dumps_text,
    open_regular,
    parse_ts,
    strip_bom,
)

_TYPING_GAP = 0.3
"""Seconds after a prompt starts beyond which more output is the user typing, not the prompt."""
_PROMPT_LINE = re.compile(r"^(?P<prompt>(?:\([^)]*\) )?[\w.-]+@[\w.-]+[: ][^\n$#%]*[$#%] )(?P<cmd>.*)$")
_PROMPT_END = re.compile(r"^.*?[$#%>❯»] ")
_MAX_COLUMNS, _MAX_ROWS = 500, 200
"""The emulated screen is the header's size, clamped: a hostile header cannot make it huge."""
_MAX_KEPT_ROWS = 20_000
"""Rows kept of one command's output; beyond, its middle is dropped (the reader's memory stays
bounded by this and the screen size, whatever the cast's length)."""
_ALT_SCREEN = {1049 << 5, 1047 << 5, 47 << 5}  # pyte shifts private mode numbers by 5
_BRACKETED_PASTE = 2004 << 5


@dataclass(frozen=True)
class _Mark:
    """Where and when something happened in the cast."""

    line: int
    t: float


class _Screen(pyte.Screen):
    """pyte's screen, plus what a transcript needs: the rows that scroll off the top are kept (with
    the record that pushed them off), the alternate screen of full-screen programs is drawn but
    never kept (leaving it restores the shell's screen), and bracketed-paste switches are
    reported to ``on_mode``.

    Rows have absolute numbers (rows scrolled off so far + the row on screen). Of the rows scrolled
    off since ``base`` the first and last ``_MAX_KEPT_ROWS // 2`` are kept (``head``, ``tail``):
    a command printing millions of lines costs no more memory than one printing 20,000."""

    def __init__(self, columns: int, rows: int, on_mode: Callable[[bool], None]) -> None:
        super().__init__(columns, rows)
        self.base = 0
        self.head: list[str] = []
        self.tail: deque[str] = deque(maxlen=_MAX_KEPT_ROWS // 2)
        self.total = 0
        """Rows scrolled off the top so far."""
        self.marks: dict[int, _Mark] = {}
        """Absolute row → the record whose newline ended it (rows of the kept region only)."""
        self.wrapping = False
        self.wrapped: set[int] = set()
        """Absolute rows whose text went on in the next row (it was longer than the screen)."""
        self.at = _Mark(0, 0.0)
        """The record being fed."""
        self.on_mode = on_mode
        self.saved: tuple[dict[int, Any], Any] | None = None
        """The shell's screen and cursor while a program draws on the alternate screen."""

    @property
    def row(self) -> int:
        return self.total + self.cursor.y

    def index(self) -> None:
        if self.saved is None:
            self.marks[self.row] = self.at
            if self.wrapping:  # pyte wraps a full row: the text goes on below
                self.wrapped.add(self.row)
            top = self.margins.top if self.margins else 0
            bottom = self.margins.bottom if self.margins else self.lines - 1
            if self.cursor.y == bottom and top == 0:
                line = self.buffer[0]  # not ``display``: that renders every row, on every newline
                text = "".join(line[x].data for x in range(self.columns)).rstrip()
                if not self.tail and len(self.head) < _MAX_KEPT_ROWS // 2:
                    self.head.append(text)
                else:
                    self.tail.append(text)
                self.total += 1
        self.wrapping = False
        super().index()

    def carriage_return(self) -> None:
        # pyte wraps with carriage_return() + linefeed() once a row is full
        self.wrapping = self.cursor.x >= self.columns
        super().carriage_return()

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        self._modes(modes, kwargs, on=True)
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        self._modes(modes, kwargs, on=False)
        super().reset_mode(*modes, **kwargs)

    def _modes(self, modes: tuple[int, ...], kwargs: dict[str, Any], on: bool) -> None:
        if not kwargs.get("private"):
            return
        shifted = {m << 5 for m in modes}
        if shifted & _ALT_SCREEN:
            if on and self.saved is None:
                self.saved = (copy.deepcopy(self.buffer), copy.copy(self.cursor))
            elif not on and self.saved is not None:
                self.buffer.clear()
                self.buffer.update(self.saved[0])
                self.cursor = self.saved[1]
                self.saved = None
        if _BRACKETED_PASTE in shifted and self.saved is None:
            self.on_mode(on)

    def text_at(self, row: int) -> str:
        """The cursor row's text before the cursor (what a prompt drew so far)."""
        return self.display[self.cursor.y][: self.cursor.x].rstrip() if row == self.row else ""

    def rows(self, start: int, end: int) -> list[str]:
        """The text of absolute rows ``start`` to ``end`` (exclusive), with one ``[… N lines elided
        …]`` row where a long output's middle was not kept."""
        out: list[str] = []
        head_end = self.base + len(self.head)
        tail_start = self.total - len(self.tail)
        out += self.head[max(start - self.base, 0): max(min(end, head_end) - self.base, 0)]
        if start < tail_start and end > head_end and tail_start > head_end:
            out.append(f"[… {tail_start - head_end} lines elided …]")
        tail = list(self.tail)
        out += tail[max(start - tail_start, 0): max(min(end, self.total) - tail_start, 0)]
        display = self.display
        out += [display[r - self.total].rstrip() for r in range(max(start, self.total), min(end, self.row + 1))]
        return out

    def forget_before(self, row: int) -> None:
        """Rows before ``row`` are not needed any more (a command and its output were emitted)."""
        if row <= self.base:
            return
        kept = self.rows(row, self.total) if row < self.total else []
        self.base, self.head, self.tail = min(row, self.total), kept, deque(maxlen=_MAX_KEPT_ROWS // 2)
        self.marks = {r: m for r, m in self.marks.items() if r >= row}
        self.wrapped = {r for r in self.wrapped if r >= row}

    def lines_of(self, start: int, end: int) -> list[str]:
        """``rows(start, end)`` with each wrapped row joined to the row it went on in."""
        out: list[str] = []
        glue = False
        for r, text in zip(range(start, end), self.rows(start, end), strict=False):
            if glue and out:
                out[-1] += text
            else:
                out.append(text)
            glue = r in self.wrapped
        return out


def _command_text(region: list[str], prompt: str | None) -> str:
    """The command typed on the prompt lines: the prompt cut off the first, ``> `` off the rest."""
    if not region:
        return ""
    first = region[0]
    if prompt and first.startswith(prompt):
        first = first[len(prompt):].lstrip()
    elif (m := _PROMPT_END.match(first)) is not None:
        first = first[m.end():]
    # readline sometimes redraws a pasted line at the wrong column, over a stale copy of its start
    # ("wget -q https://exwget -q https://example.com/setup.sh"): keep the redrawn copy
    k = first.find(first[:16], 1) if len(first) >= 32 else -1
    if k > 0 and first[k:].startswith(first[:k]):
        first = first[k:]
    rest = [r[2:] if r.startswith("> ") else r for r in region[1:]]
    return "\n".join([first, *rest]).strip()


@dataclass
class _Running:
    command: str
    entered: _Mark
    first_row: int
    """Absolute screen row where its output starts."""


class _Cast:
    """Turns the emulated terminal into commands, as prompts come and go."""

    def __init__(self, b: SessionBuilder, start: datetime | None, columns: int, rows: int) -> None:
        self.b = b
        self.start = start
        self.screen = _Screen(columns, rows, self._mode)
        self.stream = pyte.Stream(self.screen)
        self.at = _Mark(0, 0.0)
        self.prompt_at: _Mark | None = None
        self.prompt: str | None = None
        """The prompt's text, once typing has started after it."""
        self.prompt_row = 0
        """Absolute row the prompt is (or will be) on."""
        self.running: _Running | None = None
        self.accepted = False

    def ts(self, t: float) -> datetime | None:
        try:
            return self.start + timedelta(seconds=t) if self.start else None
        except (OverflowError, ValueError):  # a time of 2**63 s is no date
            return None

    def output(self, data: str, at: _Mark) -> None:
        if self.prompt_at is not None and self.prompt is None and at.t - self.prompt_at.t > _TYPING_GAP:
            self._typing_starts()
        self.at = self.screen.at = at
        self.stream.feed(data)

    def keystroke(self) -> None:
        if self.prompt_at is not None and self.prompt is None:
            self._typing_starts()

    def _typing_starts(self) -> None:
        self.prompt = self.screen.text_at(self.screen.row)
        self.prompt_row = self.screen.row

    def _output_rows(self, first: int) -> list[str]:
        """Rows from ``first`` to the cursor: the cursor row only if something was printed on it."""
        screen = self.screen
        end = screen.row + (1 if screen.cursor.x > 0 else 0)
        return screen.lines_of(first, end)

    def _mode(self, on: bool) -> None:
        at, screen = self.at, self.screen
        if on:  # a prompt is about to be drawn: the command before it has finished
            if self.running is not None:
                self._emit(self.running, self._output_rows(self.running.first_row), at)
                self.running = None
            self.prompt_at, self.prompt = at, None
            self.prompt_row = screen.row
            screen.forget_before(self.prompt_row)
            return
        self.accepted = True  # a line was accepted: the command starts
        region = self._output_rows(self.prompt_row) or [""]
        text = _command_text(region, self.prompt)
        self.prompt_at = None
        if text and not text.endswith("^C"):
            self.running = _Running(text, at, screen.row + (1 if screen.cursor.x > 0 else 0))
        screen.forget_before(self.prompt_row)

    def _emit(self, cmd: _Running, output: list[str], done: _Mark | None) -> None:
        text = "\n".join(output).strip("\n")
        self.b.add(ToolEvent(
            name="terminal", category="shell", input={"command": cmd.command}, command=cmd.command,
            output=text, by_user=True, interrupted=any(ln.startswith("^C") or ln.endswith("^C") for ln in output),
            line=cmd.entered.line, ts=self.ts(cmd.entered.t), result_line=done.line if done else None,
            result_ts=self.ts(done.t) if done else None,
        ))

    def finish(self) -> None:
        """The recording ended: a command still running keeps what it printed."""
        if self.running is not None:
            self._emit(self.running, self._output_rows(self.running.first_row), None)
        elif not self.accepted:
            self.b.diag(Level.info, "no bracketed-paste prompt markers: commands found by prompt shape")
            self._by_prompt_lines()

    def _by_prompt_lines(self) -> None:
        """Commands at ``user@host:dir$ `` lines, for shells that do not mark their prompts."""
        screen = self.screen
        first = screen.base
        lines = self._output_rows(first)
        starts = [(i, m.group("cmd").strip()) for i, ln in enumerate(lines) if (m := _PROMPT_LINE.match(ln))]
        for k, (i, cmd) in enumerate(starts):
            if cmd:
                end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
                entered = screen.marks.get(first + i, self.at)
                done = screen.marks.get(first + end, self.at) if end < len(lines) else None
                self._emit(_Running(cmd, entered, first + i + 1), lines[i + 1:end], done)


def load(path: Path) -> Session:
    """The cast at ``path`` as a session (``asciinema.load``)."""
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "asciinema"
    records = _records(path, b)
    first = next(records, None)
    if first is None or not isinstance(first[1], dict) or first[1].get("version") not in (2, 3):
        raise IngestError(path, "not an asciicast: line 1 must be a header with `version` 2 or 3", line=1)
    b.skipped += 1  # the header
    header: dict[str, Any] = first[1]
    relative = header["version"] == 3  # v3 times are intervals since the previous event
    term: dict[str, Any] = header["term"] if isinstance(header.get("term"), dict) else header
    cast = _Cast(b, parse_ts(header.get("timestamp")), _size(term.get("cols", term.get("width")), 80, _MAX_COLUMNS),
                 _size(term.get("rows", term.get("height")), 24, _MAX_ROWS))
    clock = 0.0
    at = _Mark(first[0], 0.0)
    for line, ev in records:
        if not (isinstance(ev, list) and len(ev) >= 3 and isinstance(ev[0], int | float)
                and isinstance(ev[1], str)):
            b.diag(Level.error, "event is not [time, code, data]; skipped", line)
            continue
        try:
            clock = clock + float(ev[0]) if relative else float(ev[0])
        except OverflowError as exc:  # a 400-digit time
            b.diag(Level.error, f"event unreadable ({exc}); skipped", line)
            continue
        code, data = ev[1], ev[2] if isinstance(ev[2], str) else dumps_text(ev[2])
        at = _Mark(line, clock)
        if code == "o":
            cast.output(data, at)
        elif code == "i":
            cast.keystroke()
            b.skipped += 1  # the shell echoes what is typed: the output has it
        elif code == "x":
            code_text = data.strip()
            b.add(SystemEvent(subtype="exit", text=f"recorded process exited with status {code_text}",
                              exit_code=int(code_text) if re.fullmatch(r"-?\d+", code_text) else None,
                              line=line, ts=cast.ts(clock)))
        elif code == "m":
            b.add(SystemEvent(subtype="marker", text=data, line=line, ts=cast.ts(clock)))
        elif code == "r" and (m := re.fullmatch(r"\s*(\d+)x(\d+)\s*", data)):
            b.skipped += 1  # the window was resized: later output wraps at the new width
            cast.screen.resize(_size(m.group(2), 24, _MAX_ROWS), _size(m.group(1), 80, _MAX_COLUMNS))
        else:
            b.skipped += 1  # a code this reader does not know
    cast.finish()
    b.events.sort(key=lambda e: e.line or 0)  # a command is emitted when it ends: put it where it began
    return b.build()


def _size(value: Any, default: int, limit: int) -> int:
    """A screen dimension from the header or a resize: a positive int, at most ``limit``."""
    n = int(value) if isinstance(value, int | str) and str(value).isdigit() else default
    return min(max(n, 1), limit)


def _records(path: Path, b: SessionBuilder) -> Iterator[tuple[int, Any]]:
    """(line, value) of each JSON line; ``#`` lines are v3 comments, not records."""
    with open_regular(path, buffering=READ_BUFFER) as fh:
        for lineno, raw in enumerate(fh, start=1):
            raw = strip_bom(raw) if lineno == 1 else raw
            if not raw.strip() or raw.lstrip().startswith(b"#"):
                continue
            b.records += 1
            try:
                yield lineno, orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                b.diag(Level.error, describe_bad_line(raw, exc, at_eof=not raw.endswith(b"\n")), lineno)
