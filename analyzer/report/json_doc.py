"""The JSON document of ``check --format json`` (DESIGN.md, "the JSON contract": keep names)."""

from __future__ import annotations

from typing import Any

from analyzer import __version__
from analyzer.pipeline import Analysis
from analyzer.report.redact import Redactor
from analyzer.rules.api import Finding

_REDACT = Redactor()
"""Finding messages quote commands and user words: redacted like every report."""


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "message": _REDACT(f.message),
        "anchor": {"index": f.anchor.index, "ref": f.anchor.ref, "line": f.anchor.line,
                   **({"source": f.anchor.source} if f.anchor.source else {})},
        "related": [{"role": r.role, "index": r.index, "ref": r.ref, "line": r.line,
                     **({"source": r.source} if r.source else {})} for r in f.related],
        "instance": f.instance,
        "fingerprint": f.fingerprint,
    }


def session_dict(a: Analysis) -> dict[str, Any]:
    s = a.session
    return {
        "path": s.path,
        "format": s.format,
        "session_id": s.session_id,
        "events": len(s.events),
        "counts": s.counts.model_dump(),
        "diagnostics": [{"level": d.level.value, "line": d.line, "message": d.message,
                         **({"file": d.file} if d.file else {})} for d in s.diagnostics],
        "findings": [finding_dict(f) for f in a.findings],
        "suppressed": len(a.suppressed),
        "problems": a.problems,
    }


def document(analyses: list[Analysis], errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": __version__, "sessions": [session_dict(a) for a in analyses]}
    if errors:
        doc["errors"] = errors
    return doc
