"""A message read afresh: through the gate (no word a matcher can match: its regex entities only),
else tokenized by spaCy in one ``nlp.pipe`` batch and scanned, and the reading each scan becomes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer.lifecycle.language.entities import choose, regex_entities
from analyzer.lifecycle.language.gate import may_match
from analyzer.lifecycle.language.intents import find_intents
from analyzer.lifecycle.language.model import Evidence, Intent, IntentHit, MessageReading
from analyzer.lifecycle.language.pastes import Prepared, prepare
from analyzer.lifecycle.language.pipeline import Pipeline, pipeline
from analyzer.lifecycle.language.scan import Hit, Scan
from analyzer.lifecycle.language.targets import targets

if TYPE_CHECKING:
    from spacy.tokens import Doc


def read_fresh(texts: list[str], *, documents: bool = True, gate: bool = True) -> list[tuple[MessageReading, bool]]:
    """Each reading, and whether spaCy tokenized it (False: the gate stopped it)."""
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
