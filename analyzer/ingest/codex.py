"""Codex CLI rollout JSONL (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Two layouts, both streamed line by line:

* the envelope layout: ``{timestamp, [ordinal], type, payload}`` lines of type ``session_meta``,
  ``response_item``, ``event_msg``, ``turn_context``, ``compacted``, ``token_usage_record``;
* the early flat layout (2025): a bare header ``{id, timestamp, cwd, originator, cli_version…}``,
  ``{"record_type":"state"}`` markers and bare response items.

What becomes what:

* shell tools (``shell`` argv, ``shell_command``, ``exec_command``, ``local_shell_call``, and
  code-mode ``custom_tool_call`` ``exec`` whose JavaScript calls ``tools.exec_command({cmd})``) are
  ToolEvents paired by ``call_id`` with their output. Exit codes come from the LegacyJson
  ``{"output","metadata":{"exit_code"}}`` string, ``Exit code: N`` or ``Process exited with code N``;
  ``Process running with session ID N`` marks a process left running (``background``,
  ``task_id=N``). ``write_stdin`` polls that process (``task_output``); one sending Ctrl-C
  (``\\u0003``) stops it (``task_stop``).
* ``event_msg`` ``item_completed`` ``CommandExecution`` items (and ``exec_command_end`` events) are
  the most reliable argv/exit/output: each is merged into the call it belongs to (by id, by the
  process it polls, or by command), or becomes a ``task-notification`` SystemEvent when it reports
  the end of a background process, or its own ToolEvent when nothing matches. Never two events for
  one command.
* Codex writes a prompt twice (``response_item`` message and ``event_msg`` ``user_message``) and an
  answer two or three times (``agent_message``, assistant ``message``, ``item_completed``
  ``AgentMessage``): the first copy is the event, the others are counted as skipped.
* Injected context (``<environment_context>``, AGENTS.md instructions…) is a UserEvent with origin
  ``meta``; ``<user_shell_command>`` (the user's ``!cmd``) is a ToolEvent with ``by_user``.
* Sub-agent threads have their own rollout files; a file read alone is its own ``main`` agent.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from analyzer.events import AssistantEvent, Event, Level, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import (
    SessionBuilder,
    as_dict,
    as_id,
    categorize,
    first_json_line,
    iter_jsonl,
    join_argv,
    kind_of,
    parse_ts,
    text_of,
)

NAME = "codex"
DESCRIPTION = "Codex CLI rollout JSONL (~/.codex/sessions/…/rollout-*.jsonl; envelope or early flat layout)"

_ENVELOPE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "token_usage_record"}
)
_ITEM_TYPES = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
     "custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot", "compaction"}
)
# the writer serialises keys in a fixed order, so a first line too long for the head still shows this
_ENVELOPE_HEAD = re.compile(
    rb'^\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*(?:"ordinal"\s*:\s*\d+\s*,\s*)?"type"\s*:\s*'
    rb'"(?:session_meta|response_item|event_msg|turn_context|compacted)"'
)

# Records that carry no conversation (or only repeat one that does): counted as skipped.
_SKIP_TOP = frozenset({"turn_context", "token_usage_record", "session_meta"})
_SKIP_ITEMS = frozenset({"reasoning", "ghost_snapshot", "compaction"})
_SKIP_EVENTS = frozenset(
    {"token_count", "task_started", "task_complete", "turn_started", "turn_complete", "agent_reasoning",
     "agent_reasoning_raw_content", "agent_reasoning_section_break", "agent_reasoning_delta",
     "agent_message_delta", "turn_diff", "context_compacted", "item_started", "exec_command_begin",
     "exec_command_output_delta", "patch_apply_begin", "patch_apply_end", "mcp_tool_call_begin",
     "mcp_tool_call_end", "web_search_begin", "web_search_end", "plan_update", "entered_review_mode",
     "exited_review_mode", "session_configured", "thread_name_updated", "view_image_tool_call",
     "warning", "undo_started", "undo_completed", "thread_rolled_back", "raw_response_item",
     "mcp_startup_update", "mcp_startup_complete", "collab_agent_spawn_begin", "collab_agent_spawn_end"}
)

_SHELL_ARG_TOOLS = {"shell": "command", "container.exec": "command", "shell_command": "command",
                    "exec_command": "cmd"}
_META_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
    "<permissions instructions>", "<turn_aborted>", "<skill>", "<subagent_notification>",
    "<collaboration_mode>", "<hook_prompt", "<codex_internal_context", "<goal_context>",
    "<recommended_plugins>", "<environments_instructions>", "<personality_spec>",
)

_EXIT_PATTERNS = (
    re.compile(r"^Exit code: (-?\d+)\s*$", re.M),
    re.compile(r"^Process exited with code (-?\d+)\s*$", re.M),
)
_RUNNING = re.compile(r"^Process running with session ID (\d+)\s*$", re.M)
_CELL_RUNNING = re.compile(r"^Script running with cell ID (\S+)\s*$", re.M)
# header lines that precede "Output:" in the StructuredText and unified-exec formats
_HEADER_LINE = re.compile(
    r"^(?:Chunk ID|Wall time|Exit code|Process exited|Process running|Original token count|"
    r"Total output lines|Duration|Script completed|Script running|Script failed)\b"
)
_USER_SHELL = re.compile(
    r"<user_shell_command>\s*<command>\s*(.*?)\s*</command>\s*(?:<result>\s*(.*?)\s*</result>)?",
    re.S,
)
_JS_STR = r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)"""
_JS_CMD = r"""\{[^{}]*?["']?\bcmd["']?\s*:\s*""" + _JS_STR
# ``exec_command({cmd: "…"})``, or ``exec_command(args)`` of an object bound earlier in the script
# (``const args = {cmd: "…"}``): both are how code-mode scripts spell a shell call
_JS_EXEC = re.compile(r"exec_command\(\s*(?:" + _JS_CMD + r"|([A-Za-z_$][\w$]*)\s*[,)])", re.S)
_JS_BINDING = re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*" + _JS_CMD, re.S)
_JS_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}
_TERMINAL_STATUS = {"completed", "failed", "declined", "killed", "interrupted"}


