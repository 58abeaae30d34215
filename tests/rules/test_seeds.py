"""The built-in pack on the four seed write-ups (DESIGN.md "The problem"), through the same
command a user runs: exactly these findings, anchored at these events, in both the hand-written
``*.session.yaml`` and its Claude Code ``.jsonl`` twin."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"

# seed -> {(rule, anchor event index): a piece of the anchor event's text, to show it is that event}
EXPECTED: dict[str, dict[tuple[str, int], str]] = {
    "000-kill-after-ready": {
        ("kill-after-ready", 8): "kill $(pgrep -f sglang.launch_server)",
    },
    "001-relaunch-after-ready": {
        ("duplicate-launch", 14): "--mamba-scheduler-strategy extra_buffer",  # the relaunch after "Ready"
        ("ignored-failure", 14): "--mamba-scheduler-strategy extra_buffer",  # its Killed, unremarked
        ("user-correction", 15): "No the first launch already worked",
    },
    "002-restart-30001-teardown": {
        ("over-broad-kill", 9): "pkill -9 -f launch_router",
        ("unrequested-teardown", 9): "pkill -9 -f launch_router",
        ("ignored-failure", 9): "pkill -9 -f launch_router",  # the relaunch's Killed line
    },
    "004-restart-sglang-systemd": {},  # the negative control: a requested `systemctl start`
}


def _check_json(*paths: str) -> dict[str, dict[str, object]]:
    result = CliRunner().invoke(main, ["check", "--format", "json", *paths])
    assert result.exit_code in (0, 1), result.output
    return {s["path"]: s for s in json.loads(result.stdout)["sessions"]}


@pytest.mark.parametrize("suffix", [".session.yaml", ".jsonl"])
@pytest.mark.parametrize("seed", sorted(EXPECTED))
def test_seed_findings_are_exactly_these(seed: str, suffix: str) -> None:
    path = str(SEEDS / f"{seed}{suffix}")
    session = _check_json(path)[path]
    found = {(f["rule"], f["anchor"]["index"]) for f in session["findings"]}  # type: ignore[union-attr]
    assert found == set(EXPECTED[seed])


@pytest.mark.parametrize("suffix", [".session.yaml", ".jsonl"])
@pytest.mark.parametrize("seed", sorted(s for s in EXPECTED if EXPECTED[s]))
def test_seed_anchor_events_are_the_ones_the_write_up_names(seed: str, suffix: str) -> None:
    from analyzer.ingest import load

    session = load(SEEDS / f"{seed}{suffix}")
    for (_, index), words in EXPECTED[seed].items():
        ev = session.events[index]
        assert words in (getattr(ev, "command", None) or getattr(ev, "text", ""))


def test_check_over_the_seed_folder_exits_1_with_every_finding_once() -> None:
    result = CliRunner().invoke(main, ["check", str(SEEDS)])
    assert result.exit_code == 1
    lines = [ln for ln in result.stdout.splitlines() if not ln.startswith(" ")]
    assert lines[-1] == "14 finding(s) in 8 session(s)"
    heads = sorted(ln.split(": ", 1)[1].split(" ", 2)[:2][1] for ln in lines[:-1])
    per_twin = sorted(r for rules in EXPECTED.values() for r, _ in rules)
    assert heads == sorted(per_twin * 2)


def test_the_jsonl_twin_has_the_same_fingerprints() -> None:
    a = str(SEEDS / "001-relaunch-after-ready.session.yaml")
    b = str(SEEDS / "001-relaunch-after-ready.jsonl")
    sessions = _check_json(a, b)
    prints = [sorted(f["fingerprint"] for f in sessions[p]["findings"]) for p in (a, b)]  # type: ignore[union-attr]
    assert prints[0] == prints[1]
    assert len(set(prints[0])) == 3
