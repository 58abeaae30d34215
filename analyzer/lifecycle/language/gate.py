"""The gate in front of spaCy: a message none of whose words a matcher can match reads as nothing.

Every hit of the reader starts from a matched cue (``pipeline``'s ``Matcher`` and ``PhraseMatcher``
over the token ``LOWER``), a kind (the kinds ``PhraseMatcher``, a token named after a kind prefix),
a sentence ending in a bare "wait" or an error word beside a run word (``intents.run_errors``).
Each of these needs one token whose lowercase text is a word of ``gate_words()``, and a token's
lowercase text is a piece of the lowercased text spaCy reads (``Prepared.compact``): so a message
whose lowercased compact text contains none of those words as a substring can have no hit and no
kind, whatever the tokenizer does with it. Its reading is its regex entities (ports, hosts, units:
no tokens needed), its skipped parts and nothing else, made without importing spaCy.

The test is a plain substring search on purpose: a word-boundary test would have to know where
spaCy's special cases split a word ("shouldnt" is "should" + "nt"), which is spaCy's data, not
ours. The vocabulary is derived from the same pattern data the matchers are built from, so it
cannot drift from them; ``tests/lifecycle/test_language_gate.py`` reads every labelled, corpus and
fixture message with and without the gate and requires the same reading.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any

from analyzer.lifecycle.language import patterns as P


def pattern_groups() -> dict[str, list[P.TokenPattern]]:
    """Every token pattern the cue matchers are built from, by label (``pipeline.build_pipeline``)."""
    return {
        **P.VERB_PATTERNS,
        **P.STATE_PATTERNS,
        "HOLD": P.HOLD_PATTERNS,
        "CORR": P.CORRECTION_PATTERNS,
        "VERIFY": P.VERIFY_PATTERNS,
        "QNOUN": P.QUESTION_NOUN_PATTERNS,
        "QHOW": P.QUESTION_HOW_PATTERNS,
    }


def _required(spec: dict[str, Any]) -> bool:
    """Whether a token spec must match at least one token (no ``?``, ``*``, ``!`` or ``{0,n}``)."""
    op = spec.get("OP")
    if op is None or op == "+":
        return True
    return isinstance(op, str) and op.startswith("{") and op[1:2] not in ("0", ",")


def _words(spec: dict[str, Any]) -> tuple[str, ...] | None:
    """The words a spec's ``LOWER`` allows, or None when it allows any word but some (``NOT_IN``)."""
    low = spec.get("LOWER")
    if isinstance(low, str):
        return (low,)
    if isinstance(low, dict) and isinstance(low.get("IN"), list):
        return tuple(low["IN"])
    return None


def required_words(pattern: P.TokenPattern) -> tuple[str, ...]:
    """The words of one required token of ``pattern``: any match holds one of them.

    Of the required specs the one whose shortest word is longest is taken ("i never asked" gives
    "never", not "i"), so that the gate lets through as few messages as it can."""
    best: tuple[str, ...] | None = None
    for spec in pattern:
        words = _words(spec)
        if words and _required(spec) and (best is None or min(map(len, words)) > min(map(len, best))):
            best = words
    if best is None:  # a pattern that can match without a listed word: the gate cannot stand
        raise ValueError(f"a cue pattern with no required word: {pattern!r}")
    return best


@cache
def gate_words() -> tuple[str, ...]:
    """The words one of which a message must contain (lowercase) to be worth tokenizing, the
    shortest first (a message that has one most likely has a short common one)."""
    words: set[str] = set()
    for patterns in pattern_groups().values():
        for pattern in patterns:
            words.update(required_words(pattern))
    # the kinds PhraseMatcher: an alias's first token is its first word (IDENT_TOKEN keeps
    # "llama.cpp" and "text-generation-inference" whole; the gate test checks it against spaCy)
    words.update(alias.split()[0] for alias in P.KIND_ALIASES)
    # a token named after a kind ("vllm-server") starts with its prefix
    words.update(P.KIND_PREFIXES & P.KIND_ALIASES.keys())
    words.add("wait")  # intents.bare_wait
    words.update(_pickiest(P.ERROR_WORDS, P.RUN_WORDS))  # intents.run_errors needs one of each
    # the matchers compare lowercase text (a listed word with a capital matches its lowercase)
    return tuple(sorted({w.lower() for w in words}, key=lambda w: (len(w), w)))


def _pickiest(*alternatives: Iterable[str]) -> frozenset[str]:
    """Of word sets each of which a match must use, the one whose shortest word is longest."""
    return max((frozenset(a) for a in alternatives), key=lambda a: min(map(len, a)))


def may_match(compact_lower: str) -> bool:
    """Whether a matcher could match anything in this lowercased compact text."""
    return any(word in compact_lower for word in gate_words())
