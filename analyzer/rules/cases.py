"""Rule cases: small sessions in the fixture format beside each rule, with markers saying where
the rule must fire (``expect``) and must not (``ok``). The same runner serves ``analyzer rules
test``, the project's test suite, and any rule pack in another repository (``analyzer.rules.testing``).

A cases file (``rules/<name>.cases.yaml``):

```yaml
rule: kill-after-ready            # optional; defaults to the file name
cases:
  - name: kills the server the user called ready
    example: true                 # shown by `analyzer rules explain`
    agent: claude-code            # any key of the session fixture format
    options: {}                   # the rule's options for this case (default: its defaults)
    events:
      - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
      - user: Ready
      - bash: pkill -f uvicorn
        expect: kill-after-ready
```

Outcomes per marker: ``expect`` found = TP, missing = FN (fails); a finding of the rule on an
event not marked ``expect`` = FP (fails); ``todo-expect``/``todo-ok`` are known gaps, reported but
never failing. A case that marks nothing for the rule under test fails too (a misspelt marker
would otherwise test nothing), and so does a file without at least one ``expect`` and one ``ok``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analyzer.events import Session
from analyzer.ingest.base import IngestError
from analyzer.ingest.fixture import read_yaml, session_from_node
from analyzer.lifecycle.build import build_world
from analyzer.rules.api import Finding, Rule
from analyzer.rules.engine import run_rules


@dataclass
class Case:
    name: str
    line: int
    session: Session
    example: bool = False
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class CaseFailure:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class CaseReport:
    rule: str
    file: str
    cases: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    todo: list[str] = field(default_factory=list)
    failures: list[CaseFailure] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures


def read_cases(path: Path) -> tuple[str, list[Case]]:
    """The rule name and the cases of a cases file. Raises ``IngestError`` naming file and line."""
    root, doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("cases"), list):
        raise IngestError(path, "a rule-cases file needs a top-level `cases:` list")
    rule = str(doc.get("rule") or path.name.removesuffix(".cases.yaml"))
    nodes = _case_nodes(root)
    cases: list[Case] = []
    for i, (node, data) in enumerate(zip(nodes, doc["cases"], strict=False)):
        line = node.start_mark.line + 1
        if not isinstance(data, dict) or not isinstance(data.get("events"), list):
            raise IngestError(path, f"case {i + 1} needs an `events:` list", line=line)
        session = session_from_node(path, node, data)
        if session.diagnostics:
            d = session.diagnostics[0]
            raise IngestError(path, d.message, line=d.line)
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise IngestError(path, f"case {i + 1}: `options:` must be a mapping", line=line)
        cases.append(Case(name=str(data.get("name", f"case {i + 1}")), line=line, session=session,
                          example=bool(data.get("example", False)), options=options))
    return rule, cases


def _case_nodes(root: yaml.Node | None) -> list[yaml.Node]:
    if isinstance(root, yaml.MappingNode):
        for key, val in root.value:
            if getattr(key, "value", None) == "cases" and isinstance(val, yaml.SequenceNode):
                return list(val.value)
    return []


def findings_for(rule: Rule, session: Session) -> list[Finding]:
    world = build_world(session)
    return run_rules(world, [rule], known={rule.name}).findings


def run_cases(rule_cls: type[Rule], path: Path, options: dict[str, Any] | None = None,
              require_both: bool = True) -> CaseReport:
    """Run one rule over its cases file and compare with the markers. Every failure is kept,
    with the case file and the line of the event (or case) it is about."""
    report = CaseReport(rule=rule_cls.name, file=str(path))
    try:
        declared, cases = read_cases(path)
    except IngestError as exc:
        report.failures.append(CaseFailure(str(path), exc.line or 1, exc.reason))
        return report
    name = rule_cls.name
    if declared != name:
        report.failures.append(CaseFailure(str(path), 1, f"the file is for rule {declared!r}, not {name!r}"))
    fires = quiet = False
    for case in cases:
        report.cases += 1
        marks = [e.marks for e in case.session.events]
        if not any(name in (*m.expect, *m.ok, *m.todo_expect, *m.todo_ok) for m in marks):
            report.failures.append(CaseFailure(str(path), case.line, f"{case.name}: no event is marked "
                                           f"expect/ok/todo-expect/todo-ok for {name}"))
        fires = fires or any(name in m.expect for m in marks)
        quiet = quiet or any(name in m.ok for m in marks)
        try:
            rule = rule_cls(options={**(options or {}), **case.options})
            found = findings_for(rule, case.session)
        except Exception as exc:
            report.failures.append(CaseFailure(str(path), case.line, f"{case.name}: the rule crashed: "
                                                                 f"{type(exc).__name__}: {exc}"))
            continue
        _compare(report, path, case, name, found)
    if require_both and cases:
        if not fires:
            report.failures.append(CaseFailure(str(path), 1, f"no case where {name} must fire (`expect: {name}`)"))
        if not quiet:
            report.failures.append(CaseFailure(str(path), 1, f"no case where {name} must stay quiet (`ok: {name}`)"))
    return report


def _compare(report: CaseReport, path: Path, case: Case, name: str, found: list[Finding]) -> None:
    hits: dict[int, list[Finding]] = {}
    for f in found:
        hits.setdefault(f.anchor.index, []).append(f)
    for ev in case.session.events:
        marks = ev.marks
        fired = ev.index in hits
        line = ev.line or case.line
        if name in marks.expect:
            if fired:
                report.tp += 1
            else:
                report.fn += 1
                report.failures.append(CaseFailure(str(path), line, f"{case.name}: expected {name} here; it did not fire"))
        elif name in marks.todo_expect:
            if fired:
                report.todo.append(f"{path}:{line}: {case.name}: todo-expect now fires: mark it expect")
                report.tp += 1
            else:
                report.todo.append(f"{path}:{line}: {case.name}: known gap: should fire")
        elif fired and name in marks.todo_ok:
            report.todo.append(f"{path}:{line}: {case.name}: known false positive still fires")
        elif fired:
            report.fp += 1
            why = "marked ok" if name in marks.ok else "not marked expect"
            msg = hits[ev.index][0].message
            report.failures.append(CaseFailure(str(path), line, f"{case.name}: {name} fired here ({why}): {msg}"))
        elif name in marks.todo_ok:
            report.todo.append(f"{path}:{line}: {case.name}: todo-ok no longer fires: mark it ok")
