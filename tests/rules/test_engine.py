"""The engine: selection by rule and group, severity overrides and options from config, inline
suppressions, baselines, and a crashing rule that does not stop the others."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from analyzer.config import Config
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import World
from analyzer.rules import Finding, Rule, Severity
from analyzer.rules.engine import (
    BaselineError,
    SelectionError,
    apply_baseline,
    run_rules,
    select_rules,
    write_baseline,
)
from analyzer.rules.loader import RuleSet, load_rules

ALL = ["duplicate-launch", "ignored-failure", "kill-after-ready", "over-broad-kill", "unrequested-teardown",
       "user-correction"]


@pytest.fixture(scope="module")
def ruleset() -> RuleSet:
    return load_rules(entry_point_packs=False)


def names(rules: list[Rule]) -> list[str]:
    return sorted(r.name for r in rules)


@pytest.mark.parametrize(("select", "ignore", "expected"), [
    (None, None, ALL),
    (["kill-after-ready"], None, ["kill-after-ready"]),
    (["coordination"], None, ["kill-after-ready", "unrequested-teardown", "user-correction"]),
    (["shell", "user-correction"], None, ["over-broad-kill", "user-correction"]),
    (None, ["lifecycle"], ["user-correction"]),
    (["lifecycle"], ["over-broad-kill", "ignored-failure"], ["duplicate-launch", "kill-after-ready",
                                                             "unrequested-teardown"]),
    (["all"], ["coordination"], ["duplicate-launch", "ignored-failure", "over-broad-kill"]),
])
def test_select_and_ignore_by_rule_and_group(ruleset: RuleSet, select: list[str] | None,
                                             ignore: list[str] | None, expected: list[str]) -> None:
    assert names(select_rules(ruleset, Config(), select, ignore)) == expected


def test_command_line_select_replaces_config_select_and_ignores_add_up(ruleset: RuleSet) -> None:
    config = Config(select=["coordination"], ignore=["user-correction"])
    assert names(select_rules(ruleset, config)) == ["kill-after-ready", "unrequested-teardown"]
    assert names(select_rules(ruleset, config, select=["shell"])) == ["over-broad-kill"]
    assert names(select_rules(ruleset, config, ignore=["kill-after-ready"])) == ["unrequested-teardown"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"select": ["kill-after-raedy"]}, "--select: unknown rule or group 'kill-after-raedy' "
                                       "(did you mean 'kill-after-ready'?)"),
    ({"ignore": ["lifecycel"]}, "--ignore: unknown rule or group 'lifecycel' (did you mean 'lifecycle'?)"),
    ({"config": Config(severity={"duplicate-lunch": "low"}, source="pyproject.toml")},
     "pyproject.toml: severity: unknown rule or group 'duplicate-lunch' (did you mean 'duplicate-launch'?)"),
    ({"config": Config(options={"lifecycle": {}})}, "config: options: unknown rule 'lifecycle'"),
    ({"config": Config(options={"over-broad-kill": {"flag_generics": False}})},
     "config: rule 'over-broad-kill': bad options or severity: flag_generics: Extra inputs are not permitted"),
])
def test_unknown_names_and_bad_options_are_errors(ruleset: RuleSet, kwargs: dict[str, object], message: str) -> None:
    config = kwargs.pop("config", Config())
    with pytest.raises(SelectionError) as err:
        select_rules(ruleset, config, **kwargs)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_severity_overrides_by_rule_and_group_and_options(ruleset: RuleSet) -> None:
    config = Config(severity={"coordination": "low", "unrequested-teardown": "medium"},
                    options={"over-broad-kill": {"flag_generic": False}})
    rules = {r.name: r for r in select_rules(ruleset, config)}
    assert rules["kill-after-ready"].effective_severity is Severity.low  # by group
    assert rules["unrequested-teardown"].effective_severity is Severity.medium  # the rule's own wins
    assert rules["over-broad-kill"].effective_severity is Severity.high  # untouched
    assert rules["over-broad-kill"].options.flag_generic is False  # type: ignore[attr-defined]


# -- running, suppression --------------------------------------------------------------------------

def world_of(tmp_path: Path, text: str) -> World:
    p = tmp_path / "s.session.yaml"
    p.write_text(text, "utf-8")
    return build_world(load(p))


GENERIC_KILLS = """\
events:
  - bash: nohup python -m http.server 8000 > /tmp/h.log 2>&1 &
  - bash: 'pkill -f python{first}'
  - bash: 'killall node{second}'
