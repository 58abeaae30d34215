"""Reading messages: the memo, the batch through ``nlp.pipe``, and the reading each scan becomes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from analyzer.lifecycle.language.intents import find_intents
from analyzer.lifecycle.language.model import Evidence, Intent, IntentHit, MessageReading
from analyzer.lifecycle.language.pastes import Prepared, prepare
from analyzer.lifecycle.language.pipeline import Pipeline, pipeline
from analyzer.lifecycle.language.scan import Hit, Scan
from analyzer.lifecycle.language.targets import targets

if TYPE_CHECKING:
    from spacy.tokens import Doc

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
    """Read many messages, in order, tokenizing the new ones in one ``nlp.pipe`` batch."""
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
        pipe = pipeline()
        prepared = [prepare(text, documents=documents) for text in missing]
        docs = pipe.nlp.pipe(prep.compact for prep in prepared)
        for text, prep, doc in zip(missing, prepared, docs, strict=True):
            reading = _read(pipe, text, prep, doc)
            found[text] = reading
            if len(cache) >= CACHE_SIZE:
                cache.clear()
            cache[text] = reading
    return [found[text] for text in wanted]


def clear_cache() -> None:
    """Forget memoised readings (tests, long-running batch workers)."""
    _CACHE.clear()
    _PLAIN_CACHE.clear()


def _read(pipe: Pipeline, text: str, prep: Prepared, doc: Doc) -> MessageReading:
    s = Scan(pipe, text, prep, doc)
    if s.n:
        find_intents(s, s.frame())
    return _result(s)


def _result(s: Scan) -> MessageReading:
    corrected = any(h.intent == Intent.correction for h in s.hits)
    s.hits = [h for h in s.hits if not h.past or corrected]
    # a question sentence is asked once, whatever number of cues it has
    seen_questions: set[int] = set()
    kept: list[Hit] = []
    for hit in s.hits:
        if hit.intent == Intent.question:
            sentence = s.clauses[hit.clause].sentence
            if sentence in seen_questions:
                continue
            seen_questions.add(sentence)
        kept.append(hit)
    s.hits = kept
    chosen = targets(s) if s.hits else []
    hits = tuple(
        IntentHit(hit.intent, hit.strength, _evidence(s, hit), target)
        for hit, target in zip(s.hits, chosen, strict=True)
    )
    return MessageReading(
        intents=frozenset(h.intent for h in hits),
        hits=hits,
        entities=tuple(s.entities),
        skipped=s.prep.skipped,
        truncated=s.prep.truncated,
    )


def _evidence(s: Scan, hit: Hit) -> tuple[Evidence, ...]:
    out: list[Evidence] = []
    for start, end in sorted(set(hit.spans)):
        first, last = s.starts[start], s.ends[end - 1]
        out.append(Evidence(first, last, s.text[first:last]))
    return tuple(out)
