"""Generic chat message arrays: OpenAI chat-completions and Anthropic Messages (formats.md §8).

A JSON array of messages, bare or under a ``messages`` key (an API request body or a harness dump).

* OpenAI: assistant ``tool_calls[{id, function{name, arguments}}]`` (``arguments`` is a JSON string)
  are answered by ``tool`` messages with the same ``tool_call_id``; the legacy ``function_call`` is
  answered by the next ``function`` message of that name.
* Anthropic: ``tool_use{id, name, input}`` blocks in assistant content are answered by
  ``tool_result{tool_use_id, content, is_error}`` blocks in a later user message.

Each call and its result become one ``ToolEvent`` at the call's place; ``line`` is the 1-based message
number (``result_line`` the answering message's). System and developer messages become
``SystemEvent(subtype="prompt")``: a system prompt can carry instructions ("never restart the
server"), so it stays in the timeline. Messages have no times unless a harness added a
``timestamp``; exit codes only when the tool wrote one into its result text.

This module also holds what the other JSON-document formats share: ``json_prefix`` (the value at the
start of a possibly cut-off head, for ``detect()``) and ``load_document`` (the whole document, salvaging
the records before a broken or truncated spot).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import IngestError, SessionBuilder, categorize, join_argv, parse_ts, text_of

NAME = "chat"
DESCRIPTION = "JSON array of OpenAI chat-completions or Anthropic Messages messages, bare or under `messages`"

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

# -- JSON documents: the head for detect(), the whole file with salvage for load() ----------------

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS: tuple[tuple[str, Any], ...] = (("true", True), ("false", False), ("null", None))
_MAX_DEPTH = 400
_NOTHING: Any = object()
_scanstring: Any = json.decoder.scanstring  # type: ignore[attr-defined]  # C-accelerated, untyped


class _Cut(Exception):
    """The input ended inside a value; ``value`` is what was read of it."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _Bad(Exception):
    """Not JSON."""


@dataclass
class Prefix:
    """A JSON value read from the start of some text, possibly cut off by its end."""

    value: Any
    complete: bool = True
    cut: set[int] = field(default_factory=set)
    """``id()`` of every container the end of input cut off (their last item may be partial)."""

    def is_cut(self, value: Any) -> bool:
        """``value`` (a dict or list inside ``self.value``) was cut off before its end."""
        return isinstance(value, dict | list) and id(value) in self.cut


def _ws(s: str, i: int) -> int:
    m = _WS.match(s, i)
    return m.end() if m else i


def _string(s: str, i: int) -> tuple[str, int]:
    try:
        text, end = _scanstring(s, i + 1)
        return str(text), int(end)
    except json.JSONDecodeError as exc:
        if "Unterminated" in exc.msg or exc.pos >= len(s) - 6:
            raise _Cut(s[i + 1:]) from None
        raise _Bad from None


def _value(s: str, i: int, cut: set[int], depth: int) -> tuple[Any, int]:
    if depth > _MAX_DEPTH:
        raise _Bad
    i = _ws(s, i)
    if i >= len(s):
        raise _Cut(_NOTHING)
    c = s[i]
    if c == "{":
        obj: dict[str, Any] = {}
        i += 1
        while True:
            i = _ws(s, i)
            if i >= len(s):
                break
            if s[i] == "}":
                return obj, i + 1
            if s[i] != '"':
                raise _Bad
            try:
                key, i = _string(s, i)
            except _Cut:
                break
            i = _ws(s, i)
            if i >= len(s):
                break
            if s[i] != ":":
                raise _Bad
            try:
                obj[key], i = _value(s, i + 1, cut, depth + 1)
            except _Cut as inner:
                if inner.value is not _NOTHING:
                    obj[key] = inner.value
                break
            i = _ws(s, i)
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] != "}":
                raise _Bad
        cut.add(id(obj))
        raise _Cut(obj)
    if c == "[":
        arr: list[Any] = []
        i += 1
        while True:
            i = _ws(s, i)
            if i >= len(s):
                break
            if s[i] == "]":
                return arr, i + 1
            try:
                item, i = _value(s, i, cut, depth + 1)
            except _Cut as inner:
                if inner.value is not _NOTHING:
                    arr.append(inner.value)
                break
            arr.append(item)
            i = _ws(s, i)
            if i < len(s) and s[i] == ",":
                i += 1
            elif i < len(s) and s[i] != "]":
                raise _Bad
        cut.add(id(arr))
        raise _Cut(arr)
    if c == '"':
        return _string(s, i)
    m = _NUMBER.match(s, i)
    if m:
        if m.end() == len(s):
            raise _Cut(_NOTHING)
        text = m.group()
        return (float(text) if any(ch in text for ch in ".eE") else int(text)), m.end()
    for word, val in _LITERALS:
        piece = s[i: i + len(word)]  # never slice to the end: that would copy the rest of a big file
        if piece == word:
            return val, i + len(word)
        if i + len(piece) == len(s) and word.startswith(piece):
            raise _Cut(_NOTHING)
    raise _Bad


