"""The spaCy pipeline the reader runs: a blank English tokenizer and the cue and kind matchers.

Built once per process from the pattern data (``patterns``). spaCy takes most of a second to
import, so it is imported when the first message is read, never at module import: commands and
sessions that read no message never pay for it.
"""

from __future__ import annotations

import gc
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.lifecycle._spacy import cache_key, import_spacy, load_cached, store_cached
from analyzer.lifecycle.language import gate
from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.gate import pattern_groups

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
    """The process's pipeline, built on first use (or loaded from the cache of an earlier build)."""
    global _PIPELINE
    if _PIPELINE is None:
        _PIPELINE = cached_pipeline()
        # spaCy's modules and the pipeline live as long as the process: out of the cycle collector's
        # sight, the next collection does not scan their million objects (30-80 ms per check)
        gc.freeze()
    return _PIPELINE


def cached_pipeline() -> Pipeline:
    """``build_pipeline()``, with its vocabulary and matchers kept between processes
    (``analyzer.lifecycle._spacy``'s cache, keyed by this module's, the pattern data's and the
    pattern groups' (``gate``) source):
    loading them costs a third of building them. The tokenizer is made fresh either way."""
    import_spacy()
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.util import filter_spans
    from spacy.vocab import Vocab

    key = cache_key(*(Path(m.__file__).read_bytes() for m in (sys.modules[__name__], P, gate) if m.__file__))
    stored = load_cached("spacy-pipeline", key)
    if isinstance(stored, tuple) and len(stored) == 6:
        vocab, cues, phrases, kinds, verb_forms, wild_first = stored
        if (isinstance(vocab, Vocab) and isinstance(cues, Matcher) and isinstance(phrases, PhraseMatcher)
                and isinstance(kinds, PhraseMatcher) and isinstance(verb_forms, dict)
                and isinstance(wild_first, frozenset) and all(getattr(m, "vocab", None) is vocab for m in (cues, phrases, kinds))):
            return Pipeline(nlp=_blank_english(vocab), cues=cues, phrases=phrases, kinds=kinds,
                            verb_forms=verb_forms, wild_first=wild_first, filter_spans=filter_spans)
    built = build_pipeline()
    store_cached("spacy-pipeline", key, (built.nlp.vocab, built.cues, built.phrases, built.kinds,
                                         built.verb_forms, built.wild_first))
    return built


def _blank_english(vocab: Any = True) -> Language:
    """spacy.blank("en") whose tokenizer keeps identifiers like sglang-k26-ddtree, llama.cpp and
    vllm.service one token; on ``vocab`` when given (a cached one that holds the matchers' strings)."""
    from spacy.lang.en import English
    from spacy.tokenizer import Tokenizer

    # token_match set in the language's Defaults, not on the built tokenizer, which would load all
    # its special cases a second time (~60 ms)
    defaults = type("Defaults", (English.Defaults,), {"token_match": P.IDENT_TOKEN.fullmatch})
    nlp: Language = type("BlankEnglish", (English,), {"Defaults": defaults})(vocab=vocab)
    assert isinstance(nlp.tokenizer, Tokenizer) and nlp.tokenizer.token_match is not None
    return nlp


def build_pipeline() -> Pipeline:
    """Compile the pattern data into a blank English pipeline and its matchers (no model is loaded)."""
    import_spacy()
    from spacy.matcher import Matcher, PhraseMatcher
    from spacy.tokens import Doc
    from spacy.util import filter_spans

    nlp = _blank_english()
    cues = Matcher(nlp.vocab, validate=True)
    phrases = PhraseMatcher(nlp.vocab, attr="LOWER")
    wild_first: set[str] = set()
    for label, patterns in pattern_groups().items():  # the gate's vocabulary comes from the same groups
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

