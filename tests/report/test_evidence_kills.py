"""A kill's evidence is drawn from the world's fields: the victim's quoted text and match, the
relaunches the pattern matches, and marks that never point into a redacted secret."""

from __future__ import annotations

from pathlib import Path

from analyzer.lifecycle.facts import Kill, Victim
from analyzer.pipeline import analyze
from analyzer.report._clean import Cleaner, Seg
from analyzer.report._evidence import command_segments, kill_views, span_segments, victim_view
from analyzer.shell.parse import parse

SEED_002 = Path(__file__).resolve().parents[2] / "fixtures" / "seeds" / "002-restart-30001-teardown.session.yaml"
KEY = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0k1L2"


def hit(segs: list[Seg]) -> list[str]:
    return [s.text for s in segs if s.mark == "hit"]


def test_a_victim_row_is_lead_marked_subject_and_consequence() -> None:
    v = Victim(label="the agent's shell", reason="(the sentence)", role="shell", matched="command line",
               subject="bash -c pkill -f launch_server; launch_server --port 1", match_span=(17, 30),
               lead="pkill -f launch_server matches its command line", consequence="it is the agent's shell")
    row = victim_view(v, Cleaner())
    assert (row.pre, row.post) == ("pkill -f launch_server matches its command line", "it is the agent's shell")
    assert hit(row.subject) == ["launch_server"]


def test_a_victim_without_a_quote_is_its_reason() -> None:
    v = Victim(label="db", reason="systemctl stop pg stops its unit (pg.service)", role="server")
    row = victim_view(v, Cleaner())
    assert row.pre == v.reason and row.subject == [] and row.post == ""


def test_seed_002_marks_the_victims_and_the_relaunch_where_the_world_says_they_matched() -> None:
    world = analyze(str(SEED_002)).world
    kills = [k for k in world.kills() if k.relaunches]
    assert kills
    (view, *_) = kill_views(world, kills, Cleaner())
    assert view.relaunch and view.relaunches
    for segs in view.relaunches:
        assert hit(segs) and all("3000" in h for h in hit(segs))
    assert any(hit(row.subject) for row in view.victims if row.role == "server")


def test_a_mark_never_points_into_a_redacted_secret() -> None:
    text = f"python serve.py --key {KEY} --port 8000"
    at = text.index("--port")
    segs = span_segments(text, (at, at + 6), Cleaner())
    assert KEY not in "".join(s.text for s in segs)
    assert hit(segs) == ["--port"]


def test_a_kill_written_with_quotes_its_text_lacks_is_marked_where_it_is_written() -> None:
    command = 'echo start; pkill -f "launch server"; echo done'
    (pkill,) = parse(command).named("pkill")
    k = Kill(event=0, mechanism="pkill", text="pkill -f launch server", pattern="launch\\ server",
             command_span=pkill.span)
    segs, _, _ = command_segments(command, [k], Cleaner(), 400)
    assert hit(segs) == ['pkill -f "launch server"']
