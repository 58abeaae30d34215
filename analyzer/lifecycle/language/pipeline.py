"""The spaCy pipeline the reader runs: a blank English tokenizer and the cue and kind matchers.

Built once per process from the pattern data (``patterns``). spaCy takes most of a second to
import, so it is imported when the first message is read, never at module import: commands and
sessions that read no message never pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analyzer.lifecycle._spacy import import_spacy
from analyzer.lifecycle.language import patterns as P

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.matcher import Matcher, PhraseMatcher


@dataclass(slots=True)
class Pipeline:
    """The tokenizer and the matchers, with what the reader derives from the pattern data."""

    nlp: Language
    cues: Matcher
    """Cue patterns with wildcards ("bring … up", "leave … alone")."""
    phrases: PhraseMatcher
    """Every other cue pattern, expanded to its fixed word sequences."""
    kinds: PhraseMatcher
    verb_forms: dict[str, tuple[str, str]]
    wild_first: frozenset[str]
    """First words of the Matcher's patterns: a message with none of them skips the Matcher."""
    filter_spans: Any
    """``spacy.util.filter_spans``, kept here so the module imports spaCy only with the pipeline."""


_PIPELINE: Pipeline | None = None


def pipeline() -> Pipeline:
    """The process's pipeline, built on first use."""
    global _PIPELINE
    if _PIPELINE is None:
        _PIPELINE = build_pipeline()
    return _PIPELINE


def build_pipeline() -> Pipeline:
    """Compile the pattern data into a blank English pipeline and its matchers (no model is loaded)."""
    import_spacy()
    from spacy.lang.en import English
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.tokenizer import Tokenizer
    from spacy.tokens import Doc
    from spacy.util import filter_spans

    # spacy.blank("en") whose tokenizer keeps identifiers like sglang-k26-ddtree, llama.cpp and
    # vllm.service one token: token_match set in the language's Defaults, not on the built tokenizer,
    # which would load all its special cases a second time (~60 ms)
    defaults = type("Defaults", (English.Defaults,), {"token_match": P.IDENT_TOKEN.fullmatch})
    nlp: Language = type("BlankEnglish", (English,), {"Defaults": defaults})()
    assert isinstance(nlp.tokenizer, Tokenizer) and nlp.tokenizer.token_match is not None
    cues = Matcher(nlp.vocab, validate=True)
    phrases = PhraseMatcher(nlp.vocab, attr="LOWER")
    wild_first: set[str] = set()
    groups: dict[str, list[P.TokenPattern]] = {
        **P.VERB_PATTERNS,
        **P.STATE_PATTERNS,
        "HOLD": P.HOLD_PATTERNS,
        "CORR": P.CORRECTION_PATTERNS,
        "VERIFY": P.VERIFY_PATTERNS,
        "QNOUN": P.QUESTION_NOUN_PATTERNS,
        "QHOW": P.QUESTION_HOW_PATTERNS,
    }
    for label, patterns in groups.items():
        wild: list[P.TokenPattern] = []
        fixed: set[tuple[str, ...]] = set()
        for pattern in patterns:
            expanded = P.fixed_phrases(pattern)
            if expanded is None:
                wild.append(pattern)
            else:
                fixed.update(expanded)
        if wild:
            cues.add(label, wild)
            wild_first.update(word for pattern in wild for word in pattern[0]["LOWER"]["IN"])
        if fixed:
            phrases.add(label, [Doc(nlp.vocab, words=list(words)) for words in sorted(fixed)])
    kinds = PhraseMatcher(nlp.vocab, attr="LOWER")
    for alias, canonical in P.KIND_ALIASES.items():
        kinds.add(canonical, [nlp.make_doc(alias)])
    return Pipeline(nlp=nlp, cues=cues, phrases=phrases, kinds=kinds, verb_forms=P.verb_forms(),
                     wild_first=frozenset(wild_first), filter_spans=filter_spans)

