"""The one Jinja environment every HTML page is rendered with (a report, the batch index).

One place for the template folder lookup, the escaping policy and the filters, so that a page
rendered by ``report`` and one rendered by ``batch`` follow the same rules, and so that a cache
of compiled templates (one per process) has a single home.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from jinja2.bccache import Bucket
from markupsafe import Markup, escape

from analyzer._usercache import private_dir
from analyzer.report._markdown import markdown
from analyzer.report.terminal import reveal_bidi


def reports_dir() -> Path:
    """The built-in templates: inside the installed package, else the source tree's ``reports/``."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_data" / "reports"
    return packaged if packaged.is_dir() else here.parent / "reports"


def csp_hash(text: object) -> str:
    """``sha256-…`` of an inline ``<style>``/``<script>`` body, for the Content-Security-Policy."""
    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


class _CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Templates compiled by an earlier process, in the user's cache folder (``analyzer._usercache``):
    Jinja compiles again a template whose source changed (it keeps the source's checksum). A cache
    that cannot be read or written only loses the saving (compiling a report's templates is most of
    the cost of rendering a small session)."""

    def load_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(Exception):  # unreadable, truncated, another Jinja's: compile instead
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _html(value: object) -> str:
    """One value as ``{{ value }}`` writes it: bidi revealed (the finalize hook), then escaped. A
    plain ``str`` (nearly every value) is escaped as markupsafe does, without its wrapper and the
    ``Markup`` it makes: ~4x faster, and the timeline writes ~10 of them per row."""
    if type(value) is str:
        text = value if value.isascii() else str(reveal_bidi(value))
        return (text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;").replace("'", "&#39;")
                .replace('"', "&#34;"))
    return str(escape(reveal_bidi(value)))


def segs(items: Iterable[Any]) -> Markup:
    """``_report_macros.html.j2``'s ``segs`` macro as a filter (``Seg`` pieces: plain, marked, code
    or an in-page link), byte for byte: the timeline calls it on every shell row, and a macro call
    per row was ~0.3 s of a 50 MB report."""
    out: list[str] = []
    for s in items:
        if s.href:
            cls = f' class="{_html(s.mark)}"' if s.mark else ""
            out.append(f'<a href="{_html(s.href)}"{cls}>{_html(s.text)}</a>')
        elif s.mark == "code":
            out.append(f"<code>{_html(s.text)}</code>")
        elif s.mark:
            out.append(f'<mark class="{_html(s.mark)}">{_html(s.text)}</mark>')
        else:
            out.append(_html(s.text))
    return Markup("".join(out))


def shown(t: Any) -> Markup:
    """``_report_macros.html.j2``'s ``shown`` macro as a filter (a ``Shown`` text: head, what was
    cut, tail), byte for byte, for the timeline's texts and outputs."""
    if not t.cut:
        return Markup(_html(t.head))
    tail = f"\n{_html(t.tail)}" if t.tail else ""
    return Markup(f'{_html(t.head)}\n<span class="cut">{_html(t.note)}</span>\n{tail}')


_BAD_STATUS = ("error", "interrupted")


class Written:
    """HTML written piece by piece, each piece from a log revealed and escaped (``_html``, or the
    ``segs``/``shown`` filters, which do the same): not a ``str``, so the finalize hook lets it
    through instead of scanning it whole again for bidi controls (a regex over every character of
    the 8 MB of timeline rows of a 50 MB report: 0.17 s); ``escape`` takes its ``__html__``."""

    __slots__ = ("html",)

    def __init__(self, html: str) -> None:
        self.html = html

    def __html__(self) -> str:
        return self.html

    def __str__(self) -> str:
        return self.html


