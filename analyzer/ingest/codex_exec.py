"""Codex ``exec --json`` event streams: what ``codex exec --json "PROMPT"`` prints, one JSON event
per line (formats.md §2, "Other Codex logs"; the types are ``codex-rs/exec/src/exec_events.rs``).

Top-level events: ``thread.started`` (``thread_id``), ``turn.started``, ``turn.completed``
(``usage``), ``turn.failed`` (``error.message``), ``error`` (``message``), and ``item.started`` /
``item.updated`` / ``item.completed`` carrying an ``item`` with ``id`` and ``type``:

* ``command_execution`` (``command``, ``aggregated_output``, ``exit_code``, ``status``:
  ``in_progress``, ``completed``, ``failed``, ``declined``): one ``ToolEvent`` at the line where it
  started, its result from the line where it completed. A command still ``in_progress`` when the
  stream ends (a server run in the foreground, an interrupted run) keeps no result.
* ``agent_message`` (``text``) and ``reasoning`` (``text``, the model's summary of its thinking):
  ``AssistantEvent``.
* ``file_change`` (``changes``), ``mcp_tool_call`` (``server``, ``tool``, ``arguments``,
  ``result``, ``error``), ``web_search`` (``query``): ``ToolEvent`` of their category.
* ``todo_list`` and the turn bookkeeping are counted skipped; an ``error`` item is a system error.

The stream has no times and does not repeat the prompt (it is the command's argument), so the
session has no user messages: rules about what the user said have nothing to read here, the ones
about what commands did (kills, relaunches, failures) do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent
from analyzer.ingest.base import SessionBuilder, as_dict, categorize, first_json_line, iter_jsonl, kind_of

NAME = "codex-exec"
DESCRIPTION = "Codex `exec --json` event stream: JSONL of `thread.started`, `item.started`/`item.completed`, …"

_EVENT_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed", "item.started",
                          "item.updated", "item.completed", "error"})
_SKIPPED_ITEMS = frozenset({"todo_list"})


def detect(path: Path, head: bytes) -> str | None:
    if not path.is_file():
        return None
    first = first_json_line(head)
    # a rollout line has `payload`; opencode's run stream has `sessionID`/`part` (and an `error` type too)
    if isinstance(first, dict) and kind_of(first) in _EVENT_TYPES and not {"payload", "sessionID", "part"} & set(first):
        return f"JSONL whose first event is `{first['type']}` (codex exec --json)"
    return None


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.commands: dict[str, ToolEvent] = {}
        """Commands started and not completed yet, by item id."""

    def event(self, line: int, ev: Any) -> None:
        b = self.b
        if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
            b.diag(Level.error, "not a codex exec event (no `type`); skipped", line)
            return
        kind = ev["type"]
        if kind == "thread.started":
            if isinstance(ev.get("thread_id"), str):
                b.session.setdefault("session_id", ev["thread_id"])
        elif kind in ("turn.failed", "error"):
            message = as_dict(ev.get("error")).get("message") if kind == "turn.failed" else ev.get("message")
            b.add(SystemEvent(subtype="error", text=str(message or kind), line=line))
        elif kind in ("item.started", "item.updated", "item.completed"):
            self.item(line, kind, as_dict(ev.get("item")))
        else:  # turn.started, turn.completed (token usage), and types newer than this reader
            b.skipped += 1

    def item(self, line: int, kind: str, item: dict[str, Any]) -> None:
        b = self.b
        item_type = str(item.get("type") or "")
        ref = str(item["id"]) if item.get("id") is not None else None
        if item_type == "command_execution":
            self.command(line, kind, item, ref)
            return
        if kind != "item.completed" or item_type in _SKIPPED_ITEMS:
            b.skipped += 1  # other items are read once, whole, when they complete
            return
        common: dict[str, Any] = {"line": line, "ref": ref}
        text = item.get("text") if isinstance(item.get("text"), str) else ""
        if item_type == "agent_message":
            b.add(AssistantEvent(text=text, **common))
        elif item_type == "reasoning":
            b.add(AssistantEvent(text="", thinking=text, **common))
        elif item_type == "error":
            b.add(SystemEvent(subtype="error", text=str(item.get("message") or text), **common))
        elif item_type == "file_change":
            b.add(ToolEvent(name="file_change", category="file", input={"changes": item.get("changes")},
                            is_error=item.get("status") == "failed", **common))
        elif item_type == "mcp_tool_call":
            tool = str(item.get("tool") or "mcp")
            result, error = item.get("result"), as_dict(item.get("error")).get("message")
            b.add(ToolEvent(name=f"{item.get('server') or 'mcp'}.{tool}", category=categorize(tool),
                            input=as_dict(item.get("arguments")), is_error=error is not None,
                            output=str(error) if error is not None else (
                                None if result is None else str(result)), **common))
        elif item_type == "web_search":
            b.add(ToolEvent(name="web_search", category="other", input={"query": item.get("query")}, **common))
        else:
            b.skipped += 1

    def command(self, line: int, kind: str, item: dict[str, Any], ref: str | None) -> None:
        tool = self.commands.get(ref) if ref is not None else None
        if tool is None:
            tool = ToolEvent(name="command_execution", category="shell", command=str(item.get("command") or ""),
                             input={"command": item.get("command")}, line=line, ref=ref)
            self.b.add(tool)
            if ref is not None:
                self.commands[ref] = tool
        if kind != "item.completed":
            return
        if ref is not None:
            del self.commands[ref]
        status = item.get("status")
        output = item.get("aggregated_output")
        tool.output = self.b.output(output, line) if isinstance(output, str) else None
        tool.result_line, tool.result_ref = line, ref
        code = item.get("exit_code")
        tool.exit_code = code if isinstance(code, int) else None
        tool.interrupted = status == "declined"  # the user or the policy refused to run it
        tool.is_error = status in ("failed", "declined") or (tool.exit_code not in (None, 0))


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "codex"
    reader = _Reader(b)
    for record in iter_jsonl(path, b):
        reader.event(record.line, record.value)
    for tool in reader.commands.values():
        b.diag(Level.info, f"command still running when the stream ended: {(tool.command or '')[:80]}", tool.line)
    return b.build()
