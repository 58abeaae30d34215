"""GitHub Actions workflow annotations: one ``::error file=…,line=…,title=…::message`` line per
finding, which the runner turns into an annotation on the log line of the pull request or run.

Escaping follows the runner's parser (actions/toolkit ``command.ts``): in the message ``%``, CR
and LF become ``%25``, ``%0D``, ``%0A``; a property value also escapes ``:`` (``%3A``) and ``,``
(``%2C``), which would end it. ``%`` goes first, so an escape already in the text stays text.
Other control characters are neutralised as on a terminal: the log viewer renders ANSI too.
"""

from __future__ import annotations

from typing import Any

from analyzer.pipeline import Analysis
from analyzer.report.redact import Redactor
from analyzer.report.terminal import neutralise
from analyzer.report.text import render_finding
from analyzer.rules.api import Severity

_REDACT = Redactor()

LEVEL = {Severity.high: "error", Severity.medium: "warning", Severity.low: "notice"}
"""The annotation kind per severity (GitHub has three, like SARIF's error/warning/note)."""

_EVIDENCE_WIDTH = 160


def escape_data(text: str) -> str:
    """A message: ``%``, CR and LF escaped (LF keeps a multi-line message one command)."""
    return neutralise(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    """A property value (``file``, ``title``): also ``:`` and ``,``, which end the value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(kind: str, message: str, file: str | None = None, line: int | None = None,
            title: str | None = None) -> str:
    props = [(k, v) for k, v in (("file", file), ("line", None if line is None else str(line)),
                                 ("title", title)) if v is not None]
    head = f"::{kind}"
    if props:
        head += " " + ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"{head}::{escape_data(message)}"


def render(analyses: list[Analysis], errors: list[dict[str, Any]] | None = None) -> str:
    """Every finding as an annotation at its anchor's file and line (its evidence, redacted, as
    the following lines of the message); unreadable inputs as errors; problems as warnings."""
    out: list[str] = []
    for e in errors or []:
        line, message = e.get("line"), str(e.get("message"))
        title = "analyzer: internal error" if message.startswith("internal error") else "analyzer: cannot read"
        out.append(command("error", message, file=str(e.get("path")), line=line if isinstance(line, int) else None,
                           title=title))
    seen: set[str] = set()
    for a in analyses:
        for f in a.findings:
            evidence = [ln.strip() for ln in render_finding(a, f, _EVIDENCE_WIDTH)[1:]]
            out.append(command(LEVEL[f.severity], "\n".join([_REDACT(f.message), *evidence]),
                               file=f.anchor.source or a.session.path, line=f.anchor.line,
                               title=f"analyzer {f.severity.value} {f.rule}"))
        for p in a.problems:
            if p not in seen:
                seen.add(p)
                out.append(command("warning", p, title="analyzer"))
    return "\n".join(out)
