"""The HTML postmortem of one session: a single self-contained file (CSS, JS and SVG inline, nothing
fetched), readable without JS, every claim linked to the event and the source line it came from.

Rendered with Jinja2 (autoescape on) from the templates in top-level ``reports/`` (shipped in the
wheel as ``analyzer/_data/reports``); a user's ``templates`` folder overrides any template by name.
Transcript text reaches the templates only as redacted plain strings and ``Seg`` pieces: the
templates escape it and add the markup, so nothing from a log is ever marked safe.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from analyzer import __version__
from analyzer._memory import paused_gc
from analyzer.lifecycle.facts import ModelDisagreement
from analyzer.lifecycle.world import World
from analyzer.pipeline import Analysis
from analyzer.report._clean import Cleaner, Seg, with_code
from analyzer.report._env import environment
from analyzer.report._evidence import Excerpt, excerpt, where_of
from analyzer.report._impact import Impact, impacts
from analyzer.report._markdown import rendered
from analyzer.report._summary import Context, resolve, sentence
from analyzer.report._swimlane import Swimlane
from analyzer.report._swimlane import build as build_swimlane
from analyzer.report._timeline import Badge, Row, rows
from analyzer.report._when import Times
from analyzer.report.guard_log import GuardLog, attach, badge, summarize
from analyzer.rules.api import Finding, Rule, severity_rank
from analyzer.rules.loader import LoadedRule, load_rules

TEMPLATE = "report.html.j2"
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


@cache
def _default_rules() -> Mapping[str, LoadedRule]:
    return load_rules().rules


# -- view model --------------------------------------------------------------------------------


@dataclass
class FindingView:
    number: int
    rule: str
    severity: str
    message: list[Seg]
    instance: str
    anchor: int
    where: str
    time: str
    fingerprint: str
    sentence: list[Seg]
    evidence: list[Excerpt]
    summary: str = ""
    docs: dict[str, list[list[Seg]]] = field(default_factory=dict)
    """Docstring sections of the rule as paragraphs: "Why is this bad", "How to avoid it", …"""


@dataclass
class RuleRow:
    name: str
    severity: str
    status: str
    groups: str
    origin: str
    version: str
    summary: str
    fired: int


def paragraphs(text: str) -> list[list[Seg]]:
    return [with_code(" ".join(p.split())) for p in re.split(r"\n\s*\n", text) if p.strip()]


def rule_docs(cls: type[Rule] | None) -> dict[str, list[list[Seg]]]:
    if cls is None:
        return {}
    sections = cls.doc_sections()
    return {title: paragraphs(sections[title])
            for title in ("Why is this bad", "How to avoid it", "What it does", "Known false positives")
            if sections.get(title)}


def finding_instances(world: World, f: Finding) -> set[str]:
    """The servers a finding is about: its instance, plus those its details name (``unrequested``
    lists, the victims of the kills it records), by id or by name."""
    out = {f.instance} if f.instance else set()

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in ("instance", "unrequested"):
            out.add(node)

    walk(f.details)
    return {key for ref in out if (key := resolve(world, ref)) is not None}


def _order(findings: list[Finding]) -> list[Finding]:
    """Most severe first, then in timeline order."""
    return sorted(findings, key=lambda f: (-f.severity.rank, f.anchor.index, f.rule))


def _finding_views(a: Analysis, ordered: list[Finding], times: Times, clean: Cleaner, ctx: Context,
                   rules: Mapping[str, LoadedRule]) -> list[FindingView]:
    out = []
    for n, f in enumerate(ordered, 1):
        loaded = rules.get(f.rule)
        evidence = [excerpt(a.world, times, clean, f.anchor.index, "anchor", f.instance)]
        seen = {f.anchor.index}
        for r in f.related:
            if r.index in seen or not 0 <= r.index < len(a.session.events):
                continue
            seen.add(r.index)
            evidence.append(excerpt(a.world, times, clean, r.index, r.role, f.instance))
        ev = a.session.events[f.anchor.index]
        out.append(FindingView(
            number=n, rule=f.rule, severity=f.severity.value, message=with_code(clean(f.message)),
            instance=ctx.name(f.instance) if f.instance else "", anchor=f.anchor.index,
            where=where_of(a.session, ev), time=times.stamp(f.anchor.index),
            fingerprint=f.fingerprint, sentence=sentence(ctx, f), evidence=evidence,
            summary=loaded.cls.summary if loaded else "", docs=rule_docs(loaded.cls if loaded else None),
        ))
    return out


def _badges(ordered: list[Finding]) -> dict[int, list[Badge]]:
    out: dict[int, list[Badge]] = {}
    for n, f in enumerate(ordered, 1):
        out.setdefault(f.anchor.index, []).append(Badge(n, f.rule, f.severity.value, "anchor"))
        for r in f.related:
            if r.index != f.anchor.index:
                out.setdefault(r.index, []).append(Badge(n, f.rule, f.severity.value, r.role))
    return out


def _rule_rows(rules: Mapping[str, LoadedRule], a: Analysis) -> list[RuleRow]:
    fired = Counter(f.rule for f in a.findings)
    out = []
    for name, lr in sorted(rules.items()):
        cls = lr.cls
        version = str(getattr(cls, "version", "") or (__version__ if lr.origin == "builtin" else "—"))
        out.append(RuleRow(name=name, severity=cls.severity.value, status=cls.status.value,
                           groups=", ".join(cls.groups), origin=lr.origin, version=version, summary=cls.summary,
                           fired=fired.get(name, 0)))
    for name in sorted(set(fired) - set(rules)):
        out.append(RuleRow(name=name, severity="—", status="—", groups="", origin="not loaded here",
                           version="—", summary="", fired=fired[name]))
    return out


def _hosts(a: Analysis) -> list[str]:
    hosts = dict.fromkeys(i.host for i in a.world.instances.values())
    return [("this machine" if h == "local" else h) for h in hosts]


def _model(a: Analysis) -> str:
    if a.session.model:
        return a.session.model
    models = Counter(e.model for e in a.session.events if e.kind == "assistant" and e.model)
    return ", ".join(m for m, _ in models.most_common(3))


def report_context(analysis: Analysis, *, redact: bool = True, rules: Mapping[str, LoadedRule] | None = None,
                   guard: GuardLog | None = None, index: str | None = None,
                   keep_markdown: bool = False) -> dict[str, Any]:
    """Everything the templates show, already redacted and cut; ``guard``: the live guard's
    decisions on this session, shown on their timeline rows and in the summary; ``index``: the
    link back to the batch index this report belongs to; ``keep_markdown``: the agent messages'
    HTML kept in the user's cache folder for the next report of this session (``_markdown.rendered``)."""
    a = analysis
    session, world = a.session, a.world
    rules = rules if rules is not None else _default_rules()
    clean = Cleaner(redact)
    times = Times(session)
    ordered = _order(a.findings)
    ctx = Context(world=world, times=times, clean=clean)
    ctx.impacts = impacts(world, times, [finding_instances(world, f) for f in ordered])
    findings = _finding_views(a, ordered, times, clean, ctx, rules)
    story = sorted(findings, key=lambda v: (v.anchor, -severity_rank(v.severity)))
    timeline: list[Row] = rows(world, times, clean, _badges(ordered))
    _messages_html(timeline, keep_markdown)
    swimlane: Swimlane = build_swimlane(world, times, clean)
    guard_summary = None
    if guard is not None:
        placed = attach(guard.records, session)
        for row in timeline:
            row.guard = [b for rec in placed.get(row.index, []) if (b := badge(rec, clean)) is not None]
        guard_summary = summarize(guard, placed, clean)
    severities = Counter(f.severity.value for f in a.findings)
    kinds = Counter(r.kind for r in timeline)
    impact_rows: list[Impact] = ctx.impacts
    end = len(session.events)
    disagreements = [d for d in world.facts if isinstance(d, ModelDisagreement)]
    # Kinds are read after everything above has gone through the cleaner.
    context: dict[str, Any] = {
        "csp": CSP,
        "index": index,
        "version": __version__,
        "title": session.name,
        "session": session,
        "model": _model(a),
        "hosts": _hosts(a),
        "times": times,
        "first": times.clock_of(times.first, seconds=True) if times.first else "—",
        "last": times.clock_of(times.last, seconds=True) if times.last else "—",
        "date": times.first.strftime("%Y-%m-%d") if times.first else "",
        "zone": times.zone,
        "duration": times.duration(),
        "counts": {"events": len(session.events), "tools": len(session.tools()),
                   "shell": len(session.shell_calls()), "instances": len(world.instances),
                   "findings": len(a.findings), "suppressed": len(a.suppressed)},
        "severities": [(s, severities.get(s, 0)) for s in ("high", "medium", "low")],
        "kinds": [(k, kinds.get(k, 0)) for k in ("user", "assistant", "shell", "tool", "system")],
        "story": story,
        "findings": findings,
        "impacts": [_impact_view(i, times, clean) for i in impact_rows],
        "unaffected": len(world.instances) - len(impact_rows),
        "swimlane": swimlane,
        "timeline": timeline,
        "instances": [{"inst": i, "name": clean(i.name), "final": i.state_at(end)} for i in world.instances.values()],
        "diagnostics": [{"level": d.level.value, "where": f"{d.file or session.path}:{d.line}" if d.line is not None
                         else (d.file or session.path), "message": clean.one_line(d.message, 400)}
                        for d in session.diagnostics],
        "rules": _rule_rows(rules, a),
        "guard": guard_summary,
        "notes": [clean.one_line(n, 400) for n in world.notes
                  if not any(d.detail and n.endswith(d.detail) for d in disagreements)],
        "disagreements": [{"event": d.event, "predicted": with_code(clean.one_line(d.predicted, 300)),
                           "observed": with_code(clean.one_line(d.observed, 300))} for d in disagreements],
        "problems": [clean.one_line(p, 400) for p in a.problems],
        "suppressed": [{"rule": f.rule, "reason": clean.one_line(why, 200), "anchor": f.anchor.index,
                        "message": with_code(clean.one_line(f.message, 300))} for f, why in a.suppressed],
    }
    context["redaction"] = {"enabled": clean.enabled, "kinds": clean.kinds()}
    return context


