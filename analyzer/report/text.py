"""Linter-style text: ``path:line: severity rule message``, then the evidence lines.

Every piece quoted from the input is neutralised here (``terminal.neutralise``), so the text is
safe on a terminal even when it carries colour and is written past the neutralising stream."""

from __future__ import annotations

import re
import shutil

import click

from analyzer.events import AssistantEvent, Event, SystemEvent, ToolEvent, UserEvent
from analyzer.pipeline import Analysis
from analyzer.report.redact import Redactor
from analyzer.report.terminal import neutralise
from analyzer.rules.api import EventRef, Finding

_REDACT = Redactor()
"""Terminal output is a report too: what it quotes from the transcript is redacted."""


def excerpt(ev: Event, room: int) -> str:
    if isinstance(ev, ToolEvent):
        text = ev.command if ev.command is not None else f"{ev.name} {ev.input}"
    elif isinstance(ev, UserEvent | AssistantEvent):
        text = ev.text
    elif isinstance(ev, SystemEvent):
        text = f"{ev.subtype}: {ev.text}"
    else:  # pragma: no cover
        text = ""
    flat = neutralise(_REDACT(" ".join(text.split())))
    return flat if len(flat) <= room else flat[: max(room - 1, 0)] + "…"


def where(a: Analysis, ref: EventRef) -> str:
    path = neutralise(ref.source or a.session.path)
    return f"{path}:{ref.line}" if ref.line is not None else f"{path}:#{ref.index}"


_SEVERITY_STYLE = {"high": {"fg": "red", "bold": True}, "medium": {"fg": "yellow"}, "low": {"fg": "blue"}}


def styled_severity(severity: str) -> str:
    """A severity in its terminal colour (ANSI): high red, medium yellow, low blue."""
    return click.style(severity, **_SEVERITY_STYLE.get(severity, {}))  # type: ignore[arg-type]


def styled_rule(rule: str) -> str:
    return click.style(rule, fg="cyan", bold=True)


def render_finding(a: Analysis, f: Finding, width: int, colour: bool = False) -> list[str]:
    """The finding's line, then its anchor and each related event cut to ``width``; a related event
    in the anchor's file is located by line alone, so the evidence keeps its room. ``colour``:
    severity and rule id styled for a terminal (ANSI)."""
    sev, rule, loc = f.severity.value, neutralise(f.rule), where(a, f.anchor)
    if colour:
        sev, rule, loc = styled_severity(sev), styled_rule(rule), click.style(loc, bold=True)
    lines = [f"{loc}: {sev} {rule} {neutralise(_REDACT(f.message))}"]
    ev = a.session.events[f.anchor.index]
    lines.append(f"    > {excerpt(ev, width - 6)}")
    for r in f.related:
        if r.source == f.anchor.source:
            loc = f"line {r.line}" if r.line is not None else f"event {r.index}"
        else:
            loc = where(a, r)
        label = f"    {neutralise(r.role)} ({loc}): "
        lines.append(label + excerpt(a.session.events[r.index], max(width - len(label), 20)))
    return lines


_LOCATED = re.compile(r"^\S+:(?:\d+|#\d+): (?:error|warning):")


def render(analyses: list[Analysis], width: int | None = None, skip_problems: set[str] | None = None,
           colour: bool = False, summary: bool = True) -> str:
    """Every finding with its evidence, the problems met on the way (``skip_problems``: ones the
    caller already showed, like rule packs that failed to load), and a summary line (unless not
    ``summary``: ``check --quiet``)."""
    width = width or max(60, shutil.get_terminal_size((100, 24)).columns)
    out: list[str] = []
    total = suppressed = 0
    for a in analyses:
        for f in a.findings:
            out.extend(render_finding(a, f, width, colour))
            total += 1
        suppressed += len(a.suppressed)
        for p in a.problems:
            if p not in (skip_problems or set()):
                out.append(neutralise(p if _LOCATED.match(p) else f"warning: {p}"))
    n = len(analyses)
    if summary:
        line = f"{total} finding(s) in {n} session(s)" if total else f"no findings in {n} session(s)"
        out.append(line + (f" ({suppressed} suppressed)" if suppressed else ""))
    return "\n".join(out)
