"""The timeline: every event as a row, text redacted and cut to a size a browser handles for
sessions of thousands of events and megabytes of output."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from markupsafe import Markup

from analyzer.events import AssistantEvent, SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.facts import Fact, Kill
from analyzer.lifecycle.world import World
from analyzer.report._clean import Cleaner, Seg, Shown, marked, occurrences
from analyzer.report._evidence import kill_needles, where_of
from analyzer.report._when import Times, who
from analyzer.report.guard_log import GuardBadge
from analyzer.rules.api import severity_rank


@dataclass
class Badge:
    number: int
    """1-based finding number (``#finding-N``)."""
    rule: str
    severity: str
    role: str


@dataclass
class Row:
    index: int
    kind: str
    """Filter key: ``user``, ``assistant``, ``shell``, ``tool``, ``system``."""
    kind_label: str
    who: str
    time: str
    where: str
    agent: str
    text: Shown | None = None
    markdown: bool = False
    """``text`` is the agent's message: shown as Markdown."""
    html: tuple[Markup, Markup] | None = None
    """With ``markdown``: the text's head and tail as HTML, when made beforehand (``html.report_context``)."""
    command_head: list[Seg] = field(default_factory=list)
    command_tail: list[Seg] = field(default_factory=list)
    command_note: str = ""
    tool: str = ""
    input: str = ""
    status: list[str] = field(default_factory=list)
    output: Shown | None = None
    preview: str = ""
    """The output's first non-blank line, shown beside the folded output."""
    thinking: Shown | None = None
    facts: list[str] = field(default_factory=list)
    badges: list[Badge] = field(default_factory=list)
    guard: list[GuardBadge] = field(default_factory=list)
    """The live guard's decisions on this call (``--guard-log``)."""

    @property
    def short_where(self) -> str:
        """``name.jsonl:120``: the full path is in the tooltip."""
        return self.where.replace("\\", "/").rsplit("/", 1)[-1]

    @property
    def lifecycle(self) -> bool:
        return bool(self.facts)

    @property
    def worst(self) -> str:
        if not self.badges:  # most rows: the template asks twice per row
            return ""
        return max((b.severity for b in self.badges if b.role == "anchor"), key=severity_rank,
                   default="")


def _status(ev: ToolEvent) -> list[str]:
    return [*ev.status_words(), *(["run by the user"] if ev.by_user else [])]


def _time(own: bool, times: Times, index: int) -> str:
    """The event's clock time; ``≈`` when the record has none and the previous one's is shown."""
    stamp = times.stamp(index)
    return stamp if own or not stamp else "≈ " + stamp


def _command(row: Row, command: str, kills: list[Kill], clean: Cleaner) -> None:
    shown = clean.text(command, head_lines=80, tail_lines=10, head_chars=8000, tail_chars=1500)
    needles = kill_needles(kills, clean) if kills else []
    row.command_head = marked(shown.head, occurrences(shown.head, needles))
    row.command_tail = marked(shown.tail, occurrences(shown.tail, needles)) if shown.tail else []
    row.command_note = shown.note


OUTPUT_BUDGET = 6_000_000
"""Characters of tool output the whole timeline shows; each output gets its share (between the
floor and the cap below), so a session of thousands of outputs stays a page a browser opens."""
OUTPUT_CAP = 11_000
OUTPUT_FLOOR = 1_500


def output_room(session_outputs: int) -> tuple[int, int, int, int]:
    """(head lines, tail lines, head chars, tail chars) for each output."""
    per = max(OUTPUT_FLOOR, min(OUTPUT_CAP, OUTPUT_BUDGET // max(session_outputs, 1)))
    scale = per / OUTPUT_CAP
    return max(8, round(40 * scale)), max(4, round(20 * scale)), per * 8 // 11, per * 3 // 11


def rows(world: World, times: Times, clean: Cleaner, badges: dict[int, list[Badge]]) -> list[Row]:
    session = world.session
    head_lines, tail_lines, head_chars, tail_chars = output_room(
        sum(1 for e in session.events if isinstance(e, ToolEvent) and e.output))
    facts: dict[int, list[Fact]] = {}
    for f in world.facts:
        facts.setdefault(f.event, []).append(f)
    out: list[Row] = []
    for ev in session.events:
        at = facts.get(ev.index, [])
        row = Row(index=ev.index, kind=ev.kind, kind_label=ev.kind, who=who(ev),
                  time=_time(ev.ts is not None, times, ev.index),
                  where=where_of(session, ev), agent=ev.agent,
                  facts=[clean.one_line(f.detail, 300) for f in at if f.detail],
                  badges=badges.get(ev.index, []))
        if isinstance(ev, UserEvent):
            row.kind_label = "user" if ev.origin == "prompt" else f"user · {ev.origin}"
            row.text = clean.text(ev.text, head_lines=60, tail_lines=10, head_chars=6000, tail_chars=1500)
        elif isinstance(ev, AssistantEvent):
            row.kind_label = "agent"
            row.markdown = True
            row.text = clean.text(ev.text, head_lines=60, tail_lines=10, head_chars=6000, tail_chars=1500)
            if ev.thinking:
                row.thinking = clean.text(ev.thinking, head_lines=40, tail_lines=5, head_chars=4000,
                                          tail_chars=800)
        elif isinstance(ev, SystemEvent):
            row.kind_label = f"system · {ev.subtype}"
            extra = " ".join(x for x in (f"task {ev.task_id}" if ev.task_id else "",
                                         f"status {ev.status}" if ev.status else "",
                                         f"exit {ev.exit_code}" if ev.exit_code is not None else "") if x)
            row.text = clean.text((f"[{extra}] " if extra else "") + ev.text, head_lines=30, tail_lines=5,
                                  head_chars=3000, tail_chars=800)
        else:
            assert isinstance(ev, ToolEvent)
            row.tool = ev.name
            row.status = _status(ev)
            if ev.command is not None:
                row.kind, row.kind_label = "shell", f"shell · {ev.name}"
                _command(row, ev.command, [f for f in at if isinstance(f, Kill)], clean)
            else:
                row.kind, row.kind_label = "tool", f"tool · {ev.name}"
                row.input = clean.one_line(orjson.dumps(ev.input).decode(), 600)
            if ev.output:
                row.output = clean.text(ev.output, head_lines=head_lines, tail_lines=tail_lines,
                                        head_chars=head_chars, tail_chars=tail_chars)
                first = next((ln for ln in row.output.head.split("\n") if ln.strip()), "")
                row.preview = first.strip()[:110] + ("…" if len(first.strip()) > 110 else "")
        out.append(row)
    return out
