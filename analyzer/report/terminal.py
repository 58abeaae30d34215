"""Text fit for a terminal: transcript text must not drive the terminal that shows it.

A session log can hold escape sequences (an agent's ``cat`` of a file, a hostile user message):
printed raw, OSC 0 sets the window title, OSC 8 hides a link under harmless text, OSC 52 writes
the clipboard, DCS and C1 CSI (U+009B) reach the terminal's parser, ``\\r`` and backspaces
overwrite what was printed, and bidi controls (U+202E) reorder a line so ``kill -9 -1`` reads as
something else. ``neutralise`` makes every such character visible and inert: C0 controls and DEL
become their Unicode control pictures (ESC is ``␛``, so a sequence shows as text), C1 controls
and bidi/invisible format characters become ``<U+XXXX>``. Newline and tab stay.

``install`` puts this at the output boundary of a command: every write to stdout (text formats)
and stderr goes through it. ``reveal_bidi`` does the bidi part for the HTML report, as the
templates' finalize hook: every ``{{ value }}`` passes through it.

JSON outputs (``json_text``) keep their strings exact, as data: orjson escapes C0 controls itself,
and DEL, C1 controls, bidi and invisible format characters (and U+2028/U+2029, which end a line in
JavaScript) are written as ``\\uXXXX`` escapes. A JSON reader gets the same characters back; a
terminal that shows the document (``| less``, a CI log) gets only ASCII for them.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

import orjson
from markupsafe import Markup

from analyzer.report.redact import Redactor

_BIDI_AND_INVISIBLE = (
    *range(0x200B, 0x2010),  # zero-width space/joiners, LRM, RLM
    0x061C,  # Arabic letter mark
    *range(0x202A, 0x202F),  # LRE RLE PDF LRO RLO
    *range(0x2066, 0x206A),  # LRI RLI FSI PDI
    0xFEFF,  # zero-width no-break space
)

_TABLE: dict[int, str] = {
    **{c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)},
    0x7F: "\u2421",
    **{c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)},
    **{c: f"<U+{c:04X}>" for c in _BIDI_AND_INVISIBLE},
}


_BIDI_TABLE: dict[int, str] = {c: f"<U+{c:04X}>" for c in _BIDI_AND_INVISIBLE}
_BIDI_HTML: dict[int, str] = {c: f"&lt;U+{c:04X}&gt;" for c in _BIDI_AND_INVISIBLE}
# one regex scan finds out whether there is anything to reveal: ~14x faster than translating a
# non-ASCII text that holds none (every {{ value }} of a report passes here: 0.5 s of a 50 MB one)
_BIDI_ANY = re.compile("[" + "".join(re.escape(chr(c)) for c in _BIDI_AND_INVISIBLE) + "]")


def reveal_bidi(value: object) -> object:
    """For HTML (the Jinja ``finalize`` hook, before autoescape): bidi and invisible format
    characters shown as ``<U+202E>`` text, so ``# \u202e1- 9- llik`` cannot render as
    ``# kill -9 -1``; markup already built (``Markup``) keeps its tags, its text is revealed too."""
    if not isinstance(value, str) or value.isascii() or _BIDI_ANY.search(value) is None:
        return value
    if isinstance(value, Markup):  # already HTML: the marker must be escaped text, not a tag
        return Markup(str(value).translate(_BIDI_HTML))
    return value.translate(_BIDI_TABLE)


_JSON_ESCAPES: dict[int, str] = {
    c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *_BIDI_AND_INVISIBLE, 0x2028, 0x2029)
}


def json_text(doc: object) -> str:
    """``doc`` as indented JSON that cannot drive a terminal (see the module docstring): inside a
    JSON text these characters can only be in strings, so each escape stands for the same data."""
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
    return text if text.isascii() and "\x7f" not in text else text.translate(_JSON_ESCAPES)


def neutralise(text: str) -> str:
    """``text`` with every terminal control character made visible (see the module docstring)."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_TABLE)


class _Neutralising:
    """A text stream that redacts and neutralises what is written, then hands it on: the output
    boundary of a command (each ``click.echo`` is one write, so a message is redacted whole)."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self._redact = Redactor()

    def write(self, s: str) -> int:
        if not isinstance(s, str):  # bytes a caller wrote on purpose (a binary stream underneath)
            return self._inner.write(s)
        self._inner.write(neutralise(self._redact(s)))
        return len(s)

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def install(*, stdout: bool) -> None:
    """Redact and neutralise the rest of this command's stderr (diagnostics quote the log), and its
    stdout when ``stdout`` (text output; a JSON document is redacted whole and escaped by
    ``json_text``, its strings are data)."""
    if not isinstance(sys.stderr, _Neutralising):
        sys.stderr = _Neutralising(sys.stderr)
    if stdout and not isinstance(sys.stdout, _Neutralising):
        sys.stdout = _Neutralising(sys.stdout)
