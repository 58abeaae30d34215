"""Objects and the words before a verb: what an instruction is about, and whether it is one.

``context`` scans back from a verb (negation, "you", "already", a subject that makes it a
statement); ``object_of`` scans forward for what the verb acts on: a server, a pronoun, something
that is not a server ("restart the test suite"), nothing, or unknown words.
"""

from __future__ import annotations

from dataclasses import dataclass

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.clauses import Clause, Cue
from analyzer.lifecycle.language.model import EntityLabel
from analyzer.lifecycle.language.scan import Scan


@dataclass(slots=True)
class Context:
    """What stands before a verb in its clause."""

    subject: int | None
    negated: bool
    you: bool
    already: bool


@dataclass(slots=True)
class Object:
    """What a verb acts on."""

    cls: str
    """server, pronoun, nonserver, none or unknown."""
    mention: str | None = None


def context(s: Scan, i: int, clause: Clause, command: bool = True) -> Context:
    """Scan back from a verb over words that may stand before an imperative. With ``command``, a
    server kind right before the verb at the clause start is a command line ("vllm serve …")."""
    negated = you = already = wants = False
    j = i - 1
    while j >= clause.start:
        w = s.low[j]
        if w in P.NEGATORS:
            negated = True
        elif w == "already":
            already = True
        elif w == "to":
            governor = s.low[j - 1] if j - 1 >= clause.start else ""
            if governor in ("forget", "remember"):
                return Context(None, False, you, already)
            if governor in ("you", "u") and j - 2 >= clause.start and s.low[j - 2] in (
                    "want", "need", "like", "asked", "ask", "told", "tell"):
                wants = True
                j -= 2
                continue
            if governor in P.PLAN_GOVERNORS:
                return Context(j - 1, negated, you, already)
            if governor not in P.TO_GOVERNORS:
                return Context(j - 1, negated, you, already)
            j -= 2  # "proceed to", "need to": the governor is part of the request
            continue
        elif w in ("you", "u", "ya", "we"):
            if not command and w == "we":
                return Context(j, negated, True, already)  # "where we started": "we" did it, past
            you = True
        elif (w == "i" and wants) or w in P.BEFORE_IMPERATIVE:
            pass
        elif j == clause.start and not any(ch.isalnum() for ch in w):
            pass  # a list bullet: "- restart it"
        elif command and j == clause.start and s.is_entity(j, EntityLabel.kind) and j == i - 1:
            pass  # "vllm serve …", "ollama serve": a command line
        elif w == "why" and clause.qkind == "request":
            return Context(None, False, you, already)  # "why don't you restart it": a suggestion
        else:
            return Context(j, negated, you, already)
        j -= 1
    return Context(None, negated, you, already)


def object_of(s: Scan, cue: Cue, clause: Clause, phrasal: bool) -> Object:
    """The object of a verb cue: inside a phrasal cue ("bring sglang up") or after it."""
    if phrasal:
        inner = [i for i in range(cue.start + 1, cue.end)
                 if s.low[i] not in ("up", "down", "off", "on", "back", "online", "running", "going",
                                        "serving")]
        for i in inner:
            if s.is_entity(i) or s.low[i] in P.OBJECT_SERVER_NOUNS:
                return Object("server", s.span_text(inner[0], i + 1))
            if s.low[i] in P.OBJECT_PRONOUNS:
                return Object("pronoun", s.low[i])
            if s.low[i] in P.NONSERVER_NOUNS:
                return Object("nonserver")
        if inner:
            return Object("unknown", s.span_text(inner[0], inner[-1] + 1))
    return scan_object(s, cue.end, clause, first_word=not phrasal)


