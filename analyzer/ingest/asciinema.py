"""asciinema casts (v2 and v3): terminal recordings of an operator's (or an agent's) shell (formats.md §9).

Line 1 is the header (``version``, ``width``/``height`` or ``term``, ``timestamp``); every other line
is ``[time, code, data]``: ``o`` output, ``i`` input, ``r`` resize, ``m`` marker, v3 ``x`` exit
status. v2 times count from the start, v3 times from the previous event; with a header
``timestamp`` every event gets a wall-clock time.

There are no commands in a cast, only terminal bytes. The output is replayed through pyte, a
VT100/xterm emulator, so cursor movement, erasing, redrawn lines and completion menus end up as the
screen showed them; rows are kept as they scroll off the top, a row longer than the screen is one
line again, and a full-screen program on the alternate screen (``ESC[?1049h``: vim, htop, k9s)
leaves nothing behind when it exits. The transcript is split into commands at the shell's prompts:
readline and fish switch bracketed paste on (``ESC[?2004h``) before drawing the prompt and off
(``ESC[?2004l``) when a line is accepted, so the text between the two is prompt and command, and
the output after it runs to the next prompt. The prompt is what was drawn before the first
keystroke (an ``i`` event, or output arriving a moment after the prompt). Recordings without those
markers are split at lines that look like ``user@host:dir$ `` prompts. Memory stays bounded for any
cast: the screen is at most 500x200, and of one command's output the first and last 10,000 rows are
kept (the middle becomes one ``[… N lines elided …]`` row).

Each command becomes a shell ``ToolEvent`` named ``terminal`` with ``by_user=True`` (a person typed
it), its output, ``interrupted`` when ``^C`` shows in it, ``line`` = the record where it was entered
and ``result_line`` = the record where the next prompt came. No exit codes, except the recorded
process's own (v3 ``x``, a ``SystemEvent``). Input, resize and output outside any command are
counted skipped.
"""

from __future__ import annotations

from pathlib import Path

from analyzer.events import Session
from analyzer.ingest.base import first_json_line

NAME = "asciinema"
DESCRIPTION = "asciinema .cast v2/v3: terminal recording (header line + [time, code, data] events)"


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


def load(path: Path) -> Session:
    # the emulator is imported here: pyte and wcwidth cost every other command ~40 ms of start-up
    from analyzer.ingest import _asciinema_replay

    return _asciinema_replay.load(path)
