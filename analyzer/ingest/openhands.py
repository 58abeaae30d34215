"""OpenHands trajectories: a JSON list of events (formats.md §7).

Each event has ``id``, ``timestamp`` (ISO without a zone, read as UTC), ``source`` (user, agent,
environment) and either ``action`` + ``args`` or ``observation`` + ``content`` + ``extras``. An
observation answers the action whose ``id`` is its ``cause``; the pair becomes one ``ToolEvent`` at
the action's place (``line`` and ``result_line`` are 1-based positions in the list, ``ref`` and
``result_ref`` the event ids).

Shell: action ``run`` (``args.command``), observation ``run`` (``content``,
``extras.metadata.exit_code``). Exit code ``-1`` with a "no new output after N seconds" or "timed
out" suffix means the command is still running in the agent's tmux shell (a server): the call is
``background`` with ``task_id`` = its action id. While it runs, ``is_input`` actions talk to it:
``C-c``/``C-d``/``C-z`` become ``task_stop`` and other input (or an empty command, which polls)
``task_output``, both with that ``task_id``. A ``run`` from ``source: user`` is a command the user
typed in the terminal (``by_user``).

Agent-state changes, ``null`` observations and ``recall`` events are harness bookkeeping: counted
skipped.

Besides the list (an exported trajectory, or an evaluation record's ``history``), the reader takes
OpenHands' own event store: a session folder ``sessions/<sid>/`` whose ``events/<id>.json`` files
hold one event each (``openhands/storage/locations.py``). Events are read in id order; ``line`` is
then the event's position and ``source`` its file, where a diagnostic about it points too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    IngestError,
    SessionBuilder,
    as_dict,
    categorize,
    parse_ts,
    read_regular,
    text_of,
)
from analyzer.ingest.jsondoc import Lost, complete_items, json_prefix, load_document

NAME = "openhands"
DESCRIPTION = "OpenHands trajectory: JSON list of action/observation events (`cause` links them)"

_SKIPPED_ACTIONS = frozenset({"change_agent_state", "null", "recall"})
_SKIPPED_OBSERVATIONS = frozenset({"agent_state_changed", "null", "recall"})
_INTERRUPT_KEYS = frozenset({"C-c", "C-d", "C-z", "\x03", "\x04"})
_STILL_RUNNING = ("no new output after", "timed out after")
_ACTION_TOOLS = {"read": "file", "edit": "file", "write": "file", "delegate": "subagent"}
"""Categories of actions whose ``function_name`` may be missing (older trajectories)."""


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "source" in value and ("action" in value or "observation" in value) \
        and ("id" in value or "timestamp" in value)


def event_files(folder: Path) -> list[Path]:
    """The event files of an event-store session folder, in id order ([] if it is not one)."""
    events = folder / "events"
    if not events.is_dir():
        return []
    try:
        files = [p for p in events.iterdir() if p.suffix == ".json" and p.stem.isdigit()]
    except OSError:
        return []
    return sorted(files, key=lambda p: int(p.stem))


def detect(path: Path, head: bytes) -> str | None:
    if path.is_dir():
        files = event_files(path)
        for file in files[:3]:  # one broken file (reported when loading) does not hide the session
            try:
                if _is_event(orjson.loads(read_regular(file))):
                    return f"event store: {len(files)} files in events/"
            except (OSError, orjson.JSONDecodeError):
                continue
        return None
    if not head or head.lstrip()[:1] != b"[":
        return None
    doc = json_prefix(head)
    if doc is None or not isinstance(doc.value, list) or not doc.value:
        return None
    if _is_event(doc.value[0]):
        return "JSON list of events with `source` and `action`/`observation`"
    return None


def _still_running(obs: dict[str, Any]) -> bool:
    meta = as_dict(as_dict(obs.get("extras")).get("metadata"))
    suffix = str(meta.get("suffix") or "")
    return meta.get("exit_code") == -1 and any(s in suffix for s in _STILL_RUNNING)


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.actions: dict[Any, ToolEvent] = {}
        self.running: ToolEvent | None = None
        """The command left running in the shared shell, which ``is_input`` actions talk to."""
        self.file: str | None = None
        """The event's own file, in an event store (diagnostics point at it)."""

    def event(self, line: int, ev: Any) -> None:
        b = self.b
        b.records += 1
        if isinstance(ev, Lost):  # damaged JSON: diagnosed where the document was read
            return
        if not isinstance(ev, dict) or not ("action" in ev or "observation" in ev):
            b.diag(Level.error, "not an OpenHands event (no `action` or `observation`); skipped", line, self.file)
            return
        ref = str(ev["id"]) if ev.get("id") is not None else None
        common: dict[str, Any] = {"line": line, "ref": ref, "ts": parse_ts(ev.get("timestamp"))}
        if "action" in ev:
            self.action(ev, common)
        else:
            self.observation(ev, common)

    def action(self, ev: dict[str, Any], common: dict[str, Any]) -> None:
        b = self.b
        kind = str(ev.get("action"))
        args = as_dict(ev.get("args"))
        source = ev.get("source")
        if kind in _SKIPPED_ACTIONS:
            b.skipped += 1
            return
        if kind in ("message", "finish"):
            text = str(args.get("content") or args.get("final_thought") or ev.get("message") or "")
            if source == "user":
                b.add(UserEvent(text=text, **common))
            else:
                b.add(AssistantEvent(text=text, model=b.session.get("model"), **common))
            return
        if kind == "system":
            b.add(SystemEvent(subtype="prompt", text=str(args.get("content") or ev.get("message") or ""),
                              **common))
            return
        if kind == "condensation":
            b.add(SystemEvent(subtype="condensation", text=str(ev.get("message") or ""), **common))
            return
        meta = as_dict(ev.get("tool_call_metadata"))
        self._model_from(meta)
        thought = args.get("thought")
        if isinstance(thought, str) and thought.strip():
            # the text the model sent with its tool call: shown to the user, so said, not private
            b.add(AssistantEvent(text=thought, model=b.session.get("model"), **common))
        name = str(meta.get("function_name") or kind)
        tool = ToolEvent(name=name, category=_ACTION_TOOLS.get(kind) or categorize(name), input=dict(args),
                         cwd=args.get("cwd") if isinstance(args.get("cwd"), str) else None, **common)
        if kind == "run":
            self._run(tool, args, by_user=source == "user")
        b.add(tool)
        if common["ref"] is not None:
            self.actions[common["ref"]] = tool

    def _run(self, tool: ToolEvent, args: dict[str, Any], by_user: bool) -> None:
        command = str(args.get("command") or "")
        tool.by_user = by_user
        if self.running is not None and (args.get("is_input") or command == ""):
            # keys or input for the process still running in the shell, or a poll of its output
            tool.category = "task_stop" if command.strip() in _INTERRUPT_KEYS else "task_output"
            tool.task_id = self.running.task_id
            return
        tool.category = "shell"
        tool.command = command

    def observation(self, ev: dict[str, Any], common: dict[str, Any]) -> None:
        b = self.b
        kind = str(ev.get("observation"))
        if kind in _SKIPPED_OBSERVATIONS:
            b.skipped += 1
            return
        cause = str(ev["cause"]) if ev.get("cause") is not None else None
        tool = self.actions.pop(cause, None) if cause is not None else None
        content = text_of(ev.get("content"))
        if tool is None:
            if kind == "error":
                b.add(SystemEvent(subtype="error", text=content or str(ev.get("message") or ""), **common))
            else:
                b.diag(Level.warning, f"`{kind}` observation answers no action in this file "
                       f"(cause {cause}); dropped", common["line"], self.file)
            return
        tool.output = content
        tool.result_ref = common["ref"]
        tool.result_line = common["line"]
        tool.result_ts = common["ts"]
        extras = as_dict(ev.get("extras"))
        meta = as_dict(extras.get("metadata"))
        code = meta.get("exit_code") if kind == "run" else None
        if kind == "error" or kind == "user_rejected":
            tool.is_error = True
            tool.interrupted = kind == "user_rejected"
        elif isinstance(code, int) and code != -1:
            tool.exit_code = code
            tool.is_error = code != 0
        elif ev.get("success") is not None:
            tool.is_error = not ev["success"] and code != -1
        if kind != "run":
            return
        if isinstance(meta.get("working_dir"), str) and tool.cwd is None:
            tool.cwd = meta["working_dir"]
            self.b.session.setdefault("cwd", meta["working_dir"])
        if _still_running(ev):
            if tool.category == "shell":
                tool.background = True
                tool.task_id = tool.ref
                self.running = tool
        elif isinstance(code, int) and code != -1:
            self.running = None  # the foreground process ended (or was stopped)

    def _model_from(self, meta: dict[str, Any]) -> None:
        response = meta.get("model_response")
        if "model" not in self.b.session and isinstance(response, dict) and isinstance(
                response.get("model"), str):
            self.b.session["model"] = response["model"]


