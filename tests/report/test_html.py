"""The HTML postmortem on the seed incidents: every section, every finding linked to its event,
the evidence highlighted, the swimlane, the impact durations, the summary sentences."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from analyzer.pipeline import Analysis, analyze
from analyzer.report.html import render_html
from tests.report.htmlcheck import Page, parse

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "fixtures" / "seeds"
SEED_FILES = [*sorted(SEEDS.glob("*.session.yaml")), SEEDS / "001-relaunch-after-ready.jsonl"]
SECTIONS = ["summary", "impact", "findings", "lifecycle", "timeline", "appendix"]


@cache
def seed(name: str) -> tuple[Analysis, Page]:
    a = analyze(SEEDS / name)
    return a, parse(render_html(a))


def ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


@pytest.mark.parametrize("name", ids(SEED_FILES))
def test_sections_and_security_headers(name: str) -> None:
    _, page = seed(name)
    assert [i for i in SECTIONS if i in page.ids] == SECTIONS
    csp = [a["content"] for t, a in page.starts if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert len(csp) == 1
    assert "default-src 'none'" in csp[0] and "img-src data:" in csp[0] and "script-src 'unsafe-inline'" in csp[0]
    # self-contained: nothing that fetches
    assert not [a for t, a in page.starts if t in ("link", "img", "iframe", "object", "embed")]
    assert not [a for t, a in page.starts if t == "script" and "src" in a]
    assert "http://" not in page.html.split("<body", 1)[0] and "https://" not in page.html.split("<body", 1)[0]


@pytest.mark.parametrize("name", ids(SEED_FILES))
def test_every_in_page_link_has_a_target(name: str) -> None:
    _, page = seed(name)
    internal = [h for h in page.hrefs() if h.startswith("#")]
    assert internal
    missing = sorted({h for h in internal if h[1:] not in page.ids})
    assert missing == []
    assert all(h.startswith("#") for h in page.hrefs()), "the report links only inside itself"


@pytest.mark.parametrize("name", ids(SEED_FILES))
def test_each_finding_is_shown_with_its_rule_and_links_to_its_event(name: str) -> None:
    a, page = seed(name)
    articles = [e for e in page.root.iter() if e.tag == "article" and e.has_class("finding")]
    assert Counter(e.attrs["data-rule"] for e in articles) == Counter(f.rule for f in a.findings)
    ordered = sorted(a.findings, key=lambda f: (-f.severity.rank, f.anchor.index, f.rule))
    assert [e.attrs["data-rule"] for e in articles] == [f.rule for f in ordered]  # most severe first
    for el, f in zip(articles, ordered, strict=True):
        links = {e.attrs["href"] for e in el.find_all("a") if "href" in e.attrs}
        assert f"#event-{f.anchor.index}" in links
        assert f"event-{f.anchor.index}" in page.ids
        for r in f.related:
            assert f"#event-{r.index}" in links
        text = " ".join(el.all_text.split())
        assert f.rule in text and f.severity.value in text
        path = f.anchor.source or a.session.path
        assert f"{path}:{f.anchor.line}" in text, "the finding names the source file:line"
        # the timeline marks the finding in place, linking back
        ev = page.by_id(f"event-{f.anchor.index}")
        assert any(b.attrs.get("href") == f"#finding-{el.attrs['id'].split('-')[1]}" for b in ev.find_all("a"))


@pytest.mark.parametrize("name", ids(SEED_FILES))
def test_timeline_has_every_event_once_and_folds_outputs(name: str) -> None:
    a, page = seed(name)
    events = [e for e in page.by_id("timeline-list").children if e.tag == "article"]
    assert [e.attrs["id"] for e in events] == [f"event-{i}" for i in range(len(a.session.events))]
    assert page.by_id("timeline-list").attrs["data-events"] == str(len(a.session.events))
    with_output = [ev for ev in a.session.events if getattr(ev, "output", None)]
    folded = [d for d in page.by_id("timeline").find_all("details") if d.has_class("output")]
    assert len(folded) == len(with_output)
    assert all("open" not in d.attrs for d in folded)


@pytest.mark.parametrize("name", ids(SEED_FILES))
def test_swimlane_has_one_lane_per_instance_and_linked_markers(name: str) -> None:
    a, page = seed(name)
    svg = next(e for e in page.by_id("lifecycle").iter() if e.tag == "svg")
    lanes = [g for g in svg.find_all("g") if g.has_class("instance")]
    assert [g.attrs["data-lane"] for g in lanes] == list(a.world.instances)
    for g, inst in zip(lanes, a.world.instances.values(), strict=True):
        markers = [x for x in g.find_all("a")]
        assert markers, "each lane has segments and markers"
        assert all(x.find_all("title") for x in markers), "each marker has a tooltip"
        targets = {x.attrs["href"] for x in markers}
        assert {f"#event-{e}" for e in inst.launches} <= targets
        assert {x.attrs["class"].split()[-1] for x in g.find_all("rect") if x.has_class("seg")} == {
            ch.state for ch in inst.history} - _zero_width(inst)
    user = [g for g in svg.find_all("g") if g.attrs.get("data-lane") == "user"]
    prompts = [e.index for e in a.session.events if e.kind == "user" and e.origin == "prompt"]
    assert [int(x.attrs["data-event"]) for x in user[0].find_all("a")] == prompts


def _zero_width(inst: object) -> set[str]:
    """States that only last for no time at all (stopped and relaunched in the same event)."""
    hist = inst.history  # type: ignore[attr-defined]
    shown = set()
    for k, ch in enumerate(hist):
        nxt = hist[k + 1] if k + 1 < len(hist) else None
        if nxt is None or nxt.event != ch.event:
            shown.add(ch.state)
    return {ch.state for ch in hist} - shown


def test_002_highlights_what_the_kill_patterns_match() -> None:
    _, page = seed("002-restart-30001-teardown.session.yaml")
    finding = next(e for e in page.by_id("findings").iter() if e.tag == "article" and e.attrs["data-rule"] == "over-broad-kill")
    anchor = next(li for li in finding.find_all("li") if li.attrs.get("data-role") == "anchor")
    cmd = next(p for p in anchor.find_all("pre") if p.has_class("cmd"))
    hits = [m.all_text for m in cmd.find_all("mark") if m.has_class("hit")]
    assert hits == ["pkill -9 -f launch_router", "launch_server.*disaggregation", "launch_server.*3000[01]"]
    # in each victim's command line, the part the pattern matched
    subjects = [" ".join(m.all_text.split()) for m in anchor.find_all("mark") if m.has_class("hit")]
    assert any(s.startswith("launch_server") and s.endswith("--port 30000") for s in subjects)
    assert any(s.startswith("launch_server") and s.endswith("--port 30001") for s in subjects)
    relaunch = [r for r in anchor.find_all("tr") if r.has_class("role-relaunch")]
    assert len(relaunch) == 1 and "--host 0.0.0.0 --port 30001" in relaunch[0].all_text
    # the output line that shows the failure
    fails = [" ".join(m.all_text.split()) for m in anchor.find_all("mark") if m.has_class("fail")]
    assert fails == ["bash: line 1: 148137 Killed nohup bash /root/serve_dsv4_final.sh > /root/dsv4_final.log 2>&1"]
    # the shell the pattern also hits is named
    assert "the remote shell on 10.1.230.181 running this command" in anchor.all_text


def test_a_kill_that_hits_nothing_the_session_started_says_so(tmp_path: Path) -> None:
    p = tmp_path / "s.session.yaml"
    p.write_text("events:\n  - bash: pkill -9 zsh\n", encoding="utf-8")
    analysis = analyze(p)
    assert [f.rule for f in analysis.findings] == ["over-broad-kill"]
    finding = parse(render_html(analysis)).by_id("findings")
    (kills,) = [d for d in finding.find_all("div") if d.has_class("kills")]
    text = " ".join(kills.all_text.split())
    assert "pkill -9 zsh hits none of the processes this session started or ran in" in text
    assert not kills.find_all("table") and "hits 0 processes" not in text


def test_002_impact_durations() -> None:
    _, page = seed("002-restart-30001-teardown.session.yaml")
    rows = {r.attrs["data-instance"]: r for r in page.by_id("impact").find_all("tr") if "data-instance" in r.attrs}
    router = " ".join(rows["10.1.230.181:8000"].all_text.split())
    assert "13:32:26" in router and "pkill -9 -f launch_router" in router
    assert "still down at the end of the log" in router and "16 min+" in router
    prefill = " ".join(rows["10.1.230.181:30000"].all_text.split())
    assert "16 min+" in prefill
    # the requested restart of :30001 is shown as requested, with its length
    decode = [" ".join(r.all_text.split()) for r in page.by_id("impact").find_all("tr")
              if r.attrs.get("data-instance") == "10.1.230.181:30001"]
    assert any("requested by the user" in d and "4 min 32 s" in d for d in decode)
    outages = [td.attrs["data-outage"] for td in page.by_id("impact").find_all("td") if "data-outage" in td.attrs]
    assert outages.count("unplanned") == 2 and outages.count("requested") == 2


def test_000_impact_runs_from_the_kill_to_the_next_ready() -> None:
    _, page = seed("000-kill-after-ready.session.yaml")
    text = page.section_text("impact")
    assert "02:48:58" in text and "02:51:12" in text and "2 min 14 s" in text
    # the JSONL twin knows when the health-check loop returned: the real outage
    twin = parse(render_html(analyze(SEEDS / "000-kill-after-ready.jsonl")))
    assert "02:57:03" in twin.section_text("impact") and "8 min 6 s" in twin.section_text("impact")


def test_summary_sentences_tell_what_went_wrong() -> None:
    s000 = seed("000-kill-after-ready.session.yaml")[1].section_text("summary")
    assert "At 02:48 the agent killed the sglang server on 10.1.230.174:30000" in s000
    assert "18 s after the user said it was ready (“Ready”)" in s000
    s001 = seed("001-relaunch-after-ready.session.yaml")[1].section_text("summary")
    assert "launched the sglang server on 10.1.230.174:30000 again" in s001
    assert "the duplicate was killed at once" in s001 and "(“Ready”)" in s001
    assert "No the first launch already worked, it's still ready" in s001
    s002 = seed("002-restart-30001-teardown.session.yaml")[1].section_text("summary")
    assert "launch_server.*3000[01] matches the new server launched in the same command" in s002
    assert "also stopped the sglang router on 10.1.230.181:8000 and the sglang server on 10.1.230.181:30000" in s002
    assert "Both were still down at the end of the log" in s002
    assert "the agent reported it worked" in s002
    s004 = seed("004-restart-sglang-systemd.session.yaml")[1].section_text("summary")
    assert "No rule found a coordination failure" in s004


def test_summary_sentences_for_servers_the_session_did_not_start() -> None:
    # docker could not publish :8080 (tgi-old, which no command here ran, holds it); the agent then
    # removes tgi-old while the user only asked to bring TGI up
    page = parse(render_html(analyze(ROOT / "fixtures" / "codex" / "rollout-shell-command-tgi.jsonl")))
    text = " ".join(page.section_text("summary").split())
    assert "the agent launched the container tgi on local:8080, whose port a server this session did not " \
           "start already held" in text
    assert "launched the container tgi on local:8080 again" not in text  # its first launch
    assert "the agent stopped the container tgi-old from before the log on local:8080, which this session " \
           "did not start (as the log shows at 16:20); no instruction asked for it." in text
    assert "The user asked to restart" not in text  # nobody asked for a restart


def test_summary_counts_and_facts() -> None:
    a, page = seed("002-restart-30001-teardown.session.yaml")
    text = page.section_text("summary")
    assert "claude-opus-4-6" in text and "10.1.230.181" in text and "46 min" in text
    cards = {e.attrs["data-count"]: e.children[0].all_text for e in page.by_id("summary").find_all("div")
             if "data-count" in e.attrs}
    assert cards == {"events": str(len(a.session.events)), "tools": str(len(a.session.tools())),
                     "instances": str(len(a.world.instances))}
    sev = {e.attrs["data-sev"]: e.all_text for e in page.by_id("summary").find_all("span") if "data-sev" in e.attrs}
    assert sev == {"high": "2 high", "medium": "1 medium", "low": "0 low"}


def test_findings_say_how_to_avoid_them() -> None:
    _, page = seed("000-kill-after-ready.session.yaml")
    text = page.section_text("findings")
    assert "How to avoid it" in text and "Before killing, check whether the user has called the server ready" in text
    assert "Why is this bad" in text


def test_appendix_lists_instances_rules_and_world_notes() -> None:
    a, page = seed("002-restart-30001-teardown.session.yaml")
    table = page.by_id("instances-table")
    rows = [r for r in table.find_all("tr") if "data-instance" in r.attrs]
    assert [r.attrs["data-instance"] for r in rows] == list(a.world.instances)
    assert "30001" in rows[1].all_text and "ready" in rows[1].all_text
    text = page.section_text("appendix")
    for rule in ("kill-after-ready", "over-broad-kill", "duplicate-launch"):
        assert rule in text
    assert "stable" in text and "0.1.0" in text
    assert "the output shows commands after it ran" in text  # the model disagreement at event 9
