"""The agent messages' Markdown: prose without Markdown is written without markdown-it, to the
same bytes markdown-it writes (the report's pages must not change with the shortcut); a page's
HTML kept for the next report of the same messages reads back the same, and a file that cannot be
trusted or read is rendered again."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from analyzer import _usercache
from analyzer.report import _markdown
from analyzer.report._markdown import markdown, rendered

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


_MESSAGES = ["Let me check the server.", "Started `npm run dev` on **3000**:\n\n- one\n- two", "",
             "| a | b |\n|---|---|\n| 1 | 2 |", "<b>not a tag</b> & [x](javascript:alert(1))"]


def _no_markdown_it(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise AssertionError("markdown-it was used")

    monkeypatch.setattr(_markdown, "_parser", refuse)


def test_a_pages_markdown_is_kept_and_read_back_the_same(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, str(tmp_path))
    first = rendered(_MESSAGES, keep=True)
    assert [str(h) for h in first] == [str(markdown(t)) for t in _MESSAGES]
    assert len(list((tmp_path / "markdown").iterdir())) == 1
    with monkeypatch.context() as m:
        _no_markdown_it(m)
        assert rendered(_MESSAGES, keep=True) == first, "read back, without markdown-it"
        with pytest.raises(AssertionError):
            rendered([*_MESSAGES, "*new*"], keep=True)  # other messages: rendered, not read back


@pytest.mark.parametrize("damage", [b"", b"\x00garbage", marshal.dumps(["<p>one</p>\n"]), marshal.dumps({"a": 1})])
def test_an_unusable_kept_page_is_rendered_again(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                damage: bytes) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, str(tmp_path))
    first = rendered(_MESSAGES, keep=True)
    (kept,) = (tmp_path / "markdown").iterdir()
    kept.write_bytes(damage)
    assert rendered(_MESSAGES, keep=True) == first
    kept.write_bytes(damage)
    kept.chmod(0o666)  # another user could have written it: not read
    assert not _usercache.private(kept.stat())
    assert rendered(_MESSAGES, keep=True) == first


def test_nothing_is_kept_unless_asked_or_with_the_cache_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, str(tmp_path))
    expected = [str(markdown(t)) for t in _MESSAGES]
    assert [str(h) for h in rendered(_MESSAGES)] == expected
    assert not (tmp_path / "markdown").exists()
    monkeypatch.setenv(_usercache.CACHE_ENV, "")
    assert [str(h) for h in rendered(_MESSAGES, keep=True)] == expected


def test_only_the_latest_pages_are_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(_markdown, "KEEP", 3)
    for n in range(5):
        rendered([f"**page {n}**"], keep=True)
    assert len(list((tmp_path / "markdown").iterdir())) == 3