def _load_store(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "openhands"
    b.session["session_id"] = path.name
    files = event_files(path)
    b.sources = [str(path / "events")]  # the batch cache watches the folder: new events change it
    reader = _Reader(b)
    for position, file in enumerate(files, start=1):
        try:
            ev = orjson.loads(read_regular(file))
        except (OSError, orjson.JSONDecodeError) as exc:
            b.records += 1
            reason = exc.strerror if isinstance(exc, OSError) else f"not JSON ({exc})"
            b.diag(Level.error, f"event file skipped: {reason}", getattr(exc, "lineno", None), str(file))
            continue
        count = len(b.events)
        reader.file = str(file)
        reader.event(position, ev)
        for added in b.events[count:]:
            added.source = str(file)
    if not files:
        raise IngestError(path, "no events/<id>.json files: not an OpenHands session folder")
    return b.build()


def load(path: Path) -> Session:
    if path.is_dir():
        return _load_store(path)
    b = SessionBuilder(path=path, format=NAME)
    doc = load_document(path, b)
    events = doc.value
    if isinstance(events, dict) and isinstance(events.get("history"), list):
        events = events["history"]  # an evaluation output record: the trajectory is its `history`
    if not isinstance(events, list):
        raise IngestError(path, "expected a JSON list of OpenHands events")
    b.session["agent"] = "openhands"
    reader = _Reader(b)
    for line, ev in enumerate(complete_items(doc, events, b), start=1):
        reader.event(line, ev)
    return b.build()
