"""A large session stays a usable page: outputs and commands are cut (first and last lines kept,
with what was cut said), so the report's size does not follow the log's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from analyzer.events import AssistantEvent, Session, ToolEvent, UserEvent
from analyzer.pipeline import analyze
from analyzer.report.html import render_html
from tests.report.htmlcheck import parse

N = 3000
BIG_EVERY = 150


def big_output(i: int) -> str:
    lines = [f"[build {i}] step {n:06d} compiling module_{n} ... ok" for n in range(12_000)]  # ~600 KB
    lines.append(f"[build {i}] FINISHED last-line-{i}")
    return "\n".join(lines)


def large_session() -> Session:
    t0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    events = []
    for i in range(N):
        ts = t0 + timedelta(seconds=7 * i)
        if i % 3 == 0:
            events.append(UserEvent(index=i, text=f"step {i}: carry on", ts=ts, line=i + 1))
        elif i % 3 == 1:
            events.append(AssistantEvent(index=i, text=f"Working on step {i}.", ts=ts, line=i + 1))
        else:
            out = big_output(i) if i % BIG_EVERY == 2 else f"ok {i}"
            events.append(ToolEvent(index=i, name="Bash", category="shell", command=f"make step-{i}",
                                    output=out, ts=ts, line=i + 1))
    return Session(path="large.jsonl", format="claude-code", agent="claude-code", events=events)


def test_large_session_report_is_bounded_and_says_what_it_cut() -> None:
    session = large_session()
    raw = sum(len(e.output or "") for e in session.events if isinstance(e, ToolEvent))
    assert raw > 10_000_000
    html = render_html(analyze(session))
    assert len(html) < raw / 4
    page = parse(html)
    events = [e for e in page.by_id("timeline-list").children if e.tag == "article"]
    assert len(events) == N
    big = page.by_id(f"event-{2}")
    out = next(d for d in big.find_all("details") if d.has_class("output"))
    text = out.all_text
    assert "[build 2] step 000000" in text, "the first lines are kept"
    assert "FINISHED last-line-2" in text, "and the last ones"
    assert "not shown" in text and "12,001 lines" in text, "the cut is said"
    assert "step 006000" not in text
    small = page.by_id("event-5")
    assert "ok 5" in small.all_text and "not shown" not in small.all_text
