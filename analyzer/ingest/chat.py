"""Generic chat message arrays: OpenAI chat-completions and Anthropic Messages (formats.md §8), and
chat documents converted from Claude Code, Codex and opencode sessions.

A JSON array of messages, bare or under a ``messages`` key (an API request body, a harness dump, a
converter's ``{messages, meta}``), or JSON Lines with one such document per line: each line is a
conversation of its own (``load_all()`` gives each as a session; ``load()`` one timeline, each start
marked).

* OpenAI: assistant ``tool_calls[{id, function{name, arguments}}]`` (``arguments`` is a JSON string)
  are answered by ``tool`` messages with the same ``tool_call_id``; the legacy ``function_call`` is
  answered by the next ``function`` message of that name.
* Anthropic: ``tool_use{id, name, input}`` blocks in assistant content are answered by
  ``tool_result{tool_use_id, content, is_error}`` blocks in a later user message.
* Conversions (eaglepoint/harness): each call is written twice, as a ``tool_call``/``tool_use`` content
  block (``tool_call_id``, ``arguments``) and as an OpenAI ``tool_calls`` entry; it is read once, by id.
  Results are ``tool`` messages of ``tool_output`` blocks, sometimes placed before their call (kept until
  the call is read); ``metadata.exit_code`` is the exit status; ``_metadata.timestamp`` the time;
  ``meta.session_meta`` the session id and cwd.
* Sub-agents: role ``assistant-subagent-<id>`` is any record of sub-agent ``<id>`` (its role there in
  ``_metadata.original_role``); its events carry ``agent=<id>``, and its "user" messages (the brief from
  the agent or harness that started it) have origin ``meta``, so they are never read as the person's
  instructions.
* Compaction agents (``acompact-*``): Claude Code's compaction agent starts from the whole main
  conversation, and converters copy that context into the document: in the corpus nearly every main
  message is followed by a copy with the same content and call ids. A compaction record whose role and
  content equal a main message's is counted as read and skipped (one info diagnostic per agent says how
  many), so the world sees each command, result and user message once, at the main copy (where the
  labels anchor); what the agent wrote itself (the harness's summary request, its summary) are its events.

Each call and its result become one ``ToolEvent`` at the call's place; ``line`` is the 1-based message
number counting every record, copies included (``result_line`` the answering message's); in JSON Lines it
is the file line of the conversation. System and developer messages become
``SystemEvent(subtype="prompt")``: a system prompt can carry instructions ("never restart the
server"), so it stays in the timeline. Messages have no times unless a harness added a
``timestamp``; exit codes only when the tool wrote one into its result text or the converter kept it.

A damaged message costs that message (``jsondoc.load_document`` reads on past it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    IngestError,
    SessionBuilder,
    as_dict,
    as_list,
    categorize,
    iter_jsonl,
    join_argv,
    open_regular,
    parse_ts,
    strip_bom,
    text_of,
)
from analyzer.ingest.claude_harness import (
    COMPACTION_SUMMARY,
    background_task,
    is_notification,
    read_notification,
    task_ref,
)
from analyzer.ingest.jsondoc import Lost, Prefix, complete_items, json_prefix, load_document

NAME = "chat"
DESCRIPTION = ("JSON array of OpenAI chat-completions or Anthropic Messages messages, bare or under `messages` "
               "(also converted Claude Code/Codex sessions with sub-agents), or JSON Lines of such documents")

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})

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
    task = task_ref(args) if category in ("task_output", "task_stop") else None
    return ToolEvent(name=name, category=category, input=args, command=command,
                     background=background and category == "shell", task_id=task, **common)


def finish_tool(ev: ToolEvent, output: str, *, is_error: bool | None = None, line: int | None = None,
                ref: str | None = None) -> None:
    """Fill in a call's result."""
    ev.output = output
    ev.is_error = is_error
    ev.result_line = line
    ev.result_ref = ref
    if ev.exit_code is None and ev.category == "shell":
        ev.exit_code = exit_code_in(output)
    if ev.category == "shell" and (task := background_task(output)) is not None:
        ev.background, ev.task_id = True, task  # a conversion of Claude Code keeps its result text


def user_origin(text: str) -> str:
    if text.startswith("[Request interrupted by user"):
        return "interrupt"
    if text.startswith("/") and " " not in text.split("\n", 1)[0][:40].strip():
        return "command"
    if text.startswith(COMPACTION_SUMMARY):
        return "meta"
    return "prompt"


