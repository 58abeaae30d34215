"""SWE-agent ``.traj`` files: one JSON object per task instance (formats.md §6).

``trajectory[]`` holds the steps (``thought``, ``action``, ``observation``, ``execution_time``,
``state``); ``history[]`` is the exact LLM message list, which repeats every step. When the
trajectory has steps, it is the source of truth and the history only contributes what comes before
the first step (system prompt, task); the rest of it is counted skipped, so no call is counted twice.
A file without steps (a run that died early, or a 1.x file that carries only ``history``) is read
from its history: each assistant ``action`` is a call, answered by the next observation, or in 1.x
function calling by the ``tool`` item whose ``tool_call_ids`` names its call id (the ``ref``; an id a
replayed run reuses is not one); ``thinking_blocks`` are its thinking. A ``RetryAgent`` file
(``attempts[]``) is read attempt after attempt.

Each action runs in the agent's bash session. Its first word decides what it is: SWE-agent's own
commands (``open``, ``edit``, ``create``, ``str_replace_editor``…) are ``file`` tools, its control
commands (``submit``, ``exit_forfeit``, the EnIGMA debugger and ``connect_*`` tools) ``other``; anything
else is a ``bash`` shell call with the action as its ``command``. The EnIGMA marker
``///PROCESS-DONE:N:PROCESS-DONE///`` gives an exit code; otherwise there is none, and there are no
timestamps. ``line`` is the record number in file order (trajectory steps, then history items).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import IngestError, SessionBuilder, as_dict, as_list, text_of
from analyzer.ingest.jsondoc import Lost, complete_items, json_prefix, load_document

NAME = "swe-agent"
DESCRIPTION = "SWE-agent .traj: JSON object with `trajectory` steps (action/observation) and `history`"

FILE_COMMANDS = frozenset({
    "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "append", "search_dir",
    "search_file", "find_file", "str_replace_editor", "filemap", "view_image",
})
"""SWE-agent commands that read or change files (bundles ``defaults``, ``windowed*``, ``search``)."""
CONTROL_COMMANDS = frozenset({
    "submit", "exit_forfeit", "exit_cost", "exit_context", "exit_error", "exit_format", "skip",
    "decompile", "disassemble", "debug_start", "debug_add_breakpoint", "debug_continue", "debug_step",
    "debug_exec", "debug_stop", "connect_start", "connect_sendline", "connect_exec", "connect_stop",
})
"""SWE-agent commands that end the run or drive EnIGMA's debugger and network tools."""

_PROCESS_DONE = re.compile(r"///PROCESS-DONE:(-?\d+):PROCESS-DONE///")
_HISTORY_KEYS = frozenset({"message_type", "agent", "action", "thought", "tool_call_ids"})
"""Keys of ``HistoryItem`` (sweagent/types.py) that a generic chat message does not have."""


def _is_step(value: Any) -> bool:
    return isinstance(value, dict) and ("action" in value or "observation" in value)


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] != b"{":
        return None
    doc = json_prefix(head)
    if doc is None or not isinstance(doc.value, dict):
        return None
    traj = doc.value
    attempts = traj.get("attempts")
    if isinstance(attempts, list) and attempts and isinstance(attempts[0], dict):
        traj = attempts[0]
    steps = traj.get("trajectory")
    if isinstance(steps, list) and (not steps or _is_step(steps[0])) and (
            steps or "history" in traj or "info" in traj):
        return "JSON object with a `trajectory` of action/observation steps"
    history = traj.get("history")
    if not (isinstance(history, list) and history and isinstance(history[0], dict) and "role" in history[0]):
        return None
    if "environment" in traj or "info" in traj:
        return "JSON object with an SWE-agent `history` and `environment`/`info`"
    if any(isinstance(h, dict) and _HISTORY_KEYS & h.keys() for h in history[:4]):
        return "JSON object with an SWE-agent `history` (items with `message_type`/`agent`/`action`)"
    return None


def classify(action: str) -> tuple[str, str]:
    """(tool name, category) of an action: an SWE-agent command, or ``bash``."""
    words = action.split(maxsplit=1)
    first = words[0] if words else ""
    if first in FILE_COMMANDS:
        return first, "file"
    if first in CONTROL_COMMANDS:
        return first, "other"
    return "bash", "shell"


