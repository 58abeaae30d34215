"""The ``*.session.yaml`` fixture format: compact hand-written sessions for tests, rule cases and
demos (DESIGN.md, "Session fixture format").

```yaml
agent: claude-code            # optional: harness, model, session_id, cwd
start: 2026-03-01T03:00:00Z   # optional: gives every event a time (``step`` seconds apart)
step: 30
events:
  - user: Start the API on port 8000
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
    output: ''
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
    exit: 0
  - tool: KillBash                # any other tool, with its input
    input: {shell_id: bash_1}
  - system: task-notification     # harness records
    task: bash_1
    exit: 137
  - assistant: The server is up.
    expect: kill-after-ready      # rule cases: expect / ok / todo-expect / todo-ok
```

Per-event keys: ``at`` (ISO time, or ``+SECONDS`` after the previous event), ``agent``,
``background`` (bool), ``task`` (background task id), ``interrupted``, ``is_error``, ``exit``,
``output`` (default empty), ``no-result`` (the log has no result), ``truncated`` (the harness cut
the output), ``ref``, ``by_user``, ``example``; on a ``user`` event ``origin`` (``interrupt``: the
user stopped the agent's turn).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from analyzer.events import AssistantEvent, CaseMarks, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.ingest.base import IngestError, SessionBuilder, categorize, parse_ts, read_regular

NAME = "fixture"
DESCRIPTION = "*.session.yaml: hand-written sessions for tests and rule cases (events: user/bash/…)"

_KINDS = ("user", "assistant", "bash", "tool", "system")
_MARKS = {"expect": "expect", "ok": "ok", "todo-expect": "todo_expect", "todo-ok": "todo_ok"}


def detect(path: Path, head: bytes) -> str | None:
    if not head or head.lstrip()[:1] in (b"{", b"["):
        return None
    text = head.decode("utf-8", "replace")
    if "\nevents:" in "\n" + text and any(f"- {k}:" in text for k in _KINDS):
        return "YAML document with an `events:` list of user/bash/tool entries"
    return None


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _event_items(node: yaml.Node | None) -> list[tuple[int, Any]]:
    """Each item of a mapping node's ``events`` sequence, with its 1-based line."""
    out: list[tuple[int, Any]] = []
    if not isinstance(node, yaml.MappingNode):
        return out
    loader = yaml.SafeLoader("")
    for key, val in node.value:
        if getattr(key, "value", None) == "events" and isinstance(val, yaml.SequenceNode):
            for item in val.value:
                out.append((item.start_mark.line + 1, loader.construct_document(item)))
    return out


MAX_NODES = 200_000
"""Nodes a fixture may expand to, aliases counted at every use: a 558-byte alias bomb
(``a: &a [x,x,…]``, ``b: &b [*a,*a,…]``, …) expands to billions and takes all memory."""