# --------------------------------------------------------------------------------------- detection

def _is_flat_header(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("id"), str) and "timestamp" in value
        and "type" not in value and "payload" not in value
    )


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] != b"{":
        return None
    first = first_json_line(head)
    if isinstance(first, dict):
        kind = kind_of(first)
        if kind in _ENVELOPE_TYPES and isinstance(first.get("payload"), dict) and "timestamp" in first:
            return f"JSONL of {{timestamp, type, payload}} rollout lines (first: {kind})"
        if _is_flat_header(first):
            for raw in head.split(b"\n")[1:8]:
                try:
                    nxt = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(nxt, dict) and (
                    nxt.get("record_type") == "state"
                    or (nxt.get("type") in _ITEM_TYPES and "payload" not in nxt)
                ):
                    return "early flat rollout: a bare session header, then state markers / response items"
        return None
    if _ENVELOPE_HEAD.match(head):
        return "JSONL of {timestamp, type, payload} rollout lines (first line longer than the head)"
    return None


# ----------------------------------------------------------------------------------- value parsing



def _norm(text: str) -> str:
    return " ".join(text.split())


def _js_string(literal: str) -> str:
    """The value of a JavaScript string literal (quotes included in ``literal``)."""
    body, out, i = literal[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c != "\\" or i + 1 >= len(body):
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n in _JS_ESCAPES:
            out.append(_JS_ESCAPES[n])
            i += 2
        elif n == "u" and body[i + 2:i + 3] == "{" and "}" in body[i + 3:]:
            end = body.index("}", i + 3)
            out.append(chr(int(body[i + 3:end], 16)))
            i = end + 1
        elif n == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", body[i + 2:i + 6]):
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif n == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", body[i + 2:i + 4]):
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif n == "\n":  # line continuation
            i += 2
        else:
            out.append(n)
            i += 2
    return "".join(out)


def js_exec_commands(source: str) -> list[str]:
    """The literal ``cmd`` strings of every ``tools.exec_command({cmd: …})`` in code-mode JavaScript."""
    bound = {m.group(1): m.group(2) for m in _JS_BINDING.finditer(source)}
    out = []
    for m in _JS_EXEC.finditer(source):
        literal = m.group(1) or bound.get(m.group(2) or "")
        if literal:
            out.append(_js_string(literal))
    return out


def _argv_command(value: Any, unwrap: bool = False) -> str | None:
    """A shell command from an argv list (a ``bash -lc`` wrapper dropped) or a command string
    (``unwrap``: a string that spells the wrapper too, as app-server items do)."""
    if isinstance(value, list) and value and all(isinstance(a, str | int | float) for a in value):
        return join_argv([str(a) for a in value])
    if isinstance(value, str):
        if unwrap and value.startswith(("/bin/", "/usr/bin/", "bash ", "sh ", "zsh ")):
            try:
                argv = shlex.split(value)
            except ValueError:
                return value
            if len(argv) == 3 and argv[1] in {"-c", "-lc", "-ic"}:
                return join_argv(argv)
        return value
    return None


def _content_text(content: Any) -> str:
    """Text of a tool output given as content items: pieces are joined as written (no separator)."""
    if isinstance(content, list):
        return "".join(
            str(c.get("text", "")) for c in content
            if isinstance(c, dict) and c.get("type") in (None, "input_text", "output_text", "text")
        )
    return text_of(content)


@dataclass
class Outcome:
    """What a tool output says, whichever of Codex's output formats it is in."""

    text: str
    exit_code: int | None = None
    running: str | None = None
    """Session ID of a process still running (unified exec) or cell ID of a running script."""
    failed: bool = False


def read_output(output: Any) -> Outcome:
    """Parse a ``function_call_output`` / ``custom_tool_call_output`` ``output`` value."""
    failed = False
    if isinstance(output, dict):  # FunctionCallOutputPayload written as an object
        failed = output.get("success") is False
        output = output.get("content", output.get("output", ""))
    text = _content_text(output)
    exit_code: int | None = None
    if text.startswith("{"):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            doc = None
        if isinstance(doc, dict) and isinstance(doc.get("output"), str) and (
            isinstance(doc.get("metadata"), dict) or "exit_code" in doc
        ):
            meta = as_dict(doc.get("metadata"))
            code = meta.get("exit_code", doc.get("exit_code"))
            return Outcome(doc["output"], code if isinstance(code, int) else None, failed=failed)
    head, body = _split_header(text)
    for pattern in _EXIT_PATTERNS:
        m = pattern.search(head)
        if m:
            exit_code = int(m.group(1))
            break
    running = _RUNNING.search(head) or _CELL_RUNNING.search(head)
    return Outcome(body, exit_code, running.group(1) if running else None, failed)


def _split_header(text: str) -> tuple[str, str]:
    """(header, body) of ``Key: value`` lines up to ``Output:``; ("", text) when there is none."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:12]):
        if line.rstrip() == "Output:":
            return "\n".join(lines[:i]), "\n".join(lines[i + 1:])
        if not _HEADER_LINE.match(line):
            break
    if lines and _HEADER_LINE.match(lines[0]) and all(_HEADER_LINE.match(x) or not x for x in lines):
        return text, text  # a status line alone ("Process exited with code 0") is the whole output
    return "", text


# -------------------------------------------------------------------------------------------- load

@dataclass
class _Call:
    """A tool call waiting for (or holding) its result."""

    event: ToolEvent
    commands: list[str] = field(default_factory=list)
    """Commands the call runs (several for a code-mode script calling exec_command more than once)."""
    executed: int = 0
    """CommandExecution items merged into it."""
    code_mode: bool = False
    answered: bool = False
    """Its output record has been read."""
    seq: int = 0
    """Position among the session's calls."""

    def wants_execution(self, command: str | None) -> bool:
        """Whether a CommandExecution of ``command`` can belong to this call: a tool call runs its
        command once; a code-mode script runs any of its commands, any number of times (a polling
        loop), until its output is written."""
        if self.code_mode:
            return not self.answered and (not self.commands or command in self.commands)
        return self.executed == 0 and (command is None or command in self.commands)


class _Twins:
    """The same thing written by several records (a prompt as a response item and as an event): the
    first copy becomes the event, each later copy from another source is recognised as its twin."""

    def __init__(self) -> None:
        self._events: dict[tuple[str, str], list[Event]] = {}
        self._seen: Counter[tuple[str, str, str]] = Counter()

    def twin(self, kind: str, text: str, source: str) -> Event | None:
        key = (kind, _norm(text))
        n = self._seen[(*key, source)]
        self._seen[(*key, source)] += 1
        events = self._events.get(key, [])
        return events[n] if n < len(events) else None

    def record(self, kind: str, text: str, event: Event) -> None:
        self._events.setdefault((kind, _norm(text)), []).append(event)


class _Reader:
    def __init__(self, path: Path) -> None:
        self.b = SessionBuilder(path=path, format=NAME)
        self.b.session.update(agent="codex")
        self.calls: dict[str, _Call] = {}
        self.order: list[_Call] = []
        # where a CommandExecution item may belong, so matching stays cheap in long sessions
        self.by_command: dict[str, list[_Call]] = {}
        self.open_scripts: list[_Call] = []
        self.polls: dict[str, list[_Call]] = {}
        self.launches: dict[str, ToolEvent] = {}
        self.twins = _Twins()
        self.model: str | None = None
        self.first_model: str | None = None
        self.cwd: str | None = None
        self.unknown: Counter[str] = Counter()
        self.line = 0
        self.ts: datetime | None = None

    # ---- helpers
    def skip(self) -> None:
        self.b.skipped += 1

    def add(self, event: Event) -> Event:
        return self.b.add(event)

    def new_call(self, event: ToolEvent, call_id: str | None, commands: list[str] | None = None,
                 code_mode: bool = False) -> _Call:
        call = _Call(event, commands or ([event.command] if event.command else []), code_mode=code_mode,
                     seq=len(self.order))
        self.add(event)
        if call_id:
            self.calls[call_id] = call
        self.order.append(call)
        if event.category == "shell":
            for command in call.commands:
                self.by_command.setdefault(command, []).append(call)
            if code_mode and not call.commands:
                self.open_scripts.append(call)
        elif event.task_id is not None:
            self.polls.setdefault(event.task_id, []).append(call)
        return call

    def launched(self, event: ToolEvent, task_id: str) -> None:
        """``event`` left a process running as ``task_id``."""
        event.background, event.task_id = True, task_id
        self.launches[task_id] = event

    # ---- records
    def read(self) -> Session:
        for rec in iter_jsonl(self.b.path, self.b):
            self.line = rec.line
            value = rec.value
            if not isinstance(value, dict):
                self.b.diag(Level.error, "line is not a JSON object; skipped", rec.line)
                continue
            try:
                self.record(value)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                self.b.diag(Level.error, f"unreadable {value.get('type', 'record')} record ({exc}); skipped",
                            rec.line)
        for kind, n in sorted(self.unknown.items()):
            self.b.diag(Level.info, f"{n} record(s) of unknown type {kind!r} skipped")
        if self.b.session.get("model") is None:
            self.b.session["model"] = self.first_model
        if self.b.session.get("cwd") is None:
            self.b.session["cwd"] = self.cwd
        return self.b.build()

    def record(self, value: dict[str, Any]) -> None:
        kind = value.get("type")
        payload = value.get("payload")
        self.ts = parse_ts(value.get("timestamp"))
        if kind in _ENVELOPE_TYPES or isinstance(payload, dict):
            if not isinstance(payload, dict):
                self.b.diag(Level.error, f"{kind} line without a payload object; skipped", self.line)
                return
            if kind == "response_item":
                self.response_item(payload)
            elif kind == "event_msg":
                self.event_msg(payload)
            elif kind == "session_meta":
                self.session_meta(payload)
            elif kind == "turn_context":
                self.model = as_id(payload.get("model")) or self.model
                self.first_model = self.first_model or self.model
                self.cwd = as_id(payload.get("cwd")) or self.cwd
                self.skip()
            elif kind == "compacted":
                self.add(SystemEvent(subtype="compacted", text=str(payload.get("message") or ""),
                                     line=self.line, ts=self.ts))
            elif kind in _SKIP_TOP:
                self.skip()
            else:
                self.unknown[str(kind)] += 1
                self.skip()
        elif value.get("record_type") == "state":
            self.skip()
        elif kind in _ITEM_TYPES:  # flat layout: a bare response item
            self.response_item(value)
        elif "session_id" not in self.b.session and _is_flat_header(value):
            self.session_meta(value)
        else:
            self.unknown[str(kind or value.get("record_type") or "?")] += 1
            self.skip()

    def session_meta(self, p: dict[str, Any]) -> None:
        self.skip()
        if "session_id" not in self.b.session:
            self.b.session["session_id"] = as_id(p.get("id")) or as_id(p.get("session_id"))
            self.b.session["cwd"] = as_id(p.get("cwd"))
            if as_id(p.get("model")):
                self.b.session["model"] = as_id(p["model"])
        self.cwd = self.cwd or as_id(p.get("cwd"))

    # ---- response items
    def response_item(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "message":
            self.message(p)
        elif kind == "function_call":
            self.function_call(p)
        elif kind == "custom_tool_call":
            self.custom_tool_call(p)
        elif kind == "local_shell_call":
            self.local_shell_call(p)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.tool_output(p)
        elif kind == "web_search_call":
            action = as_dict(p.get("action"))
            self.add(ToolEvent(name="web_search", category="other", input=action, ref=as_id(p.get("id")),
                               line=self.line, ts=self.ts))
        elif kind in _SKIP_ITEMS:
            self.skip()
        else:
            self.unknown[f"response_item/{kind}"] += 1
            self.skip()

    def message(self, p: dict[str, Any]) -> None:
        role = p.get("role")
        content = p.get("content")
        blocks = content if isinstance(content, list) else [{"text": text_of(content)}]
        texts = [str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("text")]
        if role == "user":
            if not texts:
                self.skip()
            for text in texts:
                self.user_text(text, "item", as_id(p.get("id")))
        elif role == "assistant" and texts:
            self.agent_text("\n".join(texts), "item", as_id(p.get("id")))
        else:  # developer / system instructions
            self.skip()

    def user_text(self, text: str, source: str, ref: str | None, meta: bool = False, shell: bool = True) -> None:
        stripped = text.strip()
        if shell and stripped.startswith("<user_shell_command>"):
            self.user_shell(stripped, source)
            return
        twin = self.twins.twin("user", text, source)
        if twin is not None:
            twin.ref = twin.ref or as_id(ref)
            self.skip()
            return
        origin = "meta" if meta or stripped.startswith(_META_PREFIXES) else "prompt"
        self.twins.record("user", text, self.add(
            UserEvent(text=text, origin=origin, ref=ref, line=self.line, ts=self.ts)))

    def agent_text(self, text: str, source: str, ref: str | None) -> None:
        twin = self.twins.twin("agent", text, source)
        if twin is not None:
            twin.ref = twin.ref or as_id(ref)
            self.skip()
            return
        self.twins.record("agent", text, self.add(
            AssistantEvent(text=text, model=self.model, ref=ref, line=self.line, ts=self.ts)))

    def user_shell(self, text: str, source: str) -> None:
        m = _USER_SHELL.search(text)
        if not m:
            # no <command> in it: a meta message, not read as a shell command again
            self.user_text(text, source, None, meta=True, shell=False)
            return
        command = m.group(1)
        twin = self.twins.twin("ushell", command, source)
        if isinstance(twin, ToolEvent):
            self.skip()
            return
        out = read_output(m.group(2) or "")
        ev = ToolEvent(name="user_shell", category="shell", command=command, input={"command": command},
                       output=out.text if m.group(2) is not None else None, exit_code=out.exit_code,
                       is_error=out.exit_code not in (None, 0), by_user=True, line=self.line,
                       ts=self.ts, cwd=self.cwd)
        self.twins.record("ushell", command, self.add(ev))

    def _arguments(self, p: dict[str, Any]) -> dict[str, Any]:
        raw = p.get("arguments")
        if isinstance(raw, dict):
            return raw
        if not isinstance(raw, str) or not raw.strip():
            return {}
        try:
            args = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.b.diag(Level.warning, f"arguments of {p.get('name')} call are not JSON; kept as text",
                        self.line)
            return {"arguments": raw}
        return args if isinstance(args, dict) else {"arguments": args}

    def function_call(self, p: dict[str, Any]) -> None:
        name = str(p.get("name") or "?")
        call_id = as_id(p.get("call_id")) or as_id(p.get("id"))
        args = self._arguments(p)
        ev = ToolEvent(name=name, category=categorize(name), input=args, ref=call_id, line=self.line,
                       ts=self.ts, cwd=as_id(args.get("workdir")) or self.cwd)
        if name in _SHELL_ARG_TOOLS:
            ev.category = "shell"
            ev.command = _argv_command(args.get(_SHELL_ARG_TOOLS[name]))
        elif name == "write_stdin":
            sid = args.get("session_id")
            ev.task_id = None if sid is None else str(sid)
            chars = args.get("chars")
            ev.category = "task_stop" if isinstance(chars, str) and "\x03" in chars else "task_output"
        elif name == "wait" and args.get("cell_id") is not None:
            ev.category, ev.task_id = "task_output", str(args["cell_id"])
        self.new_call(ev, call_id)

    def custom_tool_call(self, p: dict[str, Any]) -> None:
        name = str(p.get("name") or "?")
        call_id = as_id(p.get("call_id")) or as_id(p.get("id"))
        source = p.get("input")
        ev = ToolEvent(name=name, category=categorize(name), input={"input": source}, ref=call_id,
                       line=self.line, ts=self.ts, cwd=self.cwd)
        commands: list[str] = []
        if name == "exec" and isinstance(source, str):
            ev.category = "shell"
            commands = js_exec_commands(source)
            # several exec_command calls in one script run one after the other, like lines of a script
            ev.command = "\n".join(commands) if commands else None
            m = re.search(r"""["']?\bworkdir["']?\s*:\s*("(?:[^"\\]|\\.)*")""", source)
            if m:
                ev.cwd = _js_string(m.group(1))
        self.new_call(ev, call_id, commands, code_mode=name == "exec")

    def local_shell_call(self, p: dict[str, Any]) -> None:
        call_id = as_id(p.get("call_id")) or as_id(p.get("id"))
        action = as_dict(p.get("action"))
        if call_id in self.calls:  # the call written again with its final status
            self.skip()
            return
        ev = ToolEvent(name="local_shell_call", category="shell", input=action, ref=call_id,
                       command=_argv_command(action.get("command")), line=self.line, ts=self.ts,
                       cwd=as_id(action.get("working_directory")) or self.cwd)
        self.new_call(ev, call_id)

    def tool_output(self, p: dict[str, Any]) -> None:
        call = self.calls.get(str(p.get("call_id")))
        if call is None:
            self.b.diag(Level.warning, f"output for unknown call {p.get('call_id')!r}; skipped", self.line)
            self.skip()
            return
        ev = call.event
        if call.answered:
            self.b.diag(Level.warning, f"second output for call {p.get('call_id')!r}; skipped", self.line)
            self.skip()
            return
        out = read_output(p.get("output"))
        call.answered = True
        ev.result_line, ev.result_ts, ev.result_ref = self.line, self.ts, as_id(p.get("id"))
        if call in self.open_scripts:
            self.open_scripts.remove(call)
        if out.running and ev.category == "shell":
            self.launched(ev, out.running)
        if call.executed:  # a CommandExecution already gave the command's own output and exit
            if ev.output is None:
                ev.output = out.text
            return
        ev.output = out.text
        ev.exit_code = out.exit_code
        ev.is_error = True if out.failed else (
            out.exit_code not in (None, 0) if ev.category == "shell" else None)

    # ---- events
    def event_msg(self, p: dict[str, Any]) -> None:
        kind = p.get("type")
        if kind == "user_message":
            text = str(p.get("message") or "")
            meta = p.get("kind") not in (None, "plain")
            self.user_text(text, "event", None, meta=meta)
        elif kind == "agent_message":
            self.agent_text(str(p.get("message") or ""), "event", None)
        elif kind == "item_completed":
            item = as_dict(p.get("item"))
            itype = str(item.get("type", "")).replace("_", "").lower()
            if itype == "commandexecution":
                self.command_execution(item, None)
            elif itype == "agentmessage":
                self.agent_text(_texts(item.get("content")), "completed", as_id(item.get("id")))
            elif itype == "usermessage":
                self.user_text(_texts(item.get("content")), "completed", as_id(item.get("id")))
            else:
                self.skip()
        elif kind == "exec_command_end":
            self.command_execution(p, p.get("call_id"))
        elif kind == "turn_aborted":
            reason = str(p.get("reason") or "")
            if reason == "interrupted":
                for call in self.order:  # calls that never got a result were cut off
                    if not call.answered and not call.executed:
                        call.event.interrupted = True
                self.add(UserEvent(text="[turn aborted: interrupted]", origin="interrupt", line=self.line,
                                   ts=self.ts))
            else:
                self.add(SystemEvent(subtype="turn_aborted", text=reason, line=self.line, ts=self.ts))
        elif kind in ("error", "stream_error", "background_event"):
            self.add(SystemEvent(subtype=str(kind), text=str(p.get("message") or ""), line=self.line,
                                 ts=self.ts))
        elif kind in _SKIP_EVENTS:
            self.skip()
        else:
            self.unknown[f"event_msg/{kind}"] += 1
            self.skip()

    def command_execution(self, item: dict[str, Any], call_id: str | None) -> None:
        command = _argv_command(item.get("command"), unwrap=True)
        code = item.get("exit_code", item.get("exitCode"))
        exit_code = code if isinstance(code, int) else None
        output = item.get("aggregated_output", item.get("aggregatedOutput"))
        if not isinstance(output, str):
            parts = [item.get("stdout"), item.get("stderr")]
            output = "".join(x for x in parts if isinstance(x, str)) if any(parts) else None
        status = str(item.get("status") or "").lower()
        pid = item.get("process_id", item.get("processId"))
        pid = None if pid is None else str(pid)
        source = str(item.get("source") or "").replace("_", "").lower()
        cwd = as_id(item.get("cwd"))
        if cwd is not None and cwd.startswith("file://"):
            cwd = cwd[len("file://"):]

        if source == "usershell" and command is not None:
            twin = self.twins.twin("ushell", command, "exec")
            if isinstance(twin, ToolEvent):
                twin.exit_code, twin.output = exit_code, output if output is not None else twin.output
                self.skip()
                return
            ev = ToolEvent(name="CommandExecution", category="shell", command=command, input=item,
                           output=output, exit_code=exit_code, is_error=exit_code not in (None, 0),
                           by_user=True, ref=as_id(item.get("id")), line=self.line, ts=self.ts, cwd=cwd)
            self.twins.record("ushell", command, self.add(ev))
            return

        launch = self._launch_of(pid)
        if launch is not None and source != "unifiedexecinteraction" and (
            exit_code is not None or status in ("failed", "killed", "interrupted")
        ):  # the end of a process an earlier call left running ("completed" with no exit: still alive)
            self.add(SystemEvent(subtype="task-notification", task_id=pid, exit_code=exit_code,
                                 status=status or None, text=command or "", ref=as_id(item.get("id")),
                                 line=self.line, ts=self.ts))
            return
        call = self._match_execution(call_id or item.get("call_id") or item.get("id"), command, pid, source)
        if call is not None:
            self._merge_execution(call, command, output, exit_code, status, pid, source, cwd)
            self.skip()
            return
        interaction = source == "unifiedexecinteraction"
        self.add(ToolEvent(
            name="CommandExecution", category="task_output" if interaction else "shell",
            command=None if interaction else command, input=item, output=output, exit_code=exit_code,
            is_error=exit_code not in (None, 0) or status in ("failed", "declined"),
            task_id=pid if interaction else None, ref=as_id(item.get("id")), line=self.line, ts=self.ts, cwd=cwd,
        ))

    def _merge_execution(self, call: _Call, command: str | None, output: str | None,
                         exit_code: int | None, status: str, pid: str | None, source: str,
                         cwd: str | None) -> None:
        ev = call.event
        call.executed += 1
        if ev.category == "shell" and command:
            if call.code_mode and not call.commands:  # learn what the script ran
                if command not in (ev.command or "").split("\n"):
                    ev.command = command if ev.command is None else f"{ev.command}\n{command}"
            elif not call.code_mode or len(call.commands) == 1:
                ev.command = command
        if output is not None:
            ev.output = output if call.executed == 1 else (ev.output or "") + output
        ev.exit_code = exit_code
        if ev.category == "shell":
            ev.is_error = exit_code not in (None, 0) or status in ("failed", "declined")
            if exit_code is None and pid and status == "completed" and source == "unifiedexecstartup":
                self.launched(ev, pid)  # startup finished with the process still alive
        ev.cwd = cwd or ev.cwd
        if ev.result_line is None:
            ev.result_line, ev.result_ts = self.line, self.ts

    def _match_execution(self, call_id: Any, command: str | None, pid: str | None,
                         source: str) -> _Call | None:
        call = self.calls.get(str(call_id)) if call_id is not None else None
        if call is not None and call.wants_execution(None):
            return call
        if source == "unifiedexecinteraction":
            return next((c for c in reversed(self.polls.get(pid or "", [])) if not c.executed), None)
        candidates: list[_Call] = []
        if command is not None and command in self.by_command:
            # calls that can take no more executions are dropped as we go
            candidates = self.by_command[command] = [
                c for c in self.by_command[command] if c.wants_execution(command)]
        candidates = candidates + [c for c in self.open_scripts if c.wants_execution(command)]
        return max(candidates, key=lambda c: c.seq) if candidates else None

    def _launch_of(self, pid: str | None) -> ToolEvent | None:
        return self.launches.get(pid) if pid is not None else None


def _texts(content: Any) -> str:
    """Text of an ``item_completed`` item's ``[{"type": "Text", "text": …}]`` (joined like a message's)."""
    if isinstance(content, list):
        return "\n".join(str(c["text"]) for c in content if isinstance(c, dict) and c.get("text"))
    return text_of(content)


def load(path: Path) -> Session:
    return _Reader(path).read()
