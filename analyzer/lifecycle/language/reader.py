"""Reading messages: the memo, the readings kept between processes, the gate, the batch through
``nlp.pipe``, and the reading each scan becomes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from analyzer.lifecycle.language.entities import choose, regex_entities
from analyzer.lifecycle.language.gate import may_match
from analyzer.lifecycle.language.intents import find_intents
from analyzer.lifecycle.language.model import Evidence, Intent, IntentHit, MessageReading
from analyzer.lifecycle.language.pastes import Prepared, prepare
from analyzer.lifecycle.language.pipeline import Pipeline, pipeline
from analyzer.lifecycle.language.scan import Hit, Scan
from analyzer.lifecycle.language.store import forget, store
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
        fresh: list[str] = []
        for text in missing:
            reading = kept.get(text, documents) if kept is not None else None
            if reading is None:
                fresh.append(text)
            else:
                found[text] = reading
        for text, (reading, tokenized) in zip(fresh, read_fresh(fresh, documents=documents), strict=True):
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
    prepared = [prepare(text, documents=documents) for text in texts]
    out: list[tuple[MessageReading, bool] | None] = [None] * len(texts)
    tokenize: list[int] = []
    for k, prep in enumerate(prepared):
        if gate and not may_match(prep.compact.lower()):
            out[k] = (_unmatched(prep), False)
        else:
            tokenize.append(k)
    if tokenize:
        pipe = pipeline()
        docs = pipe.nlp.pipe(prepared[k].compact for k in tokenize)
        for k, doc in zip(tokenize, docs, strict=True):
            out[k] = (_read(pipe, texts[k], prepared[k], doc), True)
    return [r for r in out if r is not None]


def clear_cache() -> None:
    """Forget memoised readings (tests, long-running batch workers); readings kept between
    processes are written out first and the store closed (a test may change the cache folder)."""
    _CACHE.clear()
    _PLAIN_CACHE.clear()
    forget()


def _unmatched(prep: Prepared) -> MessageReading:
    """The reading of a message the gate stops: no cue and no kind, only the regexes' entities."""
    units, ports, hosts = regex_entities(prep)
    return MessageReading(intents=frozenset(), hits=(), entities=tuple(choose(len(prep.masked), units, ports, [], hosts)),
                          skipped=prep.skipped, truncated=prep.truncated)


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
