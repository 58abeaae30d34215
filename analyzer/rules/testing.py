"""Public test helpers for rule authors: run a rule pack's cases from pytest.

In a rule pack's ``tests/test_rules.py``:

```python
from analyzer.rules.testing import rule_case_params, assert_rule_cases

@pytest.mark.parametrize("rule", rule_case_params("my_rules/"))
def test_rule_cases(rule):
    assert_rule_cases(rule)
```

``rule_case_params`` takes a rules folder (or nothing, for the built-in pack) and yields one
parameter per rule with a cases file; ``assert_rule_cases`` fails with every failing case's file
and line, not just the first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analyzer.rules.cases import CaseFailure, CaseReport, run_cases
from analyzer.rules.loader import LoadedRule, RuleSet, load_folder, load_rules


def rules_in(folder: str | Path | None = None) -> RuleSet:
    """The rules of ``folder`` (only it), or the built-in pack when None."""
    if folder is None:
        return load_rules(entry_point_packs=False)
    ruleset = RuleSet()
    load_folder(Path(folder), ruleset, str(folder))
    return ruleset


def rule_case_params(folder: str | Path | None = None) -> list[Any]:
    """pytest parameters, one per rule of ``folder`` (ids are rule names). A rule that fails to
    load fails the collection, with the loader's message."""
    import pytest

    ruleset = rules_in(folder)
    if ruleset.warnings:
        raise AssertionError("rules failed to load:\n" + "\n".join(ruleset.warnings))
    return [pytest.param(lr, id=name) for name, lr in sorted(ruleset.rules.items())]


def check_rule_cases(rule: LoadedRule, require_both: bool = True) -> CaseReport:
    """Run ``rule`` over the cases file beside it. With ``require_both``, a rule needs at least
    one firing (``expect``) and one quiet (``ok``) case."""
    if not rule.cases_file.is_file():
        report = CaseReport(rule=rule.cls.name, file=str(rule.cases_file))
        report.failures.append(CaseFailure(str(rule.cases_file), 1,
                                       f"no cases file beside {rule.file} (`analyzer rules new` writes one)"))
        return report
    return run_cases(rule.cls, rule.cases_file, require_both=require_both)


def assert_rule_cases(rule: LoadedRule, require_both: bool = True) -> CaseReport:
    """Fail with every failing case (``file:line: why``), not just the first."""
    report = check_rule_cases(rule, require_both)
    if report.failures:
        raise AssertionError(f"{rule.cls.name}: {len(report.failures)} failing case(s)\n"
                             + "\n".join(str(f) for f in report.failures))
    return report
