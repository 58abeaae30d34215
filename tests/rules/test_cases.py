"""Rule cases: the built-in pack's cases pass (one pytest per rule, through the public helper a
rule pack in another repository uses), and the runner reports every kind of failure with its
file and line without stopping at the first."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.rules.cases import read_cases, run_cases
from analyzer.rules.loader import LoadedRule, load_rules
from analyzer.rules.testing import assert_rule_cases, check_rule_cases, rule_case_params


@pytest.mark.parametrize("rule", rule_case_params())
def test_rule_cases(rule: LoadedRule) -> None:
    assert_rule_cases(rule)


@pytest.mark.parametrize("rule", rule_case_params())
def test_every_builtin_rule_has_three_firing_and_three_quiet_cases(rule: LoadedRule) -> None:
    _, cases = read_cases(rule.cases_file)
    name = rule.cls.name
    firing = [c for c in cases if any(name in e.marks.expect for e in c.session.events)]
    quiet = [c for c in cases if any(name in e.marks.ok for e in c.session.events)]
    assert len(firing) >= 3 and len(quiet) >= 3
    assert any(c.example for c in cases), "`analyzer rules explain` shows the cases marked example: true"


def test_rule_case_params_ids_are_rule_names() -> None:
    ids = [p.id for p in rule_case_params()]
    assert ids == sorted(load_rules(entry_point_packs=False).rules)


OVER_BROAD = load_rules(entry_point_packs=False).rules["over-broad-kill"].cls

BAD_CASES = """\
rule: over-broad-kill
cases:
  - name: a missed expectation
    events:
      - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
      - bash: fuser -k 8000/tcp
        expect: over-broad-kill
  - name: fires where marked ok
    events:
      - bash: killall node
        ok: over-broad-kill
  - name: fires where nothing is marked
    events:
      - bash: pkill -9 zsh
      - bash: echo done
        ok: over-broad-kill
  - name: known gap and known false positive
    events:
      - bash: pkill -f python
        todo-ok: over-broad-kill
      - bash: fuser -k 8000/tcp
        todo-expect: over-broad-kill
  - name: marks another rule only
    events:
      - bash: pkill -f python
        expect: over-broad-kil
"""


def test_the_runner_reports_every_failure_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "over-broad-kill.cases.yaml"
    path.write_text(BAD_CASES, "utf-8")
    report = run_cases(OVER_BROAD, path)
    assert (report.cases, report.tp, report.fp, report.fn) == (5, 0, 3, 1)
    assert [str(f) for f in report.failures] == [
        f"{path}:6: a missed expectation: expected over-broad-kill here; it did not fire",
        f"{path}:10: fires where marked ok: over-broad-kill fired here (marked ok): kills more than its target: "
        "every `node` process (`killall node`)",
        f"{path}:14: fires where nothing is marked: over-broad-kill fired here (not marked expect): kills more "
        "than its target: every `zsh` process (`pkill -9 zsh`)",
        f"{path}:23: marks another rule only: no event is marked expect/ok/todo-expect/todo-ok for over-broad-kill",
        f"{path}:25: marks another rule only: over-broad-kill fired here (not marked expect): kills more than its "
        "target: every `python` process (`pkill -f python`)",
    ]
    assert report.todo == [f"{path}:19: known gap and known false positive: known false positive still fires",
                           f"{path}:21: known gap and known false positive: known gap: should fire"]


def test_a_file_needs_a_firing_and_a_quiet_case(tmp_path: Path) -> None:
    path = tmp_path / "over-broad-kill.cases.yaml"
    path.write_text("cases:\n  - name: only firing\n    events:\n      - bash: killall node\n"
                    "        expect: over-broad-kill\n", "utf-8")
    report = run_cases(OVER_BROAD, path)
    assert [str(f) for f in report.failures] == [
        f"{path}:1: no case where over-broad-kill must stay quiet (`ok: over-broad-kill`)"]


def test_case_options_reach_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "over-broad-kill.cases.yaml"
    path.write_text("""\
cases:
  - name: generic kills flagged by default
    events:
      - bash: killall node
        expect: over-broad-kill
  - name: not when flag_generic is off
    options: {flag_generic: false}
    events:
      - bash: killall node
        ok: over-broad-kill
""", "utf-8")
    report = run_cases(OVER_BROAD, path)
    assert report.passed and (report.tp, report.fp) == (1, 0)


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("cases: [\n", 2, "not valid YAML"),
    ("rule: x\n", 1, "a rule-cases file needs a top-level `cases:` list"),
    ("cases:\n  - name: no events\n    bash: ls\n", 2, "case 1 needs an `events:` list"),
    ("cases:\n  - events:\n      - bash: ls\n        user: hi\n", 3, "event needs exactly one of"),
])
def test_a_broken_cases_file_is_one_failure_at_its_line(tmp_path: Path, text: str, line: int, reason: str) -> None:
    path = tmp_path / "over-broad-kill.cases.yaml"
    path.write_text(text, "utf-8")
    [failure] = run_cases(OVER_BROAD, path).failures
    assert (failure.file, failure.line) == (str(path), line)
    assert reason in failure.message


def test_a_rule_without_a_cases_file_fails(tmp_path: Path) -> None:
    lr = LoadedRule(OVER_BROAD, "x", str(tmp_path / "over_broad_kill.py"))
    [failure] = check_rule_cases(lr).failures
    assert failure.message.startswith("no cases file beside")
    with pytest.raises(AssertionError, match="over-broad-kill: 1 failing case"):
        assert_rule_cases(lr)


def test_a_pack_in_another_repository_uses_the_same_helpers(tmp_path: Path) -> None:
    from tests.rules.packs import write_user_pack

    folder = write_user_pack(tmp_path / "their_rules")
    [param] = rule_case_params(folder)
    assert param.id == "launch-without-log"
    report = assert_rule_cases(param.values[0])
    assert (report.tp, report.fp, report.fn) == (1, 0, 0)
    (folder / "half_written.py").write_text("from analyzer.rules import Rule\n\nclass X(Rule):\n    name = 'x'\n",
                                            "utf-8")
    with pytest.raises(AssertionError, match=r"rules failed to load:\n.*half_written.py: rule X: "):
        rule_case_params(folder)
