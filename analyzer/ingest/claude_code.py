"""Claude Code session JSONL (``~/.claude/projects/<cwd>/<session>.jsonl``), see
``shared/notes/formats.md`` §1. Also reads ``claude -p --output-format stream-json`` output (the
same message objects without the on-disk envelope: no times, no uuids).

What becomes what:

* ``assistant`` entries: text and thinking blocks of one ``message.id`` (streamed one block per
  entry) merge into one ``AssistantEvent``; each ``tool_use`` block becomes a ``ToolEvent`` at its
  position, completed later from the ``tool_result`` with the same id.
* ``user`` entries: typed text, slash commands, interrupts and harness text become ``UserEvent``s
  (``origin`` says which); ``!`` shell commands (``<bash-input>`` + ``<bash-stdout>``) become one
  ``ToolEvent`` with ``by_user=True``; ``tool_result`` blocks fill their call (a result Claude Code
  cut, "[N characters truncated]" or a ``<persisted-output>`` preview, is ``truncated``).
* Background tasks, all three generations: ``run_in_background`` launches (and the ``Monitor``
  tool, which runs its command as a background task) carry ``background``/``task_id``; polls
  (``BashOutput``/``TaskOutput``) and stops (``KillBash``/``KillShell``/``TaskStop``) carry the
  ``task_id`` they refer to. ``<task-notification>`` (as a queue-operation, an attachment or a user
  entry; one event per task and status) becomes ``SystemEvent(subtype="task-notification")``
  with ``status`` and ``exit_code``; a Monitor's streamed ``<event>`` lines become
  ``SystemEvent(subtype="monitor-event")`` (the task is still running).
* ``system`` entries become ``SystemEvent(subtype=...)`` (``turn_duration`` is skipped);
  ``isApiErrorMessage`` assistant entries become ``SystemEvent("api_error")``.
* Sub-agents: inline sidechain entries get ``agent`` = their ``agentId``, else ``task-<last 7
  characters of the spawning Task call id>``; files ``<session>/subagents/agent-*.jsonl`` are read
  with the session and merged into the timeline by time.
* Everything else known (``progress``, ``file-history-snapshot``, ``permission-mode``, …) is
  counted as skipped; unknown entry types get one info diagnostic per type.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import orjson
from pydantic import ValidationError

from analyzer.events import (
    AssistantEvent,
    Event,
    Level,
    Session,
    SystemEvent,
    ToolCategory,
    ToolEvent,
    UserEvent,
)
from analyzer.ingest.base import (
    HEAD_BYTES,
    IngestError,
    SessionBuilder,
    categorize,
    harness_cut,
    iter_jsonl,
    kind_of,
    open_regular,
    parse_ts,
    set_fields,
    strip_bom,
    text_of,
)
from analyzer.ingest.claude_harness import background_task, is_notification, read_notification, tag, task_ref

NAME = "claude-code"
DESCRIPTION = ("Claude Code session JSONL (~/.claude/projects/…/<session>.jsonl, with its "
               "<session>/subagents/ files); also `claude -p --output-format stream-json`")

_ENVELOPED = frozenset({"user", "assistant", "system", "attachment", "progress"})
_SKIPPED = frozenset({
    # metadata and UI state, no conversation in them (daaain/claude-code-log models)
    "file-history-snapshot", "permission-mode", "last-prompt", "summary", "ai-title", "custom-title",
    "agent-setting", "agent-name", "pr-link", "tag", "mode",
    # stream-json: partial deltas and the closing result (the messages carry the content)
    "stream_event", "result",
})
_SKIPPED_SYSTEM = frozenset({"turn_duration"})
_IGNORED_BLOCKS = frozenset({"image", "document", "redacted_thinking", "web_search_tool_result",
                             "server_tool_result", "container_upload"})

_EXIT_RE = re.compile(r"^(?:Error: )?Exit code (-?\d+)")
_REMINDER_RE = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_EMPTY_OUTPUT = frozenset({"", "(No content)", "(Bash completed with no output)"})
_RESULT_KEYS = ("uuid", "timestamp", "toolUseResult", "tool_use_result")
"""What ``_Reader.fill`` reads of a result's entry."""
_HARNESS_PREFIXES = ("<local-command-caveat>", "<local-command-stdout>", "<local-command-stderr>",
                     "<bash-stdout>", "<bash-stderr>")


