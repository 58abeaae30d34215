"""Linter-style text: ``path:line: severity rule message``, then the evidence lines."""

from __future__ import annotations

import re
import shutil

from analyzer.events import AssistantEvent, Event, SystemEvent, ToolEvent, UserEvent
from analyzer.pipeline import Analysis
from analyzer.report.redact import Redactor
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
    flat = _REDACT(" ".join(text.split()))
    return flat if len(flat) <= room else flat[: max(room - 1, 0)] + "…"


def where(a: Analysis, ref: EventRef) -> str:
    path = ref.source or a.session.path
    return f"{path}:{ref.line}" if ref.line is not None else f"{path}:#{ref.index}"


def render_finding(a: Analysis, f: Finding, width: int) -> list[str]:
    """The finding's line, then its anchor and each related event cut to ``width``; a related event
    in the anchor's file is located by line alone, so the evidence keeps its room."""
    lines = [f"{where(a, f.anchor)}: {f.severity.value} {f.rule} {_REDACT(f.message)}"]
    ev = a.session.events[f.anchor.index]
    lines.append(f"    > {excerpt(ev, width - 6)}")
    for r in f.related:
        if r.source == f.anchor.source:
            loc = f"line {r.line}" if r.line is not None else f"event {r.index}"
        else:
            loc = where(a, r)
        label = f"    {r.role} ({loc}): "
        lines.append(label + excerpt(a.session.events[r.index], max(width - len(label), 20)))
    return lines


_LOCATED = re.compile(r"^\S+:(?:\d+|#\d+): (?:error|warning):")


def render(analyses: list[Analysis], width: int | None = None, skip_problems: set[str] | None = None) -> str:
    """Every finding with its evidence, the problems met on the way (``skip_problems``: ones the
    caller already showed, like rule packs that failed to load), and a summary line."""
    width = width or max(60, shutil.get_terminal_size((100, 24)).columns)
    out: list[str] = []
    total = suppressed = 0
    for a in analyses:
        for f in a.findings:
            out.extend(render_finding(a, f, width))
            total += 1
        suppressed += len(a.suppressed)
        for p in a.problems:
            if p not in (skip_problems or set()):
                out.append(p if _LOCATED.match(p) else f"warning: {p}")
    n = len(analyses)
    summary = f"{total} finding(s) in {n} session(s)" if total else f"no findings in {n} session(s)"
    out.append(summary + (f" ({suppressed} suppressed)" if suppressed else ""))
    return "\n".join(out)
