"""The agent's messages as Markdown, the way the agent meant them to be read (lists, code, tables).

CommonMark through markdown-it-py with raw HTML off, so a tag in a log stays text, and images off,
so a report fetches nothing. The text given is already redacted and cut; this is the one place a
log's text becomes markup, and markdown-it escapes every character of it.

Most agent messages are a line or two of prose with no Markdown in them ("Let me check the
server."): those are written here as markdown-it writes them, paragraphs of escaped text, without
its parse (a tenth of the time) and without importing it (~16 ms of every report whose messages
are all plain). ``tests/report/test_markdown.py`` holds the two to the same bytes.

``report`` keeps the rest, a page's messages that need markdown-it, in the user's cache folder
(``rendered``): the postmortem loop (report, edit a rule or a label, report again) then neither
imports nor runs markdown-it, ~16 ms and ~1 µs a character (posthog's 25 rich messages: ~28 ms).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import marshal
import os
import re
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from analyzer._usercache import private_dir, read_private, write_private

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


def _plain(text: str) -> Markup | None:
    """``text`` as markdown-it writes it when it holds nothing Markdown could act on, else None."""
    if _NOT_PLAIN.search(text) is not None:
        return None
    paragraphs = (p.strip("\n").replace(">", "&gt;").replace('"', "&quot;") for p in _BLANK.split(text))
    return Markup("".join(f"<p>{p}</p>\n" for p in paragraphs if p))  # safe: escaped, and no & or < in it


def markdown(text: str) -> Markup:
    """``text`` (redacted) as HTML; links keep markdown-it's scheme check (no ``javascript:``)."""
    plain = _plain(text)
    return plain if plain is not None else Markup(_parser().render(text))  # safe: markdown-it escapes (html off)


KEEP = 64
"""Pages whose Markdown is kept; past that, the files least recently used go."""


@cache
def _version() -> bytes:
    """What the HTML depends on besides the text: this module, markdown-it's and mdurl's releases
    (their ``__init__``, read, not imported) and Python's (``marshal``'s format)."""
    digest = hashlib.sha256(b"markdown-1\0" + sys.version.encode())
    for name in ("markdown_it", "mdurl"):
        spec = importlib.util.find_spec(name)
        digest.update(Path(spec.origin).read_bytes() if spec is not None and spec.origin else b"-")
    digest.update(Path(__file__).read_bytes())
    return digest.digest()


def rendered(texts: list[str], *, keep: bool = False) -> list[Markup]:
    """Each of ``texts`` as ``markdown`` writes it. With ``keep``, the HTML of those that need
    markdown-it is kept, one file per page named by a digest of them and of ``_version``, and the
    next call with the same texts reads it back instead (a missing, unreadable, foreign or corrupt
    file only means rendering them again)."""
    out = [_plain(t) for t in texts]
    rich = [t for t, html in zip(texts, out, strict=True) if html is None]
    if not rich:
        return [html or Markup() for html in out]
    folder = private_dir("markdown") if keep else None
    path = _page(folder, rich) if folder is not None else None
    made = _read(path, len(rich)) if path is not None else None
    if made is None:
        made = [_parser().render(t) for t in rich]
        if folder is not None and path is not None and write_private(path, lambda fh: fh.write(marshal.dumps(made))):
            _prune(folder)
    fresh = iter(made)
    return [html if html is not None else Markup(next(fresh)) for html in out]  # safe: markdown-it's, or ours


def _page(folder: Path, rich: list[str]) -> Path:
    digest = hashlib.sha256(_version())
    for text in rich:
        data = text.encode("utf-8", "surrogatepass")  # a badly encoded log's lone surrogates too
        digest.update(len(data).to_bytes(8, "little") + data)
    return folder / f"{digest.hexdigest()[:40]}.marshal"


def _read(path: Path, count: int) -> list[str] | None:
    data = read_private(path)
    if data is None:
        return None
    try:
        made = marshal.loads(data)
    except Exception:  # truncated or not ours
        return None
    if not isinstance(made, list) or len(made) != count or not all(type(h) is str for h in made):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: kept longest
    return made


def _prune(folder: Path) -> None:
    with contextlib.suppress(OSError):
        pages = sorted(folder.glob("*.marshal"), key=lambda p: p.stat().st_mtime)
        for old in pages[:-KEEP]:
            old.unlink()