def _shape(value: Any) -> str | None:
    """Why one parsed line is a Claude Code record, or None."""
    if not isinstance(value, dict):
        return None
    kind = kind_of(value)
    if kind in _ENVELOPED and (
        ("sessionId" in value and ("uuid" in value or "message" in value))
        or ("parentUuid" in value and "uuid" in value)
    ):
        return "JSONL of Claude Code entries (type, uuid, sessionId envelope)"
    if (kind == "file-history-snapshot" and "snapshot" in value) or (
        kind == "summary" and "leafUuid" in value
    ) or (kind in ("queue-operation", "permission-mode", "last-prompt") and "sessionId" in value):
        return f"JSONL of Claude Code entries ({kind})"
    if "session_id" in value and (
        (kind == "system" and value.get("subtype") == "init")
        or (kind in ("assistant", "user") and isinstance(value.get("message"), dict)
            and "parent_tool_use_id" in value)
    ):
        return "`claude -p --output-format stream-json` output"
    return None


# a first line longer than HEAD_BYTES cannot be parsed; its opening still shows the envelope
_PARTIAL_RE = re.compile(
    rb'^\{"(?:parentUuid":(?:null|"[^"]*"),"(?:isSidechain|logicalParentUuid)"'
    rb'|type":"(?:file-history-snapshot|summary|queue-operation|permission-mode)")'
)


def _detect_head(head: bytes) -> str | None:
    lines = head.split(b"\n")
    complete = lines[:-1] if len(head) >= HEAD_BYTES else lines
    for raw in complete[:50]:
        if not raw.strip():
            continue
        try:
            reason = _shape(orjson.loads(raw))
        except orjson.JSONDecodeError:
            continue
        if reason:
            return reason
    if not any(raw.strip() for raw in complete) and _PARTIAL_RE.match(head.lstrip()):
        return "JSONL of Claude Code entries (first line longer than the detection window)"
    return None


def _main_file_of(folder: Path) -> Path | None:
    """``<session>/`` (holding ``subagents/``) → the ``<session>.jsonl`` beside it, if any."""
    main = folder.parent / f"{folder.name}.jsonl"
    return main if (folder / "subagents").is_dir() and main.is_file() else None


def detect(path: Path, head: bytes) -> str | None:
    if path.is_dir():
        main = _main_file_of(path)
        if main is None:
            return None
        with open_regular(main) as fh:
            reason = _detect_head(strip_bom(fh.read(HEAD_BYTES)))
        return f"session folder of {main.name}: {reason}" if reason else None
    return _detect_head(head)


def _agent_files(main: Path) -> list[Path]:
    folder = main.parent / main.stem / "subagents"
    return sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []


def _agent_id_of_file(path: Path) -> str:
    return path.stem.removeprefix("agent-")


@dataclass
class _Message:
    """The assistant message being streamed for one agent (entries sharing ``message.id``)."""

    id: str | None
    event: AssistantEvent | None = None


@dataclass
class _File:
    """Per-file reading state: calls waiting for results, the message being streamed."""

    path: Path
    source: str | None
    agent: str | None
    events: list[Event] = field(default_factory=list)
    pending: dict[str, ToolEvent] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    messages: dict[str, _Message] = field(default_factory=dict)
    user_shell: dict[str, ToolEvent] = field(default_factory=dict)
    sidechain_agent: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, list[int]] = field(default_factory=dict)  # type → [first line, count]
    unknown_total: int = 0
    """Entries of unknown types so far (the sum of the counts above)."""
    early: dict[str, tuple[dict[str, Any], dict[str, Any], int]] = field(default_factory=dict)
    """Results written before their call (2.1.x writes parallel calls out of order):
    tool id → (result block, its entry, line)."""


