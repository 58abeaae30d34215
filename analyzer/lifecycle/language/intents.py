"""Intents: every cue read in its context, in the order that lets phrases absorb the verbs they govern.

"check"/"make sure" first (the state words after them are asked about), then hold and correction
phrases ("leave it running", "wrong port": they take the verb that follows), then verbs, states and
question nouns, and last the sentence-level cues: a bare "wait", and "No, it's still up". Inside a
pasted document (``Prepared.document``) only the constraints (holds) count.
"""

from __future__ import annotations

from typing import Final

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.clauses import VERB_INTENTS, Clause, Cue
from analyzer.lifecycle.language.model import Intent
from analyzer.lifecycle.language.objects import Object, context, scan_object
from analyzer.lifecycle.language.scan import Hit, Scan
from analyzer.lifecycle.language.states import state
from analyzer.lifecycle.language.verbs import verb

STATE_LABELS: Final = frozenset(P.STATE_TIER)


def find_intents(s: Scan, sentences: list[tuple[int, int]]) -> None:
    """Read every cue of a framed scan into hits."""
    for cue in s.cues:
        if cue.label == "VERIFY":
            verify(s, cue)
    # hold and correction phrases first: they absorb the verb that follows them
    for cue in s.cues:
        if cue.label == "HOLD":
            hold(s, cue)
        elif cue.label == "CORR":
            correction_phrase(s, cue)
    for cue in s.cues:
        if cue.start in s.used:
            continue
        if cue.label in VERB_INTENTS:
            verb(s, cue)
        elif cue.label in STATE_LABELS:
            state(s, cue)
        elif cue.label in ("QNOUN", "QHOW"):
            question_noun(s, cue)
    bare_wait(s, sentences)
    correction_openers(s, sentences)
    run_errors(s, sentences)
    keep_document_constraints(s)


def keep_document_constraints(s: Scan) -> None:
    """Inside a pasted document (a task prompt, spec, audit report) only its constraints count.

    What it says or asks about a server's state is the document's ("the app is ready when …", an
    audit's "backend unreachable", "how the UI now works"), and its positive instructions are the
    requirements of the work ("- start the app", "Deploy the app and include a link"), not orders
    for now; "do not start services" binds the agent (a hold)."""
    if s.prep.document is None:
        return
    start, end = s.prep.document
    s.hits = [h for h in s.hits if h.intent == Intent.hold or not start <= s.starts[h.anchor] < end]


def hold(s: Scan, cue: Cue) -> None:
    """A hold phrase (\"leave it running\", \"don't touch\"), with the verb it absorbs."""
    clause = s.clause(cue.start)
    words = s.low[cue.start : cue.end]
    spans = [(cue.start, cue.end)]
    end = cue.end
    own: tuple[int, int] | None = (cue.start, cue.end)
    if words[-1] in P.HOLD_ABSORBS or (words[0] in ("no", "there") and words[-1] == "to"):
        verb = s.next_verb(cue.end, clause)
        if verb is not None and verb.start - cue.end <= 2:
            s.used.update(range(verb.start, verb.end))
            spans.append((verb.start, verb.end))
            end = verb.end
        elif words[-1] == "to":
            return  # "no need to re-import it": not about a server
    obj = hold_object(s, cue, words, end, clause)
    if obj.cls == "nonserver":
        return
    if words[0] in ("wait", "give", "be") and clause.qkind is not None:
        return
    s.used.update(range(cue.start, cue.end))
    s.add(Intent.hold, 0.9, spans, cue.start, obj.mention, own=own)


def hold_object(s: Scan, cue: Cue, words: list[str], end: int, clause: Clause) -> Object:
    if words[0] in ("leave", "leaving", "keep", "keeping", "let"):
        inner = range(cue.start + 1, cue.end - 1)
        for i in inner:
            if s.is_entity(i) or s.low[i] in P.SERVER_NOUNS:
                return Object("server", s.span_text(cue.start + 1, i + 1))
            if s.low[i] in P.NONSERVER_NOUNS:
                return Object("nonserver")
            if s.low[i] in P.OBJECT_PRONOUNS:
                return Object("pronoun", s.low[i])
        return Object("none")
    if words[0] in ("wait", "give", "be", "hands", "hold"):
        return Object("none")
    return scan_object(s, end, clause, first_word=False)


def correction_phrase(s: Scan, cue: Cue) -> None:
    """A correction phrase (\"wrong port\"), with the verb it absorbs."""
    clause = s.clause(cue.start)
    spans = [(cue.start, cue.end)]
    verb = s.next_verb(cue.end, clause)
    if verb is not None:
        s.used.update(range(verb.start, verb.end))
        spans.append((verb.start, verb.end))
    s.used.update(range(cue.start, cue.end))
    s.add(Intent.correction, 0.9, spans, cue.start)


