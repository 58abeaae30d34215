"""Google Antigravity transcripts: ``~/.gemini/antigravity/brain/<conversation>/.system_generated/logs/
transcript.jsonl``, one *step* per line: ``{step_index, source, type, status, created_at, content |
thinking | tool_calls | error}``.

Antigravity is closed source: no type definition is public. This reader follows the steps as real
transcripts write them (``shared/corpus/antigravity/``, Antigravity 1.2x, 2026) and what third-party
readers of the format parse:

* ``source`` is ``USER_EXPLICIT`` (the person), ``MODEL`` (the agent and its tool results) or
  ``SYSTEM`` (the harness).
* ``USER_INPUT``: what the user typed, inside ``<USER_REQUEST>…</USER_REQUEST>``, followed by blocks
  the IDE adds (``<ADDITIONAL_METADATA>``: local time, open files, running terminal commands;
  ``<USER_SETTINGS_CHANGE>``: the model picked). The request is the ``UserEvent``; the IDE's list of
  "Running terminal commands" (a server the user runs in their own terminal) becomes a
  ``SystemEvent(subtype="ide-state")`` beside it, the rest of the metadata is dropped.
* ``PLANNER_RESPONSE``: the agent's text (``content``) and ``thinking`` (an ``AssistantEvent``), and
  ``tool_calls: [{name, args}]`` whose ``args`` values are JSON texts (``"\\"npm run dev\\""``).
  Calls have no ids: their results are the next ``MODEL`` steps, in call order (``RUN_COMMAND``,
  ``VIEW_FILE``, ``CODE_ACTION``, ``GENERIC``…), so each call is paired with the next result step
  after it; a call still waiting when the next response or user input comes got no result.
* ``run_command`` (``CommandLine``, ``Cwd``, ``WaitMsBeforeAsync``) → shell ``ToolEvent``. Its
  ``RUN_COMMAND`` result says "The command completed successfully." or "The command failed with exit
  code: N" before the output; a command still running after the wait becomes a background task
  (status ``RUNNING``, "background task with task id: <conversation>/task-<step>"), so the call is
  ``background`` with ``task_id`` ``task-<step>``. "user denied permission" (status ``ERROR``) is an
  interrupted call, and the instruction the user typed instead is a ``UserEvent``.
* ``manage_task`` (``Action`` status / kill / list, ``TaskId``) polls or stops such a task
  (``task_output`` / ``task_stop``); older builds' ``command_status`` (``CommandId``) polls.
* ``SYSTEM_MESSAGE``: a task's end ("Task id … finished with result: …" or "was canceled") is a
  ``task-notification`` with its exit code and status; "[Notice] All your subagents and background
  tasks have been stopped due to server restart" stops every task still running, so each of those
  gets a ``task-notification`` (``killed``) too. Other messages (timers, sub-agent reports) are kept.
* ``RUN_COMMAND`` / ``VIEW_FILE`` steps from ``USER_EXPLICIT`` ("The USER performed the following
  action: Command: …") are commands the user ran in the IDE: ``by_user`` tool calls.
* ``CHECKPOINT`` (a context summary) and ``ERROR_MESSAGE`` (model unreachable, quota) are kept as
  system events; ``EPHEMERAL_MESSAGE``, ``CONVERSATION_HISTORY``, ``KNOWLEDGE_ARTIFACTS`` are prompt
  plumbing, counted skipped.

**Anchors.** A tool call has no id, and ``step_index`` is not one either: it repeats after a rewind
(a conversation branch re-uses the step numbers). So every event's ``ref`` is None and its ``line``
is the 1-based file line of the step holding it: a tool call's line is the ``PLANNER_RESPONSE``
holding the call (``result_line`` the result step's), a user message's the ``USER_INPUT`` line. This
is what ``shared/corpus/labels.yaml`` anchors Antigravity findings by (``ref: null``, ``line``; its
``steps`` are the same two steps by index). Task ids are kept in their short form ``task-<step>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolCategory, ToolEvent, UserEvent
from analyzer.ingest.base import SessionBuilder, as_dict, first_json_line, iter_jsonl, parse_ts

NAME = "antigravity"
DESCRIPTION = "Google Antigravity transcript.jsonl: one step per line (`step_index`, `source`, `type`)"

_STEP_TYPE = re.compile(r"[A-Z][A-Z_]*\Z")
_SKIPPED = frozenset({"EPHEMERAL_MESSAGE", "CONVERSATION_HISTORY", "KNOWLEDGE_ARTIFACTS"})

_CATEGORIES: dict[str, ToolCategory] = {
    "run_command": "shell",
    "command_status": "task_output",
    **dict.fromkeys(["view_file", "write_to_file", "replace_file_content", "multi_replace_file_content",
                     "list_dir", "grep_search", "find_by_name", "view_file_outline"], "file"),
    **dict.fromkeys(["invoke_subagent", "browser_subagent"], "subagent"),
}
_TASK_ACTIONS: dict[str, ToolCategory] = {"status": "task_output", "kill": "task_stop"}

_HEADER = re.compile(r"\A(?:(?:Created|Completed) At: [^\n]*\n)+")
_OUTCOME = re.compile(r"\A\s*(?:The command completed successfully\.|The command failed with exit code: (-?\d+))"
                      r"[ \t]*\n?")
_OUTPUT = re.compile(r"\A\s*Output:[ \t]*\n\t*")
_STDIO = re.compile(r"\A\s*Stdout:[ \t]*\n\t*(.*?)\n\t*Stderr:[ \t]*\n\t*(.*)\Z", re.S)
_BACKGROUND = re.compile(r"running as a background task with task id: (\S+)")
_DENIED = re.compile(r"The following instruction was provided by the user as an alternative: (.*)\Z", re.S)
_BY_USER = re.compile(r"\AThe USER performed the following action:\n(?:Command: ([^\n]*)\n)?(?:CWD: ([^\n]*)\n)?")
_MESSAGE = re.compile(r"<SYSTEM_MESSAGE>\s*\[Message\][^\n]*?sender=(\S+)[^\n]*?content=(.*?)\s*"
                      r"(?:</SYSTEM_MESSAGE>\s*)?\Z", re.S)
_TASK_END = re.compile(r'\ATask id "([^"]+)" (finished|was canceled) with result:\s*(.*)\Z', re.S)
_RESTART = "background tasks have been stopped due to server restart"
_REMINDER = re.compile(r"\n+(?:Last progress: [^\n]*\n+)?REMINDER: .*\Z", re.S)
_TAG_BLOCK = re.compile(r"<([A-Z_]+)>\n?(.*?)\n?</\1>", re.S)
_TERMINALS = re.compile(r"^Running terminal commands:\n(?:- [^\n]*(?:\n|\Z))+", re.M)
_MODEL_SET = re.compile(r"`Model Selection` from .*? to (.+?)\.(?: |\Z)")


def detect(path: Path, head: bytes) -> str | None:
    if not path.is_file():
        return None
    first = first_json_line(head)
    if (isinstance(first, dict) and isinstance(first.get("step_index"), int) and not isinstance(
            first.get("step_index"), bool) and isinstance(first.get("type"), str)
            and _STEP_TYPE.match(first["type"]) and ("source" in first or "created_at" in first)):
        return f"JSONL of Antigravity steps (`step_index`, `type` {first['type']})"
    return None


def short_task(task: Any) -> str | None:
    """``<conversation>/task-604`` → ``task-604``: the conversation part is the same all through a
    transcript, and labels and the agent's own words name tasks by the short form."""
    if not isinstance(task, str) or not task:
        return None
    return task.rsplit("/", 1)[-1]