def json_prefix(data: bytes | str) -> Prefix | None:
    """The JSON value at the start of ``data`` as far as it goes, or None if it is not JSON.

    A container cut off by the end of ``data`` keeps what was read of it (and is listed in
    ``Prefix.cut``), so ``detect()`` can look at the first record of a 500 MB array from its head.
    Text after a complete value (the next JSONL line) is ignored.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.lstrip("\ufeff")
    cut: set[int] = set()
    try:
        value, _ = _value(text, 0, cut, 0)
    except _Cut as exc:
        if exc.value is _NOTHING:
            return None
        return Prefix(exc.value, complete=False, cut=cut)
    except (_Bad, RecursionError):
        return None
    return Prefix(value)


def load_document(path: Path, builder: SessionBuilder) -> Prefix:
    """The whole JSON document at ``path``. A document broken or cut off part-way is read up to that
    spot, with one error diagnostic; nothing readable at all raises ``IngestError``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    try:
        return Prefix(orjson.loads(data))
    except orjson.JSONDecodeError:
        pass
    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        return Prefix(json.loads(text))  # orjson rejects some documents json reads (lone surrogates)
    except json.JSONDecodeError as exc:
        error = exc
    except RecursionError:
        raise IngestError(path, "JSON nested too deeply to read") from None
    salvaged = json_prefix(text)  # a document cut off at its end reads up to the cut
    what = "cut off"
    if salvaged is None or salvaged.complete:
        salvaged = json_prefix(text[: error.pos])  # a broken one up to the break
        what = "broken"
    if salvaged is None or not _read_something(salvaged, salvaged.value):
        raise IngestError(path, f"not valid JSON ({error.msg})", line=error.lineno)
    builder.diag(Level.error, f"JSON document {what} at line {error.lineno} column {error.colno} "
                 f"({error.msg}); records before it were read, the rest is lost", error.lineno)
    salvaged.complete = False
    salvaged.cut.add(id(salvaged.value))
    return salvaged


def _read_something(doc: Prefix, value: Any) -> bool:
    """A salvaged value holds at least one whole record (list item) or field (object value)."""
    if isinstance(value, list):
        return any(not doc.is_cut(item) for item in value)
    if isinstance(value, dict):
        return any(not doc.is_cut(v) or _read_something(doc, v) for v in value.values())
    return False


def complete_items(doc: Prefix, items: list[Any], builder: SessionBuilder) -> list[Any]:
    """``items`` without a last record the end of a broken document cut in half (counted as read)."""
    if items and doc.is_cut(items) and doc.is_cut(items[-1]):
        builder.records += 1
        return items[:-1]
    return items


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (fields are all optional in logs)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


# -- what chat-like formats share --------------------------------------------------------------------

_EXIT_LINE = re.compile(
    r"^\W*(?:exit[ _]code|exit status|return[ _]?code|process exited with code)\W*(-?\d+)\W*$", re.I
)
_EXTRA_CATEGORIES = {
    **dict.fromkeys(["run_terminal_cmd", "exec", "execute", "bash_tool", "run_bash"], "shell"),
    **dict.fromkeys(["str_replace_based_edit_tool", "text_editor"], "file"),
}
"""Tools of API-level harnesses that ``categorize()`` does not know by name."""


