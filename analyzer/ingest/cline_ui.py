"""Cline / Roo Code ``ui_messages.json``: the task as the user saw it in the chat panel.

A JSON array of ``ClineMessage`` records (``src/shared/ExtensionMessage.ts``): ``ts`` (epoch ms,
the record's id: ``ref``), ``type`` ``say`` or ``ask``, and the kind in ``say`` / ``ask``, with the
body in ``text`` (plain, or JSON for tools, questions and API requests). ``line`` is the 1-based
record number.

* ``say: text`` is the agent talking, except the task itself (the first ``text`` before any API
  request, or ``say: task`` in old versions); ``say: user_feedback`` is the user;
* ``ask|say: command`` is a shell call (an ``ask`` when it needed approval; Cline appends
  ``REQ_APP`` then); its output streams in as ``ask|say: command_output`` chunks of lines (joined
  by newlines), and the next ``say: api_req_started`` carries the result text Cline gave the model,
  which says how it ended: exit code, still running in the user's terminal (``background``),
  denied (``cline_api.read_command_result``);
* ``ask|say: tool`` (JSON ``{tool, path, …}``) are file and search tools; ``ask: use_mcp_server``
  with its ``say: mcp_server_response`` is an MCP call; ``followup`` / ``plan_mode_respond`` /
  ``completion_result`` are what the agent said; errors become ``SystemEvent``s;
* checkpoints, progress lists, request bookkeeping and resume prompts are counted skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import SessionBuilder, as_dict, parse_ts
from analyzer.ingest.cline_api import apply_command_result, first_record, load_records, read_command_result
from analyzer.ingest.jsondoc import Lost

NAME = "cline-ui"
DESCRIPTION = "Cline / Roo Code ui_messages.json: say/ask chat records keyed by `ts`"

REQ_APP = "REQ_APP"
"""Cline's marker at the end of a command the model flagged as needing approval."""

_SAID = {"followup": "question", "plan_mode_respond": "response", "act_mode_respond": "response"}
_ERRORS = frozenset({"error", "api_req_failed", "mistake_limit_reached", "diff_error", "clineignore_error",
                     "command_permission_denied"})
_SKIPPED = frozenset({
    "api_req_finished", "api_req_retried", "error_retry", "checkpoint_created", "task_progress",
    "deleted_api_reqs", "load_mcp_documentation", "mcp_server_request_started", "resume_task",
    "resume_completed_task", "auto_approval_max_req_reached", "shell_integration_warning",
    "shell_integration_warning_with_suggestion", "info", "hook_status", "hook_output_stream", "subagent",
    "use_subagents", "subagent_usage", "conditional_rules_applied", "generate_explanation", "condense",
    "summarize_task", "new_task", "report_bug", "mcp_notification", "browser_action",
    "browser_action_result", "api_req_started", "reasoning",
})
"""Known records that are bookkeeping, not conversation (``api_req_started`` is read, then counted
here; ``reasoning`` repeats what the model thought, which no rule reads)."""
_HANDLED = frozenset({"task", "text", "user_feedback", "user_feedback_diff", "completion_result", "command",
                      "command_output", "tool", "use_mcp_server", "mcp_server_response", *_SAID, *_ERRORS})
"""Kinds read into events (an empty ``text`` or ``completion_result`` ask is counted skipped)."""
_FILE_TOOLS = frozenset({"editedExistingFile", "newFileCreated", "fileDeleted", "readFile", "listFilesTopLevel",
                         "listFilesRecursive", "listCodeDefinitionNames", "searchFiles"})


def _json(text: str) -> dict[str, Any]:
    """A record body that holds JSON; {} when it does not."""
    try:
        return as_dict(orjson.loads(text)) if text.lstrip().startswith("{") else {}
    except orjson.JSONDecodeError:
        return {}