def _arg(value: Any) -> Any:
    """One ``args`` value: a JSON text (``"\\"ls\\""``, ``"5000"``, ``"[…]"``); kept as written when the
    harness cut it (``<truncated N bytes>``) and it no longer parses."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value[1:] if value.startswith('"') else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.pending: list[ToolEvent] = []
        """Calls of the latest response still waiting for their result step."""
        self.running: dict[str, ToolEvent] = {}
        """Background tasks started and not known to have ended, by short task id."""
        self.truncated = 0

    def step(self, line: int, step: Any) -> None:
        b = self.b
        if not isinstance(step, dict) or not isinstance(step.get("type"), str):
            b.diag(Level.error, "not an Antigravity step (no `type`); skipped", line)
            return
        kind, source = step["type"], step.get("source")
        if step.get("truncated_fields"):
            self.truncated += 1
        common: dict[str, Any] = {"line": line, "ts": parse_ts(step.get("created_at"))}
        if kind == "USER_INPUT":
            self.pending.clear()
            self.user_input(_text(step.get("content")), common)
        elif kind == "PLANNER_RESPONSE":
            self.pending.clear()
            self.response(step, common)
        elif source == "USER_EXPLICIT":
            self.user_action(kind, step, common)
        elif source == "MODEL" or (source is None and self.pending):
            self.result(kind, step, common)
        elif kind in _SKIPPED:
            b.skipped += 1
        elif kind == "SYSTEM_MESSAGE":
            self.system_message(_text(step.get("content")), common)
        elif kind == "ERROR_MESSAGE":
            b.add(SystemEvent(subtype="api_error", text=_text(step.get("error")) or _text(step.get("content")),
                              **common))
        else:  # CHECKPOINT and harness steps newer than this reader
            b.add(SystemEvent(subtype=kind.lower(), text=_text(step.get("content")) or _text(step.get("error")),
                              **common))

    # -- the user --------------------------------------------------------------------------------

    def user_input(self, content: str, common: dict[str, Any]) -> None:
        blocks = {m.group(1): m.group(2) for m in _TAG_BLOCK.finditer(content)}
        # the typed request, and text the IDE puts before it that the user wrote too (comments on an
        # artifact: "Comments on artifact URI: … Comment: "go with java 17""); not the IDE's blocks
        typed = _TAG_BLOCK.sub(lambda m: m.group(2) if m.group(1) == "USER_REQUEST" else "", content)
        self.b.add(UserEvent(text=typed.strip(), **common))
        terminals = _TERMINALS.search(blocks.get("ADDITIONAL_METADATA", ""))
        if terminals:
            self.b.add(SystemEvent(subtype="ide-state", text=terminals.group(0).strip(), **common))
        model = _MODEL_SET.search(blocks.get("USER_SETTINGS_CHANGE", ""))
        if model:
            self.b.session.setdefault("model", model.group(1))

    def user_action(self, kind: str, step: dict[str, Any], common: dict[str, Any]) -> None:
        """A step the user did in the IDE (ran a command, opened a file)."""
        content = _text(step.get("content"))
        m = _BY_USER.match(content)
        rest = content[m.end():] if m else content
        if kind == "RUN_COMMAND":
            command = (m.group(1) if m else None) or ""
            tool = ToolEvent(name="run_command", category="shell", command=command, input={"CommandLine": command},
                             cwd=m.group(2) if m else None, by_user=True, **common)
            self.outcome(tool, rest, str(step.get("status") or ""))
        else:
            tool = ToolEvent(name=kind.lower(), category=_CATEGORIES.get(kind.lower(), "other"), by_user=True,
                             output=rest, **common)
        self.b.add(tool)

    # -- the agent -------------------------------------------------------------------------------

    def response(self, step: dict[str, Any], common: dict[str, Any]) -> None:
        text, thinking = _text(step.get("content")), _text(step.get("thinking"))
        if text or thinking:
            self.b.add(AssistantEvent(text=text, thinking=thinking or None, model=_text(step.get("model")) or None,
                                      **common))
        calls = step.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            call = as_dict(call)
            name = str(call.get("name") or "tool")
            args = {str(k): _arg(v) for k, v in as_dict(call.get("args")).items()}
            category = _CATEGORIES.get(name, "other")
            task_id = None
            if name == "manage_task":
                category = _TASK_ACTIONS.get(str(args.get("Action")), "other")
                task_id = short_task(args.get("TaskId"))
            elif name == "command_status":
                task_id = short_task(args.get("CommandId"))
            command = args.get("CommandLine") if category == "shell" else None
            tool = ToolEvent(name=name, category=category, input=args, task_id=task_id,
                             command=str(command) if command is not None else None,
                             cwd=str(args["Cwd"]) if isinstance(args.get("Cwd"), str) else None, **common)
            self.b.add(tool)
            self.pending.append(tool)

    def result(self, kind: str, step: dict[str, Any], common: dict[str, Any]) -> None:
        if not self.pending:
            self.b.diag(Level.warning, f"a {kind} result with no tool call before it; kept as a call of its own",
                        common["line"])
            self.b.add(ToolEvent(name=kind.lower(), output=_text(step.get("content")), **common))
            return
        tool = self.pending.pop(0)
        tool.result_line, tool.result_ts = common["line"], common["ts"]
        content = _HEADER.sub("", _text(step.get("content")), count=1)
        status = str(step.get("status") or "")
        if tool.category == "shell":
            self.outcome(tool, content, status)
            if tool.background and tool.task_id:
                self.running[tool.task_id] = tool
            return
        if tool.category == "task_stop" and tool.task_id:
            self.running.pop(tool.task_id, None)
        tool.output = self.b.output(_REMINDER.sub("", content).rstrip("\n"), common["line"])
        tool.is_error = status == "ERROR" or None
        if tool.name == "ask_question" and tool.output:  # the answers are the user's words
            self.b.add(UserEvent(text=tool.output, **common))

    def outcome(self, tool: ToolEvent, content: str, status: str) -> None:
        """A ``RUN_COMMAND`` result: exit status, output, or the background task it became."""
        content = _HEADER.sub("", content, count=1)
        line = tool.result_line or tool.line
        background = _BACKGROUND.search(content)
        if background:
            tool.background, tool.task_id = True, short_task(background.group(1))
            tool.output = content.strip()
            self.b.session.setdefault("session_id", background.group(1).rpartition("/")[0] or None)
            return
        outcome = _OUTCOME.match(content)
        if outcome:
            tool.exit_code = int(outcome.group(1)) if outcome.group(1) else 0
            tool.is_error = tool.exit_code != 0
            body = content[outcome.end():]
            stdio = _STDIO.match(body)
            if stdio:
                body = "\n".join(s.rstrip("\n") for s in stdio.groups() if s.strip())
            else:
                body = _OUTPUT.sub("", body, count=1)
            tool.output = self.b.output(body.rstrip("\r\n"), line)
            return
        tool.output = self.b.output(content.strip(), line)
        if status == "ERROR":
            tool.is_error = tool.interrupted = True  # denied by the user, or the step failed
            denied = _DENIED.search(content)
            if denied and denied.group(1).strip():
                self.b.add(UserEvent(text=denied.group(1).strip(), line=tool.result_line, ts=tool.result_ts))

    # -- the harness ------------------------------------------------------------------------------

    def system_message(self, content: str, common: dict[str, Any]) -> None:
        m = _MESSAGE.search(content)
        body = m.group(2) if m else content
        end = _TASK_END.match(body)
        if end:
            task = short_task(end.group(1))
            result = end.group(3)
            outcome = _OUTCOME.match(result)
            if end.group(2) == "was canceled":
                status, code = "killed", None
            elif outcome:
                code = int(outcome.group(1)) if outcome.group(1) else 0
                status = "completed" if code == 0 else "failed"
            else:
                status, code = "completed", None
            if task:
                self.running.pop(task, None)
            self.b.add(SystemEvent(subtype="task-notification", text=body, task_id=task, status=status,
                                   exit_code=code, **common))
            return
        self.b.add(SystemEvent(subtype="message", text=body, **common))
        if _RESTART in body:
            for task in list(self.running):
                del self.running[task]
                self.b.add(SystemEvent(subtype="task-notification", task_id=task, status="killed",
                                       text=f"task {task} stopped by the harness (server restart)", **common))


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = NAME
    reader = _Reader(b)
    for record in iter_jsonl(path, b):
        reader.step(record.line, record.value)
    if reader.truncated:
        b.diag(Level.info, f"{reader.truncated} steps have fields the harness cut before writing them "
                           "(`truncated_fields`)")
    if "session_id" not in b.session and path.parent.name == "logs" and path.parent.parent.name == ".system_generated":
        b.session["session_id"] = path.parents[2].name  # brain/<conversation>/.system_generated/logs/
    return b.build()