def tool_category(name: str) -> str:
    """``categorize()`` plus the tool names generic message dumps use."""
    return _EXTRA_CATEGORIES.get(name.lower()) or categorize(name)


def shell_command(args: dict[str, Any]) -> str | None:
    """The command of a shell tool call: ``command`` / ``cmd`` as a string or an argv list."""
    for key in ("command", "cmd"):
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(a, str) for a in value):
            return join_argv(value)
    return None


def exit_code_in(output: str | None) -> int | None:
    """An exit status a tool wrote on a line of its own at the start or end of its output."""
    if not output:
        return None
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    for ln in lines[-3:][::-1] + lines[:2]:
        m = _EXIT_LINE.match(ln.strip())
        if m:
            return int(m.group(1))
    return None


def parse_arguments(raw: Any, builder: SessionBuilder, line: int | None) -> dict[str, Any]:
    """Tool-call arguments as a dict: parsed from a JSON string where the API sends one."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            builder.diag(Level.warning, "tool-call arguments are not valid JSON; kept as raw text", line)
            return {"arguments": raw}
        return value if isinstance(value, dict) else {"arguments": value}
    return {"arguments": raw}


def make_tool(name: str, args: dict[str, Any], **common: Any) -> ToolEvent:
    """A ToolEvent for a call, with category, command and background flag filled in."""
    category = tool_category(name)
    command = shell_command(args) if category == "shell" else None
    background = bool(args.get("run_in_background") or args.get("is_background") or args.get("background"))
    return ToolEvent(name=name, category=category, input=args, command=command,
                     background=background and category == "shell", **common)


def finish_tool(ev: ToolEvent, output: str, *, is_error: bool | None = None, line: int | None = None,
                ref: str | None = None) -> None:
    """Fill in a call's result."""
    ev.output = output
    ev.is_error = is_error
    ev.result_line = line
    ev.result_ref = ref
    if ev.exit_code is None and ev.category == "shell":
        ev.exit_code = exit_code_in(output)


def user_origin(text: str) -> str:
    if text.startswith("[Request interrupted by user"):
        return "interrupt"
    if text.startswith("/") and " " not in text.split("\n", 1)[0][:40].strip():
        return "command"
    return "prompt"


# -- the message reader -----------------------------------------------------------------------------