@dataclass
class _Reader:
    b: SessionBuilder
    command: ToolEvent | None = None
    """The last shell call: output chunks and the next API request's result text belong to it."""
    awaiting_result: bool = False
    mcp: ToolEvent | None = None
    requests: int = 0
    unknown: set[str] = field(default_factory=set)

    def record(self, line: int, rec: Any) -> None:
        b = self.b
        b.records += 1
        if isinstance(rec, Lost):  # damaged JSON: diagnosed where the document was read
            return
        if not isinstance(rec, dict):
            b.diag(Level.error, f"record is a JSON {type(rec).__name__}, not an object; skipped", line)
            return
        kind = rec.get(rec.get("type")) if rec.get("type") in ("say", "ask") else None
        if not isinstance(kind, str):
            b.diag(Level.warning, "record without `type: say|ask` and its kind; skipped", line)
            b.skipped += 1
            return
        text = rec["text"] if isinstance(rec.get("text"), str) else ""
        ts = rec.get("ts")
        common: dict[str, Any] = {"line": line, "ts": parse_ts(ts),
                                  "ref": str(ts) if isinstance(ts, int | float) and not isinstance(ts, bool)
                                  else None}
        model = as_dict(rec.get("modelInfo")).get("modelId")
        if isinstance(model, str) and "model" not in b.session:
            b.session["model"] = model
        if not self._conversation(kind, str(rec["type"]), text, common):
            if kind not in _SKIPPED and kind not in _HANDLED and kind not in self.unknown:
                self.unknown.add(kind)
                b.diag(Level.info, f"record kind {rec['type']}:{kind} is not one this reader knows; "
                       "counted skipped", line)
            b.skipped += 1

    def _conversation(self, kind: str, type_: str, text: str, common: dict[str, Any]) -> bool:
        """Turn one record into its event; False when it is not conversation (counted skipped)."""
        b = self.b
        model = b.session.get("model")
        if kind == "api_req_started":
            self.requests += 1
            self._api_request(text, common)
            return False
        if kind in ("task", "user_feedback", "user_feedback_diff") or (kind == "text" and type_ == "say"
                                                                       and self.requests == 0):
            b.add(UserEvent(text=text, **common))
        elif kind in ("text", "completion_result") and text.strip():
            b.add(AssistantEvent(text=text, model=model, **common))
        elif kind in _SAID and text.strip():
            said = _json(text).get(_SAID[kind])
            b.add(AssistantEvent(text=said if isinstance(said, str) else text, model=model, **common))
        elif kind == "command":
            command = text.removesuffix(REQ_APP).strip()
            self.command = ToolEvent(name="execute_command", category="shell", input={"command": command},
                                     command=command, **common)
            self.awaiting_result = True
            b.add(self.command)
        elif kind == "command_output":
            self._output(text, common)
        elif kind == "tool":
            body = _json(text)
            name = str(body.get("tool") or "tool")
            b.add(ToolEvent(name=name, category="file" if name in _FILE_TOOLS else "other",
                            input={k: v for k, v in body.items() if k not in ("tool", "content", "diff")},
                            **common))
        elif kind == "use_mcp_server" and type_ == "ask":
            body = _json(text)
            name = ".".join(str(body[k]) for k in ("serverName", "toolName") if body.get(k)) or "use_mcp_server"
            self.mcp = ToolEvent(name=name, input=body, **common)
            b.add(self.mcp)
        elif kind == "mcp_server_response" and self.mcp is not None:
            self.mcp.output, self.mcp.result_line, self.mcp.result_ts = text, common["line"], common["ts"]
            self.mcp.is_error = text.startswith("Error") or None
            self.mcp = None
        elif kind in _ERRORS:
            b.add(SystemEvent(subtype=kind, text=text, **common))
        else:
            return False
        return True

    def _output(self, text: str, common: dict[str, Any]) -> None:
        ev = self.command
        if ev is None:
            self.b.diag(Level.warning, "command output with no command before it; dropped", common["line"])
            return
        ev.output = text if ev.output is None else f"{ev.output}\n{text}"
        ev.result_line, ev.result_ts = ev.result_line or common["line"], ev.result_ts or common["ts"]

    def _api_request(self, text: str, common: dict[str, Any]) -> None:
        """The request after a command starts with its result text: how the command ended."""
        request = _json(text).get("request")
        ev = self.command
        if not (self.awaiting_result and ev and isinstance(request, str)):
            return
        if request.startswith("[execute_command for "):
            apply_command_result(ev, read_command_result(request))
            ev.result_line, ev.result_ts = ev.result_line or common["line"], ev.result_ts or common["ts"]
            self.awaiting_result = False


def detect(path: Path, head: bytes) -> str | None:
    first = first_record(head)
    if isinstance(first.get("ts"), int) and first.get("type") in ("say", "ask") \
            and isinstance(first.get(first["type"]), str):
        return "a JSON array of Cline UI messages (`ts`, `type: say|ask`)"
    return None


def load(path: Path) -> Session:
    b, records = load_records(path, NAME, "Cline UI messages")
    reader = _Reader(b)
    for line, rec in enumerate(records, start=1):
        reader.record(line, rec)
    return b.build()