def timeline_row(r: Any) -> Written:
    """One timeline row (``_timeline.Row``) as ``_report_timeline.html.j2`` wrote it in its loop,
    byte for byte (``tests/report/test_timeline_filters.py`` holds it to that loop): ~20 ``{{ }}``
    per row, each through Jinja's attribute lookup, the finalize hook and ``escape``, were 0.2 s
    of a 50 MB report's 0.28 s of templates. The ``segs`` and ``shown`` pieces are used as they
    are: already revealed and escaped, the finalize hook and ``escape`` left them unchanged."""
    h = _html
    index = str(r.index)
    out = [f'  <article class="ev{f" has-{h(r.worst)}" if r.worst else ""}" id="event-{index}" '
           f'data-kind="{h(r.kind)}"']
    if r.lifecycle:
        out.append(' data-lifecycle="1"')
    if r.badges:
        out.append(' data-finding="1"')
    if r.guard:
        out.append(' data-guard="1"')
    out.append(f'>\n    <div class="gut">\n      <a class="idx" href="#event-{index}">#{index}</a> {h(r.time)}<br>\n'
               f'      <span class="kind">{h(r.kind_label)}</span><br>\n      <span>{h(r.who)}</span>\n'
               f'      <span class="src" title="{h(r.where)}">{h(r.short_where)}</span>\n    </div>\n'
               f'    <div class="body">\n')
    if r.badges:
        out.append('<div class="badges">\n')
        for b in r.badges:
            anchor = b.role == "anchor"
            out.append(f'<a class="badge {h(b.severity)}{"" if anchor else " rel"}" href="#finding-{b.number}" '
                       f'title="{"finding" if anchor else h(b.role + " for finding")} {b.number}">{h(b.rule)}'
                       f'{"" if anchor else f" · {h(b.role)}"}</a>')
        out.append("      </div>")
    for g in r.guard:
        decision = h(g.decision)
        out.append(f'<div class="guard {decision}" data-guard="{decision}"><b>guard {h(g.label)}</b>'
                   f'{f" <code>{h(g.rule)}</code>" if g.rule else ""}'
                   f'{f""" <span class="muted">· {h(g.latency)}</span>""" if g.latency else ""}'
                   f'{f"""<span class="reason">{h(g.reason)}</span>""" if g.reason else ""}</div>\n')
    if r.kind == "shell":
        out.append(f'      <pre class="cmd">{segs(r.command_head)}')
        if r.command_note:
            out.append(f'\n<span class="cut">{h(r.command_note)}</span>')
            if r.command_tail:
                out.append(f"\n{segs(r.command_tail)}")
        out.append("</pre>\n")
    elif r.kind == "tool":
        out.append(f'      <pre class="text mono">{h(r.input)}</pre>\n')
    elif r.text and r.markdown:
        text = r.text
        head, tail = r.html if r.html is not None else (markdown(text.head), None)
        out.append(f'      <div class="text md">{h(head)}')
        if text.cut:
            out.append(f'<p class="cut">{h(text.note)}</p>')
            if text.tail:
                out.append(h(tail if tail is not None else markdown(text.tail)))
        out.append("</div>\n")
    elif r.text:
        out.append(f'      <pre class="text">{shown(r.text)}</pre>\n')
    for st in r.status:
        bad = " bad" if st.startswith("exit") or st in _BAD_STATUS else ""
        out.append(f'<span class="status{bad}">{h(st)}</span>')
    if r.output:
        o = r.output
        preview = f' <code class="preview">{h(r.preview)}</code>' if r.preview else ""
        out.append(f'      <details class="output"><summary>output <span class="muted">· {o.total_lines:,} line'
                   f'{"s" if o.total_lines != 1 else ""}{", cut to fit" if o.cut else ""}</span>{preview}'
                   f'</summary><pre class="out">{shown(o)}</pre></details>\n')
    if r.thinking:
        out.append('      <details class="thinking"><summary>thinking <span class="muted">(not shown to the user)'
                   f'</span></summary><pre class="out">{shown(r.thinking)}</pre></details>\n')
    if r.facts:
        out.append(f'<ul class="facts-line">{"".join(f"<li>{h(x)}</li>" for x in r.facts)}</ul>')
    out.append("    </div>\n  </article>\n")
    return Written("".join(out))


def _compiled_templates() -> jinja2.BytecodeCache | None:
    folder = private_dir("templates")
    return None if folder is None else _CompiledTemplates(str(folder))


@cache
def environment(templates: Path | None = None) -> jinja2.Environment:
    """The environment (built once per process, per override folder): templates from ``templates``
    first (a user's overrides, by name), then the built-in ones. Autoescape on and undefined names
    are errors; text from a log never reaches a template marked safe."""
    loaders: list[jinja2.BaseLoader] = []
    if templates is not None:
        loaders.append(jinja2.FileSystemLoader(str(templates)))
    loaders.append(jinja2.FileSystemLoader(str(reports_dir())))
    env = jinja2.Environment(loader=jinja2.ChoiceLoader(loaders), autoescape=True, trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                             bytecode_cache=_compiled_templates(),
                             finalize=reveal_bidi)  # bidi overrides shown, not obeyed
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["csp_hash"] = csp_hash
    env.filters["markdown"] = markdown
    env.filters["segs"] = segs
    env.filters["shown"] = shown
    env.filters["timeline_row"] = timeline_row
    return env