class _Reader:
    """Reads the main file and its sub-agent files into one builder."""

    def __init__(self, builder: SessionBuilder, agent_files: set[str]) -> None:
        self.b = builder
        self.agent_files = agent_files
        self.tool_ids: set[str] = set()
        self.notes: set[tuple[str | None, str | None, str | None]] = set()
        self.task_prompts: dict[str, list[str]] = {}
        self.queued_prompts: set[str] = set()
        self.models: Counter[str] = Counter()
        self.session_id: str | None = None
        self.cwd: str | None = None
        self.unknown_blocks: set[str] = set()
        self.touched = 0  # records merged into an earlier event (not skipped, no new event)

    # -- files -------------------------------------------------------------------------------

    def read(self, path: Path, source: str | None, agent: str | None) -> list[Event]:
        f = _File(path=path, source=source, agent=agent)
        b = self.b
        for rec in iter_jsonl(path, b, source):
            before = (len(f.events), self.touched, len(b.diagnostics), f.unknown_total)
            if isinstance(rec.value, dict):
                try:
                    self.entry(rec.value, rec.line, f)
                except (ValidationError, TypeError, ValueError, AttributeError, KeyError) as exc:
                    # a field of an unexpected type: lose this entry, not the session
                    reason = str(exc).splitlines()[0]
                    b.diag(Level.error, f"{rec.value.get('type')!r} entry not understood ({reason}); "
                           "skipped", rec.line, source)
            else:
                b.diag(Level.error, f"line is JSON {type(rec.value).__name__}, not an entry; skipped",
                       rec.line, source)
            after = (len(f.events), self.touched, len(b.diagnostics), f.unknown_total)
            if after == before:
                b.skipped += 1
        for tool_id, (_, _, line) in f.early.items():
            b.diag(Level.warning, f"result for tool call {tool_id!r}, which is not in this file; "
                   "its output is not attached to any call", line, source)
        for kind, (first, count) in f.unknown.items():
            b.diag(Level.info, f"{count} entr{'y' if count == 1 else 'ies'} of unknown type {kind!r} "
                   f"ignored (first at line {first})", first, source)
        return f.events

    def add(self, f: _File, event: Event) -> None:
        f.events.append(event)

    # -- entries -----------------------------------------------------------------------------

    def entry(self, d: dict[str, Any], line: int, f: _File, agent: str | None = None) -> None:
        kind = d.get("type")
        if self.session_id is None:
            sid = d.get("sessionId") or d.get("session_id")
            self.session_id = sid if isinstance(sid, str) else None
        if self.cwd is None and isinstance(d.get("cwd"), str) and f.source is None:
            self.cwd = d["cwd"]
        if kind in ("user", "assistant"):
            msg = d.get("message")
            if not isinstance(msg, dict):
                self.b.diag(Level.warning, f"{kind} entry without a message object; skipped", line, f.source)
                return
            who = agent or self.agent_of(d, f, msg)
            if kind == "assistant":
                self.assistant(d, msg, line, f, who)
            else:
                self.user(d, msg, line, f, who)
        elif kind == "system":
            self.system(d, line, f, agent or self.agent_of(d, f, None))
        elif kind == "queue-operation":
            content = d.get("content")
            if d.get("operation") == "enqueue" and isinstance(content, str) \
                    and is_notification(content):
                self.notification(content, d, line, f, agent or f.agent or "main")
        elif kind == "attachment":
            self.attachment(d, line, f, agent or self.agent_of(d, f, None))
        elif kind == "progress":
            data = d.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                self.agent_progress(data, line, f)
        elif kind in _SKIPPED:
            pass
        else:
            name = str(kind) if kind is not None else "(none)"
            slot = f.unknown.setdefault(name, [line, 0])
            slot[1] += 1
            f.unknown_total += 1

    def agent_of(self, d: dict[str, Any], f: _File, msg: dict[str, Any] | None) -> str:
        if f.agent is not None:
            return f.agent
        parent_tool = d.get("parent_tool_use_id")  # stream-json sub-agent messages
        if isinstance(parent_tool, str) and parent_tool:
            return _derived_agent(parent_tool)
        if not d.get("isSidechain"):
            return "main"
        uuid, parent = d.get("uuid"), d.get("parentUuid")
        agent = d.get("agentId")
        if not isinstance(agent, str) or not agent:
            if isinstance(parent, str) and parent in f.sidechain_agent:
                agent = f.sidechain_agent[parent]
            else:
                agent = self.spawning_call(msg) or f"sidechain-{str(uuid or parent or 'x')[:8]}"
        if isinstance(uuid, str):
            f.sidechain_agent[uuid] = agent
        return agent

    def spawning_call(self, msg: dict[str, Any] | None) -> str | None:
        """The Task call whose prompt opens this inline sidechain (1.0.x has no agentId)."""
        if msg is None or msg.get("role") != "user":
            return None
        calls = self.task_prompts.get(text_of(msg.get("content")).strip())
        return _derived_agent(calls.pop(0)) if calls else None

    def agent_progress(self, data: dict[str, Any], line: int, f: _File) -> None:
        """A sub-agent message mirrored into the parent. Read only when the sub-agent's own file
        is absent (it holds the full transcript)."""
        agent, inner = data.get("agentId"), data.get("message")
        if f.source is not None or not isinstance(agent, str) or agent in self.agent_files:
            return
        if isinstance(inner, dict) and inner.get("type") in ("user", "assistant"):
            self.entry(inner, line, f, agent=agent)

    def common(self, d: dict[str, Any], line: int, f: _File, agent: str) -> dict[str, Any]:
        return {"line": line, "ts": parse_ts(d.get("timestamp")), "agent": agent, "source": f.source}

    # -- assistant ---------------------------------------------------------------------------

    def assistant(self, d: dict[str, Any], msg: dict[str, Any], line: int, f: _File, agent: str) -> None:
        blocks = _blocks(msg.get("content"))
        if d.get("isApiErrorMessage"):
            text = "\n".join(str(bl.get("text", "")) for bl in blocks if bl.get("type") == "text")
            self.add(f, SystemEvent(subtype="api_error", text=text, ref=_s(d.get("uuid")),
                                    **self.common(d, line, f, agent)))
            return
        mid = msg.get("id") if isinstance(msg.get("id"), str) else None
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        current = f.messages.get(agent)
        if current is None or mid is None or current.id != mid:
            current = f.messages[agent] = _Message(mid)
            if model and model != "<synthetic>":
                self.models[model if agent == "main" else f"\0{model}"] += 1
        for block in blocks:
            btype = block.get("type")
            if btype in ("text", "thinking"):
                said = block.get(btype)
                if not isinstance(said, str) or not said.strip():
                    continue
                ev = current.event
                if ev is None:
                    ev = current.event = AssistantEvent(text="", model=model, ref=_s(d.get("uuid")),
                                                        **self.common(d, line, f, agent))
                    self.add(f, ev)
                else:
                    self.touched += 1
                if btype == "text":
                    ev.text = f"{ev.text}\n\n{said}" if ev.text else said
                else:
                    ev.thinking = f"{ev.thinking}\n\n{said}" if ev.thinking else said
            elif btype in ("tool_use", "server_tool_use"):
                self.tool_use(block, d, line, f, agent)
            elif isinstance(btype, str) and btype not in _IGNORED_BLOCKS and btype not in self.unknown_blocks:
                self.unknown_blocks.add(btype)
                self.b.diag(Level.info, f"assistant content block of unknown type {btype!r} ignored",
                            line, f.source)

    def tool_use(self, block: dict[str, Any], d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        tool_id = block.get("id")
        if isinstance(tool_id, str):
            if tool_id in self.tool_ids:
                return  # the same call written twice (a resumed or mirrored stream)
            self.tool_ids.add(tool_id)
        name = str(block.get("name") or "?")
        raw_input = block.get("input")
        args: dict[str, Any] = raw_input if isinstance(raw_input, dict) else {}
        category = cast(ToolCategory, categorize(name))
        command = args.get("command") if isinstance(args.get("command"), str) else None
        background = False
        task_id: str | None = None
        if name == "Monitor" and command is not None:
            # Monitor runs its command as a background task, stopped with TaskStop
            category, background = "shell", True
        if category == "shell":
            background = background or args.get("run_in_background") is True
        else:
            command = None
        if category in ("task_output", "task_stop"):
            task_id = task_ref(args)
        ev = ToolEvent(name=name, category=category, input=args, command=command, background=background,
                       task_id=task_id, ref=tool_id if isinstance(tool_id, str) else None,
                       cwd=_s(d.get("cwd")),
                       **self.common(d, line, f, agent))
        self.add(f, ev)
        if isinstance(tool_id, str):
            if tool_id in f.early:
                self.fill(ev, *f.early.pop(tool_id))
                f.answered.add(tool_id)
            else:
                f.pending[tool_id] = ev
        prompt = args.get("prompt")
        if category == "subagent" and isinstance(prompt, str) and isinstance(tool_id, str):
            self.task_prompts.setdefault(prompt.strip(), []).append(tool_id)

    # -- user --------------------------------------------------------------------------------

    def user(self, d: dict[str, Any], msg: dict[str, Any], line: int, f: _File, agent: str) -> None:
        texts: list[str] = []
        for block in _blocks(msg.get("content")):
            btype = block.get("type")
            if btype == "tool_result":
                self.tool_result(block, d, line, f, agent)
            elif btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
        text = "\n".join(texts)
        if text.strip():
            self.user_text(text, d, line, f, agent)

    def user_text(self, text: str, d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        stripped = text.lstrip()
        origin_kind = d.get("origin", {}).get("kind") if isinstance(d.get("origin"), dict) else None
        if is_notification(stripped) or origin_kind == "task-notification":
            self.notification(text, d, line, f, agent)
            return
        if stripped.startswith("<bash-input>"):  # the user ran `!cmd`; its output follows
            command = tag(text, "bash-input") or ""
            ev = ToolEvent(name="Bash", category="shell", input={"command": command}, command=command,
                           by_user=True, ref=_s(d.get("uuid")), cwd=_s(d.get("cwd")),
                           **self.common(d, line, f, agent))
            self.add(f, ev)
            if "<bash-stdout>" in text or "<bash-stderr>" in text:
                ev.output = self.b.output(_user_shell_output(text), line, f.source)
            else:
                f.user_shell[agent] = ev
            return
        if stripped.startswith(("<bash-stdout>", "<bash-stderr>")) and agent in f.user_shell:
            pending = f.user_shell.pop(agent)
            pending.output = self.b.output(_user_shell_output(text), line, f.source)
            pending.result_ref, pending.result_line = _s(d.get("uuid")), line
            pending.result_ts = parse_ts(d.get("timestamp"))
            self.touched += 1
            return
        if stripped in self.queued_prompts and agent == "main":
            self.queued_prompts.discard(stripped)  # already read from its queued_command attachment
            return
        self.add(f, UserEvent(text=text, origin=self.origin(text, d, f), ref=_s(d.get("uuid")),
                              **self.common(d, line, f, agent)))

    def origin(self, text: str, d: dict[str, Any], f: _File) -> Any:
        stripped = text.lstrip()
        if stripped.startswith("[Request interrupted by user"):
            return "interrupt"
        if d.get("isMeta") or d.get("isCompactSummary") or d.get("isVisibleInTranscriptOnly"):
            return "meta"
        if "<command-name>" in text or stripped.startswith("<command-message>"):
            return "command"
        if stripped.startswith(_HARNESS_PREFIXES) or not _REMINDER_RE.sub("", text).strip():
            return "meta"
        if f.agent is not None and f.agent.startswith("acompact"):
            return "meta"  # the compaction agent's prompts are written by the harness
        return "prompt"

    def tool_result(self, block: dict[str, Any], d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        tool_id = block.get("tool_use_id")
        if not isinstance(tool_id, str):
            self.b.diag(Level.warning, "tool result without a tool_use_id; not attached to any call",
                        line, f.source)
            return
        if tool_id in f.answered:
            return  # a repeated result
        self.touched += 1
        ev = f.pending.pop(tool_id, None)
        if ev is None:
            # its call may come later in the file; keep only what ``fill`` reads of the entry
            f.early[tool_id] = (block, {k: d[k] for k in _RESULT_KEYS if k in d}, line)
            return
        f.answered.add(tool_id)
        self.fill(ev, block, d, line)

    def fill(self, ev: ToolEvent, block: dict[str, Any], d: dict[str, Any], line: int) -> None:
        """Complete a call from its result block and the user entry around it."""
        text = text_of(block.get("content"))
        result = d.get("toolUseResult", d.get("tool_use_result"))  # on disk / stream-json
        full = _output(text, result)
        done: dict[str, Any] = {  # set at once (``set_fields``), later keys over earlier ones
            "result_ref": _s(d.get("uuid")), "result_line": line, "result_ts": parse_ts(d.get("timestamp")),
            "is_error": bool(block.get("is_error")),
            "truncated": harness_cut(full),  # "[N characters truncated]", a <persisted-output> preview
            "output": self.b.output(full, line, ev.source),  # the result is in the call's file
        }
        m = _EXIT_RE.match(text)
        if m is None and isinstance(result, str):
            m = _EXIT_RE.match(result)
        if m:
            done["exit_code"] = int(m.group(1))
        res: dict[str, Any] = result if isinstance(result, dict) else {}
        if res.get("interrupted") is True or "[Request interrupted by user" in text \
                or text.startswith("The user doesn't want to proceed"):
            done["interrupted"] = True  # stopped, or rejected before it ran
        if ev.category == "shell":
            task = res.get("backgroundTaskId") or res.get("taskId")
            if task is None:
                task = background_task(text)
            if task is not None:
                done["background"], done["task_id"] = True, str(task)
        elif ev.category == "task_output":
            nested = res.get("task")  # 2.1.x TaskOutput nests the task; 1.0.x BashOutput does not
            task_info: dict[str, Any] = nested if isinstance(nested, dict) else res
            code = task_info.get("exitCode")
            if isinstance(code, int) and not isinstance(code, bool):
                done["exit_code"] = code
            done["task_id"] = ev.task_id or _str(task_info.get("task_id") or task_info.get("shellId"))
        elif ev.category == "task_stop":
            done["task_id"] = ev.task_id or _str(res.get("task_id") or res.get("shell_id"))
        set_fields(ev, done)

    # -- harness records ---------------------------------------------------------------------

    def notification(self, text: str, d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        note = read_notification(text)
        key = (note.task_id, note.status, note.event)
        if key in self.notes:
            return  # the same notification, seen as queue-operation, attachment or user entry
        self.notes.add(key)
        self.add(f, SystemEvent(**note.fields(), ref=_s(d.get("uuid")), **self.common(d, line, f, agent)))

    def attachment(self, d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        att = d.get("attachment")
        if not isinstance(att, dict) or att.get("type") != "queued_command":
            return  # file contents, reminders, tool lists: context the harness added
        text = text_of(att.get("prompt"))
        if is_notification(text) or att.get("commandMode") == "task-notification":
            self.notification(text, d, line, f, agent)
        elif text.strip():
            # a prompt typed while the agent was busy; a later user entry may repeat it
            self.queued_prompts.add(text.strip())
            self.add(f, UserEvent(text=text, origin="prompt", ref=_s(d.get("uuid")),
                                  **self.common(d, line, f, agent)))

    def system(self, d: dict[str, Any], line: int, f: _File, agent: str) -> None:
        subtype = d.get("subtype") if isinstance(d.get("subtype"), str) else "system"
        if (subtype == "init" and "session_id" in d) or subtype in _SKIPPED_SYSTEM:
            return  # the stream-json header; timing records
        self.add(f, SystemEvent(subtype=subtype, text=text_of(d.get("content")), ref=_s(d.get("uuid")),
                                **self.common(d, line, f, agent)))


def _derived_agent(tool_id: str) -> str:
    return f"task-{tool_id[-7:]}"


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _s(value: Any) -> str | None:
    """A log field that must be a string (ids, paths), or None when it is anything else."""
    return value if isinstance(value, str) else None


def _user_shell_output(text: str) -> str:
    return "\n".join(p for p in (tag(text, "bash-stdout"), tag(text, "bash-stderr")) if p)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _output(text: str, result: Any) -> str:
    """stdout and stderr from ``toolUseResult`` when it has them (the content may be cut or
    wrapped), else the result content's text."""
    if isinstance(result, dict) and isinstance(result.get("stdout"), str):
        stderr = result.get("stderr") if isinstance(result.get("stderr"), str) else ""
        joined = "\n".join(p for p in (result["stdout"], stderr) if p)
        if joined:
            return joined
        return "" if text.strip() in _EMPTY_OUTPUT else text
    return text


def _merge(lists: list[list[Event]]) -> Iterator[Event]:
    """Merge per-file timelines by time, keeping each file's order (events without a time
    take the time of the event before them)."""
    def keyed(events: list[Event]) -> Iterator[tuple[datetime, Event]]:
        last = datetime.min.replace(tzinfo=UTC)
        for ev in events:
            if ev.ts is not None:
                last = ev.ts
            yield last, ev

    for _, ev in heapq.merge(*(keyed(evs) for evs in lists), key=lambda pair: pair[0]):
        yield ev


def load(path: Path) -> Session:
    b = SessionBuilder(path=path, format=NAME)
    main = _main_file_of(path) if path.is_dir() else path
    if main is None:  # only with --input-format: detect() turns such a folder down
        raise IngestError(path, f"no {path.name}.jsonl beside this folder: not a Claude Code session folder")
    agent_files = _agent_files(main)
    reader = _Reader(b, {_agent_id_of_file(p) for p in agent_files})
    timelines = [reader.read(main, None, None)]
    for sub in agent_files:
        timelines.append(reader.read(sub, str(sub), _agent_id_of_file(sub)))
    b.events = list(_merge(timelines)) if len(timelines) > 1 else timelines[0]
    b.sources = [str(main), *map(str, agent_files)]
    main_models = [(n, m) for m, n in reader.models.items() if not m.startswith("\0")]
    any_models = [(n, m.lstrip("\0")) for m, n in reader.models.items()]
    best = max(main_models or any_models, default=None)
    b.session.update(session_id=reader.session_id, agent="claude-code", cwd=reader.cwd,
                     model=best[1] if best else None)
    return b.build()
