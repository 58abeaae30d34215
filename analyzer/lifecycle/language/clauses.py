"""Cues, sentences and clauses: the frame every intent is read in.

Cues are the matched phrases (verbs, states, hold and correction phrases, question nouns); where
main cues overlap, hold and correction phrases win, then the longest. Sentences end at ``.!?;…``
and line breaks; clauses at commas, dashes, conjunctions and conditionals ("if", "when", …). Each
clause is marked with the question it asks, if any (``qkind``), and clauses that only list servers
("…, vllm and tgi") join the group of the clause before them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.model import Intent
from analyzer.lifecycle.language.words import Words

VERB_INTENTS: Final[dict[str, Intent]] = {"V_RESTART": Intent.restart, "V_LAUNCH": Intent.launch,
                                          "V_STOP": Intent.stop, "V_REPLACE": Intent.stop}
"""Verb cue labels and the instruction each one gives (a replacement stops the server it names)."""
SIDE_LABELS: Final = frozenset({"VERIFY", "QNOUN", "QHOW"})
"""Cues that never hide other cues under them."""


@dataclass(slots=True)
class Cue:
    """A matched cue phrase."""

    label: str
    start: int
    end: int
    """Token indices into the content tokens, end exclusive."""


@dataclass(slots=True)
class Clause:
    """A run of tokens read as one statement, question or instruction."""

    start: int
    end: int
    sentence: int
    condition: str | None = None
    """The conditional word that opens it ("if", "when", …), or None."""
    qkind: str | None = None
    """plain, request, suggest, opinion, why, why_you, or None for a statement."""
    verify: int | None = None
    """Token index of a "check"/"make sure" whose state words this clause asks about."""
    group: int = 0
    index: int = 0
    """Position in the message's clause list."""


def find_cues(w: Words) -> list[Cue]:
    """The cues of the message, overlaps resolved, in order."""
    found: list[Cue] = []
    strings = w.pipe.nlp.vocab.strings
    matches = list(w.pipe.phrases(w.doc))
    if not w.pipe.wild_first.isdisjoint(w.low):
        matches += w.pipe.cues(w.doc)
    for match_id, start, end in matches:
        first = w.doc_to_content.get(start)
        last = w.doc_to_content.get(end - 1)
        if first is None or last is None:
            continue
        found.append(Cue(strings[match_id], first, last + 1))
    side = [c for c in found if c.label in SIDE_LABELS]
    main = [c for c in found if c.label not in SIDE_LABELS]
    main.sort(key=lambda c: (0 if c.label in ("HOLD", "CORR") else 1, -(c.end - c.start), c.start))
    taken = bytearray(w.n)
    kept: list[Cue] = []
    for cue in main:
        if any(taken[cue.start : cue.end]):
            continue
        taken[cue.start : cue.end] = b"\x01" * (cue.end - cue.start)
        kept.append(cue)
    return sorted(kept + side, key=lambda c: (c.start, c.end))


def split_sentences(w: Words) -> list[tuple[int, int]]:
    """Token spans of the sentences."""
    out: list[tuple[int, int]] = []
    start = 0
    masked = w.prep.masked
    for i in range(w.n):
        if i > start and "\n" in masked[w.ends[i - 1] : w.starts[i]]:
            out.append((start, i))
            start = i
        word = w.low[i]
        if word and all(ch in ".!?;…" for ch in word) and not (word == "." and w.glued(i)):
            out.append((start, i + 1))
            start = i + 1
    if start < w.n:
        out.append((start, w.n))
    return [span for span in out if span[1] > span[0]]


def split_clauses(w: Words, sentences: list[tuple[int, int]], cues: list[Cue]) -> list[Clause]:
    """The clauses of each sentence, with the conditional word that opens them."""
    cue_starts = {c.start: c for c in cues if c.label in VERB_INTENTS or c.label in ("HOLD", "VERIFY")}
    clauses: list[Clause] = []
    for s_index, (s_start, s_end) in enumerate(sentences):
        start = s_start
        condition: str | None = None
        kept = appositions(w, s_start, s_end)
        for i in range(s_start, s_end):
            word = w.low[i]
            brk = False
            skip_token = False
            if i == s_start:
                if word in P.CONDITIONALS:
                    condition = word
                continue
            if i in kept:
                continue
            if word in P.CLAUSE_BREAKS or (word in ("-", "--") and w.spaced(i)):
                brk = True
                skip_token = not word.isalpha()
            elif word in P.CONDITIONALS:
                brk = True
            elif word in ("and", "or", "&", "plus"):
                nxt = i + 1
                brk = nxt < s_end and (nxt in cue_starts or w.low[nxt] in P.NEW_SUBJECTS)
            if brk:
                if i > start:
                    clauses.append(Clause(start, i, s_index, condition))
                start = i + 1 if skip_token else i
                condition = word if word in P.CONDITIONALS else None
        if s_end > start:
            clauses.append(Clause(start, s_end, s_index, condition))
    clauses = [c for c in clauses if c.end > c.start and not only_punct(w, c)]
    for index, clause in enumerate(clauses):
        clause.index = index
    return clauses


