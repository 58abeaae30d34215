"""The timeline's ``segs`` and ``shown`` filters write what the macros of ``_report_macros.html.j2``
write, byte for byte (they replace a macro call per row)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from analyzer.report._clean import Seg, Shown
from analyzer.report._env import environment

_TEXT = st.text(alphabet=st.sampled_from("ab <>&\"'\n\u202e\u200b\u00e9"), max_size=12)
_SEGS = st.lists(st.builds(Seg, _TEXT, st.sampled_from(["", "code", "hit", "fail"]),
                           st.sampled_from(["", "#event-3", '#x"<'])), max_size=5)
_SHOWN = st.builds(Shown, _TEXT, _TEXT, st.integers(0, 3), st.integers(0, 3000), st.integers(0, 9),
                   st.integers(0, 9000))


def _both(macro: str, value: object) -> tuple[str, str]:
    env = environment()
    by_macro = env.from_string('{% import "_report_macros.html.j2" as m %}{{ m.' + macro + "(x) }}")
    by_filter = env.from_string("{{ x|" + macro + " }}")
    return by_macro.render(x=value), by_filter.render(x=value)


@given(_SEGS)
def test_segs_filter_is_the_macro(items: list[Seg]) -> None:
    macro, filtered = _both("segs", items)
    assert filtered == macro


@given(_SHOWN)
def test_shown_filter_is_the_macro(text: Shown) -> None:
    macro, filtered = _both("shown", text)
    assert filtered == macro
