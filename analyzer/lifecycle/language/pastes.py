"""Pastes: the parts of a message that are not the user's own words, blanked before anything is read.

Fenced code, harness blocks, machine-looking lines and runs of them, a prose line's tail from an
inline log marker on, double-quoted strings, the headings of a pasted document, and the middle of
an over-long message. The blanked
text keeps every offset; the compact text (each skipped part one newline) is what spaCy tokenizes.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Final

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.model import Skipped

MAX_ANALYSED_CHARS: Final = 6000
"""Longer messages are read at the first ``HEAD_CHARS`` and last ``TAIL_CHARS`` characters."""
HEAD_CHARS: Final = 4000
TAIL_CHARS: Final = 1500


@dataclass(frozen=True, slots=True)
class Prepared:
    """A message ready to tokenize: what is skipped, and the way back to the original offsets."""

    masked: str
    """The text with skipped parts blanked out (same length, so offsets stay valid)."""
    compact: str
    """What spaCy reads: each skipped part is one newline (long blank runs make its tokenizer slow)."""
    shifts: tuple[tuple[int, int], ...]
    """(position in ``compact``, offset to add there to get the position in the text), ascending."""
    skipped: tuple[Skipped, ...]
    truncated: bool
    document: tuple[int, int] | None = None
    """The span, in the text, of a pasted structured document (a task prompt, spec, audit report): from
    its first heading, list item or table row to its last. What it says about a server and what it
    asks to build are the document's; only its constraints ("do not start services") bind the agent."""

    def original(self, pos: int) -> int:
        """A position in ``compact`` as a position in the text."""
        k = bisect_right(self.shifts, (pos, len(self.masked) + 1)) - 1
        return pos + self.shifts[k][1]


_COMPACTION: Final = "This session is being continued"
_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def prepare(text: str, documents: bool = True) -> Prepared:
    """Find what is not the user's own words; with ``documents``, a pasted structured document too."""
    regions = _fences(text)
    if "</" in text:
        regions += [(m.start(), m.end(), "harness") for m in P.HARNESS_BLOCK.finditer(text)]
    if "[Request interrupted" in text or "Caveat:" in text or text.startswith(_COMPACTION):
        regions += [(m.start(), m.end(), "harness") for m in P.HARNESS_LINE.finditer(text)]
    regions += _pasted_lines(text)
    document, headings = _document(text) if documents else (None, [])
    regions += [(start, end, "heading") for start, end in headings]
    if '"' in text or "\u201c" in text:
        regions += [(m.start(), m.end(), "quote") for m in P.QUOTED.finditer(text)]
    truncated = len(text) > MAX_ANALYSED_CHARS
    if truncated:
        head = _word_boundary(text, HEAD_CHARS)
        tail = _word_boundary(text, len(text) - TAIL_CHARS)
        if tail > head:
            regions.append((head, tail, "length-cap"))
    merged = _merge(regions, text)
    normalised = text.translate(_APOSTROPHES)
    masked, compact, shifts = _blank(normalised, merged)
    return Prepared(masked, compact, shifts, tuple(Skipped(s, e, r) for s, e, r in merged), truncated,
                    document)


DOCUMENT_MIN_CHARS: Final = 1000
DOCUMENT_MIN_LINES: Final = 5
"""A message this long with this many structure lines is (or carries) a pasted document."""


