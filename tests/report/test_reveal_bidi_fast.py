"""``reveal_bidi``'s fast path (one regex scan before translating) reveals exactly what translating
every value did."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from markupsafe import Markup

from analyzer.report import terminal

# the characters that matter, among others that look alike or sit next to them
_NEAR = "".join(map(chr, terminal._BIDI_AND_INVISIBLE)) + "\u200a\u2010\u2029\u202f\u2065\u206a\ufefe\u061b\u061d"
texts = st.text(alphabet=st.one_of(st.sampled_from(_NEAR), st.characters()), max_size=60)


@given(texts)
def test_text_is_revealed_as_by_translating_it(text: str) -> None:
    got = terminal.reveal_bidi(text)
    assert got == text.translate(terminal._BIDI_TABLE)
    assert type(got) is str


@given(texts)
def test_markup_is_revealed_as_by_translating_it(text: str) -> None:
    got = terminal.reveal_bidi(Markup(text))
    assert got == Markup(text.translate(terminal._BIDI_HTML))
    assert isinstance(got, Markup)


def test_a_right_to_left_override_in_long_non_ascii_text_is_still_shown() -> None:
    text = "build ✓ módulo " * 500 + "# \u202e1- 9- llik"
    assert terminal.reveal_bidi(text).endswith("# <U+202E>1- 9- llik")