def _messages_html(timeline: list[Row], keep: bool) -> None:
    """The agent messages' Markdown as HTML, made for the whole page at once (so that a page's
    can be kept and read back in one piece)."""
    shown = [r for r in timeline if r.markdown and r.text]
    texts = [t for r in shown if r.text for t in (r.text.head, r.text.tail if r.text.cut else "")]
    html = rendered(texts, keep=keep)
    for n, r in enumerate(shown):
        r.html = (html[2 * n], html[2 * n + 1])


def _impact_view(imp: Impact, times: Times, clean: Cleaner) -> dict[str, Any]:
    outs = [{
        "start": o.start, "start_time": times.clock(o.start, seconds=True), "requested": o.requested,
        "cause": with_code(clean.one_line(o.cause, 300)), "end": o.end,
        "end_time": times.clock_of(times.done(o.end), o.end, seconds=True) if o.end is not None else "",
        "span": o.length, "failures": [clean.one_line(x, 200) for x in o.failures],
    } for o in imp.outages]
    return {"id": imp.instance.id, "name": clean(imp.instance.name), "final": imp.final_state,
            "outages": outs, "findings": [n + 1 for n in imp.findings],
            "unplanned": sum(1 for o in imp.outages if not o.requested), "down_at_end": imp.down_at_end}