def appositions(w: Words, start: int, end: int) -> set[int]:
    """The brackets of a parenthesis that only names the server before it ("the backend (Spring
    Boot) is running", "vLLM (port 8000) is up"): no clause break, so the name belongs to the
    clause's state or verb. A parenthesis that says more ("(or whatever port Vite picks)") breaks."""
    kept: set[int] = set()
    i = start
    while i < end:
        if w.low[i] != "(":
            i += 1
            continue
        close = next((j for j in range(i + 1, min(end, i + 8)) if w.low[j] == ")"), None)
        inner = range(i + 1, close) if close is not None else range(0)
        if close is not None and inner and any(w.is_entity(j) for j in inner) and all(
                w.is_entity(j) or w.low[j] in P.SERVER_NOUNS or w.low[j] in P.OBJECT_SKIP for j in inner):
            kept.update((i, close))
            i = close
        i += 1
    return kept


def only_punct(w: Words, clause: Clause) -> bool:
    return all(not any(ch.isalnum() for ch in w.low[i]) for i in range(clause.start, clause.end))


def mark_questions(w: Words, clauses: list[Clause]) -> None:
    """Set each clause's ``qkind`` from its sentence's question openers and final "?"."""
    by_sentence: dict[int, list[Clause]] = {}
    for clause in clauses:
        by_sentence.setdefault(clause.sentence, []).append(clause)
    for group in by_sentence.values():
        last = group[-1]
        ends_q = any("?" in w.low[i] for i in range(last.start, min(last.end + 1, w.n)))
        current: str | None = None
        for k, clause in enumerate(group):
            kind = opener(w, clause, ends_q, k == 0)
            if kind is not None:
                current = kind
            clause.qkind = current
        if ends_q and all(c.qkind is None for c in group):
            last.qkind = "suggest"


def opener(words: Words, clause: Clause, ends_q: bool, first: bool) -> str | None:
    """The kind of question the clause's first words open, or None."""
    i = clause.start
    while i < clause.end - 1 and words.low[i] in P.DISCOURSE:
        i += 1
    w = words.low[i]
    w2 = words.low[i + 1] if i + 1 < clause.end else ""
    w3 = words.low[i + 2] if i + 2 < clause.end else ""
    ahead = words.low[i + 1 : min(clause.end, i + 5)]
    if w == "why":
        if w2 == "not" or (w2 in ("do", "dont") and (w3 in P.NEGATORS or w3 in ("you", "we"))):
            return "request"
        if w2 in ("did", "would", "'d", "do", "are", "were", "have", "does", "'re") and (
                "you" in ahead or "u" in ahead):
            return "why_you"
        return "why"
    if w == "how" and w2 == "come":
        return "why"
    if w in ("how", "what") and w2 == "about":
        return "request"
    if w == "any" and w2 in ("idea", "ideas", "reason", "clue", "clues"):
        return "why" if "why" in ahead else "plain"
    if w in ("can", "could", "would", "will") and w2 in ("you", "u", "ya", "we", "someone"):
        return "request"
    if w in ("should", "shall") and w2 in ("i", "we"):
        return "opinion"
    if w in ("do", "does", "did") and w2 in P.NEGATORS:
        return "plain" if ends_q else None
    if w in ("do", "does", "did") and not (w2 in P.QUESTION_SUBJECTS or words.is_entity(i + 1)):
        return None  # "do a quick restart": an imperative
    if w in P.QUESTION_AUX:
        if w in ("will", "would", "can", "could") and not ends_q:
            return None
        if not ends_q and not (w2 in P.QUESTION_SUBJECTS or words.is_entity(i + 1)):
            return None  # "am getting 502 bad gateway": chat that drops its "I", not an inversion
        return "plain"
    if w in P.WH_WORDS:
        if w == "when" and not (ends_q and first):
            return None
        return "plain"
    return None


def group_clauses(w: Words, clauses: list[Clause], cues: list[Cue]) -> None:
    """Clauses that only list servers ("…, vllm and tgi") join the clause before them."""
    cue_tokens = {i for c in cues for i in range(c.start, c.end)}
    group = -1
    previous_sentence = -1
    for clause in clauses:
        words = range(clause.start, clause.end)
        orphan = clause.sentence == previous_sentence and not any(i in cue_tokens for i in words) and all(
            w.is_entity(i) or w.low[i] in P.OBJECT_SKIP or w.low[i] in P.SERVER_NOUNS
            or w.low[i] in ("and", "or", "&", "plus", "too", "also", "on", "at", ",")
            for i in words)
        if not orphan:
            group += 1
        clause.group = max(group, 0)
        previous_sentence = clause.sentence