def verify(s: Scan, cue: Cue) -> None:
    """\"check\"/\"make sure\": the state words after it (and in an if-clause next) are asked about."""
    clause = s.clause(cue.start)
    ctx = context(s, cue.start, clause)
    if ctx.subject is not None or ctx.negated:
        return
    clause.verify = cue.start
    index = clause.index
    if index + 1 < len(s.clauses):
        nxt = s.clauses[index + 1]
        if nxt.sentence == clause.sentence and nxt.condition in ("if", "whether"):
            nxt.verify = nxt.start


def question_noun(s: Scan, cue: Cue) -> None:
    """A question about a server by a noun (\"what port\", \"how long does it take\")."""
    clause = s.clause(cue.start)
    if clause.qkind not in ("plain", "suggest", "why", "opinion"):
        return
    if cue.label == "QHOW":
        named = any(s.is_entity(i) or s.low[i] in P.OBJECT_SERVER_NOUNS
                    for i in range(cue.start, cue.end))
        if named:
            s.question([(cue.start, cue.end)], cue.start)
        return
    if s.sentence_has_server(cue.start, ports=False) or only_words(s, clause, cue):
        s.question([(cue.start, cue.end)], cue.start)


def only_words(s: Scan, clause: Clause, cue: Cue) -> bool:
    rest = [w for i, w in enumerate(s.low[clause.start : clause.end], clause.start)
            if not (cue.start <= i < cue.end) and any(ch.isalnum() for ch in w)]
    return not rest


def bare_wait(s: Scan, sentences: list[tuple[int, int]]) -> None:
    """A sentence that ends in a bare \"wait\" is a hold."""
    for start, end in sentences:
        words = [i for i in range(start, end) if any(ch.isalnum() for ch in s.low[i])]
        if words and s.low[words[-1]] == "wait" and words[-1] not in s.used:
            clause = s.clause(words[-1])
            if clause.end - clause.start <= 2 and clause.qkind is None:
                s.add(Intent.hold, 0.6, [(words[-1], words[-1] + 1)], words[-1])


def run_errors(s: Scan, sentences: list[tuple[int, int]]) -> None:
    """``i get an error when i run the server``, ``fix the issue, I was trying to run server!``: an
    error the user met running a server says it is not up."""
    down = {s.clauses[h.clause].sentence for h in s.hits if h.intent == Intent.not_ready}
    for index, (start, end) in enumerate(sentences):
        if index in down:
            continue
        errors = [i for i in range(start, end) if s.low[i] in P.ERROR_WORDS
                  and not (i > start and s.low[i - 1] in ("no", "without", "any"))]
        if not errors:
            continue
        for i in range(start, end):
            if s.low[i] not in P.RUN_WORDS or not _own_attempt(s, i, start):
                continue
            obj = scan_object(s, i + 1, s.clause(i), first_word=False)
            if obj.cls == "server" or (obj.cls == "unknown" and not P.CONTAINER_WORDS.isdisjoint(
                    s.low[i + 1 : i + 4])):
                s.add(Intent.not_ready, 0.6, [(errors[0], errors[0] + 1), (i, i + 1)], errors[0], obj.mention)
                break


def _own_attempt(s: Scan, i: int, start: int) -> bool:
    """The user's own run: "when i run", "trying to run", "when running", a gerund subject."""
    prev = s.low[i - 1] if i > start else ""
    if prev in ("i", "we"):
        return True
    if prev == "to" and i - 2 >= start and s.low[i - 2] in P.ATTEMPT_VERBS:
        return True
    return s.low[i].endswith("ing") and (prev in ("when", "while", "after", "on", "by") or i == s.clause(i).start)


def correction_openers(s: Scan, sentences: list[tuple[int, int]]) -> None:
    """``No, it's still up``: a denial followed by a state (in its sentence or the next)."""
    state_sentences: dict[int, list[Hit]] = {}
    for hit in s.hits:
        if hit.intent in (Intent.ready, Intent.not_ready):
            state_sentences.setdefault(s.clauses[hit.clause].sentence, []).append(hit)
    for index, (start, end) in enumerate(sentences):
        i = start
        while i < end - 1 and s.low[i] in ("oh", "well", "um", "hmm", "ah", "uh"):
            i += 1
        if s.low[i] not in P.CORRECTION_OPENERS:
            continue
        nxt = s.low[i + 1] if i + 1 < end else ""
        if nxt in P.NOT_CORRECTION_AFTER_NO:
            continue
        if s.low[i] == "wrong" and nxt in ("port", "server", "one", "instance", "box", "machine"):
            continue  # already a correction phrase
        followers = state_sentences.get(index)
        if not followers and end - start <= 3:  # "No. It's up."
            followers = state_sentences.get(index + 1)
        if followers:
            s.add(Intent.correction, 0.85, [(i, i + 1), *followers[0].spans], i)
