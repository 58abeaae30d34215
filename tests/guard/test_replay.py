"""The guard, fed each session command by command as its hooks would see it (no output yet), blocks
exactly where ``check`` reports over-broad-kill, kill-after-ready or duplicate-launch on that command,
and allows every other command."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from analyzer.events import ToolEvent
from analyzer.guard.judge import guard_analyzer
from analyzer.guard.replay import replay
from analyzer.ingest import FORMATS, IngestError, detect, load
from analyzer.lifecycle.facts import ModelDisagreement
from analyzer.pipeline import Analyzer
from tests.conftest import CORPUS
from tests.guard.conftest import SEEDS


@pytest.fixture(scope="module")
def analyzer() -> Analyzer:
    return guard_analyzer()


def _compare(path: Path, analyzer: Analyzer) -> tuple[dict[int, set[str]], dict[int, set[str]], int]:
    """(check's rules on each shell command, the rules behind each of the guard's blocks, commands
    judged). What ``check`` learns only from the command's own output is left out, as no pre-tool
    hook can see that output: an over-broad-kill its output contradicted (its shell survived its
    pattern), a duplicate-launch known from its output alone (the port was taken, ``collided``) or
    from later output (a compose ``up`` whose containers, as a later ``ps`` shows, publish the port
    of a server still answering: ``ports``)."""
    session = load(path)
    analysis = analyzer.analyze_session(session)
    shell = {e.index for e in session.events if isinstance(e, ToolEvent) and e.command is not None}
    expected: dict[int, set[str]] = {}
    for f in analysis.findings:
        if f.rule == "duplicate-launch" and (f.details.get("collided") or f.details.get("ports")):
            continue
        if f.anchor.index in shell:
            expected.setdefault(f.anchor.index, set()).add(f.rule)
    verdicts = list(replay(session, analyzer))
    assert not [v.error for _, v in verdicts if v.error]
    observed = {f.event for f in analysis.world.facts_of(ModelDisagreement) if f.instance is None}
    blocked: dict[int, set[str]] = {}
    for i, v in verdicts:
        rules = {r for r in v.rules if not (r == "over-broad-kill" and i in observed
                                            and r not in expected.get(i, set()))}
        if v.blocks and rules:
            blocked[i] = rules
    return expected, blocked, len(verdicts)


@pytest.mark.parametrize("seed", sorted(p.name for p in SEEDS.glob("*.jsonl")))
def test_seed_replay_blocks_exactly_where_check_reports(seed: str, analyzer: Analyzer) -> None:
    expected, blocked, commands = _compare(SEEDS / seed, analyzer)
    assert blocked == expected
    assert commands > len(blocked)  # the other commands were judged and allowed


def test_seed_incidents_are_blocked_and_the_requested_restart_is_not(analyzer: Analyzer) -> None:
    """Which rule names each incident is ``check``'s business (the parametrized test compares them);
    here only that the incidents are stopped and the negative control is not."""
    found = {seed: _compare(SEEDS / f"{seed}.jsonl", analyzer)[1] for seed in
             ("000-kill-after-ready", "001-relaunch-after-ready", "002-restart-30001-teardown",
              "004-restart-sglang-systemd")}
    assert all(found[seed] for seed in ("000-kill-after-ready", "001-relaunch-after-ready",
                                        "002-restart-30001-teardown"))
    assert found["004-restart-sglang-systemd"] == {}  # a restart the user asked for


def _labelled() -> list[str]:
    if not (CORPUS / "labels.yaml").is_file():
        return []
    files = []
    for item in yaml.safe_load((CORPUS / "labels.yaml").read_text("utf-8")):
        try:
            fmt, _ = detect(CORPUS / item["file"])
        except IngestError:
            continue  # a format the analyzer does not read
        if fmt in FORMATS.values():
            files.append(item["file"])
    return files


@pytest.mark.corpus
@pytest.mark.parametrize("rel", _labelled() or ["(no corpus)"])
def test_corpus_replay_blocks_exactly_where_check_reports(rel: str, corpus: Path, analyzer: Analyzer) -> None:
    expected, blocked, _ = _compare(corpus / rel, analyzer)
    assert {i: r for i, r in blocked.items() if i not in expected} == {}, "false blocks"
    assert blocked == expected
