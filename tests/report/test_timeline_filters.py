"""The timeline's ``segs`` and ``shown`` filters write what the macros of ``_report_macros.html.j2``
write, byte for byte (they replace a macro call per row), and ``timeline_row`` what the template's
loop wrote for each row."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.pipeline import analyze
from analyzer.report._clean import Cleaner, Seg, Shown
from analyzer.report._env import environment
from analyzer.report._timeline import Badge, Row, rows
from analyzer.report._when import Times
from analyzer.report.guard_log import GuardBadge

ROOT = Path(__file__).resolve().parents[2]

_TEXT = st.text(alphabet=st.sampled_from("ab <>&\"'\n\u202e\u200b\u00e9"), max_size=12)
_SEGS = st.lists(st.builds(Seg, _TEXT, st.sampled_from(["", "code", "hit", "fail"]),
                           st.sampled_from(["", "#event-3", '#x"<'])), max_size=5)
_SHOWN = st.builds(Shown, _TEXT, _TEXT, st.integers(0, 3), st.integers(0, 3000), st.integers(0, 9),
                   st.integers(0, 9000))


@cache
def _template(source: str) -> Any:
    """Compiled once: compiling per example was most of an example's time (and, on a loaded
    machine, past hypothesis's deadline)."""
    return environment().from_string(source)


def _both(macro: str, value: object) -> tuple[str, str]:
    by_macro = _template('{% import "_report_macros.html.j2" as m %}{{ m.' + macro + "(x) }}")
    by_filter = _template("{{ x|" + macro + " }}")
    return by_macro.render(x=value), by_filter.render(x=value)


@settings(deadline=None)  # no timing in tests: a shared machine's load is not a failure
@given(_SEGS)
def test_segs_filter_is_the_macro(items: list[Seg]) -> None:
    macro, filtered = _both("segs", items)
    assert filtered == macro


@settings(deadline=None)
@given(_SHOWN)
def test_shown_filter_is_the_macro(text: Shown) -> None:
    macro, filtered = _both("shown", text)
    assert filtered == macro


# The timeline's loop as ``_report_timeline.html.j2`` wrote it before ``timeline_row`` (issue 18).
_OLD_LOOP = """\
  {% for r in timeline %}
  <article class="ev{% if r.worst %} has-{{ r.worst }}{% endif %}" id="event-{{ r.index }}" data-kind="{{ r.kind }}"{% if r.lifecycle %} data-lifecycle="1"{% endif %}{% if r.badges %} data-finding="1"{% endif %}{% if r.guard %} data-guard="1"{% endif %}>
    <div class="gut">
      <a class="idx" href="#event-{{ r.index }}">#{{ r.index }}</a> {{ r.time }}<br>
      <span class="kind">{{ r.kind_label }}</span><br>
      <span>{{ r.who }}</span>
      <span class="src" title="{{ r.where }}">{{ r.short_where }}</span>
    </div>
    <div class="body">
      {% if r.badges %}<div class="badges">
        {% for b in r.badges %}<a class="badge {{ b.severity }}{{ '' if b.role == 'anchor' else ' rel' }}" href="#finding-{{ b.number }}" title="{{ 'finding' if b.role == 'anchor' else b.role + ' for finding' }} {{ b.number }}">{{ b.rule }}{% if b.role != "anchor" %} · {{ b.role }}{% endif %}</a>{% endfor %}
      </div>{% endif %}
      {% for g in r.guard %}<div class="guard {{ g.decision }}" data-guard="{{ g.decision }}"><b>guard {{ g.label }}</b>{% if g.rule %} <code>{{ g.rule }}</code>{% endif %}{% if g.latency %} <span class="muted">· {{ g.latency }}</span>{% endif %}{% if g.reason %}<span class="reason">{{ g.reason }}</span>{% endif %}</div>
      {% endfor %}
      {% if r.kind == "shell" %}
      <pre class="cmd">{{ r.command_head|segs }}{% if r.command_note %}

<span class="cut">{{ r.command_note }}</span>{% if r.command_tail %}

{{ r.command_tail|segs }}{% endif %}{% endif %}</pre>
      {% elif r.kind == "tool" %}
      <pre class="text mono">{{ r.input }}</pre>
      {% elif r.text and r.markdown %}
      <div class="text md">{{ r.text.head|markdown }}{% if r.text.cut %}<p class="cut">{{ r.text.note }}</p>{% if r.text.tail %}{{ r.text.tail|markdown }}{% endif %}{% endif %}</div>
      {% elif r.text %}
      <pre class="text">{{ r.text|shown }}</pre>
      {% endif %}
      {% for st in r.status %}<span class="status{{ ' bad' if st.startswith('exit') or st in ('error', 'interrupted') }}">{{ st }}</span>{% endfor %}
      {% if r.output %}
      <details class="output"><summary>output <span class="muted">· {{ r.output.total_lines|thousands }} line{{ "s" if r.output.total_lines != 1 }}{% if r.output.cut %}, cut to fit{% endif %}</span>{% if r.preview %} <code class="preview">{{ r.preview }}</code>{% endif %}</summary><pre class="out">{{ r.output|shown }}</pre></details>
      {% endif %}
      {% if r.thinking %}
      <details class="thinking"><summary>thinking <span class="muted">(not shown to the user)</span></summary><pre class="out">{{ r.thinking|shown }}</pre></details>
      {% endif %}
      {% if r.facts %}<ul class="facts-line">{% for x in r.facts %}<li>{{ x }}</li>{% endfor %}</ul>{% endif %}
    </div>
  </article>
  {% endfor %}
"""

