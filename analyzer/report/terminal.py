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
"""

from __future__ import annotations

import sys
from typing import TextIO

from markupsafe import Markup

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


def reveal_bidi(value: object) -> object:
    """For HTML (the Jinja ``finalize`` hook, before autoescape): bidi and invisible format
    characters shown as ``<U+202E>`` text, so ``# \u202e1- 9- llik`` cannot render as
    ``# kill -9 -1``; markup already built (``Markup``) keeps its tags, its text is revealed too."""
    if not isinstance(value, str) or value.isascii():
        return value
    if isinstance(value, Markup):  # already HTML: the marker must be escaped text, not a tag
        return Markup(str(value).translate(_BIDI_HTML))
    return value.translate(_BIDI_TABLE)


def neutralise(text: str) -> str:
    """``text`` with every terminal control character made visible (see the module docstring)."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_TABLE)


class _Neutralising:
    """A text stream that neutralises what is written, then hands it on."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner

    def write(self, s: str) -> int:
        self._inner.write(neutralise(s))
        return len(s)

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def install(*, stdout: bool) -> None:
    """Neutralise the rest of this command's stderr, and its stdout when ``stdout`` (text output;
    JSON and SARIF already escape control characters, and their strings are data)."""
    if not isinstance(sys.stderr, _Neutralising):
        sys.stderr = _Neutralising(sys.stderr)
    if stdout and not isinstance(sys.stdout, _Neutralising):
        sys.stdout = _Neutralising(sys.stdout)
