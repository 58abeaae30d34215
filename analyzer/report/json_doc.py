"""The JSON document of ``check --format json`` (DESIGN.md, "the JSON contract": keep names).

``document`` is redacted whole (``redact_tree``): messages, diagnostics, errors and paths quote the
log. ``finding_dict`` redacts its message itself: batch writes it to ``findings.jsonl`` as it is."""

from __future__ import annotations

from typing import Any

from analyzer import __version__
from analyzer.pipeline import Analysis
from analyzer.report.redact import Redactor, redact_tree
from analyzer.rules.api import Finding


def finding_dict(f: Finding) -> dict[str, Any]:
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "message": Redactor()(f.message),
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
    redacted: dict[str, Any] = redact_tree(doc)
    return redacted
