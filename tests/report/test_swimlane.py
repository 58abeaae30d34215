"""Swimlane geometry: long idle gaps are shortened, crowded lanes thinned (and said so)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from analyzer.events import Session, ToolEvent, UserEvent
from analyzer.lifecycle.build import build_world
from analyzer.report._clean import Cleaner
from analyzer.report._swimlane import MAX_USER, X0, X1, _thin, build, nearest
from analyzer.report._when import Times

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def test_many_user_messages_are_thinned_and_the_cut_is_said() -> None:
    events = [UserEvent(index=i, text=f"note {i}", ts=T0 + timedelta(seconds=i)) for i in range(1000)]
    world = build_world(Session(path="chatty.jsonl", format="claude-code", events=events))
    lane = build(world, Times(world.session), Cleaner())
    assert len(lane.user.markers) == MAX_USER
    assert lane.thinned == [f"user messages: {MAX_USER} of 1000 shown"]
    assert _thin([lane.user.markers[0]], 0) == []


def test_an_overnight_pause_is_shortened_to_a_marked_break() -> None:
    events = [
        ToolEvent(index=0, name="Bash", category="shell", command="nohup uvicorn app:api --port 8000 &",
                  output="", ts=T0),
        ToolEvent(index=1, name="Bash", category="shell", command="curl -sf localhost:8000/health",
                  output='{"ok": true}', ts=T0 + timedelta(minutes=2)),
        UserEvent(index=2, text="Ready", ts=T0 + timedelta(minutes=3)),
        UserEvent(index=3, text="Good morning, still up?", ts=T0 + timedelta(hours=14)),
        ToolEvent(index=4, name="Bash", category="shell", command="curl -sf localhost:8000/health",
                  output='{"ok": true}', ts=T0 + timedelta(hours=14, minutes=1)),
    ]
    world = build_world(Session(path="overnight.jsonl", format="claude-code", events=events))
    lane = build(world, Times(world.session), Cleaner())
    assert lane.axis == "time (as logged)"
    assert [b.label for b in lane.breaks] == ["13 h 57 min idle, shortened"]
    user = {m.event: m.x for m in lane.user.markers}
    # the first three minutes are not squeezed into a pixel by the 14-hour gap
    assert user[2] - X0 > (X1 - X0) * 0.2
    assert len(lane.lanes) == 1 and lane.lanes[0].id == "local:8000"


@given(st.lists(st.integers(0, 40), min_size=1, max_size=30, unique=True).map(sorted),
       st.integers(-5, 45), st.sampled_from([0.0, 0.5, 0.25]))
def test_the_tick_nearest_a_time_is_the_first_closest_offset(offsets: list[int], want: int, frac: float) -> None:
    # ticks go where the compressed axis is closest to each even step: the scan it replaced took
    # the first of two offsets as close
    points = [float(o) for o in offsets]
    target = want + frac
    assert nearest(points, target) == min(range(len(points)), key=lambda j: abs(points[j] - target))
