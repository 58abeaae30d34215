"""SARIF 2.1.0: one run, rule metadata from the rule classes, locations at log lines; the whole
log is redacted (``redact_tree``), as every output."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from analyzer import __version__
from analyzer.pipeline import Analysis
from analyzer.report.redact import redact_tree
from analyzer.rules.api import Rule, Severity

_LEVEL = {Severity.high: "error", Severity.medium: "warning", Severity.low: "note"}
SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def _uri(path: str) -> str:
    """A relative path stays a relative URI reference (resolved by the viewer against the
    checkout); an absolute one becomes ``file://``."""
    p = Path(path)
    return quote(p.as_posix()) if not p.is_absolute() else p.as_uri()


def _rule_meta(cls: type[Rule]) -> dict[str, Any]:
    sections = cls.doc_sections()
    help_text = "\n\n".join(f"{k}: {v}" for k, v in sections.items() if k and v)
    return {
        "id": cls.name,
        "name": "".join(w.capitalize() for w in cls.name.split("-")),
        "shortDescription": {"text": cls.summary},
        "fullDescription": {"text": sections.get("What it does") or cls.summary},
        "help": {"text": help_text or cls.summary},
        "defaultConfiguration": {"level": _LEVEL[Severity(cls.severity)]},
        "properties": {"tags": list(cls.groups), "status": str(cls.status)},
    }


def _location(path: str, line: int | None, index: int) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
    if line is not None:
        phys["region"] = {"startLine": line}
    return {"physicalLocation": phys, "logicalLocations": [{"name": f"event {index}", "kind": "member"}]}


def _notifications(analyses: list[Analysis], errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Problems met on the way (unreadable files, bad suppressions, rule crashes), for the
    invocation: a SARIF viewer shows them apart from the results."""
    out: list[dict[str, Any]] = []
    for e in errors:
        n: dict[str, Any] = {"level": "error", "message": {"text": str(e.get("message"))},
                             "locations": [_location(str(e.get("path")), e.get("line"), 0)]}
        n["locations"][0].pop("logicalLocations")
        out.append(n)
    seen: set[str] = set()
    for a in analyses:
        for p in a.problems:
            if p not in seen:
                seen.add(p)
                out.append({"level": "error" if ": error:" in p else "warning", "message": {"text": p}})
    return out


def document(analyses: list[Analysis], rules: list[type[Rule]],
             errors: list[dict[str, Any]] | None = None, exit_code: int = 0) -> dict[str, Any]:
    rule_ids = [r.name for r in rules]
    results = []
    for a in analyses:
        for f in a.findings:
            loc = _location(f.anchor.source or a.session.path, f.anchor.line, f.anchor.index)
            result: dict[str, Any] = {
                "ruleId": f.rule,
                "level": _LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [loc],
                "partialFingerprints": {"analyzerFingerprint/v1": f.fingerprint},
            }
            if f.rule in rule_ids:
                result["ruleIndex"] = rule_ids.index(f.rule)
            related = []
            for i, r in enumerate(f.related):
                rl = _location(r.source or a.session.path, r.line, r.index)
                rl["id"] = i
                rl["message"] = {"text": r.role}
                related.append(rl)
            if related:
                result["relatedLocations"] = related
            if f.instance:
                result["properties"] = {"instance": f.instance}
            results.append(result)
    log: dict[str, Any] = redact_tree({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "session-analyzer", "version": __version__,
                                "rules": [_rule_meta(r) for r in rules]}},
            # findings (exit 1) are a successful run; unreadable input (2) or a crash (3) is not
            "invocations": [{"executionSuccessful": exit_code in (0, 1), "exitCode": exit_code,
                             "toolExecutionNotifications": _notifications(analyses, errors or [])}],
            "results": results,
        }],
    })
    return log