def action_event(action: str, observation: str | None, common: dict[str, Any]) -> ToolEvent:
    """The ToolEvent of one action and its observation."""
    action = action.rstrip("\n")
    name, category = classify(action)
    exit_code = None
    if observation is not None:
        m = _PROCESS_DONE.search(observation)
        if m:
            exit_code = int(m.group(1))
            observation = _PROCESS_DONE.sub("", observation)
    return ToolEvent(
        name=name, category=category,
        input={"command": action} if category == "shell" else {"action": action},
        command=action if category == "shell" else None, output=observation, exit_code=exit_code,
        is_error=None if exit_code is None else exit_code != 0, **common,
    )


def _json_field(value: Any) -> dict[str, Any]:
    """A field older versions stored as a JSON string (``state``, ``replay_config``)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.line = 0
        """Records before the current trajectory object (attempts are numbered on)."""

    def traj(self, doc: Any, traj: dict[str, Any]) -> None:
        """One trajectory object. Records are numbered in file order, but the history's prelude
        (system prompt, task) goes first in the timeline: it came first."""
        steps = as_list(traj.get("trajectory"))
        history = as_list(traj.get("history"))
        steps = complete_items(doc, steps, self.b)
        history = complete_items(doc, history, self.b)
        base, n = {}, self.line
        for key in traj:
            if key in ("trajectory", "history"):
                base[key] = n
                n += len(steps if key == "trajectory" else history)
        self.line = n
        lines = [base.get("history", 0) + i for i in range(1, len(history) + 1)]
        if not steps:
            self.history(zip(lines, history, strict=True))
            return
        first = next((i for i, h in enumerate(history) if isinstance(h, dict)
                      and h.get("role") == "assistant" and not h.get("is_demo")), len(history))
        self.history(zip(lines[:first], history[:first], strict=True))
        refs = self._tool_call_ids(steps, history)
        for i, step in enumerate(steps):
            self.step(base["trajectory"] + i + 1, step, refs[i])
        self.b.records += len(history) - first
        self.b.skipped += len(history) - first  # the history repeats the steps

    def step(self, line: int, step: Any, ref: str | None) -> None:
        self.b.records += 1
        if isinstance(step, Lost):  # damaged JSON: diagnosed where the document was read
            return
        if not isinstance(step, dict) or not isinstance(step.get("action"), str):
            self.b.diag(Level.error, "trajectory step without an `action` string; skipped", line)
            return
        common: dict[str, Any] = {"line": line, "ref": ref}
        thought = step.get("thought")
        if isinstance(thought, str) and thought.strip():
            self.b.add(AssistantEvent(text=thought.strip(), model=self.b.session.get("model"), **common))
        if not step["action"].strip():
            return  # a thought-only step (an autosubmission or a format error retry)
        obs = step.get("observation")
        state = _json_field(step.get("state"))
        cwd = state.get("working_dir") if isinstance(state.get("working_dir"), str) else None
        output = None if obs is None else text_of(obs)
        self.b.add(action_event(step["action"], output, {**common, "cwd": cwd}))

    def history(self, items: Iterable[tuple[int, Any]]) -> None:
        """History items as a conversation: an assistant action, then its observation. A 1.x
        function-calling observation (role ``tool``) names its action in ``tool_call_ids``."""
        last: ToolEvent | None = None
        by_ref: dict[str, ToolEvent] = {}
        actions: list[ToolEvent] = []
        for line, item in items:
            self.b.records += 1
            if isinstance(item, Lost):
                continue
            if not isinstance(item, dict):
                self.b.diag(Level.error, "history item is not an object; skipped", line)
                continue
            role = item.get("role")
            if item.get("is_demo"):
                self.b.skipped += 1  # an in-context demonstration, not this run
                continue
            common: dict[str, Any] = {"line": line}
            text = text_of(item.get("content"))
            ids = [str(i) for i in as_list(item.get("tool_call_ids"))]
            answered = by_ref.pop(ids[0], None) if ids else None
            if answered is None and last is not None and last.output is None:
                answered = last
            if role == "system":
                self.b.add(SystemEvent(subtype="prompt", text=text, **common))
            elif role == "assistant":
                last = self._history_action(item, text, common)
                if last is not None:
                    actions.append(last)
                    if last.ref is not None:
                        by_ref[last.ref] = last
            elif answered is not None and answered.output is None:
                answered.output = text  # the observation of its action
                answered.result_line = line
            elif role in ("user", "tool"):
                # an observation that answers nothing is the harness talking, not the person
                self.b.add(UserEvent(text=text, origin="meta" if role == "tool" else "prompt", **common))
            else:
                self.b.diag(Level.warning, f"history item with unknown role {role!r}; skipped", line)
                self.b.skipped += 1
        counts = Counter(ev.ref for ev in actions if ev.ref)
        for ev in actions:
            if ev.ref and counts[ev.ref] > 1:
                ev.ref = None  # a replayed run reuses ids: one that is not unique is not a reference

    def _history_action(self, item: dict[str, Any], text: str, common: dict[str, Any]) -> ToolEvent | None:
        thought = item["thought"] if isinstance(item.get("thought"), str) else text
        thinking = "\n".join(str(b.get("thinking") or "") for b in as_list(item.get("thinking_blocks"))
                             if isinstance(b, dict)) or None
        if thought.strip() or thinking:
            self.b.add(AssistantEvent(text=thought.strip(), thinking=thinking, model=self.b.session.get("model"),
                                      **common))
        action = item.get("action")
        if not isinstance(action, str) or not action.strip():
            return None
        calls = as_list(item.get("tool_calls"))
        ref = calls[0].get("id") if calls and isinstance(calls[0], dict) else None
        ev = action_event(action, None, {**common, "ref": str(ref) if ref is not None else None})
        self.b.add(ev)
        return ev

    @staticmethod
    def _tool_call_ids(steps: list[Any], history: list[Any]) -> list[str | None]:
        """The function-calling id of each step, from the history action that matches it. Replayed
        runs reuse ids; an id that is not unique is not a reference, so it is left out."""
        actions = [h for h in history if isinstance(h, dict) and h.get("role") == "assistant"
                   and not h.get("is_demo") and isinstance(h.get("action"), str)]
        refs: list[str | None] = [None] * len(steps)
        for i, (step, item) in enumerate(zip(steps, actions, strict=False)):
            calls = as_list(item.get("tool_calls"))
            same = isinstance(step, dict) and str(step.get("action", "")).strip() == item["action"].strip()
            if same and calls and isinstance(calls[0], dict) and calls[0].get("id"):
                refs[i] = str(calls[0]["id"])
        counts = Counter(r for r in refs if r)
        return [r if r and counts[r] == 1 else None for r in refs]


def _session_info(b: SessionBuilder, traj: dict[str, Any]) -> None:
    config = _json_field(traj.get("replay_config"))
    agent_cfg = as_dict(config.get("agent"))
    model = as_dict(agent_cfg.get("model"))
    name = model.get("name") or model.get("model_name") or config.get("model_name")
    if isinstance(name, str):
        b.session["model"] = name
    problem = as_dict(config.get("problem_statement"))
    instance = problem.get("id") or agent_cfg.get("name")  # 1.x names the agent after the instance
    if isinstance(instance, str):
        b.session["session_id"] = instance


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    doc = load_document(path, b)
    if not isinstance(doc.value, dict):
        raise IngestError(path, "expected an SWE-agent trajectory object")
    b.session["agent"] = "swe-agent"
    attempts = doc.value.get("attempts")
    trajs = [a for a in attempts if isinstance(a, dict)] if isinstance(attempts, list) else [doc.value]
    reader = _Reader(b)
    for n, traj in enumerate(trajs, start=1):
        if n == 1:
            _session_info(b, traj)
        else:
            b.diag(Level.info, f"retry attempt {n} starts after record {reader.line}", reader.line + 1)
        reader.traj(doc, traj)
    if not any(isinstance(t.get("trajectory"), list) or isinstance(t.get("history"), list) for t in trajs):
        raise IngestError(path, "SWE-agent file without `trajectory` or `history`")
    return b.build()
