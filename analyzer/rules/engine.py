"""Running rules over a world: selection, options, suppression and baselines."""

from __future__ import annotations

import difflib
import json
import re
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

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
    """Instantiate the selected rules with their options and severity overrides.

    ``select`` (from the command line) replaces the config's ``select``; ``ignore`` adds to the
    config's. Names are rule names, group names or ``all``. A severity override may name a group;
    a rule's own override wins. Unknown names raise ``SelectionError`` with a suggestion."""
    config = config or Config()
    names = list(ruleset.rules)
    groups = sorted({g for r in ruleset.rules.values() for g in r.cls.groups})
    wanted = list(select or config.select)
    unwanted = list(ignore or []) + list(config.ignore)

    def check_known(tokens: list[str], where: str, allow_groups: bool = True) -> None:
        for token in tokens:
            if token in names or token == "all" or (allow_groups and token in groups):
                continue
            pool = names + (groups if allow_groups else [])
            kind = "rule or group" if allow_groups else "rule"
            raise SelectionError(f"{where}: unknown {kind} {token!r}{did_you_mean(token, pool)}")

    check_known(select or [], "--select")
    check_known(ignore or [], "--ignore")
    src = config.source or "config"
    check_known(config.select, f"{src}: select")
    check_known(config.ignore, f"{src}: ignore")
    check_known(list(config.severity), f"{src}: severity")
    check_known(list(config.options), f"{src}: options", allow_groups=False)

    def hit(tokens: list[str], lr_name: str, lr_groups: tuple[str, ...]) -> bool:
        return any(t == "all" or t == lr_name or t in lr_groups for t in tokens)

    rules: list[Rule] = []
    for name, lr in ruleset.rules.items():
        if wanted and not hit(wanted, name, lr.cls.groups):
            continue
        if hit(unwanted, name, lr.cls.groups):
            continue
        sev = config.severity.get(name) or next(
            (config.severity[g] for g in lr.cls.groups if g in config.severity), None) or config.severity.get("all")
        try:
            rules.append(lr.cls(options=config.options.get(name), severity=Severity(sev) if sev else None))
        except (ValidationError, ValueError) as exc:
            raise SelectionError(f"{src}: rule {name!r}: bad options or severity: {_short(exc)}") from exc
    return rules


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
    return str(exc)


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
    tool call only. A reason is required; unknown rule names are errors (reported as
    ``path:line: error: …`` problems, and the finding is not silenced)."""
    found: dict[int, Suppression] = {}
    problems: list[str] = []
    for ev in world.session.events:
        if not isinstance(ev, ToolEvent) or not ev.command or "analyzer:" not in ev.command:
            continue
        for m in _SUPPRESS.finditer(ev.command):
            names = [n.strip() for n in m.group(1).split(",") if n.strip()]
            reason = m.group(2).strip().rstrip("'\"").strip()
            where = f"{ev.source or world.session.path}:{ev.line if ev.line is not None else '#' + str(ev.index)}"
            if not names:
                problems.append(f"{where}: error: `# analyzer: ignore[]` names no rule")
                continue
            bad = [n for n in names if n not in known]
            if bad:
                problems.append(f"{where}: error: unknown rule in `# analyzer: ignore[…]`: " + ", ".join(
                    f"{n!r}{did_you_mean(n, sorted(known))}" for n in bad))
            if not reason:
                problems.append(f"{where}: error: `# analyzer: ignore[{','.join(names)}]` needs a reason "
                                f"after it (# analyzer: ignore[{','.join(names)}] why this is fine)")
                continue
            good = [n for n in names if n in known]
            if good:
                prior = found.get(ev.index)
                found[ev.index] = Suppression(ev.index, (prior.rules if prior else []) + good,
                                              f"{prior.reason}; {reason}" if prior else reason)
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

class BaselineError(ValueError):
    """The baseline file cannot be read; the message names it."""


def write_baseline(path: Path, findings: list[Finding]) -> None:
    """Accepted findings as ``{fingerprint: {rule, count, message}}``: the count lets a baseline
    accept two identical problems and still report a third."""
    counts = Counter(f.fingerprint for f in findings)
    first: dict[str, Finding] = {}
    for f in findings:
        first.setdefault(f.fingerprint, f)
    doc = {"version": 1, "findings": {
        fp: {"rule": first[fp].rule, "count": n, "message": first[fp].message} for fp, n in sorted(counts.items())}}
    path.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")


def apply_baseline(path: Path, findings: list[Finding]) -> tuple[list[Finding], list[Finding], list[str]]:
    """(new findings, baselined ones, stale baseline entries: accepted but no longer seen)."""
    try:
        doc = json.loads(path.read_text("utf-8"))
        entries = doc["findings"]
        budget = {str(fp): int(v.get("count", 1)) for fp, v in entries.items()}
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BaselineError(f"{path}: not a baseline file ({type(exc).__name__}: {exc}); "
                            "write one with `analyzer check --write-baseline FILE`") from exc
    left = dict(budget)
    new, known = [], []
    for f in findings:
        if left.get(f.fingerprint, 0) > 0:
            left[f.fingerprint] -= 1
            known.append(f)
        else:
            new.append(f)
    stale = [f"{fp} ({entries[fp].get('rule', '?')}): {n} of {budget[fp]} no longer found"
             for fp, n in left.items() if n > 0]
    return new, known, stale
