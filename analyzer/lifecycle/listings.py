"""What process managers print about their units: one row per unit with its state and PID.

Read from the managers' documented formats:

- ``pm2 list`` / ``pm2 status`` (also the table ``pm2 start|restart|stop`` print): a box table whose
  header names the columns (``id``, ``name`` or ``App name``, ``pid``, ``status``…); statuses
  ``online``, ``stopped``, ``errored``, ``launching``…; ``pm2 jlist``: the same as a JSON array;
- ``supervisorctl status``: ``NAME  STATE  description`` lines, ``api  RUNNING  pid 123, uptime
  0:01:02``, ``worker  FATAL  Exited too quickly (process log may have details)``; and the answers of
  ``start``/``stop``/``restart``: ``api: started``, ``api: ERROR (spawn error)``;
- ``brew services list``: ``Name  Status  User  File`` columns, statuses ``started``, ``stopped``,
  ``none``, ``error``, ``scheduled``;
- ``launchctl list``: ``PID  Status  Label``, PID ``-`` when not running, Status the last exit status;
- ``systemctl status`` / ``is-active``: the ``Active:`` line (``active (running)``, ``failed``,
  ``inactive (dead)``, ``activating (auto-restart)``) and ``Main PID: 123``; ``is-active`` prints the
  state word alone.

Each status word is mapped to what it says of the unit by the manager's catalog kind (``states``).

``pm2 logs`` output (:func:`pm2_log_lines`) is split by app: its lines are prefixed ``ID|NAME | ``
(``--nostream`` prints each log file as a block under ``/…/.pm2/logs/NAME-out.log last 15 lines:``
and cuts ``ID|NAME`` to ten characters); pm2's own lines are ``PM2 | …``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["UnitRow", "pm2_log_lines", "systemd_state", "unit_rows"]


@dataclass(frozen=True, slots=True)
class UnitRow:
    """One unit as a manager's output shows it."""

    name: str
    status: str
    """The status word as printed (``online``, ``FATAL``, ``started``, a launchd exit status)."""
    pid: int | None = None
    ident: int | None = None
    """pm2's numeric id."""
    line: str = ""
    """The line it was read from, for quotes."""


_BOX = re.compile(r"[│|┃]")
_SUPERVISOR_STATES = "RUNNING|STARTING|STOPPED|STOPPING|EXITED|BACKOFF|FATAL|UNKNOWN"
_SUPERVISOR_ROW = re.compile(rf"^(?P<name>[\w.:@-]+)\s+(?P<status>{_SUPERVISOR_STATES})\b\s*(?P<rest>.*)$")
_SUPERVISOR_ANSWER = re.compile(r"^(?P<name>[\w.:@-]+): (?P<status>started|stopped|ERROR \([^)]*\))\s*$")
_BREW_ROW = re.compile(r"^(?P<name>[\w.@+-]+)\s+(?P<status>started|stopped|none|error|scheduled|unknown|other)\b")
_LAUNCHCTL_ROW = re.compile(r"^(?P<pid>\d+|-)\s+(?P<status>-?\d+)\s+(?P<name>[\w.@-]+)\s*$")


def unit_rows(manager: str, output: str) -> list[UnitRow]:
    """The units a manager's output lists, in order (an empty list when it lists none)."""
    reader = _READERS.get(manager)
    return reader(output) if reader is not None and output else []


def _pm2(output: str) -> list[UnitRow]:
    if output.lstrip().startswith("[{"):
        return _pm2_json(output)
    rows: list[UnitRow] = []
    header: list[str] | None = None
    for line in output.splitlines():
        if not _BOX.search(line):
            continue
        cells = [c.strip() for c in _BOX.split(line.strip().strip("│|┃"))]
        low = [c.lower() for c in cells]
        if "status" in low and ("name" in low or "app name" in low):
            header = ["name" if c == "app name" else c for c in low]
            continue
        if header is None or len(cells) != len(header):
            continue
        row = dict(zip(header, cells, strict=True))
        name, status = row.get("name", ""), row.get("status", "")
        if not name or not status:
            continue
        pid = row.get("pid", "")
        ident = row.get("id", "")
        rows.append(UnitRow(name=name, status=status, pid=int(pid) if pid.isdecimal() and pid != "0" else None,
                            ident=int(ident) if ident.isdecimal() else None, line=line.strip()))
    return rows


