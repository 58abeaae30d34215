"""The agent messages' Markdown: prose without Markdown is written without markdown-it, to the
same bytes markdown-it writes (the report's pages must not change with the shortcut)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer.report import _markdown
from analyzer.report._markdown import markdown

# every character class the plain test lets through or refuses, at line starts and ends too
_PIECES = st.sampled_from([
    "a", "Word", " ", "  ", "\n", "\n\n", "\n \n", "\t", "1.", "2)", "10", "#", "# ", "-", "- ", "--", "---",
    "+", "=", "==", ">", "> ", "<", "&", "&amp;", '"', "'", "`", "*", "_", "[", "]", "(", ")", "!", "|",
    "~", "\\", ":", "http://x.y/z", "{", "}", "$", "%", "@", "^", "?", ";", ",", ".", "/", "\u00a0", "\u2003",
    "\u00e9", "\u2014", "\U0001f600", "\x00", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\x01", "    x",
])
_TEXTS = st.one_of(st.lists(_PIECES, max_size=16).map("".join), st.text(max_size=40))


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
@example("Let me check the server.")
@example("First line\nsecond line\n\n\nA new paragraph: 10 > 9, \"quoted\" - #18.")
@example("\n\nx\n")
def test_plain_text_is_written_as_markdown_it_writes_it(text: str) -> None:
    assert str(markdown(text)) == _markdown._parser().render(text)


def test_markdown_is_still_rendered_and_html_in_it_escaped() -> None:
    assert str(markdown("run `npm run dev` then **check**")) == \
        "<p>run <code>npm run dev</code> then <strong>check</strong></p>\n"
    assert str(markdown("<script>alert(1)</script> & more")) == "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; more</p>\n"
