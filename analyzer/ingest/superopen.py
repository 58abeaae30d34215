"""superopen session event streams: coding-agent hook events (Cursor's above all) as OTel-style spans.

superopen (ishanjainn/superopen) turns each hook call of Cursor (``preToolUse``,
``beforeShellExecution``, ``afterShellExecution``, ``postToolUse``, ``beforeSubmitPrompt``,
``afterAgentResponse``…) into a span and writes one JSON span a line: ``name``,
``start_time_unix_nano``, ``attributes`` (string values), ``status``, ``session_id``. The file may
open with a ``{"type": "superopen.file_manifest"}`` line (counted skipped).

* ``coding_agent.tool.requested`` (``preToolUse``: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``)
  announces a call. For a shell tool the command comes in the ``coding_agent.shell.requested`` span
  that follows (``beforeShellExecution``: ``coding_agent.tool.command``, ``code.cwd``), which has no
  call id: it is paired with the oldest announced shell call still without a command (parallel calls
  are announced and then requested in the same order). The ``ToolEvent`` sits at the
  ``shell.requested`` line, the one holding the command; ``ref`` is the call id.
* ``coding_agent.tool.call`` (``postToolUse`` / ``afterShellExecution``) is the result:
  ``gen_ai.tool.call.result`` (Cursor's shell gives ``{"output", "exitCode"}``),
  ``coding_agent.tool.errored``, ``exception.message``. It joins its call by id, else (the
  ``afterShellExecution`` span has no id) the latest call of the same command without a result.
* ``coding_agent.llm.turn`` carries the user's prompt (``gen_ai.input.messages``) or the agent's reply
  (``gen_ai.output.messages``) when content capture was on.

Every other ``coding_agent.*`` span (session start/end, model changes, loop stops, edits, git
artifacts) is telemetry and is counted skipped. Commands are captured in full only in superopen's
``full`` mode; in ``metadata`` mode ``coding_agent.tool.command`` is the program name alone.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, ToolEvent, UserEvent
from analyzer.ingest.base import (
    SessionBuilder,
    as_dict,
    as_id,
    categorize,
    first_json_line,
    iter_jsonl,
    parse_ts,
)
from analyzer.ingest.chat import shell_command

NAME = "superopen"
DESCRIPTION = "superopen hook-event spans (`coding_agent.*`, Cursor hooks): shell commands, tool results, turns"

MANIFEST = "superopen.file_manifest"
_SPAN_PREFIX = "coding_agent."


def _attr(attrs: dict[str, Any], key: str) -> str | None:
    value = attrs.get(key)
    return as_id(value) if value is not None else None


def _ts(span: dict[str, Any]) -> Any:
    ns = span.get("start_time_unix_nano")
    return parse_ts(ns / 1e9) if isinstance(ns, int | float) and not isinstance(ns, bool) else None


def _message_text(raw: str | None) -> str:
    """The text parts of an OTel GenAI ``gen_ai.{input,output}.messages`` JSON value."""
    if not raw:
        return ""
    try:
        messages = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw
    parts = [as_dict(p).get("content") for m in (messages if isinstance(messages, list) else [])
             for p in as_dict(m).get("parts") or []]
    return "\n".join(p for p in parts if isinstance(p, str))


@dataclass
class _Reader:
    b: SessionBuilder
    by_id: dict[str, ToolEvent] = field(default_factory=dict)
    announced: deque[tuple[int, str | None, dict[str, Any]]] = field(default_factory=deque)
    """Shell calls announced by ``tool.requested`` and still waiting for their command."""

    def span(self, line: int, span: Any) -> None:
        b = self.b
        if not isinstance(span, dict):
            b.diag(Level.error, f"line is a JSON {type(span).__name__}, not a span object; skipped", line)
            return
        name = span.get("name")
        if span.get("type") == MANIFEST:
            b.skipped += 1
            return
        if not isinstance(name, str) or not name.startswith(_SPAN_PREFIX):
            b.diag(Level.warning, "line is not a superopen `coding_agent.*` span; skipped", line)
            b.skipped += 1
            return
        attrs = as_dict(span.get("attributes"))
        common: dict[str, Any] = {"line": line, "ts": _ts(span)}
        for key, value in (("session_id", span.get("session_id") or attrs.get("coding_agent.session.id")),
                           ("cwd", attrs.get("code.cwd")), ("model", attrs.get("gen_ai.request.model")),
                           ("agent", attrs.get("coding_agent.client"))):
            if isinstance(value, str) and value and key not in b.session:
                b.session[key] = value
        if name == "coding_agent.tool.requested":
            self._requested(attrs, common)
        elif name == "coding_agent.shell.requested":
            self._shell(attrs, common)
        elif name == "coding_agent.tool.call":
            self._result(span, attrs, common)
        elif name == "coding_agent.llm.turn":
            prompt = _message_text(_attr(attrs, "gen_ai.input.messages"))
            reply = _message_text(_attr(attrs, "gen_ai.output.messages"))
            if prompt:
                b.add(UserEvent(text=prompt, **common))
            if reply:
                b.add(AssistantEvent(text=reply, model=_attr(attrs, "gen_ai.request.model"), **common))
            if not prompt and not reply:
                b.skipped += 1
        else:
            b.skipped += 1

    def _requested(self, attrs: dict[str, Any], common: dict[str, Any]) -> None:
        tool = _attr(attrs, "gen_ai.tool.name") or "tool"
        ref = _attr(attrs, "gen_ai.tool.call.id")
        if categorize(tool) == "shell":
            self.announced.append((common["line"], ref, common))
            return
        ev = ToolEvent(name=tool, category=categorize(tool), ref=ref,
                       cwd=_attr(attrs, "code.cwd"), **common)
        self.b.add(ev)
        if ref:
            self.by_id[ref] = ev

    def _shell(self, attrs: dict[str, Any], common: dict[str, Any]) -> None:
        command = _attr(attrs, "coding_agent.tool.command")
        ref = self.announced.popleft()[1] if self.announced else None
        if command is None:
            self.b.diag(Level.warning, "shell request without `coding_agent.tool.command` (content capture "
                        "off?); the call is kept without its command", common["line"])
        ev = ToolEvent(name="Shell", category="shell", input={"command": command} if command else {},
                       command=command, ref=ref, cwd=_attr(attrs, "code.cwd"), **common)
        self.b.add(ev)
        if ref:
            self.by_id[ref] = ev

    def _result(self, span: dict[str, Any], attrs: dict[str, Any], common: dict[str, Any]) -> None:
        ref = _attr(attrs, "gen_ai.tool.call.id")
        args: dict[str, Any] = {}
        if raw_args := _attr(attrs, "gen_ai.tool.call.arguments"):
            try:
                args = as_dict(orjson.loads(raw_args))
            except orjson.JSONDecodeError:
                args = {"arguments": raw_args}
        command = _attr(attrs, "coding_agent.tool.command") or shell_command(args)
        ev = self.by_id.get(ref) if ref else None
        if ev is None and command is not None:
            ev = next((e for e in reversed(self.b.events) if isinstance(e, ToolEvent) and e.command == command
                       and e.output is None), None)
        if ev is None:
            tool = _attr(attrs, "gen_ai.tool.name") or "tool"
            category = "shell" if command is not None else categorize(tool)
            ev = ToolEvent(name=tool, category=category, input=args, command=command, ref=ref,
                           cwd=_attr(attrs, "code.cwd"), **common)
            self.b.add(ev)
        output: Any = _attr(attrs, "gen_ai.tool.call.result") or ""
        try:
            result = orjson.loads(output) if output.lstrip().startswith("{") else None
        except orjson.JSONDecodeError:
            result = None
        if isinstance(result, dict) and "output" in result:
            output = str(result.get("output") or "")
            code = result.get("exitCode")
            ev.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else ev.exit_code
        errored = _attr(attrs, "coding_agent.tool.errored") in ("true", "True") or span.get("status") == "Error"
        if errored and not output:
            output = _attr(attrs, "exception.message") or ""
        ev.output, ev.result_line, ev.result_ts = output, common["line"], common["ts"]
        ev.is_error = True if errored or (ev.exit_code or 0) != 0 else None
        ev.interrupted = _attr(attrs, "coding_agent.tool.interrupted") in ("true", "True")
        ev.input = ev.input or args

    def finish(self) -> None:
        for line, ref, common in self.announced:  # announced, never requested: the hook stream ended
            self.b.add(ToolEvent(name="Shell", category="shell", ref=ref, **common))
            self.b.diag(Level.info, "shell call announced but its command was never recorded", line)


def detect(path: Path, head: bytes) -> str | None:
    first = first_json_line(head)
    if not isinstance(first, dict):
        return None
    if first.get("type") == MANIFEST:
        return "JSONL opening with a `superopen.file_manifest` line"
    name = first.get("name")
    if isinstance(name, str) and name.startswith(_SPAN_PREFIX) and "coding_agent.client" in as_dict(
            first.get("attributes")):
        return "JSONL of superopen `coding_agent.*` spans"
    return None


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    reader = _Reader(b)
    for rec in iter_jsonl(path, b):
        reader.span(rec.line, rec.value)
    reader.finish()
    b.session.setdefault("agent", "cursor")
    return b.build()
