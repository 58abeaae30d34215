"""Words: a message's tokens as the reader sees them, with their offsets and entities.

The tokens are spaCy's, without whitespace tokens; ``low`` holds them lowercased, ``starts`` and
``ends`` their character offsets in the original text, ``entity_at`` the entity each one is part of.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.entities import find_entities
from analyzer.lifecycle.language.model import EntityLabel
from analyzer.lifecycle.language.pastes import Prepared
from analyzer.lifecycle.language.pipeline import Pipeline

if TYPE_CHECKING:
    from spacy.tokens import Doc


class Words:
    """The tokens of one message and the questions every stage asks about a single word."""

    def __init__(self, pipe: Pipeline, text: str, prep: Prepared, doc: Doc) -> None:
        self.pipe = pipe
        self.text = text
        self.prep = prep
        self.doc = doc
        content = [t for t in doc if not t.is_space]
        self.low = [t.lower_ for t in content]
        self.n = len(content)
        self.doc_to_content = {t.i: k for k, t in enumerate(content)}
        self.starts = [prep.original(t.idx) for t in content]
        self.ends = [start + len(t) for start, t in zip(self.starts, content, strict=True)]
        self.entities = find_entities(prep, doc, pipe, content)
        self.entity_at: list[int | None] = [None] * self.n
        self.entity_tokens: list[list[int]] = []
        """Per entity, the tokens it covers (a token belongs to the first entity over it)."""
        for k, ent in enumerate(self.entities):
            tokens: list[int] = []
            i = max(bisect_right(self.starts, ent.start) - 1, 0)
            while i < self.n and self.starts[i] < ent.end:
                if ent.start < self.ends[i]:
                    tokens.append(i)
                    if self.entity_at[i] is None:
                        self.entity_at[i] = k
                i += 1
            self.entity_tokens.append(tokens)

    def span_text(self, start: int, end: int) -> str:
        return self.text[self.starts[start] : self.ends[end - 1]]

    def is_entity(self, i: int, *labels: EntityLabel) -> bool:
        k = self.entity_at[i]
        return k is not None and (not labels or self.entities[k].label in labels)

    def server_word(self, i: int) -> bool:
        return self.is_entity(i) or self.low[i] in P.SERVER_NOUNS

    def subject_head(self, i: int) -> bool:
        word = self.low[i]
        return self.server_word(i) or word in P.SUBJECT_PRONOUNS

    def glued(self, i: int) -> bool:
        """A "." with no space on either side ("v0.6.2" split oddly) ends no sentence."""
        inner = 0 < i < self.n - 1
        return inner and self.ends[i - 1] == self.starts[i] and self.ends[i] == self.starts[i + 1]

    def spaced(self, i: int) -> bool:
        return self.starts[i] > self.ends[i - 1] if i > 0 else True

    def ends_here(self, i: int) -> bool:
        return i + 1 >= self.n or not any(ch.isalnum() for ch in self.low[i + 1]) or self.low[i + 1] in (
            "and", "now", "please", "again", "too", "on", "for")

