"""The agent's messages as Markdown, the way the agent meant them to be read (lists, code, tables).

CommonMark through markdown-it-py with raw HTML off, so a tag in a log stays text, and images off,
so a report fetches nothing. The text given is already redacted and cut; this is the one place a
log's text becomes markup, and markdown-it escapes every character of it.
"""

from __future__ import annotations

from functools import cache

from markdown_it import MarkdownIt
from markupsafe import Markup


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.disable("image")
    return md


def markdown(text: str) -> Markup:
    """``text`` (redacted) as HTML; links keep markdown-it's scheme check (no ``javascript:``)."""
    return Markup(_parser().render(text))  # safe: markdown-it escapes every character (html is off)
