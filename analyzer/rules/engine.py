"""Running rules over a world: selection, options, suppression and baselines."""

from __future__ import annotations

import difflib
import json
import re
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from analyzer.config import Config
from analyzer.events import ToolEvent
from analyzer.lifecycle.world import World
from analyzer.rules.api import Finding, Rule, Severity
from analyzer.rules.loader import RuleSet

_SUPPRESS = re.compile(r"#\s*analyzer:\s*ignore\[([^\]]*)\]\s*(.*)$", re.M)


class SelectionError(ValueError):
    """A rule or group name in --select/--ignore/config is unknown."""


def did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def select_rules(ruleset: RuleSet, config: Config | None = None, select: list[str] | None = None,
                 ignore: list[str] | None = None) -> list[Rule]:
    """Instantiate the selected rules with their options and severity overrides."""
    config = config or Config()
    names = list(ruleset.rules)
    groups = {g for r in ruleset.rules.values() for g in r.cls.groups}
    wanted = list(select or config.select)
    unwanted = list(ignore or []) + list(config.ignore)
    for token in wanted + unwanted + list(config.severity) + list(config.options):
        if token not in names and token not in groups and token != "all":
            raise SelectionError(f"unknown rule or group {token!r}{did_you_mean(token, names + sorted(groups))}")

    def hit(tokens: list[str], lr_name: str, lr_groups: tuple[str, ...]) -> bool:
        return any(t == "all" or t == lr_name or t in lr_groups for t in tokens)

    rules: list[Rule] = []
    for name, lr in ruleset.rules.items():
        if wanted and not hit(wanted, name, lr.cls.groups):
            continue
        if hit(unwanted, name, lr.cls.groups):
            continue
        sev = config.severity.get(name)
        try:
            rules.append(lr.cls(options=config.options.get(name), severity=Severity(sev) if sev else None))
        except Exception as exc:
            raise SelectionError(f"rule {name!r}: bad options or severity in config: {exc}") from exc
    return rules


@dataclass
class Suppression:
    event: int
    rules: list[str]
    reason: str


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[tuple[Finding, str]] = field(default_factory=list)
    """Findings silenced, with why (inline comment, baseline)."""
    problems: list[str] = field(default_factory=list)
    """Rule crashes and bad suppression comments: reported, never fatal."""


def inline_suppressions(world: World, known: set[str]) -> tuple[dict[int, Suppression], list[str]]:
    """``# analyzer: ignore[rule-a,rule-b] reason`` in a shell command silences those rules on that
    tool call only. A reason is required; unknown rule names are errors."""
    found: dict[int, Suppression] = {}
    problems: list[str] = []
    for ev in world.session.events:
        if not isinstance(ev, ToolEvent) or not ev.command or "analyzer:" not in ev.command:
            continue
        for m in _SUPPRESS.finditer(ev.command):
            names = [n.strip() for n in m.group(1).split(",") if n.strip()]
            reason = m.group(2).strip()
            where = f"{ev.source or world.session.path}:{ev.line}"
            bad = [n for n in names if n not in known]
            if bad:
                problems.append(f"{where}: unknown rule in suppression: " + ", ".join(
                    f"{n!r}{did_you_mean(n, sorted(known))}" for n in bad))
            if not reason:
                problems.append(f"{where}: suppression of {', '.join(names)} needs a reason "
                                f"(# analyzer: ignore[{','.join(names)}] why)")
                continue
            good = [n for n in names if n in known]
            if good:
                found[ev.index] = Suppression(ev.index, good, reason)
    return found, problems


def run_rules(world: World, rules: list[Rule], known: set[str] | None = None) -> RunResult:
    """Every rule over ``world``; a crashing rule is reported and the others still run."""
    result = RunResult()
    sup, problems = inline_suppressions(world, known or {r.name for r in rules})
    result.problems += problems
    for rule in rules:
        try:
            found = list(rule.check(world))
        except Exception as exc:
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            result.problems.append(f"rule {rule.name!r} crashed on {world.session.path}: "
                                   f"{type(exc).__name__}: {exc} ({Path(tb.filename).name}:{tb.lineno})")
            continue
        for f in found:
            s = sup.get(f.anchor.index)
            if s and f.rule in s.rules:
                result.suppressed.append((f, f"inline: {s.reason}"))
            else:
                result.findings.append(f)
    result.findings.sort(key=lambda f: (-f.severity.rank, f.anchor.index, f.rule))
    return result


# -- baselines ---------------------------------------------------------------------------------

def write_baseline(path: Path, findings: list[Finding]) -> None:
    counts = Counter(f.fingerprint for f in findings)
    rules = {f.fingerprint: f.rule for f in findings}
    doc = {"version": 1, "findings": {fp: {"rule": rules[fp], "count": n} for fp, n in sorted(counts.items())}}
    path.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")


def apply_baseline(path: Path, findings: list[Finding]) -> tuple[list[Finding], list[Finding], list[str]]:
    """(new findings, baselined ones, stale baseline entries)."""
    doc = json.loads(path.read_text("utf-8"))
    budget = {fp: int(v.get("count", 1)) for fp, v in doc.get("findings", {}).items()}
    left = dict(budget)
    new, known = [], []
    for f in findings:
        if left.get(f.fingerprint, 0) > 0:
            left[f.fingerprint] -= 1
            known.append(f)
        else:
            new.append(f)
    stale = [f"{fp} ({doc['findings'][fp].get('rule', '?')}): {n} of {budget[fp]} not seen"
             for fp, n in left.items() if n > 0]
    return new, known, stale