def scan_object(s: Scan, start: int, clause: Clause, first_word: bool) -> Object:
    """The object in the words from ``start`` on (a few words, within the clause)."""
    seen_unknown: int | None = None
    i = start
    limit = min(clause.end, start + 7)
    while i < limit:
        w = s.low[i]
        # "the server tests" is about tests; "the docs server" is not made "the docs" by its "the"
        compound = (i + 1 < limit and s.low[i + 1] in P.COMPOUND_HEADS
                    and w not in P.DETERMINERS and w not in P.OBJECT_SKIP
                    and not (s.server_word(i) and s.low[i + 1] in P.SERVER_RUNNERS))
        if s.is_entity(i) and not compound:
            ent = s.entities[s.entity_at[i] or 0]
            return Object("server", ent.text)
        if w in P.OBJECT_SERVER_NOUNS and not compound:
            # "the api container", "the vllm server": the head noun belongs to the mention
            end = i + 2 if i + 1 < limit and (
                s.low[i + 1] in P.STRONG_SERVER_NOUNS or s.low[i + 1] in P.SERVER_RUNNERS) else i + 1
            # "and the frontend" may open a clause of its own: the sentence bounds the conjunction
            last = max(c.end for c in s.clauses if c.sentence == clause.sentence)
            return Object("server", s.span_text(start, conjoined(s, end, min(last, end + 12))))
        if w in P.OBJECT_PRONOUNS and (w not in ("that", "this", "all", "both") or s.ends_here(i)):
            return Object("pronoun", s.span_text(start, i + 1))
        if w in P.NONSERVER_NOUNS or compound:
            if i + 1 < limit and s.low[i + 1] in P.STRONG_SERVER_NOUNS:
                i += 1
                continue
            return Object("nonserver")
        if w in P.PREPOSITIONS:
            return after_preposition(s, i + 1, limit) if seen_unknown is None else Object(
                "unknown", s.span_text(start, seen_unknown + 1))
        if w in P.OBJECT_END or not any(ch.isalnum() for ch in w):
            break
        if w.startswith("-") or w in P.OBJECT_SKIP:
            i += 1
            continue
        if w.isdigit():
            return Object("server", w)
        if first_word and i == start and w.endswith("ing"):
            return Object("nonserver")
        if seen_unknown is None:
            seen_unknown = i
        i += 1
    if seen_unknown is not None:
        return Object("unknown", s.span_text(start, seen_unknown + 1))
    return Object("none")


def conjoined(s: Scan, end: int, limit: int) -> int:
    """The end of a mention that goes on with "and"/"or"/a comma and another server noun phrase
    ("the backend and the frontend", "the api or the payments service"): one target, both names."""
    i = end
    while i < limit and s.low[i] in ("and", "or", ",", "&", "/", "+"):
        j = i + 1
        while j < limit and (s.low[j] in P.DETERMINERS or s.low[j] in P.OBJECT_SKIP):
            j += 1
        if j < limit and s.low[j] in P.OBJECT_SERVER_NOUNS:
            i = j + 2 if j + 1 < limit and s.low[j + 1] in P.STRONG_SERVER_NOUNS else j + 1
        elif j + 1 < limit and any(ch.isalnum() for ch in s.low[j]) and s.low[j + 1] in P.STRONG_SERVER_NOUNS:
            i = j + 2  # "the payments service"
        else:
            break
        end = i
    return end


def after_preposition(s: Scan, i: int, limit: int) -> Object:
    while i < limit:
        w = s.low[i]
        if s.is_entity(i):
            return Object("server", s.entities[s.entity_at[i] or 0].text)
        if w.startswith("-") or w in P.CONFIG_NOUNS:
            return Object("none")
        if w in P.OBJECT_SKIP or w in P.DETERMINERS:
            i += 1
            continue
        if w in P.OBJECT_SERVER_NOUNS:
            return Object("server", w)
        return Object("nonserver")
    return Object("none")


def object_ok(lemma: str, obj: Object) -> bool:
    """Whether a verb of this lemma on this object can be about a server."""
    if obj.cls == "nonserver":
        return False
    if lemma in P.GENERIC_LEMMAS:
        return obj.cls == "server" and (obj.mention or "").lower() not in ("model", "the model")
    if lemma in P.NEEDS_OBJECT_LEMMAS:
        return obj.cls != "none"
    return True