def _document(text: str) -> tuple[tuple[int, int] | None, list[tuple[int, int]]]:
    """The pasted document's span, and its heading lines (a heading is never an instruction:
    "Stop Condition / Hand-off Rule")."""
    if len(text) < DOCUMENT_MIN_CHARS:
        return None, []
    lines: list[tuple[int, int]] = []
    headings: list[tuple[int, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        structure = P.STRUCTURE_LINE.match(body)
        if structure or _title_case(body):
            lines.append((pos, pos + len(body)))
            if not structure or body.lstrip().startswith("#"):
                headings.append((pos, pos + len(body)))
        pos += len(line)
    if len(lines) < DOCUMENT_MIN_LINES:
        return None, []
    return (lines[0][0], lines[-1][1]), headings


def _title_case(line: str) -> bool:
    """A heading without markdown: 2-8 words, every content word capitalised, no final punctuation."""
    body = line.strip()
    if not body or body[-1] in ".,;:!?)":
        return False
    words = body.split()
    content = [w for w in words if w.lower() not in P.TITLE_SMALL_WORDS]
    return 2 <= len(words) <= 8 and len(content) >= 2 and all(w[0].isupper() for w in content)


def _fences(text: str) -> list[tuple[int, int, str]]:
    out: list[tuple[int, int, str]] = []
    pos = 0
    while (start := text.find("```", pos)) >= 0:
        end = text.find("```", start + 3)
        if end < 0:
            out.append((start, len(text), "code-fence"))
            break
        out.append((start, end + 3, "code-fence"))
        pos = end + 3
    return out


def _pasted_lines(text: str) -> list[tuple[int, int, str]]:
    """Machine output and code pasted without a fence, line by line."""
    out: list[tuple[int, int, str]] = []
    run: list[tuple[int, int, bool]] = []  # (start, end, is_log) of paste-like lines

    def flush() -> None:
        if run and (len(run) > 1 or run[0][2]):
            out.append((run[0][0], run[-1][1], "paste" if len(run) > 1 else "log"))
        run.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        start = pos
        pos += len(line)
        body = line.rstrip("\r\n")
        if not body.strip():
            continue
        is_log = P.LOG_LINE.match(body) is not None
        signature = None if is_log else P.SERVER_LOG_SIGNATURE.search(body)
        if signature is not None and signature.start() - (len(body) - len(body.lstrip())) <= 12:
            is_log = True
        if is_log or P.CODE_LINE.match(body):
            run.append((start, start + len(body), is_log))
            continue
        flush()
        tail = P.INLINE_LOG_TAIL.search(body)
        if tail is not None:
            out.append((start + tail.start(), start + len(body), "log"))
        elif signature is not None:
            end = body.find(" ", signature.end() + 1)
            out.append((start + signature.start(), start + (len(body) if end < 0 else end), "log"))
    flush()
    return out


def _word_boundary(text: str, pos: int) -> int:
    space = text.rfind(" ", 0, pos)
    return pos if space < pos - 40 else space


def _merge(regions: list[tuple[int, int, str]], text: str) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for start, end, reason in sorted(regions):
        if merged and start <= merged[-1][1] + 1 and not text[merged[-1][1] : start].strip():
            prev = merged[-1]
            merged[-1] = (prev[0], max(prev[1], end), prev[2])
        else:
            merged.append((start, end, reason))
    return merged


def _blank(text: str, regions: list[tuple[int, int, str]]) -> tuple[str, str, tuple[tuple[int, int], ...]]:
    """The text with each skipped part blanked (same length) and compacted to one newline (a sentence
    break), plus the offset table from compact positions back to text positions."""
    blanked: list[str] = []
    compact: list[str] = []
    shifts: list[tuple[int, int]] = [(0, 0)]
    pos = 0
    size = 0
    for start, end, _ in regions:
        blanked += [text[pos:start], "\n" + " " * (end - start - 1)]
        compact += [text[pos:start], "\n"]
        size += start - pos + 1
        shifts.append((size, end - size))
        pos = end
    blanked.append(text[pos:])
    compact.append(text[pos:])
    return "".join(blanked), "".join(compact), tuple(shifts)


def segments(prep: Prepared) -> list[tuple[int, int]]:
    """The parts of the text that are read (the complement of the skipped parts)."""
    out: list[tuple[int, int]] = []
    pos = 0
    for part in prep.skipped:
        if part.start > pos:
            out.append((pos, part.start))
        pos = max(pos, part.end)
    if pos < len(prep.masked):
        out.append((pos, len(prep.masked)))
    return out