# -- the message reader -----------------------------------------------------------------------------

_SUBAGENT_ROLE = re.compile(r"^assistant-subagent-(?P<agent>\S+)$")
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "tool_call"})
_THINKING_BLOCKS = frozenset({"thinking", "reasoning"})


def _is_compaction(agent: str) -> bool:
    """Claude Code's compaction agent (``acompact-…``): its context is the main conversation."""
    return agent.startswith("acompact")


def _copy_key(role: Any, msg: dict[str, Any]) -> bytes:
    """What a compaction agent's copy of a message has in common with the original."""
    try:
        return orjson.dumps([role, msg.get("tool_call_id"), msg.get("content")])
    except TypeError:  # not JSON-serialisable cannot come from a JSON file; keep it unmatched
        return b""


@dataclass
class _Result:
    """A tool result whose call has not been read yet (a converter ordered it before its call)."""

    output: str
    is_error: bool | None
    line: int | None
    exit_code: int | None


@dataclass
class MessageReader:
    """Reads chat messages one at a time into a builder, pairing calls with results.

    One reader reads one conversation: main and sub-agent messages share its call ids."""

    builder: SessionBuilder
    model: str | None = None
    line: int | None = None
    """Every event's ``line`` when the conversation is one line of a JSONL file; else the message number."""
    pending: dict[str, ToolEvent] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    """Call ids already paired: a later result with the same id is a copy."""
    early: dict[str, _Result] = field(default_factory=dict)
    legacy: list[ToolEvent] = field(default_factory=list)
    """Legacy ``function_call``s waiting for their ``function`` message, oldest first."""
    main_keys: set[bytes] = field(default_factory=set)
    """``_copy_key`` of every main-conversation message (only when a compaction agent is present)."""
    copies: dict[str, int] = field(default_factory=dict)
    """Records of each compaction agent that repeat a main message, and where the first one is."""

    def read(self, messages: list[Any]) -> None:
        roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
        if any(isinstance(r, str) and r.startswith("assistant-subagent-acompact") for r in roles):
            self.main_keys = {_copy_key(r, m) for r, m in zip(roles, messages, strict=True)
                              if isinstance(r, str) and r in ROLES and isinstance(m, dict)}
        first_copy: dict[str, int] = {}
        for n, msg in enumerate(messages, start=1):
            line = self.line or n
            self.builder.records += 1
            if isinstance(msg, Lost):  # damaged JSON: diagnosed where the document was read
                continue
            if not isinstance(msg, dict):
                self.builder.diag(Level.error, f"message is a JSON {type(msg).__name__}, not an object; "
                                  "skipped", line)
                continue
            role, agent = self._role(msg)
            if role not in ROLES:
                self.builder.diag(Level.warning, f"message without a known role ({msg.get('role')!r}); "
                                  "skipped", line)
                self.builder.skipped += 1
                continue
            if agent != "main" and _is_compaction(agent) and _copy_key(role, msg) in self.main_keys:
                self.builder.skipped += 1
                self.copies[agent] = self.copies.get(agent, 0) + 1
                first_copy.setdefault(agent, line)
                continue
            meta = as_dict(msg.get("_metadata"))
            common: dict[str, Any] = {"line": line, "agent": agent, "ts": parse_ts(
                msg.get("timestamp") or msg.get("created_at") or meta.get("timestamp"))}
            if role in ("system", "developer"):
                self.builder.add(SystemEvent(subtype="prompt", text=text_of(msg.get("content")), **common))
            elif role == "user":
                self._user(msg, common)
            elif role == "assistant":
                self._assistant(msg, common)
            else:
                self._result(msg, role, common)
        for agent, count in self.copies.items():
            self.builder.diag(Level.info, f"{count} records of compaction agent {agent} repeat messages of the "
                              "main conversation (its context); counted, not read twice", first_copy[agent])
        for ref, result in self.early.items():
            self.builder.diag(Level.warning, f"tool result for unknown call id {ref}; dropped", result.line)

    @staticmethod
    def _role(msg: dict[str, Any]) -> tuple[str | None, str]:
        """(role, agent) of a message. A converter's ``assistant-subagent-<id>`` is any record of
        sub-agent ``<id>``; ``_metadata.original_role`` says which role it had there."""
        role = msg.get("role")
        if not isinstance(role, str):
            return None, "main"
        m = _SUBAGENT_ROLE.match(role)
        if m is None:
            return role, "main"
        original = as_dict(msg.get("_metadata")).get("original_role")
        if not isinstance(original, str) or original not in ROLES:
            original = "tool" if msg.get("tool_call_id") is not None else "assistant"
        return original, m.group("agent")

    def _user(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [content]
        texts: list[Any] = []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._answer(str(block.get("tool_use_id")), text_of(block.get("content")),
                             bool(block.get("is_error")), common["line"])
            else:
                texts.append(block)
        text = text_of(texts)
        if is_notification(text):
            self.builder.add(SystemEvent(**read_notification(text).fields(), **common))
            return
        if text or not blocks or len(texts) == len(blocks):
            origin = user_origin(text)
            if common["agent"] != "main" and origin != "interrupt":
                origin = "meta"  # a sub-agent's "user" is the agent or harness that briefed it
            self.builder.add(UserEvent(text=text, origin=origin, **common))

    def _assistant(self, msg: dict[str, Any], common: dict[str, Any]) -> None:
        content = msg.get("content")
        model = msg.get("model") if isinstance(msg.get("model"), str) else self.model
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[ToolEvent] = []
        ids: set[str] = set()
        reasoning = msg.get("reasoning_content") or msg.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            thinking.append(reasoning)
        for block in content if isinstance(content, list) else [content]:
            kind = block.get("type") if isinstance(block, dict) else None
            kind = kind if isinstance(kind, str) else None
            if isinstance(block, dict) and kind in _CALL_BLOCKS:
                ref = block.get("id") if block.get("id") is not None else block.get("tool_call_id")
                raw = block["input"] if "input" in block else block.get("arguments")
                self._call(calls, ids, block.get("name"), raw, ref, common)
            elif isinstance(block, dict) and kind in _THINKING_BLOCKS:
                thinking.append(str(block.get("thinking") or block.get("text") or ""))
            elif kind not in (None, "text", "output_text"):
                continue  # images, redacted thinking, server tool results: not said to the user
            else:
                texts.append(text_of(block))
        for call in as_list(msg.get("tool_calls")):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict):
                self.builder.diag(Level.warning, "tool call without a function; skipped", common["line"])
                continue
            self._call(calls, ids, fn.get("name"), fn.get("arguments"), call.get("id"), common)
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
            if ev.ref is None:
                continue
            early = self.early.pop(ev.ref, None)
            if early is None:
                self.pending[ev.ref] = ev
            else:
                self._finish(ev, early)

    def _call(self, calls: list[ToolEvent], ids: set[str], name: Any, raw: Any, ref: Any,
              common: dict[str, Any]) -> None:
        """One call of an assistant message. A converter writes each call twice (a content block and
        an OpenAI ``tool_calls`` entry); an id already read is the same call, not a new one."""
        ref = str(ref) if ref is not None else None
        if ref is not None and (ref in ids or ref in self.pending or ref in self.answered):
            return
        if ref is not None:
            ids.add(ref)
        args = parse_arguments(raw, self.builder, common["line"])
        calls.append(make_tool(str(name), args, ref=ref, **common))

    def _result(self, msg: dict[str, Any], role: str, common: dict[str, Any]) -> None:
        output = text_of(msg.get("content"))
        if role == "tool":
            exit_code = as_dict(msg.get("metadata")).get("exit_code")
            self._answer(str(msg.get("tool_call_id")), output, True if msg.get("is_error") else None,
                         common["line"], exit_code if isinstance(exit_code, int) else None)
            return
        name = msg.get("name")
        match = [e for e in self.legacy if e.name == name] or self.legacy
        if not match:
            self.builder.diag(Level.warning, f"function message {name!r} answers no function_call; "
                              "dropped", common["line"])
            return
        ev = match[0]
        self.legacy.remove(ev)
        finish_tool(ev, output, is_error=True if msg.get("is_error") else None, line=common["line"])

    def _answer(self, ref: str, output: str, is_error: bool | None, line: int | None,
                exit_code: int | None = None) -> None:
        """The result for call ``ref``: filled in, kept until its call is read, or (a copy) ignored."""
        result = _Result(output, is_error, line, exit_code)
        ev = self.pending.pop(ref, None)
        if ev is not None:
            self._finish(ev, result)
        elif ref not in self.answered:
            self.early.setdefault(ref, result)

    def _finish(self, ev: ToolEvent, result: _Result) -> None:
        if ev.ref is not None:
            self.answered.add(ev.ref)
        if result.exit_code is not None:
            ev.exit_code = result.exit_code
        finish_tool(ev, result.output, is_error=result.is_error, line=result.line)


