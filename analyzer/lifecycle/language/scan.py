"""The reading in progress: the message's words and clauses, and the hits found so far.

Every cue handler (``verbs``, ``states``, ``intents``) takes a ``Scan`` and adds ``Hit``s to it;
the questions they share about a clause's subject, a sentence's servers and the next verb live here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.clauses import (
    VERB_INTENTS,
    Clause,
    Cue,
    find_cues,
    group_clauses,
    mark_questions,
    split_clauses,
    split_sentences,
)
from analyzer.lifecycle.language.model import EntityLabel, Intent
from analyzer.lifecycle.language.pastes import Prepared
from analyzer.lifecycle.language.pipeline import Pipeline
from analyzer.lifecycle.language.words import Words

if TYPE_CHECKING:
    from spacy.tokens import Doc


@dataclass(slots=True)
class Hit:
    """An intent found at a cue, before its target is chosen."""

    intent: Intent
    strength: float
    spans: list[tuple[int, int]]
    """Token spans of the words it rests on."""
    anchor: int
    clause: int
    mention: str | None = None
    own: tuple[int, int] | None = None
    """Token span whose entities belong to this hit first (a hold phrase's inner words)."""
    past: bool = False


class Scan(Words):
    """One message being read: its words, cues and clauses, and the hits found so far."""

    def __init__(self, pipe: Pipeline, text: str, prep: Prepared, doc: Doc) -> None:
        super().__init__(pipe, text, prep, doc)
        self.hits: list[Hit] = []
        self.used: set[int] = set()
        """Tokens a hold or correction phrase took, so they are not read again as verbs."""
        self.cues: list[Cue] = []
        self.cue_starts: set[int] = set()
        self.clauses: list[Clause] = []
        self.clause_of: list[int] = []
        """Per token, the index of its clause."""

    def frame(self) -> list[tuple[int, int]]:
        """Find the cues, sentences and clauses (once, before any cue is read); returns the sentences."""
        cues = find_cues(self)
        self.cues = cues
        self.cue_starts = {c.start for c in cues}
        sentences = split_sentences(self)
        clauses = split_clauses(self, sentences, cues)
        mark_questions(self, clauses)
        group_clauses(self, clauses, cues)
        self.clauses = clauses
        # every token belongs to the last clause that starts at or before it (lone punctuation included)
        self.clause_of = [0] * self.n
        for k, clause in enumerate(clauses):
            end = clauses[k + 1].start if k + 1 < len(clauses) else self.n
            for i in range(clause.start, end):
                self.clause_of[i] = k
        return sentences

    def clause(self, i: int) -> Clause:
        """The clause token ``i`` belongs to."""
        return self.clauses[self.clause_of[i]]

    def subject_class(self, head: int, clause: Clause) -> tuple[str, str | None]:
        """Classify the noun phrase ending at ``head``: server, pronoun, blocked, nonserver, unknown."""
        start = head
        while start > clause.start and self.low[start - 1] not in ("and", "or", ",", "but", "so", "then"):
            if head - start >= 6:
                break
            start -= 1
        while start < head and (self.low[start] in P.DISCOURSE or self.low[start] in P.CORRECTION_OPENERS):
            start += 1
        words = range(start, head + 1)
        mention = self.span_text(start, head + 1)
        if self.low[head] in P.BLOCKED_SUBJECTS:
            return "blocked", None
        if any(self.server_word(i) for i in words):
            return "server", mention
        if any(self.low[i] in P.NONSERVER_NOUNS for i in words):
            return "nonserver", None
        if any(self.low[i] in P.BLOCKED_SUBJECTS for i in words):
            return "blocked", None
        if any(self.low[i] in P.SUBJECT_PRONOUNS for i in words):
            return "pronoun", mention
        return "unknown", None

    def sentence_has_server(self, i: int, ports: bool = True) -> bool:
        """Whether token ``i``'s sentence names a server or "it" (a port alone counts only with ``ports``)."""
        sentence = self.clause(i).sentence
        for clause in self.clauses:
            if clause.sentence != sentence:
                continue
            for j in range(clause.start, clause.end):
                if self.is_entity(j) and (ports or not self.is_entity(j, EntityLabel.port)):
                    return True
                if self.low[j] in P.OBJECT_SERVER_NOUNS or self.low[j] in ("it", "its"):
                    return True
        return False

    def add(self, intent: Intent, strength: float, spans: list[tuple[int, int]], anchor: int,
            mention: str | None = None, own: tuple[int, int] | None = None, past: bool = False) -> None:
        """Record a hit anchored at token ``anchor``."""
        self.hits.append(Hit(intent, strength, spans, anchor, self.clause_of[anchor], mention, own, past))

    def question(self, spans: list[tuple[int, int]], anchor: int, mention: str | None = None) -> None:
        """Record a question about a server."""
        self.add(Intent.question, 0.9, spans, anchor, mention)

    def next_verb(self, after: int, clause: Clause) -> Cue | None:
        """The first verb cue at or after ``after`` in the clause."""
        for cue in self.cues:
            if cue.start >= after and cue.start < clause.end and cue.label in VERB_INTENTS:
                return cue
        return None
