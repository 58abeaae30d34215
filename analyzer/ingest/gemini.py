"""Gemini CLI: chat recordings and ``--output-format stream-json`` output (formats.md §4).

**Chat recording** (``~/.gemini/tmp/<hash>/chats/session-*``): until early 2026 one JSON document
``{sessionId, projectHash, startTime, lastUpdated, messages[]}``; since then JSONL: a metadata line,
one message per line (a message is appended again whenever it changes: the last version of an ``id``
wins, at the place it first appeared), ``{"$set": {…}}`` metadata updates (``messages`` in it is a
checkpoint: it adds messages not seen yet, but does not replace read ones, whose tool output it may
have masked) and ``{"$rewindTo": id}``. A rewind drops messages from the model's context, but the
commands in them ran, so they stay in the timeline; an info diagnostic marks the spot.

Messages: ``user`` → UserEvent; ``gemini`` → AssistantEvent (``thoughts`` as thinking) and one ToolEvent
per ``toolCalls[]`` entry, which holds the call and its result together; ``info``/``error``/``warning`` →
SystemEvent. ``line`` is the message's line (JSONL, its last version) or 1-based number (JSON).

**stream-json**: JSONL events ``init``, ``message`` (assistant ``delta`` chunks are joined into one
event), ``tool_use`` / ``tool_result`` paired by ``tool_id``, ``error``, ``result``. A harness may
concatenate several runs: each ``init`` with a new ``session_id`` starts one. ``load_all()`` gives each
run as its own session (``Session.part``; lines before the first ``init`` go with the first run);
``load()`` keeps them in one timeline, an info diagnostic marking each start. Lines a harness added
(a ``message`` without ``timestamp``, a ``ts`` key) are read like the rest.

``run_shell_command`` results carry a block ``Output:/Error:/Exit Code:/Signal:/Background PIDs:/
Process Group PGID:``: the call's ``output`` is the Output (and Error) part, ``exit_code`` the Exit
Code (newer builds omit it when 0), and ``Background PIDs`` (or "running in background. PID: N") make
the call ``background`` with ``task_id`` = the first PID.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    SessionBuilder,
    as_dict,
    as_list,
    dumps_text,
    first_json_line,
    iter_jsonl,
    kind_of,
    parse_ts,
    read_head,
    text_of,
)
from analyzer.ingest.chat import make_tool, user_origin
from analyzer.ingest.jsondoc import Lost, complete_items, json_prefix, load_document

NAME = "gemini-cli"
DESCRIPTION = "Gemini CLI chat recording (JSON, or JSONL with $set/$rewindTo) or stream-json events"

STREAM_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
_MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})

# -- run_shell_command's result block ---------------------------------------------------------------

_TRAILER = ("Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID")
_TRAILER_LINE = re.compile(r"^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): ?(.*)$")
_BACKGROUND_PID = re.compile(r"(?:running in background\. PID|moved to background \(PID|"
                             r"promoted to background \(PID): (\d+)")
_NONE = ("(none)", "(empty)", "")


@dataclass
class ShellResult:
    """What a ``run_shell_command`` result text says."""

    output: str
    exit_code: int | None = None
    pids: list[str] = field(default_factory=list)
    """Background PIDs: processes the command left running."""


def shell_result(text: str, ok: bool) -> ShellResult:
    """Split a shell result block; ``ok`` is the harness status (newer builds print no ``Exit Code``
    for 0, so a block without one means 0 when the call succeeded and nothing went to background)."""
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Output:")), None)
    if start is None or any(not re.match(r"^(Command|Directory): ", ln) for ln in lines[:start]):
        m = _BACKGROUND_PID.search(text)
        return ShellResult(text, pids=[m.group(1)] if m else [])
    # the trailer labels come last, in a fixed order; anything before them is the output
    fields: dict[str, str] = {}
    end = len(lines)
    order = len(_TRAILER)
    while end > start + 1:
        m = _TRAILER_LINE.match(lines[end - 1])
        if not m or _TRAILER.index(m.group(1)) >= order:
            break
        order = _TRAILER.index(m.group(1))
        fields[m.group(1)] = m.group(2).strip()
        end -= 1
    output = "\n".join([lines[start][len("Output:"):].lstrip(" "), *lines[start + 1:end]]).strip("\n")
    if output.strip() in _NONE:
        output = ""
    error = fields.get("Error", "")
    if error not in _NONE:
        output = f"{output}\n{error}" if output else error
    pids = re.findall(r"\d+", fields.get("Background PIDs", ""))
    m = _BACKGROUND_PID.search(text)
    if m and m.group(1) not in pids:
        pids.insert(0, m.group(1))
    code_text = fields.get("Exit Code", "")
    code: int | None = int(code_text) if re.fullmatch(r"-?\d+", code_text) else None
    if code is None and "Exit Code" not in fields and fields.get("Signal", "") in _NONE and ok and not pids:
        code = 0
    return ShellResult(output, code, pids)


def _apply_result(ev: ToolEvent, text: str, ok: bool) -> None:
    ev.output = text
    if ev.category != "shell":
        return
    res = shell_result(text, ok)
    ev.output = res.output
    ev.exit_code = res.exit_code
    if res.exit_code not in (None, 0):
        ev.is_error = True
    if res.pids:
        ev.background = True
        ev.task_id = res.pids[0]


def _tool_event(name: str, args: dict[str, Any], common: dict[str, Any]) -> ToolEvent:
    ev = make_tool(name, args, **common)
    cwd = args.get("dir_path") or args.get("directory")
    if isinstance(cwd, str):
        ev.cwd = cwd
    return ev


# -- detection --------------------------------------------------------------------------------------


def _is_chat_meta(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("sessionId"), str) and (
        "projectHash" in value or ("messages" in value and "startTime" in value))


def _stream_reason(head: bytes) -> str | None:
    lines = [ln for ln in head.split(b"\n")[:-1] if ln.strip()][:40]
    seen = False
    for raw in lines:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # a broken line is reported by load(); the others decide
        if not isinstance(value, dict) or kind_of(value) not in STREAM_TYPES:
            return None
        kind = value["type"]
        seen = seen or (kind == "init" and "session_id" in value) or (
            kind in ("tool_use", "tool_result") and "tool_id" in value)
    return "stream-json events (init/message/tool_use/tool_result)" if seen else None


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] != b"{":
        return None
    first = json_prefix(head)
    if first is not None and _is_chat_meta(first.value):
        return "chat recording with `sessionId` and `projectHash`"
    return _stream_reason(head)


# -- chat recordings --------------------------------------------------------------------------------


@dataclass
class _Chat:
    b: SessionBuilder
    messages: dict[str, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    """Message id → (line, last version), in order of first appearance."""

    def upsert(self, line: int, msg: dict[str, Any]) -> None:
        """A message record: a new message, or a newer version of one (the older is then skipped)."""
        if str(msg["id"]) in self.messages:
            self.b.skipped += 1
        self.messages[str(msg["id"])] = (line, msg)

    def checkpoint(self, line: int, messages: Any) -> None:
        """Messages from a ``$set`` checkpoint: only the ones not read yet."""
        for msg in messages if isinstance(messages, list) else []:
            if isinstance(msg, dict) and msg.get("id") is not None and str(msg["id"]) not in self.messages:
                self.messages[str(msg["id"])] = (line, msg)

    def meta(self, meta: dict[str, Any]) -> None:
        if isinstance(meta.get("sessionId"), str):
            self.b.session["session_id"] = meta["sessionId"]

    def emit(self) -> None:
        for line, msg in self.messages.values():
            _message_events(self.b, line, msg)


def _message_events(b: SessionBuilder, line: int, msg: dict[str, Any]) -> None:
    kind = kind_of(msg)
    ts = parse_ts(msg.get("timestamp"))
    common: dict[str, Any] = {"line": line, "ref": str(msg.get("id")), "ts": ts}
    content = msg.get("content")
    if kind == "user":
        text = text_of(content)
        b.add(UserEvent(text=text, origin=user_origin(text), **common))
    elif kind == "gemini":
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        if model and "model" not in b.session:
            b.session["model"] = model
        thoughts = [f"{t.get('subject', '')}: {t.get('description', '')}".strip(": ")
                    for t in as_list(msg.get("thoughts")) if isinstance(t, dict)]
        text = text_of(content)
        if text or thoughts:
            b.add(AssistantEvent(text=text, thinking="\n".join(thoughts) or None, model=model, **common))
        for tc in as_list(msg.get("toolCalls")):
            if not isinstance(tc, dict) or not tc.get("name"):
                b.diag(Level.warning, "tool call without a name; skipped", line)
                continue
            call_ts = parse_ts(tc.get("timestamp")) or ts
            b.add(_tool_call(tc, {**common, "ref": str(tc.get("id")), "ts": call_ts}))
    elif kind in _MESSAGE_TYPES:
        b.add(SystemEvent(subtype=str(kind), text=text_of(content), **common))
    else:
        b.diag(Level.warning, f"message of unknown type {repr(msg.get('type'))[:40]}; skipped", line)
        b.skipped += 1


def _response_text(result: Any) -> tuple[str | None, bool]:
    """(text, is_error) of a ToolCallRecord ``result`` (a Part list)."""
    if result is None:
        return None, False
    parts = result if isinstance(result, list) else [result]
    texts: list[str] = []
    error = False
    for part in parts:
        resp = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(resp, dict):
            body = resp.get("response")
            if isinstance(body, dict) and "output" in body:
                texts.append(text_of(body["output"]))
            elif isinstance(body, dict) and "error" in body:
                texts.append(text_of(body["error"]))
                error = True
            elif body is not None:
                texts.append(dumps_text(body))
        else:
            texts.append(text_of(part))
    return "\n".join(t for t in texts if t), error


def _tool_call(tc: dict[str, Any], common: dict[str, Any]) -> ToolEvent:
    args = as_dict(tc.get("args"))
    ev = _tool_event(str(tc["name"]), dict(args), common)
    status = tc.get("status")
    text, error = _response_text(tc.get("result"))
    if text is None and isinstance(tc.get("resultDisplay"), str) and status in ("success", "error"):
        text = tc["resultDisplay"]
    ev.is_error = True if error or status == "error" else (False if status == "success" else None)
    ev.interrupted = status == "cancelled"
    if text is not None:
        _apply_result(ev, text, ok=status == "success")
    return ev


def _load_chat_document(path: Path, b: SessionBuilder) -> None:
    doc = load_document(path, b)
    chat = _Chat(b)
    if not isinstance(doc.value, dict):
        b.records += 1
        b.diag(Level.error, "chat recording is not a JSON object", 1)
        return
    chat.meta(doc.value)
    messages = doc.value.get("messages")
    for n, msg in enumerate(complete_items(doc, messages if isinstance(messages, list) else [], b), 1):
        b.records += 1
        if isinstance(msg, Lost):  # damaged JSON: diagnosed where the document was read
            continue
        if not isinstance(msg, dict) or msg.get("id") is None:
            b.diag(Level.error, "message without an `id`; skipped", n)
            continue
        chat.upsert(n, msg)
    chat.emit()


def _load_chat_jsonl(path: Path, b: SessionBuilder) -> None:
    chat = _Chat(b)
    for rec in iter_jsonl(path, b):
        value = rec.value
        if not isinstance(value, dict):
            b.diag(Level.error, "record is not a JSON object; skipped", rec.line)
        elif isinstance(value.get("$rewindTo"), str):
            b.skipped += 1
            target = value["$rewindTo"]
            after = list(chat.messages)
            dropped = len(after) - after.index(target) if target in chat.messages else len(after)
            b.diag(Level.info, f"conversation rewound to message {target}: the {dropped} message(s) "
                   "from it on left the model's context but stay in the timeline (their commands ran)",
                   rec.line)
        elif isinstance(value.get("$set"), dict):
            b.skipped += 1
            chat.meta(value["$set"])
            chat.checkpoint(rec.line, value["$set"].get("messages"))
        elif value.get("id") is not None and "type" in value:
            chat.upsert(rec.line, value)
        elif "sessionId" in value:
            b.skipped += 1
            chat.meta(value)
            chat.checkpoint(rec.line, value.get("messages"))  # a whole legacy document on one line
        else:
            b.diag(Level.warning, "record is neither a message nor metadata; skipped", rec.line)
            b.skipped += 1
    chat.emit()


# -- stream-json ------------------------------------------------------------------------------------


def _load_stream(path: Path, b: SessionBuilder) -> None:
    pending: dict[str, ToolEvent] = {}
    said: AssistantEvent | None = None  # the assistant message delta chunks are appended to
    for rec in iter_jsonl(path, b):
        value = rec.value
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            b.diag(Level.error, "event without a `type`; skipped", rec.line)
            continue
        kind = value["type"]
        ts = parse_ts(value.get("timestamp") or value.get("ts"))
        common: dict[str, Any] = {"line": rec.line, "ts": ts}
        if kind != "message" or value.get("role") != "assistant":
            said = None
        if kind == "init":
            sid = value.get("session_id")
            if "session_id" in b.session and sid != b.session["session_id"]:
                b.begin_part(rec.line)  # another run, concatenated by a harness
                pending.clear()  # its tool ids are its own
            b.skipped += 1
            b.session["session_id"] = sid
            if isinstance(value.get("model"), str):
                b.session.setdefault("model", value["model"])
        elif kind == "message":
            text = text_of(value.get("content"))
            if value.get("role") == "user":
                b.add(UserEvent(text=text, origin=user_origin(text), **common))
            elif said is not None and value.get("delta"):
                said.text += text
            else:
                said = AssistantEvent(text=text, model=b.session.get("model"), **common)
                b.add(said)
                if not value.get("delta"):
                    said = None
        elif kind == "tool_use":
            params = as_dict(value.get("parameters"))
            ref = str(value.get("tool_id"))
            ev = _tool_event(str(value.get("tool_name")), dict(params), {**common, "ref": ref})
            b.add(ev)
            pending[ref] = ev
        elif kind == "tool_result":
            ref = str(value.get("tool_id"))
            tool = pending.pop(ref, None)
            if tool is None:
                b.diag(Level.warning, f"tool_result for unknown tool_id {ref}; dropped", rec.line)
                continue
            ok = value.get("status") == "success"
            err = as_dict(value.get("error"))
            output = value.get("output")
            text = output if isinstance(output, str) else str(err.get("message", ""))
            tool.is_error = not ok
            tool.result_line, tool.result_ts = rec.line, ts
            _apply_result(tool, text, ok)
        elif kind == "error":
            b.add(SystemEvent(subtype="error", text=str(value.get("message") or ""), **common))
        elif kind == "result" and value.get("status") not in (None, "success"):
            err = as_dict(value.get("error"))
            b.add(SystemEvent(subtype="result", status=str(value["status"]),
                              text=str(err.get("message") or value["status"]), **common))
        else:
            b.skipped += 1  # a successful `result` (token stats) or a type this reader does not know


def _read(path: Path) -> SessionBuilder:
    b = SessionBuilder(path=path, format=NAME)
    b.session["agent"] = "gemini-cli"
    head = read_head(path)
    first_line = head.lstrip().split(b"\n", 1)[0].strip()
    first = first_json_line(head)
    if first_line == b"{" or (first is None and first_line.startswith(b"{")):
        _load_chat_document(path, b)  # a pretty-printed JSON document
    elif _is_chat_meta(first) or (isinstance(first, dict) and "$set" in first):
        _load_chat_jsonl(path, b)
    else:
        _load_stream(path, b)
    return b


def load(path: Path) -> Session:
    """The file as one timeline, concatenated stream-json runs included (each start marked)."""
    return _read(path).build()


def load_all(path: Path) -> list[Session]:
    """One session per stream-json run in the file (one for any other file)."""
    return _read(path).build_all()
