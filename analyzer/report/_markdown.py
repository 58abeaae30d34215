"""The agent's messages as Markdown, the way the agent meant them to be read (lists, code, tables).

CommonMark through markdown-it-py with raw HTML off, so a tag in a log stays text, and images off,
so a report fetches nothing. The text given is already redacted and cut; this is the one place a
log's text becomes markup, and markdown-it escapes every character of it.

Most agent messages are a line or two of prose with no Markdown in them ("Let me check the
server."): those are written here as markdown-it writes them, paragraphs of escaped text, without
its parse (a tenth of the time) and without importing it (~16 ms of every report whose messages
are all plain). ``tests/report/test_markdown.py`` holds the two to the same bytes.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from markupsafe import Markup

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    return md


_NOT_PLAIN = re.compile(r"[^\n !\"#$%'()+,\-./0-9:;=>?@A-Z^a-z{}\x80-\U0010ffff]|[^\S \n]|^[ #+\-=>]|^\d+[.)]| $",
                        re.MULTILINE)
"""What could make Markdown of a text, or make markdown-it change it: any character that starts
an inline construct or an escape or entity (`` ` * _ [ ] < & \\ | ~ ``), a line starting a block (a
heading, a list item, a quote, a setext underline, indented code: any leading space), trailing
spaces (a hard break), and every whitespace but the space and the newline (a tab is indentation,
and markdown-it strips a paragraph of Unicode spaces at its ends). Text without any of these is
paragraphs of text to markdown-it, split at blank lines."""

_BLANK = re.compile(r"\n{2,}")


def markdown(text: str) -> Markup:
    """``text`` (redacted) as HTML; links keep markdown-it's scheme check (no ``javascript:``)."""
    if _NOT_PLAIN.search(text) is None:  # paragraphs of prose, escaped as markdown-it does (no & or <)
        paragraphs = (p.strip("\n").replace(">", "&gt;").replace('"', "&quot;") for p in _BLANK.split(text))
        return Markup("".join(f"<p>{p}</p>\n" for p in paragraphs if p))  # safe: escaped, nothing else
    return Markup(_parser().render(text))  # safe: markdown-it escapes every character (html is off)
