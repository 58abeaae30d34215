"""Cline / Roo Code ``api_conversation_history.json``: the task's messages as sent to the model.

A JSON array of Anthropic-style messages (``role``, ``content`` as a string or typed blocks; newer
versions add ``ts``, epoch milliseconds). Tool calls come in two shapes, by Cline version:

* XML in the assistant's text (Cline's original prompt protocol)::

      <execute_command>
      <command>npm run dev</command>
      <requires_approval>false</requires_approval>
      </execute_command>

  answered in the next user message by a text block ``[execute_command for 'npm run dev'] Result:``
  followed by the result text;
* native ``tool_use{id, name, input}`` blocks (ids such as ``tooluse_…`` or ``toolu_…``), answered by
  ``tool_result{tool_use_id, content}`` blocks.

Either way one call becomes one ``ToolEvent`` at the call's message (``ref`` the block id where there
is one). Cline writes how a command ended into the result text (``read_command_result``): an exit
code, "still running in the user's terminal" (the command keeps running: ``background``), or the
user's denial. The conversational tools (``ask_followup_question``, ``attempt_completion``,
``plan_mode_respond``) are what the agent said, so they become ``AssistantEvent``s, and the user's
``<answer>`` / ``<feedback>`` in their results become ``UserEvent``s; ``attempt_completion``'s
optional ``command`` (a demo Cline runs) is a shell call. ``<environment_details>`` blocks are the
harness's, not the user's, and are dropped; ``<task>`` is unwrapped. ``line`` is the 1-based message
number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analyzer.events import AssistantEvent, Level, Session, ToolEvent, UserEvent
from analyzer.ingest.base import IngestError, SessionBuilder, as_dict, as_id, parse_ts, text_of
from analyzer.ingest.chat import make_tool
from analyzer.ingest.jsondoc import Lost, complete_items, json_prefix, load_document

NAME = "cline-api"
DESCRIPTION = "Cline / Roo Code api_conversation_history.json: model messages with XML or native tool calls"

AGENT = "cline"

SAID_TOOLS = {"ask_followup_question": "question", "attempt_completion": "result",
              "plan_mode_respond": "response", "act_mode_respond": "response"}
"""Tools whose call is the agent talking to the user, and the parameter holding what it said."""

XML_TOOLS = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
    "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
    "load_mcp_documentation", "new_task", "web_fetch", "condense", "summarize_task", "report_bug",
    "new_rule", "apply_diff", "insert_content", "search_and_replace", "switch_mode", "codebase_search",
    "fetch_instructions", "update_todo_list", *SAID_TOOLS,
})
"""Tool tags of Cline's and Roo Code's XML protocol (other tags in a reply stay text)."""

_FILE_TOOLS = frozenset({"write_to_file", "replace_in_file", "search_files", "list_files",
                         "list_code_definition_names", "apply_diff", "insert_content", "search_and_replace"})

_XML_CALL = re.compile(r"<(" + "|".join(sorted(XML_TOOLS)) + r")>(.*?)(?:</\1>|\Z)", re.S)
_XML_PARAM = re.compile(r"<(\w+)>\n?(.*?)\n?</\1>", re.S)
_THINKING = re.compile(r"<thinking>(.*?)(?:</thinking>|\Z)", re.S)
_RESULT_HEADER = re.compile(r"^\[(\w+)(?: for '(.*)')?\] Result:[ \t]*\n?", re.S)
_ENV = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.S)
_TASK = re.compile(r"<task>\n?(.*?)\n?</task>", re.S)
_SPOKEN = re.compile(r"<(feedback|answer|user_message)>\n?(.*?)\n?</\1>", re.S)


# -- how a command ended, from Cline's result text (shared with cline-ui's api_req_started) -----------

@dataclass
class CommandResult:
    """What Cline told the model about one ``execute_command``."""

    output: str
    exit_code: int | None = None
    running: bool = False
    """Still running when Cline answered (user's terminal, background, or a timeout)."""
    interrupted: bool = False
    """Cancelled, killed by a signal, or denied by the user before it ran."""
    denied: bool = False


_EXIT = re.compile(r"^Command (?:executed successfully \(exit code (0)\)|failed with exit code (-?\d+))")
_RUNNING = ("Command is still running in the user's terminal", "Command is running in the background",
            "Command timed out after", "Command execution timed out after")
_OUTPUT_START = re.compile(r"(?:^|\n)(?:Output:|Here's the output so far:|Output so far:|Output captured "
                           r"before cancellation:)\n")
_OUTPUT_END = re.compile(r"\n\n(?:The user provided the following feedback:|You will be updated on the "
                         r"terminal status)")


def read_command_result(text: str) -> CommandResult:
    """Exit code, running/denied state and the output of an ``execute_command`` result text."""
    text = _RESULT_HEADER.sub("", _ENV.sub("", text).strip(), count=1).lstrip()
    if text.startswith("The user denied this operation"):
        return CommandResult(output=text, interrupted=True, denied=True)
    start = _OUTPUT_START.search(text)
    output = ""
    if start:
        rest = text[start.end():]
        end = _OUTPUT_END.search(rest)
        output = (rest[: end.start()] if end else rest).rstrip()
    result = CommandResult(output=output)
    if m := _EXIT.match(text):
        result.exit_code = int(m.group(1) or m.group(2))
    result.running = text.startswith(_RUNNING)
    result.interrupted = text.startswith(("Command cancelled", "Command terminated by signal"))
    return result


def apply_command_result(ev: ToolEvent, result: CommandResult) -> None:
    """Record how a shell call ended. Output already streamed (cline-ui) is kept when longer."""
    if ev.output is None or len(result.output) > len(ev.output):
        ev.output = result.output
    ev.exit_code = result.exit_code if result.exit_code is not None else ev.exit_code
    ev.background = ev.background or result.running
    ev.interrupted = ev.interrupted or result.interrupted
    if result.denied or (result.exit_code or 0) != 0:
        ev.is_error = True


def spoken_parts(text: str) -> list[str]:
    """The user's own words inside a tool result: ``<feedback>``, ``<answer>``, ``<user_message>``."""
    return [m.group(2).strip() for m in _SPOKEN.finditer(text) if m.group(2).strip()]


# -- the reader -----------------------------------------------------------------------------------


@dataclass
class _Reader:
    b: SessionBuilder
    native: dict[str, ToolEvent] = field(default_factory=dict)
    xml: list[tuple[str, ToolEvent | None]] = field(default_factory=list)
    """XML calls waiting for their ``[name …] Result:`` block, oldest first (None: a said tool)."""

    def message(self, line: int, msg: Any) -> None:
        b = self.b
        b.records += 1
        if isinstance(msg, Lost):  # damaged JSON: diagnosed where the document was read
            return
        if not isinstance(msg, dict):
            b.diag(Level.error, f"message is a JSON {type(msg).__name__}, not an object; skipped", line)
            return
        common: dict[str, Any] = {"line": line, "ts": parse_ts(msg.get("ts"))}
        role = msg.get("role")
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [content]
        if role == "assistant":
            model = as_dict(msg.get("modelInfo")).get("modelId")
            if isinstance(model, str) and "model" not in b.session:
                b.session["model"] = model
            self._assistant(blocks, common)
        elif role == "user":
            self._user(blocks, common)
        else:
            b.diag(Level.warning, f"message without a known role ({role!r}); skipped", line)
            b.skipped += 1

    def _assistant(self, blocks: list[Any], common: dict[str, Any]) -> None:
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[tuple[str, dict[str, Any], str | None]] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                calls.append((str(block.get("name")), dict(as_dict(block.get("input"))), as_id(block.get("id"))))
            elif isinstance(block, dict) and block.get("type") in ("thinking", "reasoning"):
                thinking.append(str(block.get("thinking") or block.get("text") or ""))
            elif isinstance(block, dict) and block.get("type") not in (None, "text"):
                continue  # images and the like: not said
            else:
                text = text_of(block)
                thinking += [m.group(1).strip() for m in _THINKING.finditer(text)]
                text = _THINKING.sub("", text)
                for m in _XML_CALL.finditer(text):
                    params = {p.group(1): p.group(2) for p in _XML_PARAM.finditer(m.group(2))}
                    calls.append((m.group(1), params, None))
                texts.append(_XML_CALL.sub("", text).strip())
        text = "\n\n".join(t for t in texts if t)
        if text or thinking:
            self.b.add(AssistantEvent(text=text, thinking="\n".join(thinking) or None,
                                      model=self.b.session.get("model"), **common))
        for name, params, ref in calls:
            self._call(name, params, ref, common)

    def _call(self, name: str, params: dict[str, Any], ref: str | None, common: dict[str, Any]) -> None:
        ev: ToolEvent | None = None
        if name in SAID_TOOLS:
            said = params.get(SAID_TOOLS[name])
            if isinstance(said, str) and said.strip():
                self.b.add(AssistantEvent(text=said.strip(), model=self.b.session.get("model"), **common))
            command = params.get("command")
            if name == "attempt_completion" and isinstance(command, str) and command.strip():
                ev = ToolEvent(name=name, category="shell", input=params, command=command.strip(), ref=ref,
                               **common)
        else:
            ev = make_tool(name, params, ref=ref, **common)
            if ev.category == "other" and name in _FILE_TOOLS:
                ev.category = "file"
        if ev is not None:
            self.b.add(ev)
        if ref is not None and ev is not None:
            self.native[ref] = ev
        elif ref is None:
            self.xml.append((name, ev))

    def _user(self, blocks: list[Any], common: dict[str, Any]) -> None:
        said: list[str] = []
        result: tuple[str, str] | None = None  # (tool name, text so far) of an open XML result
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                ref = as_id(block.get("tool_use_id"))
                ev = self.native.pop(ref, None) if ref else None
                if ev is None:
                    self.b.diag(Level.warning, f"tool_result for unknown tool_use id {ref}; dropped",
                                common["line"])
                    continue
                self._finish(ev, text_of(block.get("content")), bool(block.get("is_error")), common)
                continue
            if isinstance(block, dict) and block.get("type") not in (None, "text"):
                continue  # images the user attached
            text = _ENV.sub("", text_of(block)).strip()
            if not text:
                continue
            if header := _RESULT_HEADER.match(text):
                if result is not None:
                    self._xml_result(*result, common)
                result = (header.group(1), text)
            elif result is not None:
                result = (result[0], f"{result[1]}\n{text}")
            else:
                said.append(_TASK.sub(lambda m: m.group(1), text))
        if result is not None:
            self._xml_result(*result, common)
        text = "\n\n".join(said).strip()
        if text:
            origin = "meta" if text.startswith("[TASK RESUMPTION]") else "prompt"
            self.b.add(UserEvent(text=text, origin=origin, **common))

    def _xml_result(self, name: str, text: str, common: dict[str, Any]) -> None:
        match = next((i for i, (n, _) in enumerate(self.xml) if n == name), None)
        if match is None:
            if name not in SAID_TOOLS:
                self.b.diag(Level.warning, f"result of {name} answers no call before it", common["line"])
            self._spoken(text, common)
            return
        _, ev = self.xml.pop(match)
        if ev is not None:
            self._finish(ev, text, False, common)
        else:
            self._spoken(text, common)

    def _finish(self, ev: ToolEvent, text: str, is_error: bool, common: dict[str, Any]) -> None:
        ev.result_line, ev.result_ts = common["line"], common["ts"]
        if ev.category == "shell":
            apply_command_result(ev, read_command_result(text))
            ev.is_error = ev.is_error or is_error or None
        else:
            ev.output = _RESULT_HEADER.sub("", text, count=1)
            ev.is_error = is_error or text.startswith("The user denied this operation") or None
        self._spoken(text, common)

    def _spoken(self, text: str, common: dict[str, Any]) -> None:
        for words in spoken_parts(text):
            self.b.add(UserEvent(text=words, **common))


# -- what both Cline files share: a JSON array, one record per item ----------------------------------

def first_record(head: bytes) -> dict[str, Any]:
    """The first item of the JSON array ``head`` starts (read even when ``head`` cuts it off); {} when
    ``head`` is not such an array."""
    if not head or head.lstrip()[:1] != b"[":
        return {}
    doc = json_prefix(head)
    return as_dict(doc.value[0]) if doc and isinstance(doc.value, list) and doc.value else {}


def load_records(path: Path, name: str, what: str) -> tuple[SessionBuilder, list[Any]]:
    """A builder for format ``name`` and the items of the JSON array at ``path`` (salvaged up to a
    break); a file that is no array gets an ``IngestError`` naming ``what`` it should hold."""
    b = SessionBuilder(path=path, format=name)
    b.session["agent"] = AGENT
    doc = load_document(path, b)
    if not isinstance(doc.value, list):
        raise IngestError(path, f"expected a JSON array of {what}")
    return b, complete_items(doc, doc.value, b)


def detect(path: Path, head: bytes) -> str | None:
    first = first_record(head)
    text = text_of(first.get("content")) if first.get("role") == "user" else ""
    if "<task>" in text or "<environment_details>" in text:
        return "a JSON array of model messages whose first user turn is Cline's `<task>` / `<environment_details>`"
    return None


def load(path: Path) -> Session:
    b, messages = load_records(path, NAME, "Cline API messages")
    reader = _Reader(b)
    for line, msg in enumerate(messages, start=1):
        reader.message(line, msg)
    return b.build()