def _expanded_size(node: yaml.Node, limit: int) -> int:
    """How many nodes ``node`` stands for with every alias expanded, counting up to ``limit``
    (an alias is the same node object: sizes are memoized by identity, so a bomb costs little)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(node, False)]
    while stack:  # iterative: a deep document must not recurse here either
        n, done = stack.pop()
        if id(n) in sizes:
            continue
        children: list[yaml.Node] = []
        if isinstance(n, yaml.SequenceNode):
            children = list(n.value)
        elif isinstance(n, yaml.MappingNode):
            children = [x for pair in n.value for x in pair]
        if done or not children:
            sizes[id(n)] = min(limit, 1 + sum(sizes[id(c)] for c in children))
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(node)]


_CLOADER: type[yaml.SafeLoader] | None = getattr(yaml, "CSafeLoader", None)
"""libyaml's loader when PyYAML was built with it: composing a fixture in C is ~30x faster than in
Python (8 ms for a seed fixture, most of a small ``check``'s reading)."""

_PURE_ONLY = re.compile(r"\t|(?:^|[\s\[\]{},])!|[|>][-+0-9]*#|" + yaml.reader.Reader.NON_PRINTABLE.pattern, re.M)
"""Text the C loader reads where the pure one differs, which then reads it as it always did: a tab
(libyaml takes tabs where the pure scanner refuses them), a tag (``!``: libyaml reads the bare
``!`` as text, the pure loader as null), a block scalar header run into a comment (``>#``) and the
characters the pure reader refuses (``special characters are not allowed``)."""

C_DEPTH = 100
"""Nesting the C composer is trusted with. The pure composer recurses (about three frames a level)
and fails deep documents with ``RecursionError`` ("nested too deep"); libyaml goes deeper, so a
deeper tree is composed again the pure way and fails (or not) exactly as before."""


def _compose(text: str) -> yaml.Node | None:
    """The node tree of ``text``, composed by libyaml where that gives what the pure loader gives;
    else (text ``_PURE_ONLY`` finds, a tree ``_same_as_pure`` doubts, any YAML error, whose wording
    is libyaml's own) the pure loader composes it, so its trees, errors and messages are the ones
    users and tests see. Same trees: every fixture and case file, and fuzzed ones
    (``tests/ingest/test_fixture_yaml.py``)."""
    if _CLOADER is not None and not _PURE_ONLY.search(text):
        try:
            node = yaml.compose(text, Loader=_CLOADER)
        except yaml.YAMLError:
            pass
        else:
            if node is None or _same_as_pure(node, C_DEPTH):
                return node
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _same_as_pure(node: yaml.Node, limit: int) -> bool:
    """Whether the pure composer gives this tree too, as far as the known differences go: it nests
    at most ``limit`` levels and no plain scalar inside a flow collection holds a ``?`` (``{a: b?}``:
    the pure scanner ends the scalar there and fails). Iterative; an alias is seen once. (The two
    also place some empty values on other lines, but not a sequence item, whose line is the only
    one read: events', cases'.)"""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    while stack:
        n, depth, in_flow = stack.pop()
        if depth > limit:
            return False
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            if in_flow and not n.style and "?" in n.value:
                return False
            continue
        flow = in_flow or bool(getattr(n, "flow_style", False))  # a collection node's
        if isinstance(n, yaml.SequenceNode):
            stack.extend((c, depth + 1, flow) for c in n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend((c, depth + 1, flow) for pair in n.value for c in pair)
    return True


def read_yaml(path: Path) -> tuple[yaml.Node | None, Any]:
    """The composed node tree (for line numbers) and the plain data of a YAML file, parsed once
    (the data is constructed from the tree, as ``yaml.safe_load`` does). An alias bomb or a
    document nested too deep for the (recursive) YAML composer is an ``IngestError``."""
    try:
        text = read_regular(path).decode("utf-8")
        node = _compose(text)
        if node is None:
            return None, None
        if _expanded_size(node, MAX_NODES + 1) > MAX_NODES:
            raise IngestError(path, f"YAML aliases expand to over {MAX_NODES:,} nodes (an alias bomb); not read")
        return node, yaml.SafeLoader("").construct_document(node)
    except OSError as exc:
        raise IngestError(path, f"cannot read: {exc.strerror or exc}") from exc
    except RecursionError as exc:
        raise IngestError(path, "YAML nested too deep to read") from exc
    except UnicodeDecodeError as exc:
        raise IngestError(path, f"invalid UTF-8 at byte {exc.start}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise IngestError(path, f"not valid YAML: {getattr(exc, 'problem', exc)}",
                          line=mark.line + 1 if mark else None) from exc


def load(path: Path) -> Session:
    root, doc = read_yaml(path)
    return session_from_node(path, root, doc)


def session_from_node(path: Path, node: yaml.Node | None, doc: Any) -> Session:
    """A session from one fixture mapping: a whole file, or one case of a rule-cases file (whose
    events then carry the cases file's line numbers)."""
    b = SessionBuilder(path=path, format=NAME)
    if not isinstance(doc, dict) or not isinstance(doc.get("events"), list):
        raise IngestError(path, "a session fixture needs a top-level `events:` list")
    b.session.update(
        session_id=doc.get("session_id"),
        agent=doc.get("agent", "fixture"),
        model=doc.get("model"),
        cwd=doc.get("cwd"),
    )
    start = parse_ts(doc["start"].isoformat() if isinstance(doc.get("start"), datetime)
                     else doc.get("start"))
    step = _seconds(doc.get("step", 30))
    if step is None:
        b.diag("warning", f"`step: {str(doc.get('step'))[:40]}` is not a number of seconds; 30 s used")
        step = timedelta(seconds=30)
    clock = start
    for line, item in _event_items(node):
        b.records += 1
        try:
            clock = _event(b, doc, line, item, clock, step)
        except (ValueError, TypeError, OverflowError) as exc:  # pydantic's ValidationError is a ValueError
            b.diag("error", f"event skipped: {_reason(exc)}", line)
    return b.build()


def _seconds(value: Any) -> timedelta | None:
    """A number of seconds (``30``, ``'+1.5'``) as a timedelta; None for anything else or out of range."""
    try:
        return timedelta(seconds=float(value))
    except (ValueError, TypeError, OverflowError):
        return None


def _reason(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # a pydantic ValidationError: name the field and what it wanted
        first = errors()[0]
        return f"`{'.'.join(map(str, first['loc']))}`: {first['msg']}"
    return str(exc).splitlines()[0][:200]


def _event(b: SessionBuilder, doc: dict[str, Any], line: int, item: Any, clock: datetime | None,
           step: timedelta) -> datetime | None:
    """Add the event of one ``events:`` item; the clock after it. Raises on a field of the wrong type."""
    if not isinstance(item, dict):
        b.diag("error", "event must be a mapping like `- user: …`", line)
        return clock
    kinds = [k for k in _KINDS if k in item]
    if len(kinds) != 1:
        b.diag("error", f"event needs exactly one of {', '.join(_KINDS)}", line)
        return clock
    at = item.get("at")
    if isinstance(at, int | float) and not isinstance(at, bool) and clock is not None:
        clock = _advance(b, clock, at, line)  # YAML reads `+90` as the number 90
    elif isinstance(at, str) and at.startswith("+") and clock is not None:
        clock = _advance(b, clock, at[1:], line)
    elif at is not None:
        clock = parse_ts(at.isoformat() if isinstance(at, datetime) else at) or clock
    elif clock is not None and b.events:
        clock = clock + step
    marks = CaseMarks(
        example=bool(item.get("example", False)),
        **{field: _names(item.get(key)) for key, field in _MARKS.items()},
    )
    common: dict[str, Any] = {
        "line": line, "ts": clock, "agent": str(item.get("agent", "main")), "marks": marks,
        "ref": item.get("ref"),
    }
    kind = kinds[0]
    if kind == "user":
        b.add(UserEvent(text=str(item["user"]), origin=item.get("origin", "prompt"), **common))
    elif kind == "assistant":
        b.add(AssistantEvent(text=str(item["assistant"]), model=doc.get("model"), **common))
    elif kind == "system":
        b.add(SystemEvent(subtype=str(item["system"]), text=str(item.get("text", "")),
                          task_id=item.get("task"), exit_code=item.get("exit"),
                          status=item.get("status"), **common))
    else:
        name = "Bash" if kind == "bash" else str(item["tool"])
        tool_input = dict(item.get("input") or {})
        command = str(item["bash"]) if kind == "bash" else tool_input.get("command")
        if kind == "bash":
            tool_input.setdefault("command", command)
            if item.get("background"):
                tool_input["run_in_background"] = True
        task = item.get("task") or tool_input.get("shell_id") or tool_input.get("bash_id") \
            or tool_input.get("task_id")
        exit_code = item.get("exit")
        # an omitted output is an empty result; `no-result: true` models a call whose
        # result the log lost (the session ended while it ran)
        output = None if item.get("no-result") else item.get("output", "" if kind == "bash" else None)
        b.add(ToolEvent(
            name=name, category=categorize(name), input=tool_input,
            command=command if isinstance(command, str) else None,
            output=None if output is None else str(output),
            exit_code=exit_code,
            is_error=item.get("is_error", exit_code not in (None, 0)),
            interrupted=bool(item.get("interrupted", False)),
            truncated=bool(item.get("truncated", False)),
            background=bool(item.get("background", False)),
            task_id=None if task is None else str(task),
            by_user=bool(item.get("by_user", False)),
            **common,
        ))
    return clock


def _advance(b: SessionBuilder, clock: datetime, value: Any, line: int) -> datetime:
    """``clock`` plus ``value`` seconds; unchanged, with a warning, when that is no number of
    seconds or no date (``at: '+1e30'``)."""
    delta = _seconds(value)
    try:
        if delta is not None:
            return clock + delta
    except OverflowError:
        pass
    b.diag("warning", f"`at: +{str(value)[:40]}` is no usable number of seconds; the previous time is kept", line)
    return clock