"""  # quoted: in YAML an unquoted ` #` starts a comment


def run(tmp_path: Path, first: str = "", second: str = "") -> tuple[list[Finding], list[tuple[Finding, str]], list[str]]:
    world = world_of(tmp_path, GENERIC_KILLS.format(first=first, second=second))
    rule = load_rules(entry_point_packs=False).rules["over-broad-kill"].cls()
    result = run_rules(world, [rule], known=set(ALL))
    return result.findings, result.suppressed, result.problems


def test_without_suppression_both_kills_are_findings(tmp_path: Path) -> None:
    found, suppressed, problems = run(tmp_path)
    assert [f.anchor.index for f in found] == [1, 2] and suppressed == [] and problems == []


def test_inline_suppression_silences_that_tool_call_only(tmp_path: Path) -> None:
    found, suppressed, problems = run(tmp_path, "  # analyzer: ignore[over-broad-kill] throwaway VM, nothing else runs")
    assert [f.anchor.index for f in found] == [2]
    assert [(f.anchor.index, why) for f, why in suppressed] == [(1, "inline: throwaway VM, nothing else runs")]
    assert problems == []


def test_inline_suppression_of_another_rule_does_not_silence_this_one(tmp_path: Path) -> None:
    found, suppressed, _ = run(tmp_path, "  # analyzer: ignore[kill-after-ready] it was mine")
    assert [f.anchor.index for f in found] == [1, 2] and suppressed == []


def test_inline_suppression_needs_a_reason(tmp_path: Path) -> None:
    found, suppressed, problems = run(tmp_path, "  # analyzer: ignore[over-broad-kill]")
    assert [f.anchor.index for f in found] == [1, 2] and suppressed == []
    assert problems == [f"{tmp_path / 's.session.yaml'}:3: error: `# analyzer: ignore[over-broad-kill]` needs a "
                        "reason after it (# analyzer: ignore[over-broad-kill] why this is fine)"]


def test_inline_suppression_of_an_unknown_rule_is_an_error(tmp_path: Path) -> None:
    found, suppressed, problems = run(tmp_path, second="  # analyzer: ignore[over-broad-kil] node is only ours")
    assert [f.anchor.index for f in found] == [1, 2] and suppressed == []
    assert problems == [f"{tmp_path / 's.session.yaml'}:4: error: unknown rule in `# analyzer: ignore[…]`: "
                        "'over-broad-kil' (did you mean 'over-broad-kill'?)"]


def test_a_crashing_rule_is_reported_and_the_others_still_run(tmp_path: Path) -> None:
    class Crashes(Rule):
        name = "crashes"

        def check(self, world: World) -> Iterable[Finding]:
            raise KeyError("boom")

    world = world_of(tmp_path, GENERIC_KILLS.format(first="", second=""))
    good = load_rules(entry_point_packs=False).rules["over-broad-kill"].cls()
    result = run_rules(world, [Crashes(), good])
    assert [f.rule for f in result.findings] == ["over-broad-kill", "over-broad-kill"]
    [problem] = result.problems
    assert problem.startswith(f"rule 'crashes' crashed on {tmp_path / 's.session.yaml'}: KeyError: 'boom' (test_engine.py:")


# -- baselines -----------------------------------------------------------------------------------

def test_baseline_counts_fingerprints_and_reports_stale_entries(tmp_path: Path) -> None:
    found, _, _ = run(tmp_path)
    baseline = tmp_path / "baseline.json"
    write_baseline(baseline, found + found[:1])  # the first one accepted twice
    doc = json.loads(baseline.read_text())
    assert {v["count"] for v in doc["findings"].values()} == {1, 2}
    assert {v["rule"] for v in doc["findings"].values()} == {"over-broad-kill"}

    new, known, stale = apply_baseline(baseline, found)
    assert (new, len(known)) == ([], 2)
    assert stale == [f"{found[0].fingerprint} (over-broad-kill): 1 of 2 no longer found"]

    new, known, stale = apply_baseline(baseline, found + found + found)  # the second one once too many
    assert [f.anchor.index for f in new] == [2, 1, 2] and len(known) == 3 and stale == []


def test_a_broken_baseline_file_is_an_error_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("{not json", "utf-8")
    with pytest.raises(BaselineError, match=rf"^{bad}: not a baseline file"):
        apply_baseline(bad, [])