def iter_html(analysis: Analysis, *, redact: bool = True, templates: Path | None = None,
              rules: Mapping[str, LoadedRule] | None = None, guard: GuardLog | None = None,
              index: str | None = None) -> Iterator[str]:
    """The postmortem of ``analysis`` as pieces of one HTML document, in order.

    ``redact`` hides secrets (the kinds found are listed in the report); ``templates`` is a folder
    whose templates override the built-in ones by name; ``rules`` maps rule names to the loaded
    rules (for their docs), default: the built-in pack and entry-point packs; ``guard`` the live
    guard's decisions on this session (``read_guard_log``); ``index`` a relative link to the batch
    index the report belongs to (shown at the top). The templates are
    loaded and the context built before this returns; a template error can still come while
    iterating."""
    env = environment(Path(templates).resolve() if templates is not None else None)
    template = env.get_template(TEMPLATE)
    return template.generate(**report_context(analysis, redact=redact, rules=rules, guard=guard, index=index))


@contextlib.contextmanager
def _rendering(analysis: Analysis, *, redact: bool, templates: Path | None, rules: Mapping[str, LoadedRule] | None,
               guard: GuardLog | None, index: str | None, keep_markdown: bool = False) -> Iterator[Iterator[str]]:
    """``iter_html``'s pieces with the cycle collector paused, and the view model emptied when
    they have been used. The rows and pieces make no cycles and are freed as they go; the
    collections they set off each scanned the session and its world again (on a 50 MB session
    0.1-0.15 s, one of them a full collection). Jinja's context of a render is in a cycle (its
    macros' closures), so the rows it holds would wait for the next collection (60,000 objects
    after a 50 MB page): their lists are emptied instead, and the rows freed at once."""
    with paused_gc():
        env = environment(Path(templates).resolve() if templates is not None else None)
        template = env.get_template(TEMPLATE)
        context = report_context(analysis, redact=redact, rules=rules, guard=guard, index=index,
                                 keep_markdown=keep_markdown)
        try:
            yield template.generate(**context)
        finally:
            for value in context.values():
                if isinstance(value, list):
                    value.clear()
            context["swimlane"].lanes.clear()