# -- the format ------------------------------------------------------------------------------------


def _messages_of(value: Any) -> list[Any] | None:
    if isinstance(value, list):
        return value
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value["messages"]  # type: ignore[no-any-return]
    return None


def _first_line_document(data: bytes) -> bool:
    """``data`` starts with a whole chat document on its first line and more text follows: JSON Lines,
    one conversation per line (a pretty-printed document's first line is not a whole value)."""
    first, newline, rest = data.partition(b"\n")
    if not newline or not rest.strip():
        return False
    doc = json_prefix(first)
    return doc is not None and doc.complete and bool(_messages_of(doc.value))


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] not in (b"[", b"{"):
        return None
    doc = json_prefix(head)
    if doc is None:
        return None
    messages = _messages_of(doc.value)
    if not messages or not isinstance(messages[0], dict):
        return None
    if MessageReader._role(messages[0])[0] not in ROLES:
        return None
    if isinstance(doc.value, dict) and ("trajectory" in doc.value or "sessionId" in doc.value):
        return None
    if _first_line_document(head):
        return "JSON Lines, one chat document (messages with `role`) per line"
    where = "a JSON array" if isinstance(doc.value, list) else "`messages`"
    return f"{where} of chat messages with `role`"


def _conversation(b: SessionBuilder, value: Any, line: int | None, doc: Prefix | None = None) -> None:
    """Read one chat document (an array, or an object with ``messages``) into ``b``. Session fields
    come from the first document that has them."""
    messages = _messages_of(value) or []
    top = value if isinstance(value, dict) else {}
    source = as_dict(as_dict(top.get("meta")).get("session_meta"))  # a converter's note of the original
    model = top.get("model") if isinstance(top.get("model"), str) else None
    sid = top.get("session_id") or top.get("id") or source.get("session_id") or source.get("id")
    for key, val in (("model", model), ("session_id", str(sid) if sid is not None else None),
                     ("agent", top.get("agent")), ("cwd", source.get("cwd"))):
        if isinstance(val, str):
            b.session.setdefault(key, val)
    if doc is not None:
        messages = complete_items(doc, messages, b)
    if top.get("system"):  # an Anthropic request body keeps the system prompt beside the messages
        b.add(SystemEvent(subtype="prompt", text=text_of(top["system"]), line=line))
    MessageReader(b, model=model, line=line).read(messages)


