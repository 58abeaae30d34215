"""Transcript text made fit to show: redacted, cut to a size a page can hold, and split into
segments so that highlighting never needs markup built from transcript data.

Every string from the transcript goes through ``Cleaner`` before it reaches a template; templates
escape it (autoescape) and wrap marked segments in ``<mark>``/``<code>`` themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from analyzer.report.redact import Redactor

_MARGIN = 1024
"""Slack around a window of a long text: a secret cut by the window edge falls in it and is dropped
(tokens are far shorter; an unterminated private key block is masked to the window's end)."""


@dataclass(frozen=True)
class Seg:
    """A piece of shown text. ``mark`` is a CSS class chosen by the report (``hit``, ``fail``,
    ``ok``, ``code``), never by the transcript; ``href`` is an in-page anchor the report made."""

    text: str
    mark: str = ""
    href: str = ""


@dataclass(frozen=True)
class Shown:
    """A possibly long text as shown: head, an omission note, tail."""

    head: str
    tail: str = ""
    omitted_lines: int = 0
    omitted_chars: int = 0
    total_lines: int = 0
    total_chars: int = 0

    @property
    def cut(self) -> bool:
        return bool(self.omitted_lines or self.omitted_chars)

    @property
    def note(self) -> str:
        if not self.cut:
            return ""
        parts = []
        if self.omitted_lines:
            parts.append(f"{self.omitted_lines:,} line{'s' if self.omitted_lines != 1 else ''}")
        parts.append(f"{human_size(self.omitted_chars)}")
        return f"… {' / '.join(parts)} not shown (of {self.total_lines:,} lines, {human_size(self.total_chars)}) …"


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} chars"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"


class Cleaner:
    """Redacts (when enabled) and cuts transcript text. Redaction results are cached by text, so a
    command shown in a finding and in the timeline is counted once among the kinds found."""

    def __init__(self, redact: bool = True) -> None:
        self.redactor = Redactor(enabled=redact)
        self._cache: dict[str, str] = {}

    @property
    def enabled(self) -> bool:
        return self.redactor.enabled

    def kinds(self) -> list[tuple[str, int]]:
        return self.redactor.kinds()

    def __call__(self, text: str | None) -> str:
        if not text:
            return ""
        if not self.redactor.enabled:
            return text
        got = self._cache.get(text)
        if got is None:
            got = self._cache[text] = self.redactor(text)
        return got

    def clip(self, text: str | None, room: int) -> str:
        """Redacted, then cut to ``room`` characters with ``…``."""
        shown = self.text(text, head_lines=10**9, tail_lines=0, head_chars=room, tail_chars=0)
        return shown.head + ("…" if shown.cut else "")

    def one_line(self, text: str | None, room: int) -> str:
        """Redacted, whitespace folded, cut to ``room``."""
        flat = " ".join(self._window_head(text or "", room * 2 + 64).split())
        return flat if len(flat) <= room else flat[: max(room - 1, 0)] + "…"

    def text(self, text: str | None, *, head_lines: int = 40, tail_lines: int = 20,
             head_chars: int = 8000, tail_chars: int = 3000) -> Shown:
        """The first ``head_lines`` and last ``tail_lines`` lines (each part capped in characters),
        redacted, with what was cut counted."""
        raw = text or ""
        total_chars = len(raw)
        total_lines = raw.count("\n") + 1 if raw else 0
        if total_chars <= head_chars + tail_chars + 2 * _MARGIN:
            clean = self(raw)
            head_src, tail_src = clean, clean
        else:  # redact what is shown, not megabytes; drop the margin where a secret may be cut in two
            head_src = self._window_head(raw, head_chars)
            tail_src = self._window_tail(raw, tail_chars)
            clean = ""
        head = _first(head_src, head_lines, head_chars)
        if clean and len(head) >= len(clean):
            return Shown(head=head, total_lines=total_lines, total_chars=total_chars)
        tail = _last(tail_src, tail_lines, tail_chars) if (tail_lines and tail_chars) else ""
        shown_lines = head.count("\n") + 1 + (tail.count("\n") + 1 if tail else 0)
        if clean and tail and len(head) + len(tail) + 1 >= len(clean):
            return Shown(head=clean, total_lines=total_lines, total_chars=total_chars)
        omitted_chars = max(total_chars - len(head) - len(tail), 0)
        omitted_lines = max(total_lines - shown_lines, 0)
        return Shown(head=head, tail=tail, omitted_lines=omitted_lines, omitted_chars=omitted_chars,
                     total_lines=total_lines, total_chars=total_chars)

    def _window_head(self, raw: str, chars: int) -> str:
        if len(raw) <= chars + _MARGIN:
            return self(raw)
        red = self(raw[: chars + _MARGIN])
        return red[: max(len(red) - _MARGIN, 0)]

    def _window_tail(self, raw: str, chars: int) -> str:
        if len(raw) <= chars + _MARGIN:
            return self(raw)
        red = self(raw[-(chars + _MARGIN):])
        return red[min(_MARGIN, len(red)):]