def _pm2_json(output: str) -> list[UnitRow]:
    """``pm2 jlist``: a JSON array of apps (``name``, ``pid``, ``pm_id``, ``pm2_env.status``);
    an entry of the wrong shape is skipped, output that is not JSON lists nothing."""
    try:
        apps = json.loads(output)
    except ValueError:
        return []
    rows = []
    for app in apps if isinstance(apps, list) else []:
        env = app.get("pm2_env") if isinstance(app, dict) else None
        name, status = (app.get("name"), env.get("status")) if isinstance(env, dict) else (None, None)
        if not isinstance(name, str) or not isinstance(status, str) or not name:
            continue
        pid, ident = app.get("pid"), app.get("pm_id")
        rows.append(UnitRow(name=name, status=status,
                            pid=pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None,
                            ident=ident if isinstance(ident, int) and not isinstance(ident, bool) else None,
                            line=f"{name} {status}" + (f" pid {pid}" if isinstance(pid, int) and pid > 0 else "")))
    return rows


def _supervisor(output: str) -> list[UnitRow]:
    rows = []
    for line in output.splitlines():
        line = line.strip()
        if m := _SUPERVISOR_ROW.match(line):
            pid = re.match(r"pid (\d+)", m.group("rest"))
            rows.append(UnitRow(name=m.group("name"), status=m.group("status"),
                                pid=int(pid.group(1)) if pid else None, line=line))
        elif (m := _SUPERVISOR_ANSWER.match(line)) and "already started" not in line:
            status = {"started": "RUNNING", "stopped": "STOPPED"}.get(m.group("status"), "FATAL")
            rows.append(UnitRow(name=m.group("name"), status=status, line=line))
    return rows


def _matching(rx: re.Pattern[str], output: str) -> Iterator[re.Match[str]]:
    """``rx`` matched at every (stripped) line of ``output`` it fits."""
    for line in output.splitlines():
        if m := rx.match(line.strip()):
            yield m


def _brew(output: str) -> list[UnitRow]:
    return [UnitRow(name=m["name"], status=m["status"], line=m.string) for m in _matching(_BREW_ROW, output)]


def _launchd(output: str) -> list[UnitRow]:
    # not running (PID `-`): a last exit status of 0 is a clean stop, anything else a crash or a signal
    return [UnitRow(name=m["name"], status="running" if m["pid"] != "-" else "stopped" if m["status"] == "0"
                    else "failed", pid=int(m["pid"]) if m["pid"] != "-" else None, line=m.string)
            for m in _matching(_LAUNCHCTL_ROW, output)]


_READERS = {"pm2": _pm2, "supervisor": _supervisor, "brew": _brew, "launchd": _launchd}

_ACTIVE = re.compile(r"^\s*Active:\s+(?P<state>[\w-]+)(?:\s+\((?P<sub>[^)]*)\))?", re.M)
_MAIN_PID = re.compile(r"^\s*Main PID:\s+(\d+)", re.M)
_IS_ACTIVE = re.compile(r"^(active|inactive|failed|activating|deactivating|reloading|unknown)\s*$", re.M)
_SYSTEMD_STATES = {"active": "running", "reloading": "running", "activating": "running", "inactive": "stopped",
                   "deactivating": "stopped", "failed": "failed"}


def systemd_state(output: str) -> tuple[str, int | None, str] | None:
    """What ``systemctl status`` or ``is-active`` says of one unit: (``running``, ``stopped`` or
    ``failed``; its main PID when shown; the line it rests on). ``activating (auto-restart)`` is a
    unit whose process keeps dying: failed. None when the output says neither."""
    if m := _ACTIVE.search(output):
        state = "failed" if m.group("sub") == "auto-restart" else _SYSTEMD_STATES.get(m.group("state"))
        pid = _MAIN_PID.search(output)
        return (state, int(pid.group(1)) if pid else None, m.group(0).strip()) if state else None
    if m := _IS_ACTIVE.search(output.strip().split("\n", 1)[0] + "\n"):
        return _SYSTEMD_STATES.get(m.group(1), "stopped"), None, m.group(1)
    return None


_PM2_LOG_FILE = re.compile(r"^\S*?(?:^|/)(?P<name>[^/\s]+?)-(?:out|error|err)(?:-\d+)?\.log last \d+ lines:\s*$")
_PM2_PREFIXED = re.compile(r"^\s*\d+\|(?P<name>[^|]*?)\s*\| ")


def pm2_log_lines(output: str) -> dict[str, list[str]]:
    """The lines of ``pm2 logs`` output by the app they belong to (its name as pm2 knows it),
    without pm2's prefixes; lines under no app (pm2's own ``PM2 |`` lines, headers) are left out."""
    out: dict[str, list[str]] = {}
    block: str | None = None
    for line in output.splitlines():
        if m := _PM2_LOG_FILE.match(line.strip()):
            block = m.group("name")
        elif m := _PM2_PREFIXED.match(line):
            name = m.group("name")
            if block is not None and name and block.startswith(name):
                name = block  # a printed log file's lines carry `ID|NAME` cut to ten characters
            out.setdefault(name, []).append(line[m.end():])
    return out
