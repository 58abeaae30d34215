"""pi coding-agent sessions (badlogic/pi-mono, ``packages/coding-agent``): ``~/.pi/agent/sessions/
--<cwd>--/<time>_<id>.jsonl``, one entry per line (``src/core/session-manager.ts``, session version 3).

Entries: a header ``{type: "session", version, id, timestamp, cwd}`` (a copy cut from a longer file
may lack it), then entries with ``id``, ``parentId`` (a tree: ``/tree`` branches share a parent) and
``timestamp``:

* ``message``: ``message`` is an agent message (``@mariozechner/pi-ai`` types): ``user`` (``content``
  a string or ``text``/``image`` blocks) → ``UserEvent``; ``assistant`` (``content`` blocks ``text``,
  ``thinking``, ``toolCall{id, name, arguments}``; ``model``, ``stopReason``, ``errorMessage``) → an
  ``AssistantEvent`` and one ``ToolEvent`` per call, ``ref`` = the call id (``call_…``, as the log
  writes it); ``toolResult`` (``toolCallId``, ``toolName``, ``content``, ``isError``) fills in its
  call. ``bashExecution`` (a command the user ran with ``!``: ``command``, ``output``, ``exitCode``,
  ``cancelled``) is a ``by_user`` shell call; ``custom``, ``branchSummary``, ``compactionSummary``
  are system events.
* ``custom_message`` (an extension's text injected into the context) and ``compaction`` /
  ``branch_summary`` (summaries) → ``SystemEvent``; ``model_change``, ``thinking_level_change``,
  ``custom`` (extension state, never shown to the model), ``label``, ``session_info`` are counted
  skipped.

The ``bash`` tool (``src/core/tools/bash.ts``) ends a failed command's text with "Command exited with
code N" (``isError``), a timeout with "Command timed out after N seconds", an abort with "Command
aborted"; a command that succeeded has no status line: its exit code is 0.

The whole file is kept in one timeline in file order (``/tree`` branches included: their commands
ran). ``line`` is the entry's file line; a tool call's is the assistant message holding it
(``result_line`` its result's). Some harnesses built on pi move old tool outputs to "cold storage"
(``evictedContent``): the text left in the file is a placeholder, said once in an info diagnostic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    Record,
    SessionBuilder,
    as_dict,
    as_id,
    categorize,
    first_json_line,
    iter_jsonl,
    kind_of,
    open_regular,
    parse_ts,
    text_of,
)

NAME = "pi"
DESCRIPTION = "pi coding-agent session JSONL (`session` header, `message` entries with `toolCall`/`toolResult`)"

_ENTRY_TYPES = frozenset({"session", "message", "model_change", "thinking_level_change", "compaction",
                          "branch_summary", "custom", "custom_message", "label", "session_info"})
_SKIPPED = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info"})
_ROLES = frozenset({"user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary",
                    "compactionSummary"})
_EXIT = re.compile(r"(?:\A|\n)Command exited with code (-?\d+)\s*\Z")
_STOPPED = re.compile(r"(?:\A|\n)Command (?:timed out after \d+ seconds|aborted)\s*\Z")
_BAD_ESCAPE = re.compile(rb'\\(u[0-9a-fA-F]{4}|["\\/bfnrt]|.?)', re.S)


def detect(path: Path, head: bytes) -> str | None:
    if not path.is_file():
        return None
    first = first_json_line(head)
    if not isinstance(first, dict):
        return None
    if first.get("type") == "session" and isinstance(first.get("id"), str) and "cwd" in first:
        return "JSONL whose first entry is a pi `session` header"
    message = first.get("message")
    # a file cut from a longer session starts with an entry: pi's own fields, a pi message role
    if (kind_of(first) in _ENTRY_TYPES and isinstance(first.get("id"), str) and "parentId" in first
            and (first["type"] != "message" or (isinstance(message, dict) and kind_of(message, "role") in _ROLES))):
        return f"JSONL of pi session entries (`{first['type']}` with `id`/`parentId`)"
    return None


def _repair_escape(m: re.Match[bytes]) -> bytes:
    escape = m.group(1)
    if len(escape) == 5 or (len(escape) == 1 and escape in b'"\\/bfnrt'):
        return m.group(0)  # a valid escape (``\\uXXXX`` or one of JSON's letters)
    return b"\\\\" + escape


def _recover(path: Path, b: SessionBuilder, records: list[Record]) -> list[Record]:
    """Lines lost to an invalid escape (``\\*``: an e-mail redacted to ``***@***.***`` right after a
    ``\\n``, in sessions published with redaction) read again with that backslash as a literal one:
    losing a whole tool result to one character loses more than the guess risks."""
    bad = {d.line: d for d in b.diagnostics if d.level is Level.error and d.line is not None
           and "invalid escape" in d.message}
    if not bad:
        return records
    recovered: list[Record] = []
    with open_regular(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno not in bad:
                continue
            try:
                value = orjson.loads(_BAD_ESCAPE.sub(_repair_escape, raw))
            except orjson.JSONDecodeError:
                continue
            b.diagnostics.remove(bad[lineno])
            b.diag(Level.warning, "invalid escape in a string: read with the backslash as a literal one", lineno)
            recovered.append(Record(lineno, value))
    return sorted([*records, *recovered], key=lambda r: r.line)


class _Reader:
    def __init__(self, b: SessionBuilder) -> None:
        self.b = b
        self.calls: dict[str, ToolEvent] = {}
        """Tool calls by id, waiting for (or given) their result."""
        self.evicted = 0

    def entry(self, line: int, entry: Any) -> None:
        b = self.b
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            b.diag(Level.error, "not a pi session entry (no `type`); skipped", line)
            return
        kind = entry["type"]
        common: dict[str, Any] = {"line": line, "ts": parse_ts(entry.get("timestamp"))}
        if "evictedContent" in entry:
            self.evicted += 1
        if kind == "session":
            b.skipped += 1
            if isinstance(entry.get("id"), str):
                b.session.setdefault("session_id", entry["id"])
            if isinstance(entry.get("cwd"), str):
                b.session.setdefault("cwd", entry["cwd"])
        elif kind == "message":
            self.message(as_dict(entry.get("message")), common)
        elif kind == "custom_message":
            b.add(SystemEvent(subtype=f"custom:{entry.get('customType') or 'message'}",
                              text=text_of(entry.get("content")), **common))
        elif kind in ("compaction", "branch_summary"):
            b.add(SystemEvent(subtype=kind, text=str(entry.get("summary") or ""), **common))
        elif kind in _SKIPPED:
            b.skipped += 1
            if kind == "model_change":
                model = entry.get("modelId") or entry.get("model")
                if isinstance(model, str):
                    b.session.setdefault("model", model)
        else:
            b.skipped += 1  # entry types newer than this reader

    def message(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        b = self.b
        role = msg.get("role")
        if role == "user":
            b.add(UserEvent(text=text_of(msg.get("content")), **common))
        elif role == "assistant":
            self.assistant(msg, common)
        elif role == "toolResult":
            self.tool_result(msg, common)
        elif role == "bashExecution":
            code = msg.get("exitCode")
            exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
            b.add(ToolEvent(name="bash", category="shell", command=str(msg.get("command") or ""),
                            input={"command": msg.get("command")}, by_user=True,
                            output=b.output(str(msg.get("output") or ""), common["line"]), exit_code=exit_code,
                            is_error=exit_code not in (None, 0), interrupted=msg.get("cancelled") is True,
                            **common))
        elif role in ("custom", "branchSummary", "compactionSummary"):
            text = msg.get("summary") if role != "custom" else text_of(msg.get("content"))
            b.add(SystemEvent(subtype=str(role), text=str(text or ""), **common))
        else:
            b.diag(Level.warning, f"pi message with unknown role {role!r}; skipped", common["line"])
            b.skipped += 1

    def assistant(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        b = self.b
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        texts = [str(bl.get("text") or "") for bl in blocks if isinstance(bl, dict) and bl.get("type") == "text"]
        thinking = [str(bl.get("thinking") or "") for bl in blocks
                    if isinstance(bl, dict) and bl.get("type") == "thinking"]
        text = "\n".join(t for t in texts if t)
        if msg.get("stopReason") in ("error", "aborted") and msg.get("errorMessage"):
            b.add(SystemEvent(subtype="api_error", text=str(msg["errorMessage"]), **common))
        if text or any(thinking):
            b.add(AssistantEvent(text=text, thinking="\n".join(t for t in thinking if t) or None, model=model,
                                 **common))
        for bl in blocks:
            if not isinstance(bl, dict) or bl.get("type") != "toolCall":
                continue
            name = str(bl.get("name") or "tool")
            args = as_dict(bl.get("arguments"))
            category = categorize(name)
            command = args.get("command") if category == "shell" else None
            ref = as_id(bl.get("id"))
            tool = ToolEvent(name=name, category=category, input=args, ref=ref,
                             command=str(command) if command is not None else None, **common)
            b.add(tool)
            if ref is not None:
                self.calls[ref] = tool

    def tool_result(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        b = self.b
        ref = as_id(msg.get("toolCallId"))
        tool = self.calls.pop(ref, None) if ref is not None else None
        if tool is None:
            b.diag(Level.warning, f"tool result for a call not seen ({ref}); kept as a call of its own",
                   common["line"])
            name = str(msg.get("toolName") or "tool")
            tool = ToolEvent(name=name, category=categorize(name), ref=ref, **common)
            b.add(tool)
        output = text_of(msg.get("content"))
        tool.output = b.output(output, common["line"])
        tool.result_line, tool.result_ts = common["line"], common["ts"]
        tool.is_error = msg.get("isError") is True
        if tool.category == "shell":
            exit_line = _EXIT.search(output)
            if exit_line:
                tool.exit_code = int(exit_line.group(1))
            elif _STOPPED.search(output):
                tool.interrupted = True
            elif not tool.is_error:
                tool.exit_code = 0  # bash.ts adds no status line when the command exited 0


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = NAME
    reader = _Reader(b)
    # read whole before use: a line lost to a bad escape is recovered in its place (pi files are small)
    for record in _recover(path, b, list(iter_jsonl(path, b))):
        reader.entry(record.line, record.value)
    if reader.evicted:
        b.diag(Level.info, f"{reader.evicted} entries had their content moved out of the file by the harness "
                           "(`evictedContent`): their text here is a placeholder")
    return b.build()