def _first(text: str, n: int, chars: int) -> str:
    """The first ``n`` lines of ``text`` and at most ``chars`` characters of them (the last line
    cut; a newline the limit falls right after is dropped). Found with ``str.find``/``count``, not
    by splitting into lines: this runs for every text a report shows."""
    if n <= 0 or chars <= 0:
        return ""
    limit = chars + 1
    if text.count("\n", 0, limit) >= n:  # the n-th newline may end the head before the limit
        pos = -1
        for _ in range(n):
            pos = text.find("\n", pos + 1, limit)
        if pos < chars:
            return text[:pos]
    elif len(text) < chars:
        return text
    head = text[:chars]
    return head[:-1] if head.endswith("\n") else head


def _last(text: str, n: int, chars: int) -> str:
    """The last ``n`` lines of ``text`` (all of them when ``n`` is 0) and at most ``chars``
    characters of them: ``_first`` from the end."""
    if chars <= 0:
        return ""
    size = len(text)
    floor = size - chars  # the earliest start the character limit allows
    if n > 0 and text.count("\n", max(floor - 1, 0)) >= n:
        pos = size
        for _ in range(n):
            pos = text.rfind("\n", max(floor - 1, 0), pos)
        if pos + 1 > floor:
            return text[pos + 1:]
    elif floor < 0:
        return text
    tail = text[floor:]
    return tail[1:] if tail.startswith("\n") else tail


# -- segments --------------------------------------------------------------------------------


def marked(text: str, spans: Iterable[tuple[int, int]], mark: str = "hit") -> list[Seg]:
    """``text`` split into plain and marked segments; overlapping spans are merged."""
    merged: list[list[int]] = []
    for a, b in sorted((max(0, a), min(len(text), b)) for a, b in spans):
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out: list[Seg] = []
    pos = 0
    for a, b in merged:
        if a > pos:
            out.append(Seg(text[pos:a]))
        out.append(Seg(text[a:b], mark))
        pos = b
    if pos < len(text) or not out:
        out.append(Seg(text[pos:]))
    return out


def occurrences(text: str, needles: Sequence[str]) -> list[tuple[int, int]]:
    """Spans of every literal occurrence of each needle."""
    spans: list[tuple[int, int]] = []
    for needle in needles:
        if not needle:
            continue
        start = text.find(needle)
        while start >= 0:
            spans.append((start, start + len(needle)))
            start = text.find(needle, start + len(needle))
    return spans


def window(text: str, spans: list[tuple[int, int]], room: int) -> tuple[str, list[tuple[int, int]], bool, bool]:
    """At most ``room`` characters of ``text`` that show the first span; spans shifted to match.
    Returns (text, spans, cut before, cut after)."""
    if len(text) <= room:
        return text, spans, False, False
    first = min((a for a, _ in spans), default=0)
    start = 0 if first < room * 2 // 3 else max(0, first - room // 3)
    end = min(len(text), start + room)
    shifted = [(max(a, start) - start, min(b, end) - start) for a, b in spans if b > start and a < end]
    return text[start:end], shifted, start > 0, end < len(text)


_CODE = re.compile(r"``(.+?)``|`([^`\n]+)`")


def with_code(text: str) -> list[Seg]:
    """Backticked parts (Markdown or reST) as ``code`` segments: finding messages and rule docs
    quote commands that way."""
    out: list[Seg] = []
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            out.append(Seg(text[pos:m.start()]))
        out.append(Seg(m.group(1) or m.group(2), "code"))
        pos = m.end()
    if pos < len(text) or not out:
        out.append(Seg(text[pos:]))
    return out
