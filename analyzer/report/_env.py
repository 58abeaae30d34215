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


def _html(value: object) -> Markup:
    """One value as ``{{ value }}`` writes it: bidi revealed (the finalize hook), then escaped."""
    return escape(reveal_bidi(value))


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
        return _html(t.head)
    tail = f"\n{_html(t.tail)}" if t.tail else ""
    return Markup(f'{_html(t.head)}\n<span class="cut">{_html(t.note)}</span>\n{tail}')


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
    return env
