"""Reading messages: the memo and the readings kept between processes; what neither holds is read
by ``fresh`` (the gate, or spaCy), imported only then, so that a process whose readings are all
kept loads none of the reader's patterns, regexes or stages."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from analyzer.lifecycle.language.model import MessageReading
from analyzer.lifecycle.language.store import forget, store

CACHE_SIZE: Final = 50_000
"""Distinct texts remembered; the memo is emptied when it is full."""

_CACHE: dict[str, MessageReading] = {}
_PLAIN_CACHE: dict[str, MessageReading] = {}
"""Readings with ``documents=False``."""


def read_message(text: str, *, documents: bool = True) -> MessageReading:
    """Read one user message (memoised per distinct text).

    With ``documents=False`` a structured message is read as written throughout: for an agent's
    own write-up, whose lists hold its claims ("- backend: running on :8080"), not a pasted spec."""
    hit = (_CACHE if documents else _PLAIN_CACHE).get(text)
    if hit is not None:
        return hit
    return read_messages([text], documents=documents)[0]


def read_messages(texts: Iterable[str], *, documents: bool = True) -> list[MessageReading]:
    """Read many messages, in order: each new one from the readings kept by an earlier process
    (``store``), else through the gate, else tokenized with the others in one ``nlp.pipe`` batch."""
    cache = _CACHE if documents else _PLAIN_CACHE
    wanted = list(texts)
    found: dict[str, MessageReading] = {}
    missing: list[str] = []
    for text in dict.fromkeys(wanted):
        cached = cache.get(text)
        if cached is None:
            missing.append(text)
        else:
            found[text] = cached
    if missing:
        kept = store()
        unread: list[str] = []
        for text in missing:
            reading = kept.get(text, documents) if kept is not None else None
            if reading is None:
                unread.append(text)
            else:
                found[text] = reading
        if unread:
            for text, (reading, tokenized) in zip(unread, read_fresh(unread, documents=documents), strict=True):
                found[text] = reading
                if tokenized and kept is not None:
                    kept.put(text, documents, reading)  # the gate's readings cost less than a lookup
        for text in missing:
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[text] = found[text]
    return [found[text] for text in wanted]


def read_fresh(texts: list[str], *, documents: bool = True, gate: bool = True) -> list[tuple[MessageReading, bool]]:
    """Read messages without the memo or the store: each reading, and whether spaCy tokenized it
    (False: the gate found no word a matcher could match). ``gate=False`` tokenizes every one
    (the gate's test holds the two to the same readings)."""
    from analyzer.lifecycle.language import fresh

    return fresh.read_fresh(texts, documents=documents, gate=gate)


def clear_cache() -> None:
    """Forget memoised readings (tests, long-running batch workers); readings kept between
    processes are written out first and the store closed (a test may change the cache folder)."""
    _CACHE.clear()
    _PLAIN_CACHE.clear()
    forget()
