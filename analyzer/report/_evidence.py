"""The evidence of a finding as excerpts of its events: the user's words, the command with the
part a kill pattern matches highlighted, the output line that shows a failure, and for kills, what
each victim's command line has that the pattern matched (as the world recorded it: the report reads
the kill's fields and never matches a pattern itself).

Text is redacted before it is searched for highlights, so a span never points into a secret.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from analyzer.events import AssistantEvent, Event, Session, SystemEvent, ToolEvent, UserEvent
from analyzer.lifecycle.facts import Correction, Failure, Instruction, Kill, ModelDisagreement, Ready, Victim
from analyzer.lifecycle.world import World
from analyzer.report._clean import Cleaner, Seg, marked, occurrences, window
from analyzer.report._when import Times, who

ROLE_NAMES = {
    "anchor": "where it went wrong",
    "ready-signal": "ready signal",
    "prior-launch": "earlier launch",
    "matched-process": "process the pattern hit",
    "corrected-action": "the action corrected",
    "claims-success": "claims success",
    "instruction": "the user's instruction",
}

_SEARCH_LIMIT = 2 * 1024 * 1024
"""Only the first 2 MB of an output are searched for the line a fact quotes."""


@dataclass
class VictimView:
    label: str
    role: str
    pre: str
    """The reason up to the quoted subject (``pkill -9 -f … matches its command line``)."""
    subject: list[Seg]
    """The victim's command line (an excerpt) with the matched part marked."""
    post: str


@dataclass
class KillView:
    text: list[Seg]
    mechanism: str
    self_kill: bool
    relaunch: bool
    victims: list[VictimView]
    relaunches: list[list[Seg]]
    """The command line of each launch in the same command that the pattern matches too."""
    notes: list[str]
    went_on: bool = False
    """The process model says the kill takes its own shell, but the output shows later commands
    in it ran: the observed outcome stands, and the report says so instead of "never run"."""

    SHOWN = 3
    """Victim rows shown before the rest fold away (when more than one more would fold)."""

    @property
    def folded(self) -> int:
        """How many victim rows fold under "N more"."""
        extra = len(self.victims) - self.SHOWN
        return extra if extra > 1 else 0


@dataclass
class Excerpt:
    role: str
    role_name: str
    index: int
    kind: str
    who: str
    time: str
    where: str
    body: list[Seg]
    mono: bool
    cut_before: bool = False
    cut_after: bool = False
    lines: list[tuple[str, list[Seg]]] = field(default_factory=list)
    """(where, segments) of output lines that show what a fact says (a ``Killed`` job line)."""
    kills: list[KillView] = field(default_factory=list)


def where_of(session: Session, ev: Event, line: int | None = None) -> str:
    path = ev.source or session.path
    line = line if line is not None else ev.line
    return f"{path}:{line}" if line is not None else f"{path}:#{ev.index}"


def kill_needles(kills: list[Kill], clean: Cleaner) -> list[str]:
    """What to highlight in a command: each kill's pattern as written, else the kill itself."""
    out: list[str] = []
    for k in kills:
        if k.pattern:
            out.append(clean(k.pattern))
        out.append(clean(k.text))
    return out


def command_segments(command: str, kills: list[Kill], clean: Cleaner, room: int) -> tuple[list[Seg], bool, bool]:
    text = clean(command)
    spans = occurrences(text, kill_needles(kills, clean))
    if not spans:  # `pkill -f "a b"` is written with quotes its text lacks: mark where the kill is written
        spans = occurrences(text, [clean(command[a:b]) for k in kills if k.command_span
                                   for a, b in [k.command_span]])
    shown, shifted, before, after = window(text, spans, room)
    return marked(shown, shifted), before, after


def victim_view(v: Victim, clean: Cleaner) -> VictimView:
    """A victim's row from the world's fields: the reason's lead, the quoted text with the match
    marked, and the consequence (a victim that quotes nothing shows its reason)."""
    if v.subject is None:
        return VictimView(label=clean(v.label), role=v.role, pre=clean(v.lead or v.reason), subject=[], post="")
    return VictimView(label=clean(v.label), role=v.role, pre=clean(v.lead),
                      subject=span_segments(v.subject, v.match_span, clean), post=clean(v.consequence))


