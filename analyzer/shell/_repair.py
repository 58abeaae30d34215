"""Repair of commands that logs cut short or that are unbalanced (shell-semantics §4 step 5).

``strip_marker`` removes a log's truncation marker (``… [truncated 1532 chars]``): the text
after it is not shell. ``close`` appends the first closer that makes tree-sitter parse the text
without an error: the quote, ``)``, backtick, ``done``/``fi``/``}`` or heredoc delimiter the cut
left open; then pairs of them for doubly-open text (``ssh h 'for …; do x``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_MARKER = re.compile(
    r"[ \t]*(?P<pre>\.\.\.|…)?[ \t]*\[(?:\.\.\.\s*)?"
    r"(?:truncated(?:[ :]+\d[\d,]*\s*(?:chars?|characters|bytes|lines|tokens))?"
    r"|\d[\d,]*\s*(?:chars?|characters|bytes|lines|tokens)\s+(?:truncated|omitted))"
    r"(?:\s*(?:\.\.\.|…))?\][ \t]*(?P<post>\.\.\.|…)?",
    re.IGNORECASE,
)
_CLOSERS = ("'", '"', ")", "`", "'\"", "\"'", "')", "\")", "; done", "; fi", "\nEOF", "}", "\n}", " ]]",
            "; esac")
_HEREDOC = re.compile(r"<<-?[ \t]*(?:'([^'\n]+)'|\"([^\"\n]+)\"|\\?([A-Za-z_][\w.-]*))")


def strip_marker(text: str) -> tuple[str, str | None]:
    """(text before a truncation marker, note) or (text, None) when there is none."""
    if "runcated" not in text and "RUNCATED" not in text and "omitted" not in text:
        return text, None
    for m in _MARKER.finditer(text):
        at_end = not text[m.end() :].strip()
        if at_end or m.group("pre") or m.group("post"):
            cut = text[: m.start()]
            return cut, f"log truncation marker {m.group(0).strip()!r} at offset {m.start()}: text after it dropped"
    return text, None


def closers(text: str) -> list[str]:
    """Candidate closers, the open heredoc's own delimiter first."""
    out: list[str] = []
    found = _HEREDOC.findall(text)
    if found:
        delim = next(x for x in found[-1] if x)
        out.append(f"\n{delim}")
    out.extend(c for c in _CLOSERS if c not in out)
    return out


def close(text: str, parses: Callable[[str], bool]) -> tuple[str, str] | None:
    """(repaired text, closer) for the first closer (or pair) with which ``parses`` holds."""
    cands = closers(text)
    for c in cands:
        if parses(text + c):
            return text + c, c
    for c1 in cands:
        for c2 in cands:
            if parses(text + c1 + c2):
                return text + c1 + c2, c1 + c2
    return None
