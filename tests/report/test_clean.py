"""How much of a long text a report shows: ``_first``/``_last`` against the line-by-line rule they
implement (the first/last ``n`` lines, at most ``chars`` characters, the last line cut)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.report._clean import Cleaner, _first, _last


def lines_first(lines: list[str], n: int, chars: int) -> str:
    """The rule, line by line: whole lines while they fit, then the part of one that does."""
    out: list[str] = []
    used = 0
    for line in lines[:n]:
        room = chars - used
        if room <= 0:
            break
        if len(line) > room:
            out.append(line[:room])
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def lines_last(lines: list[str], n: int, chars: int) -> str:
    out: list[str] = []
    used = 0
    for line in reversed(lines[-n:]):
        room = chars - used
        if room <= 0:
            break
        if len(line) > room:
            out.append(line[-room:])
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(reversed(out))


TEXTS = st.text(alphabet="ab\n", max_size=60)  # few letters: many empty lines and limits on newlines


@settings(max_examples=2000)
@given(TEXTS, st.integers(0, 10), st.integers(0, 64))
def test_first_keeps_the_first_lines_that_fit(text: str, n: int, chars: int) -> None:
    assert _first(text, n, chars) == lines_first(text.split("\n"), n, chars)


@settings(max_examples=2000)
@given(TEXTS, st.integers(0, 10), st.integers(0, 64))
def test_last_keeps_the_last_lines_that_fit(text: str, n: int, chars: int) -> None:
    assert _last(text, n, chars) == lines_last(text.split("\n"), n, chars)


def test_a_long_output_is_shown_as_head_note_and_tail() -> None:
    text = "\n".join(f"line {i}" for i in range(1000))
    shown = Cleaner().text(text, head_lines=3, tail_lines=2, head_chars=500, tail_chars=500)
    assert shown.head == "line 0\nline 1\nline 2"
    assert shown.tail == "line 998\nline 999"
    assert shown.omitted_lines == 995 and shown.cut
    assert "995 lines" in shown.note