@dataclass
class MessageReader:
    """Reads chat messages one at a time into a builder, pairing calls with results."""

    builder: SessionBuilder
    agent: str = "main"
    model: str | None = None
    pending: dict[str, ToolEvent] = field(default_factory=dict)
    legacy: list[ToolEvent] = field(default_factory=list)
    """Legacy ``function_call``s waiting for their ``function`` message, oldest first."""

    def read(self, items: Iterable[tuple[int, Any]]) -> None:
        for line, msg in items:
            self.builder.records += 1
            if not isinstance(msg, dict):
                self.builder.diag(Level.error, f"message is a JSON {type(msg).__name__}, not an object; "
                                  "skipped", line)
                continue
            role = msg.get("role")
            if role not in ROLES:
                self.builder.diag(Level.warning, f"message without a known role ({role!r}); skipped", line)
                self.builder.skipped += 1
                continue
            common: dict[str, Any] = {"line": line, "agent": self.agent,
                                      "ts": parse_ts(msg.get("timestamp") or msg.get("created_at"))}
            if role in ("system", "developer"):
                self.builder.add(SystemEvent(subtype="prompt", text=text_of(msg.get("content")), **common))
            elif role == "user":
                self._user(msg, common)
            elif role == "assistant":
                self._assistant(msg, common)
            else:
                self._result(msg, role, common)

    def _user(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [content]
        texts: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                ref = str(block.get("tool_use_id"))
                ev = self.pending.pop(ref, None)
                if ev is None:
                    self.builder.diag(Level.warning, f"tool_result for unknown tool_use id {ref}; dropped",
                                      common["line"])
                    continue
                finish_tool(ev, text_of(block.get("content")), is_error=bool(block.get("is_error")),
                            line=common["line"])
            else:
                texts.append(block)
        text = text_of(texts)
        if text or not blocks or len(texts) == len(blocks):
            self.builder.add(UserEvent(text=text, origin=user_origin(text), **common))

    def _assistant(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        content = msg.get("content")
        model = msg.get("model") if isinstance(msg.get("model"), str) else self.model
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolEvent] = []
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            thinking.append(reasoning)
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                args = as_dict(block.get("input"))
                ref = str(block.get("id")) if block.get("id") is not None else None
                calls.append(make_tool(str(block.get("name")), dict(args), ref=ref, **common))
            elif isinstance(block, dict) and block.get("type") == "thinking":
                thinking.append(str(block.get("thinking") or ""))
            elif isinstance(block, dict) and block.get("type") not in (None, "text", "output_text"):
                continue  # images, redacted thinking, server tool results: not said to the user
            else:
                texts.append(text_of(block))
        for call in msg.get("tool_calls") or []:
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict):
                self.builder.diag(Level.warning, "tool call without a function; skipped", common["line"])
                continue
            ref = str(call.get("id")) if call.get("id") is not None else None
            args = parse_arguments(fn.get("arguments"), self.builder, common["line"])
            calls.append(make_tool(str(fn.get("name")), args, ref=ref, **common))
        legacy = msg.get("function_call")
        if isinstance(legacy, dict) and legacy.get("name"):
            args = parse_arguments(legacy.get("arguments"), self.builder, common["line"])
            ev = make_tool(str(legacy["name"]), args, **common)
            self.legacy.append(ev)
            calls.append(ev)
        text = "\n".join(t for t in texts if t)
        if text or thinking:
            self.builder.add(AssistantEvent(text=text, thinking="\n".join(thinking) or None, model=model,
                                            **common))
        for ev in calls:
            self.builder.add(ev)
            if ev.ref is not None:
                self.pending[ev.ref] = ev

    def _result(self, msg: dict[str, Any], role: str, common: dict[str, Any]) -> None:
        output = text_of(msg.get("content"))
        if role == "tool":
            ref = str(msg.get("tool_call_id"))
            ev = self.pending.pop(ref, None)
            if ev is None:
                self.builder.diag(Level.warning, f"tool message for unknown tool_call_id {ref}; dropped",
                                  common["line"])
                return
        else:
            name = msg.get("name")
            match = [e for e in self.legacy if e.name == name] or self.legacy
            if not match:
                self.builder.diag(Level.warning, f"function message {name!r} answers no function_call; "
                                  "dropped", common["line"])
                return
            ev = match[0]
            self.legacy.remove(ev)
        finish_tool(ev, output, is_error=True if msg.get("is_error") else None, line=common["line"])


# -- the format ------------------------------------------------------------------------------------


def _messages_of(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value["messages"]  # type: ignore[no-any-return]
    return None


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] not in (b"[", b"{"):
        return None
    doc = json_prefix(head)
    if doc is None:
        return None
    messages = _messages_of(doc.value)
    if not messages or not isinstance(messages[0], dict) or messages[0].get("role") not in ROLES:
        return None
    if isinstance(doc.value, dict) and ("trajectory" in doc.value or "sessionId" in doc.value):
        return None
    where = "a JSON array" if isinstance(doc.value, list) else "`messages`"
    return f"{where} of chat messages with `role`"


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    doc = load_document(path, b)
    messages = _messages_of(doc.value)
    if messages is None:
        raise IngestError(path, "expected a JSON array of chat messages or an object with `messages`")
    meta = doc.value if isinstance(doc.value, dict) else {}
    model = meta.get("model") if isinstance(meta.get("model"), str) else None
    sid = meta.get("session_id") or meta.get("id")
    b.session.update(model=model, session_id=str(sid) if sid is not None else None,
                     agent=meta.get("agent") if isinstance(meta.get("agent"), str) else None)
    messages = complete_items(doc, messages, b)
    if meta.get("system"):  # an Anthropic request body keeps the system prompt beside the messages
        b.add(SystemEvent(subtype="prompt", text=text_of(meta["system"])))
    MessageReader(b, model=model).read(enumerate(messages, start=1))
    return b.build()
