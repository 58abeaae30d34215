"""Summary sentences for rules the report does not know (a user's rule), their docs, durations."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from analyzer.lifecycle.world import World
from analyzer.pipeline import analyze
from analyzer.report._when import duration
from analyzer.report.html import render_html
from analyzer.rules.api import Finding, Rule, Severity
from analyzer.rules.loader import LoadedRule, load_rules
from tests.report.htmlcheck import parse

SEED_000 = Path(__file__).resolve().parents[2] / "fixtures" / "seeds" / "000-kill-after-ready.session.yaml"


class TeamRule(Rule):
    """Flags what our team cares about.

    What it does:
        Looks at kills.

    Why is this bad:
        Our on-call gets paged.

    Known false positives:
        None known.

    How to avoid it:
        Ask in ``#ops`` before any kill.
    """

    name = "team-kill-policy"
    severity = Severity.low
    summary = "Kills need a word in #ops first."

    def check(self, world: World) -> Iterable[Finding]:
        kill = world.kills()[0]
        yield self.finding(world, anchor=kill.event, message="Killed without asking <ops>. Second sentence.")


def with_team_rule() -> tuple[object, dict[str, LoadedRule]]:
    a = analyze(SEED_000)
    a.findings += list(TeamRule().check(a.world))
    rules = dict(load_rules().rules)
    rules[TeamRule.name] = LoadedRule(TeamRule, "my_rules", __file__)
    return a, rules


def test_unknown_rule_gets_a_generic_sentence_and_its_own_docs() -> None:
    a, rules = with_team_rule()
    page = parse(render_html(a, rules=rules))  # type: ignore[arg-type]
    story = page.section_text("summary")
    assert "At 02:48 team-kill-policy: Killed without asking <ops>." in story
    assert "Second sentence" not in story
    article = next(e for e in page.root.iter() if e.tag == "article" and e.attrs.get("data-rule") == "team-kill-policy")
    text = " ".join(article.all_text.split())
    assert "How to avoid it" in text and "Ask in #ops before any kill." in text
    assert "Our on-call gets paged." in text
    appendix = page.section_text("appendix")
    assert "team-kill-policy" in appendix and "my_rules" in appendix


def test_rule_not_loaded_says_so() -> None:
    a, _ = with_team_rule()
    page = parse(render_html(a))  # type: ignore[arg-type]
    article = next(e for e in page.root.iter() if e.tag == "article" and e.attrs.get("data-rule") == "team-kill-policy")
    assert "No documentation was found for rule team-kill-policy" in " ".join(article.all_text.split())


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 s"), (18.4, "18 s"), (134, "2 min 14 s"), (486, "8 min 6 s"), (960, "16 min"), (3600, "1 h"),
    (3720, "1 h 2 min"), (90000, "1 d 1 h"),
])
def test_duration_words(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_a_log_without_times_speaks_in_event_numbers(tmp_path: Path) -> None:
    log = tmp_path / "untimed.session.yaml"
    log.write_text(
        "events:\n"
        "  - user: Start the API on port 8000\n"
        "  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &\n"
        "  - bash: curl -sf localhost:8000/health\n"
        "    output: '{\"ok\": true}'\n"
        "  - user: Ready\n"
        "  - bash: pkill -f uvicorn\n"
        "  - assistant: Stopped it.\n", encoding="utf-8")
    a = analyze(log)
    assert [f.rule for f in a.findings] == ["kill-after-ready"]
    page = parse(render_html(a))
    assert "At event #4 the agent killed the uvicorn app on local:8000" in page.section_text("summary")
    assert "1 event after the user said it was ready" in page.section_text("summary")
    assert "1 event+" in page.section_text("impact")
    svg = next(e for e in page.by_id("lifecycle").iter() if e.tag == "svg")
    assert "event number" in svg.all_text
