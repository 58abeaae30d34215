"""The lifecycle swimlane: one lane per server instance, its states as colored segments over
time, and markers (launch, probe, ready, kill, failure, user message) that link to their events.

Geometry only: numbers and already-cleaned labels. The template draws the SVG, so every label is
escaped there. Long idle gaps are compressed (drawn with a break) so an overnight pause does not
squeeze the interesting minutes into a pixel; logs without times are laid out by event number.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from analyzer.events import UserEvent
from analyzer.lifecycle.facts import Correction, Fact, Failure, Instruction, Kill, Launch, Probe, Ready
from analyzer.lifecycle.world import World
from analyzer.report._clean import Cleaner
from analyzer.report._when import Times, duration

WIDTH = 1160
LABEL_W = 236
X0 = LABEL_W + 20
X1 = WIDTH - 18
AXIS_H = 30
USER_H = 34
LANE_H = 54
MAX_PROBES = 200
MAX_USER = 400
NUDGE = 9.0


@dataclass
class Segment:
    x: float
    w: float
    state: str
    event: int
    title: str


@dataclass
class Marker:
    x: float
    y: float
    kind: str
    event: int
    title: str
    d: str = ""
    """SVG path of the symbol."""


@dataclass
class Lane:
    id: str
    label: str
    """First line: what it is (``sglang server``)."""
    title: str
    final: str
    y: float
    where: str = ""
    """Second line: where (``10.1.230.181:30001``, a unit)."""
    segments: list[Segment] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)


@dataclass
class Tick:
    x: float
    label: str
    anchor: str = "middle"
    """SVG text-anchor: the last tick is right-aligned so its label is not cut."""


@dataclass
class Swimlane:
    width: int
    height: int
    lanes: list[Lane]
    user: Lane
    ticks: list[Tick]
    breaks: list[Tick]
    axis: str
    """What x means: ``time (as logged)`` or ``event number``."""
    thinned: list[str]
    """Notes on markers left out to keep the picture readable."""
    x0: float = X0
    x1: float = X1


class Scale:
    """Event → x. By time with long idle gaps compressed, else by event number."""

    def __init__(self, times: Times) -> None:
        self.times = times
        self.by_time = times.meaningful
        self.breaks: list[tuple[float, float, float]] = []  # (start offset, compressed width, real seconds)
        if self.by_time:
            assert times.first is not None and times.last is not None
            t0 = times.first
            points = sorted({(t - t0).total_seconds() for t in times.start + times.end if t is not None})
            gaps = [b - a for a, b in itertools.pairwise(points)]
            # a gap is shortened to 15% of the session's active time (each gap counted up to 30 min),
            # so a night off takes a sliver and the minutes around the incident keep their width
            cap = max(0.15 * sum(min(g, 1800.0) for g in gaps), 120.0)
            self.points = points
            self.offsets = [0.0]
            for a, b in itertools.pairwise(points):
                gap = b - a
                width = min(gap, cap)
                if gap > cap:
                    self.breaks.append((self.offsets[-1], width, gap))
                self.offsets.append(self.offsets[-1] + width)
            self.span = self.offsets[-1] or 1.0
        else:
            self.span = float(max(times.count - 1, 1))

    def _x(self, v: float) -> float:
        return X0 + (X1 - X0) * max(0.0, min(1.0, v / self.span))

    def compressed(self, index: int, done: bool = False) -> float:
        if not self.by_time:
            return float(index)
        t = self.times.done(index) if done else self.times.at(index)
        if t is None or self.times.first is None:
            return 0.0
        s = (t - self.times.first).total_seconds()
        i = bisect.bisect_right(self.points, s) - 1
        if i < 0:
            return 0.0
        if i >= len(self.points) - 1:
            return self.offsets[-1]
        a, b = self.points[i], self.points[i + 1]
        frac = (s - a) / (b - a) if b > a else 0.0
        return self.offsets[i] + frac * (self.offsets[i + 1] - self.offsets[i])

    def x(self, index: int, done: bool = False) -> float:
        return self._x(self.compressed(index, done))

    def end_x(self) -> float:
        return X1

    def ticks(self, count: int = 7) -> list[Tick]:
        out: list[Tick] = []
        if not self.by_time:
            n = self.times.count
            step = max(1, round((n - 1) / max(count - 1, 1)))
            for i in range(0, max(n, 1), step):
                out.append(Tick(self._x(float(i)), f"#{i}"))
            return out
        first = self.times.first
        assert first is not None
        seconds = self.times.last is not None and (self.times.last - first).total_seconds() < 900
        for k in range(count):
            want = self.span * k / (count - 1)
            j = nearest(self.offsets, want)
            x = self._x(self.offsets[j])
            if out and x - out[-1].x < 70:
                continue
            t = first + timedelta(seconds=self.points[j])
            out.append(Tick(x, self.times.clock_of(t, seconds=seconds)))
        return out

    def break_ticks(self) -> list[Tick]:
        return [Tick(self._x(off + w / 2), f"{duration(real)} idle, shortened") for off, w, real in self.breaks]


def nearest(offsets: list[float], want: float) -> int:
    """The index of the offset closest to ``want``, the first of two as close: ``min`` over every
    index by distance, found by bisection (offsets only grow; a 50 MB session has 6,600 of them, and
    each of the axis's ticks scanned them all)."""
    i = bisect.bisect_left(offsets, want)
    if i == 0:
        return 0
    if i == len(offsets) or abs(offsets[i - 1] - want) <= abs(offsets[i] - want):
        return i - 1
    return i


def _triangle(x: float, y: float, r: float = 6.5) -> str:
    return f"M{x:.1f} {y - r:.1f}L{x + r:.1f} {y + r * 0.8:.1f}L{x - r:.1f} {y + r * 0.8:.1f}Z"


def _circle(x: float, y: float, r: float = 4.5) -> str:
    return f"M{x - r:.1f} {y:.1f}a{r} {r} 0 1 0 {2 * r:.1f} 0a{r} {r} 0 1 0 {-2 * r:.1f} 0Z"


def _cross(x: float, y: float, r: float = 5.0) -> str:
    return (f"M{x - r:.1f} {y - r:.1f}L{x + r:.1f} {y + r:.1f}M{x + r:.1f} {y - r:.1f}L{x - r:.1f} {y + r:.1f}")


def _diamond(x: float, y: float, r: float = 6.0) -> str:
    return f"M{x:.1f} {y - r:.1f}L{x + r:.1f} {y:.1f}L{x:.1f} {y + r:.1f}L{x - r:.1f} {y:.1f}Z"


def _bang(x: float, y: float, r: float = 6.5) -> str:
    return f"M{x:.1f} {y + r:.1f}L{x + r:.1f} {y - r * 0.7:.1f}L{x - r:.1f} {y - r * 0.7:.1f}Z"


def _bubble(x: float, y: float, r: float = 7.0) -> str:
    return (f"M{x - r:.1f} {y - r * 0.7:.1f}h{2 * r:.1f}v{r * 1.2:.1f}h{-r * 0.9:.1f}l{-r * 0.6:.1f} {r * 0.6:.1f}"
            f"v{-r * 0.6:.1f}h{-r * 0.5:.1f}Z")


SHAPES: dict[str, Callable[[float, float], str]] = {
    "launch": _triangle, "ready": _diamond, "probe": _circle, "probe-fail": _circle, "kill": _cross,
    "failure": _bang, "user": _bubble, "instruction": _bubble,
}


def _spread(markers: list[Marker]) -> None:
    """Markers on one row closer than NUDGE pixels are pushed right, so each stays clickable."""
    rows: dict[float, list[Marker]] = {}
    for m in markers:
        rows.setdefault(m.y, []).append(m)
    for row in rows.values():
        row.sort(key=lambda m: (m.x, m.event))
        for prev, cur in itertools.pairwise(row):
            if cur.x - prev.x < NUDGE:
                cur.x = prev.x + NUDGE
    for m in markers:
        m.d = SHAPES[m.kind](m.x, m.y)


def _short(text: str, room: int) -> str:
    return text if len(text) <= room else text[: room - 1] + "…"


def _thin(markers: list[Marker], limit: int) -> list[Marker]:
    if len(markers) <= limit:
        return markers
    if limit <= 0:
        return []
    step = len(markers) / limit
    return [markers[int(i * step)] for i in range(limit)]


def build(world: World, times: Times, clean: Cleaner) -> Swimlane:
    scale = Scale(times)
    events = world.session.events
    thinned: list[str] = []

    def label(i: int, what: str) -> str:
        return f"#{i} {times.clock(i, seconds=True)} {what}"

    user = Lane(id="user", label="User messages", title="User messages", final="", y=AXIS_H)
    asks = {f.event: f for f in world.facts if isinstance(f, Instruction | Correction)}
    for ev in events:
        if isinstance(ev, UserEvent) and ev.origin == "prompt":
            fact = asks.get(ev.index)
            kind = "instruction" if fact is not None else "user"
            what = f"user: {clean.one_line(ev.text, 140)}"
            if fact is not None:
                what += f" ({clean.one_line(fact.detail, 100)})"
            user.markers.append(Marker(scale.x(ev.index), AXIS_H + USER_H / 2, kind, ev.index, label(ev.index, what)))
    if len(user.markers) > MAX_USER:
        keep = _thin([m for m in user.markers if m.kind == "instruction"], MAX_USER)
        rest = _thin([m for m in user.markers if m.kind != "instruction"], max(MAX_USER - len(keep), 0))
        thinned.append(f"user messages: {len(keep) + len(rest)} of {len(user.markers)} shown")
        user.markers = sorted(keep + rest, key=lambda m: m.event)
    _spread(user.markers)

    per_instance: dict[str | None, list[Fact]] = {}  # one pass, not one per lane: facts in order
    for f in world.facts:
        if isinstance(f, Kill):
            for victim in dict.fromkeys(v.instance for v in f.victims):
                per_instance.setdefault(victim, []).append(f)
        else:
            per_instance.setdefault(f.instance, []).append(f)
    lanes: list[Lane] = []
    y = AXIS_H + USER_H + 6
    end = len(events)
    for inst in world.instances.values():
        name = clean(inst.name)
        final = inst.state_at(end)
        what = clean(inst.label)
        where = f"{inst.host}:{inst.port}" if inst.port else (inst.unit or inst.container or inst.host)
        lane = Lane(id=inst.id, label=_short(what, 30), where=_short(clean(where), 30),
                    title=f"{name} ({clean(inst.id)}), {final} at the end", final=final, y=y)
        bar_top, bar_h = y + 20, 14
        hist = inst.history
        for k, ch in enumerate(hist):
            x = scale.x(ch.event, done=ch.state == "ready")
            nxt = hist[k + 1] if k + 1 < len(hist) else None
            x2 = scale.x(nxt.event, done=nxt.state == "ready") if nxt else scale.end_x()
            if x2 - x < 0.5 and nxt is not None:
                continue
            lane.segments.append(Segment(x, max(x2 - x, 2.0), ch.state, ch.event,
                                         label(ch.event, f"{ch.state}: {clean.one_line(ch.reason, 160)}")))
        top, mid, bottom = bar_top - 8, bar_top + bar_h / 2, bar_top + bar_h + 8
        probes: list[Marker] = []
        for f in per_instance.get(inst.id, ()):
            if isinstance(f, Kill):
                lane.markers.append(Marker(scale.x(f.event), bottom, "kill", f.event,
                                           label(f.event, f"kill: {clean.one_line(f.text, 140)}")))
            elif isinstance(f, Launch):
                lane.markers.append(Marker(scale.x(f.event), top, "launch", f.event,
                                           label(f.event, f"launch: {clean.one_line(f.detail, 140)}")))
            elif isinstance(f, Ready):
                lane.markers.append(Marker(scale.x(f.event, done=True), top, "ready", f.event,
                                           label(f.event, f"ready ({f.source}): {clean.one_line(f.detail, 140)}")))
            elif isinstance(f, Failure):
                lane.markers.append(Marker(scale.x(f.event, done=True), bottom, "failure", f.event,
                                           label(f.event, f"failure: {clean.one_line(f.quote or f.detail, 140)}")))
            elif isinstance(f, Probe):
                kind = "probe-fail" if f.answered is False else "probe"
                probes.append(Marker(scale.x(f.event, done=True), mid, kind, f.event,
                                     label(f.event, f"probe: {clean.one_line(f.detail, 140)}")))
        if len(probes) > MAX_PROBES:
            thinned.append(f"{name}: {MAX_PROBES} of {len(probes)} probes shown")
            probes = _thin(probes, MAX_PROBES)
        lane.markers += probes
        _spread(lane.markers)
        lanes.append(lane)
        y += LANE_H
    ticks = scale.ticks()
    for t in ticks:
        t.anchor = "end" if t.x > X1 - 30 else "middle"
    return Swimlane(width=WIDTH, height=int(y + 8), lanes=lanes, user=user, ticks=ticks,
                    breaks=scale.break_ticks(), axis="time (as logged)" if scale.by_time else "event number",
                    thinned=thinned)