def render_html(analysis: Analysis, *, redact: bool = True, templates: Path | None = None,
                rules: Mapping[str, LoadedRule] | None = None, guard: GuardLog | None = None,
                index: str | None = None) -> str:
    """The postmortem of ``analysis`` as one HTML document (``iter_html``, joined)."""
    with _rendering(analysis, redact=redact, templates=templates, rules=rules, guard=guard, index=index) as pieces:
        return "".join(pieces)


def write_html(analysis: Analysis, path: Path, *, redact: bool = True, templates: Path | None = None,
               rules: Mapping[str, LoadedRule] | None = None, atomic: bool = True,
               guard: GuardLog | None = None, index: str | None = None, keep_markdown: bool = False) -> None:
    """Write the postmortem into ``path`` piece by piece, never holding the whole document (for a
    500 MB session the page is ~90 MB, and its pieces took ~350 MB more). ``atomic``: through a
    temporary file beside ``path``, so an error half-way (a template, a full disk) leaves no
    half-written report and a symlink planted at ``path`` is replaced, not written through; else
    straight into ``path`` (a pipe, ``/dev/stdout``, a link the user chose). ``keep_markdown``:
    the agent messages' HTML kept for the next report of this session (``report``, not ``batch``,
    which keeps whole reports of unchanged sessions)."""
    with _rendering(analysis, redact=redact, templates=templates, rules=rules, guard=guard, index=index,
                    keep_markdown=keep_markdown) as pieces:
        _write(pieces, path, atomic)


def _write(pieces: Iterator[str], path: Path, atomic: bool) -> None:
    if not atomic:
        with open(path, "w", encoding="utf-8", buffering=1 << 20) as out:
            for piece in pieces:
                out.write(piece)
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", buffering=1 << 20) as fh:
            for piece in pieces:
                fh.write(piece)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
