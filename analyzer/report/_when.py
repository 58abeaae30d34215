"""When each event happened, as a report says it: clock times, gaps, durations.

Logs without times (some formats have none) fall back to event numbers, so every sentence that
would say "at 03:12" can say "at event #12" instead. Times are shown in the offset the log wrote
them in (a time without one was read as UTC), and that zone is named wherever a time stands alone.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer.events import AssistantEvent, Event, Session, ToolEvent, UserEvent


class Times:
    """Start and end time of every event: its own ``ts`` (or the nearest earlier one when a record
    has none) and, for tool calls, when the result came back."""

    def __init__(self, session: Session) -> None:
        events = session.events
        self.start: list[datetime | None] = []
        self.end: list[datetime | None] = []
        last: datetime | None = None
        for ev in events:
            ts = ev.ts or last
            last = ev.ts or last
            self.start.append(ts)
            done = ev.result_ts if isinstance(ev, ToolEvent) and ev.result_ts else None
            self.end.append(done if done and ts and done >= ts else ts)
        if len({t.utcoffset() for t in self.start + self.end if t is not None}) > 1:
            # a log mixing offsets: one clock for the whole report, in UTC
            self.start = [t.astimezone(UTC) if t else None for t in self.start]
            self.end = [t.astimezone(UTC) if t else None for t in self.end]
        first_known = next((t for t in self.start if t is not None), None)
        self.start = [t or first_known for t in self.start]
        self.end = [t or first_known for t in self.end]
        known = [t for t in self.start + self.end if t is not None]
        self.first: datetime | None = min(known) if known else None
        self.last: datetime | None = max(known) if known else None
        self.multi_day = bool(self.first and self.last and self.first.date() != self.last.date())
        self.count = len(events)
        self.zone = zone(self.first) if self.first is not None else "UTC"
        """The zone every clock time of this report is in: ``UTC`` or ``UTC+02:00``."""
        distinct = len({ev.ts for ev in events if ev.ts is not None})
        self.meaningful = self.timed and distinct >= max(2, self.count // 2)
        """Times tell events apart: most records have their own (aider stamps a whole chat once)."""

    @property
    def timed(self) -> bool:
        """The log has times at all (and they span something)."""
        return self.first is not None and self.last is not None and self.last > self.first

    def at(self, index: int) -> datetime | None:
        return self.start[index] if 0 <= index < self.count else None

    def done(self, index: int) -> datetime | None:
        return self.end[index] if 0 <= index < self.count else None

    def clock(self, index: int, seconds: bool = False) -> str:
        """``03:12`` (with the date when the session spans days), or ``event #12``."""
        return self.clock_of(self.at(index), index, seconds)

    def stamp(self, index: int) -> str:
        """The time logged for an event, with seconds and zone, as a label beside it ("" without times)."""
        t = self.at(index)
        return f"{self.clock_of(t, seconds=True)} {self.zone}" if t is not None and self.timed else ""

    def clock_of(self, t: datetime | None, index: int | None = None, seconds: bool = False) -> str:
        if index is not None and (t is None or not self.meaningful):
            return f"event #{index}"
        if t is None:
            return "—"
        if self.multi_day and t.year < 1000:  # strftime's %Y pads such years by platform: keep its text
            return t.strftime("%Y-%m-%d " + ("%H:%M:%S" if seconds else "%H:%M"))
        # formatted by hand: strftime was most of a timeline row's clock (one per event)
        day = f"{t.year}-{t.month:02d}-{t.day:02d} " if self.multi_day else ""
        return f"{day}{t.hour:02d}:{t.minute:02d}:{t.second:02d}" if seconds else f"{day}{t.hour:02d}:{t.minute:02d}"

    def between(self, a: int, b: int) -> str:
        """How long from event ``a`` to event ``b``: ``18 s``, ``2 min``, or ``3 events``."""
        ta, tb = self.at(a), self.at(b)
        if ta is not None and tb is not None and self.meaningful:
            return duration((tb - ta).total_seconds())
        n = b - a
        return f"{n} event{'s' if n != 1 else ''}"

    def duration(self) -> str:
        if self.first is None or self.last is None:
            return "unknown (the log has no times)"
        return duration((self.last - self.first).total_seconds())


def zone(t: datetime) -> str:
    """``UTC``, or the offset ``t`` was logged in: ``UTC+02:00``, ``UTC-05:30``."""
    offset = t.utcoffset() or timedelta(0)
    if not offset:
        return "UTC"
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def duration(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        m, r = divmod(s, 60)
        return f"{m} min {r} s" if r and m < 10 else f"{m} min"
    if s < 86400:
        h, r = divmod(s, 3600)
        return f"{h} h {r // 60} min" if r // 60 else f"{h} h"
    d, r = divmod(s, 86400)
    return f"{d} d {r // 3600} h" if r // 3600 else f"{d} d"


def who(ev: Event) -> str:
    """Who acted: ``user``, ``agent``, ``agent (sub-agent a3f9c21)``, ``user (shell)``, ``harness``."""
    sub = f" (sub-agent {ev.agent[:12]})" if ev.agent != "main" else ""
    if isinstance(ev, UserEvent):
        return "user" if ev.origin == "prompt" else f"user ({ev.origin})"
    if isinstance(ev, AssistantEvent):
        return "agent" + sub
    if isinstance(ev, ToolEvent):
        return ("user (shell)" if ev.by_user else "agent") + sub
    return "harness" + sub