def _is_jsonl(path: Path) -> bool:
    try:
        with open_regular(path) as fh:
            first = strip_bom(fh.readline())
            after = fh.read(64)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    return _first_line_document(first + after)


def _read(path: Path) -> SessionBuilder:
    b = SessionBuilder(path=path, format=NAME)
    if _is_jsonl(path):
        _read_lines(path, b)
        return b
    doc = load_document(path, b)
    if _messages_of(doc.value) is None:
        raise IngestError(path, "expected a JSON array of chat messages or an object with `messages`")
    _conversation(b, doc.value, None, doc)
    return b


def load(path: Path) -> Session:
    """The file as one timeline (the conversations of a JSON Lines file one after another, each start
    marked)."""
    return _read(path).build()


def load_all(path: Path) -> list[Session]:
    """One session per conversation of a JSON Lines file (one for a JSON document)."""
    return _read(path).build_all()


def _read_lines(path: Path, b: SessionBuilder) -> None:
    """JSON Lines of chat documents: each line is a conversation, a session of its own
    (``begin_part``), and every event of it has that line as its ``line``."""
    conversations = 0
    for rec in iter_jsonl(path, b):
        if _messages_of(rec.value) is None:
            b.diag(Level.error, "line is not a chat document (an array of messages or an object with "
                   "`messages`); skipped", rec.line)
            continue
        conversations += 1
        if conversations > 1:
            b.begin_part(rec.line)  # its calls, ids and session fields are its own
        b.records -= 1  # the line is counted as the messages in it
        _conversation(b, rec.value, rec.line)
    if not conversations:
        raise IngestError(path, "no line of this JSON Lines file is a chat document")