def span_segments(text: str, span: tuple[int, int] | None, clean: Cleaner) -> list[Seg]:
    """``text`` redacted, with the part at ``span`` (offsets in the raw text) marked. When redaction
    changed the text, the marked part is looked up in the redacted text, so a mark never points
    into a secret."""
    shown = clean(text)
    if span is None or span[1] <= span[0]:
        return marked(shown, [])
    if shown == text:
        return marked(shown, [span])
    part = clean(text[span[0] : span[1]])
    at = shown.find(part) if part else -1
    return marked(shown, [(at, at + len(part))] if at >= 0 else [])


def kill_views(world: World, kills: list[Kill], clean: Cleaner) -> list[KillView]:
    out = []
    for k in kills:
        relaunches = [span_segments(r.text, r.span, clean) for r in k.relaunches]
        out.append(KillView(text=marked(clean(k.text), occurrences(clean(k.text), [clean(k.pattern or "")])),
                            mechanism=k.mechanism, self_kill=k.self_kill, relaunch=bool(k.also_matches_relaunch),
                            victims=[victim_view(v, clean) for v in k.victims],
                            relaunches=relaunches, notes=[clean(n) for n in k.notes],
                            went_on=any(isinstance(d, ModelDisagreement) and d.shown_by_output
                                        for d in world.facts_at(k.event))))
    return out


def _norm(text: str) -> str:
    return " ".join(text.split())


def quoted_lines(output: str, quotes: list[tuple[str, str]], clean: Cleaner) -> list[tuple[str, list[Seg]]]:
    """Output lines holding each (quote, mark), whitespace-insensitive, in output order."""
    if not output or not quotes:
        return []
    text = clean(output[:_SEARCH_LIMIT])
    wanted = [(_norm(clean(q)), mark) for q, mark in quotes if q.strip()]
    hits: dict[int, tuple[str, str]] = {}
    for n, line in enumerate(text.split("\n")):
        flat = _norm(line)
        if not flat:
            continue
        for q, mark in wanted:
            if q and (q in flat or (len(flat) > 12 and flat in q)):
                hits.setdefault(n, (line.strip(), mark))
    return [(f"output line {n + 1}", [Seg(_cut(line, 400), mark)]) for n, (line, mark) in sorted(hits.items())[:6]]


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"


def excerpt(world: World, times: Times, clean: Cleaner, index: int, role: str,
            instance: str | None = None) -> Excerpt:
    session = world.session
    ev = session.events[index]
    facts = world.facts_at(index)
    out = Excerpt(role=role, role_name=ROLE_NAMES.get(role, role.replace("-", " ")), index=index, kind=ev.kind,
                  who=who(ev), time=times.stamp(index), where=where_of(session, ev), body=[],
                  mono=False)
    if isinstance(ev, UserEvent):
        text = clean.clip(ev.text, 1200)
        said = [clean(f.quote) for f in facts if isinstance(f, Instruction | Correction) and f.quote]
        out.body = marked(text, occurrences(text, said), "said")
        return out
    if isinstance(ev, AssistantEvent):
        out.body = [Seg(clean.clip(ev.text, 900))]
        return out
    if isinstance(ev, SystemEvent):
        out.body = [Seg(clean.clip(f"{ev.subtype}: {ev.text}", 900))]
        return out
    assert isinstance(ev, ToolEvent)
    kills = [f for f in facts if isinstance(f, Kill)]
    out.mono = True
    if ev.command is not None:
        room = 1600 if role == "anchor" else 700  # evidence beside the anchor: enough to recognise it
        out.body, out.cut_before, out.cut_after = command_segments(ev.command, kills, clean, room)
    else:
        out.body = [Seg(f"{ev.name} " + clean.clip(orjson.dumps(ev.input).decode(), 900))]
    quotes: list[tuple[str, str]] = []
    for f in facts:
        if isinstance(f, Failure) and f.quote:
            quotes.append((f.quote, "fail"))
        elif instance is not None and f.instance not in (None, instance):
            continue
        elif isinstance(f, Ready) and f.source == "log" and f.quote:
            quotes.append((f.quote, "ok"))
    src = where_of(session, ev, ev.result_line if ev.result_line is not None else ev.line)
    out.lines = [(f"{src}, {label}", segs) for label, segs in quoted_lines(ev.output or "", quotes, clean)]
    if role == "anchor":
        out.kills = kill_views(world, kills, clean)
    return out
