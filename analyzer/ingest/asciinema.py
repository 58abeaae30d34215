"""asciinema casts (v2 and v3): terminal recordings of an operator's (or an agent's) shell (formats.md §9).

Line 1 is the header (``version``, ``width``/``height`` or ``term``, ``timestamp``); every other line
is ``[time, code, data]``: ``o`` output, ``i`` input, ``r`` resize, ``m`` marker, v3 ``x`` exit
status. v2 times count from the start, v3 times from the previous event; with a header
``timestamp`` every event gets a wall-clock time.

There are no commands in a cast, only terminal bytes. The output is replayed through a small
line-editing terminal (carriage return, backspace, cursor left/right, erase in line; escape
sequences dropped; full-screen programs in the alternate screen skipped), and split into commands at
the shell's prompts: readline and fish switch bracketed paste on (``ESC[?2004h``) before drawing the
prompt and off (``ESC[?2004l``) when a line is accepted, so the text between the two is prompt and
command, and the output after it runs to the next prompt. The prompt is what was drawn before the
first keystroke (an ``i`` event, or output arriving a moment after the prompt). Recordings without
those markers are split at lines that look like ``user@host:dir$ `` prompts.

Each command becomes a shell ``ToolEvent`` named ``terminal`` with ``by_user=True`` (a person typed
it), its output, ``interrupted`` when ``^C`` shows in it, ``line`` = the record where it was entered
and ``result_line`` = the record where the next prompt came. No exit codes, except the recorded
process's own (v3 ``x``, a ``SystemEvent``). Input, resize and output outside any command are
counted skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import Level, Session, SystemEvent, ToolEvent
from analyzer.ingest.base import (
    READ_BUFFER,
    IngestError,
    SessionBuilder,
    describe_bad_line,
    first_json_line,
    parse_ts,
)

NAME = "asciinema"
DESCRIPTION = "asciinema .cast v2/v3: terminal recording (header line + [time, code, data] events)"

_TOKEN = re.compile(
    r"\x1b\[(?P<params>[0-9;?<=>]*)[ -/]*(?P<final>[@-~])"  # CSI
    r"|\x1b[\]kP_^X][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC, screen title, DCS…: up to BEL or ST
    r"|\x1b[()*+#][\x20-\x7e]|\x1b[\x20-\x7e]"  # charset and other two-byte escapes
    r"|(?P<ctl>[\x00-\x1f\x7f])"
    r"|(?P<text>[^\x00-\x1f\x7f\x1b]+)"
)
_PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-9;?<=>]*[ -/]*|[\]kP_^X][^\x07\x1b]*)?$")
_TYPING_GAP = 0.3
"""Seconds after a prompt starts beyond which more output is the user typing, not the prompt."""
_PROMPT_LINE = re.compile(r"^(?P<prompt>(?:\([^)]*\) )?[\w.-]+@[\w.-]+[: ][^\n$#%]*[$#%] )(?P<cmd>.*)$")
_PROMPT_END = re.compile(r"^.*?[$#%>❯»] ")


@dataclass
class _Line:
    """The line being drawn: characters and a cursor."""

    chars: list[str] = field(default_factory=list)
    col: int = 0

    def put(self, text: str) -> None:
        for ch in text:
            if self.col < len(self.chars):
                self.chars[self.col] = ch
            else:
                self.chars.extend(" " * (self.col - len(self.chars)))
                self.chars.append(ch)
            self.col += 1

    def text(self) -> str:
        return "".join(self.chars).rstrip()


@dataclass(frozen=True)
class _Mark:
    """Where and when something happened in the cast."""

    line: int
    t: float


class _Terminal:
    """Replays output into committed lines; reports bracketed-paste switches to ``on_mode``."""

    def __init__(self, on_mode: Callable[[bool, _Mark], None]) -> None:
        self.line = _Line()
        self.lines: list[str] = []
        self.marks: list[_Mark] = []
        """Where each committed line was ended."""
        self.alt = False
        self.carry = ""
        self.on_mode = on_mode

    def feed(self, data: str, at: _Mark) -> None:
        data = self.carry + data
        partial = _PARTIAL_ESCAPE.search(data)
        self.carry = data[partial.start():] if partial else ""
        if partial:
            data = data[: partial.start()]
        for m in _TOKEN.finditer(data):
            if m.group("text") is not None:
                if not self.alt:
                    self.line.put(m.group("text"))
            elif m.group("ctl") is not None:
                self._control(m.group("ctl"), at)
            elif m.group("final") is not None:
                self._csi(m.group("params"), m.group("final"), at)

    def commit(self, at: _Mark) -> None:
        self.lines.append(self.line.text())
        self.marks.append(at)
        self.line = _Line()

    def _control(self, ch: str, at: _Mark) -> None:
        if self.alt:
            return
        if ch == "\n":
            self.commit(at)
        elif ch == "\r":
            self.line.col = 0
        elif ch in "\b\x7f":
            self.line.col = max(0, self.line.col - 1)
        elif ch == "\t":
            self.line.put(" " * (8 - self.line.col % 8))

    def _csi(self, params: str, final: str, at: _Mark) -> None:
        if params.startswith("?") and final in "hl":
            modes = params[1:].split(";")
            if {"1049", "1047", "47"} & set(modes):
                self.alt = final == "h"
            if "2004" in modes:
                self.on_mode(final == "h", at)
            return
        if self.alt:
            return
        n = int(params) if params.isdigit() else None
        line = self.line
        if final == "K":
            if n in (None, 0):
                del line.chars[line.col:]
            elif n == 1:
                line.chars[: line.col] = [" "] * min(line.col, len(line.chars))
            else:
                line.chars.clear()
        elif final == "C":
            line.col += n or 1
        elif final == "D":
            line.col = max(0, line.col - (n or 1))
        elif final == "G":
            line.col = max(0, (n or 1) - 1)
        elif final == "P":
            del line.chars[line.col: line.col + (n or 1)]
        elif final == "@":
            line.chars[line.col: line.col] = [" "] * (n or 1)


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] != b"{":
        return None
    header = first_json_line(head)
    if not isinstance(header, dict):
        return None
    if header.get("version") == 2 and "width" in header and "height" in header:
        return "asciicast v2 header (version, width, height)"
    if header.get("version") == 3 and isinstance(header.get("term"), dict):
        return "asciicast v3 header (version, term)"
    return None


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
    first_line: int
    """Index of the first committed terminal line of its output."""


class _Cast:
    """Turns the replayed terminal into commands, as prompts come and go."""

    def __init__(self, b: SessionBuilder, start: datetime | None) -> None:
        self.b = b
        self.start = start
        self.term = _Terminal(self._mode)
        self.prompt_at: _Mark | None = None
        self.prompt: str | None = None
        """The prompt's text, once typing has started after it."""
        self.prompt_line = 0
        """Index of the committed line the prompt is (or will be) on."""
        self.running: _Running | None = None
        self.accepted = False

    def ts(self, t: float) -> datetime | None:
        return self.start + timedelta(seconds=t) if self.start else None

    def output(self, data: str, at: _Mark) -> None:
        if self.prompt_at is not None and self.prompt is None and at.t - self.prompt_at.t > _TYPING_GAP:
            self._typing_starts()
        self.term.feed(data, at)

    def keystroke(self) -> None:
        if self.prompt_at is not None and self.prompt is None:
            self._typing_starts()

    def _typing_starts(self) -> None:
        self.prompt = self.term.line.text()
        self.prompt_line = len(self.term.lines)

    def _mode(self, on: bool, at: _Mark) -> None:
        lines = self.term.lines
        if on:  # a prompt is about to be drawn: the command before it has finished
            if self.term.line.text():
                self.term.commit(at)
            if self.running is not None:
                self._emit(self.running, lines[self.running.first_line:], at)
                self.running = None
            self.prompt_at, self.prompt, self.prompt_line = at, None, len(lines)
            return
        self.accepted = True  # a line was accepted: the command starts
        region = lines[self.prompt_line:]
        if not region or self.term.line.text():
            region = [*region, self.term.line.text()]
        text = _command_text(region, self.prompt)
        self.prompt_at = None
        if text and not text.endswith("^C"):
            self.running = _Running(text, at, len(lines))

    def _emit(self, cmd: _Running, output: list[str], done: _Mark | None) -> None:
        text = "\n".join(output).strip("\n")
        self.b.add(ToolEvent(
            name="terminal", category="shell", input={"command": cmd.command}, command=cmd.command,
            output=text, by_user=True, interrupted=any(ln.startswith("^C") or ln.endswith("^C") for ln in output),
            line=cmd.entered.line, ts=self.ts(cmd.entered.t), result_line=done.line if done else None,
            result_ts=self.ts(done.t) if done else None,
        ))

    def finish(self, at: _Mark) -> None:
        """The recording ended: a command still running keeps what it printed."""
        if self.term.line.text():
            self.term.commit(at)
        if self.running is not None:
            self._emit(self.running, self.term.lines[self.running.first_line:], None)
        elif not self.accepted:
            self.b.diag(Level.info, "no bracketed-paste prompt markers: commands found by prompt shape")
            self._by_prompt_lines()

    def _by_prompt_lines(self) -> None:
        """Commands at ``user@host:dir$ `` lines, for shells that do not mark their prompts."""
        lines, marks = self.term.lines, self.term.marks
        starts = [(i, m.group("cmd").strip()) for i, ln in enumerate(lines) if (m := _PROMPT_LINE.match(ln))]
        for k, (i, cmd) in enumerate(starts):
            if cmd:
                end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
                done = marks[end] if end < len(lines) else None  # the next prompt's line
                self._emit(_Running(cmd, marks[i], i + 1), lines[i + 1:end], done)


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "asciinema"
    records = _records(path, b)
    first = next(records, None)
    if first is None or not isinstance(first[1], dict) or first[1].get("version") not in (2, 3):
        raise IngestError(path, "not an asciicast: line 1 must be a header with `version` 2 or 3", line=1)
    b.skipped += 1  # the header
    header: dict[str, Any] = first[1]
    relative = header["version"] == 3  # v3 times are intervals since the previous event
    cast = _Cast(b, parse_ts(header.get("timestamp")))
    clock = 0.0
    at = _Mark(first[0], 0.0)
    for line, ev in records:
        if not (isinstance(ev, list) and len(ev) >= 3 and isinstance(ev[0], int | float)
                and isinstance(ev[1], str)):
            b.diag(Level.error, "event is not [time, code, data]; skipped", line)
            continue
        clock = clock + float(ev[0]) if relative else float(ev[0])
        at = _Mark(line, clock)
        code, data = ev[1], ev[2] if isinstance(ev[2], str) else orjson.dumps(ev[2]).decode()
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
        else:
            b.skipped += 1  # resize, or a code this reader does not know
    cast.finish(at)
    b.events.sort(key=lambda e: e.line or 0)  # a command is emitted when it ends: put it where it began
    return b.build()


def _records(path: Path, b: SessionBuilder) -> Iterator[tuple[int, Any]]:
    """(line, value) of each JSON line; ``#`` lines are v3 comments, not records."""
    with path.open("rb", buffering=READ_BUFFER) as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip() or raw.lstrip().startswith(b"#"):
                continue
            b.records += 1
            try:
                yield lineno, orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                b.diag(Level.error, describe_bad_line(raw, exc, at_eof=not raw.endswith(b"\n")), lineno)