_ROLE = st.sampled_from(["anchor", "cause", "probe", 'x"<'])
_BADGES = st.lists(st.builds(Badge, st.integers(1, 12), _TEXT, st.sampled_from(["high", "low"]), _ROLE), max_size=3)
_GUARD = st.lists(st.builds(GuardBadge, st.sampled_from(["deny", "ask"]), _TEXT, _TEXT, _TEXT, _TEXT,
                            st.integers(0, 9)), max_size=2)
_MAYBE_SHOWN = st.one_of(st.none(), _SHOWN)
_ROW = st.builds(
    Row, index=st.integers(0, 20_000), kind=st.sampled_from(["user", "assistant", "shell", "tool", "system"]),
    kind_label=_TEXT, who=_TEXT, time=_TEXT, where=_TEXT, agent=_TEXT, text=_MAYBE_SHOWN, markdown=st.booleans(),
    command_head=_SEGS, command_tail=_SEGS, command_note=_TEXT, tool=_TEXT, input=_TEXT,
    status=st.lists(st.sampled_from(["exit 1", "error", "interrupted", "ok", "run by the user", "<b>"]), max_size=3),
    output=_MAYBE_SHOWN, preview=_TEXT, thinking=_MAYBE_SHOWN, facts=st.lists(_TEXT, max_size=2), badges=_BADGES,
    guard=_GUARD)


def _loops(rows: list[Row]) -> tuple[str, str]:
    old = _template(_OLD_LOOP).render(timeline=rows)
    new = _template("{% for r in timeline %}{{ r|timeline_row }}{% endfor %}").render(timeline=rows)
    return old, new


@settings(deadline=None)
@given(st.lists(_ROW, max_size=3))
def test_timeline_row_filter_is_the_old_loop(rows: list[Row]) -> None:
    old, new = _loops(rows)
    assert new == old


@pytest.mark.parametrize("seed", sorted((ROOT / "fixtures" / "seeds").glob("*.session.yaml"))[:6], ids=lambda p: p.name)
def test_timeline_row_filter_is_the_old_loop_on_real_rows(seed: Path) -> None:
    a = analyze(seed)
    times, clean = Times(a.session), Cleaner(True)
    badges = {f.anchor.index: [Badge(1, f.rule, f.severity.value, "anchor")] for f in a.findings}
    old, new = _loops(rows(a.world, times, clean, badges))
    assert new == old and "<article" in new
