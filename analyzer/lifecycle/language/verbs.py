"""Verb cues: instructions (restart, launch, stop), their negation (hold), and verbs as statements.

A base form with no subject before it is an imperative ("restart sglang"); with a subject, or in
the past, it describes ("it started", "you killed it": a correction with a marker word); in a
question it asks. The object must be a server or a pronoun for generic verbs ("run", "deploy").
"""

from __future__ import annotations

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.clauses import VERB_INTENTS, Clause, Cue
from analyzer.lifecycle.language.model import EntityLabel, Intent
from analyzer.lifecycle.language.objects import Context, Object, context, object_of, object_ok, scan_object
from analyzer.lifecycle.language.scan import Scan


def verb(s: Scan, cue: Cue) -> None:
    """Read one verb cue by its form (base, 3sg, past, gerund) and what stands around it."""
    clause = s.clause(cue.start)
    intent = VERB_INTENTS[cue.label]
    first = s.low[cue.start]
    lemma, form = s.pipe.verb_forms.get(first, (first, "base"))
    phrasal = cue.end - cue.start > 1
    if phrasal and s.low[cue.end - 1] == "up" and s.low[cue.end - 2] in ("come", "came", "comes", "coming") and (
            cue.end < s.n and s.low[cue.end] == "with"):
        return  # "come up with a plan": devise, not launch
    ctx = context(s, cue.start, clause, command=form == "base")
    if cue.label == "V_REPLACE":
        replacement(s, cue, clause, ctx, "rid" if "rid" in s.low[cue.start : cue.end] else lemma, form)
        return
    if (form == "base" and ctx.subject is not None and s.low[ctx.subject] in ("a", "another", "quick")
            and intent == Intent.restart):
        noun_restart(s, cue, clause, ctx.subject)
        return
    if form == "ger":
        before = s.low[cue.start - 1] if cue.start > 0 else ""
        if cue.start > clause.start and before in ("try", "trying"):
            form, ctx = "base", Context(None, ctx.negated, ctx.you, ctx.already)
        elif before in ("before", "then") and clause.qkind is None and not ctx.negated:
            # "shut down the old one before launching the new one": the next step of an instruction
            obj = object_of(s, cue, clause, phrasal)
            if object_ok(lemma, obj):
                s.add(intent, 0.7, [(cue.start, cue.end)], cue.start, obj.mention)
            return
        elif clause.qkind in ("plain", "suggest") and verb_relevant(s, cue, clause, ctx):
            s.question([(cue.start, cue.end)], cue.start)
            return
        else:
            return
    if form in ("past", "3sg"):
        descriptive_past(s, cue, clause, ctx, intent, lemma, form)
        return
    if ctx.subject is None:
        imperative(s, cue, clause, ctx, intent, lemma, phrasal)
    else:
        descriptive_base(s, cue, clause, ctx, intent, lemma)


def imperative(s: Scan, cue: Cue, clause: Clause, ctx: Context, intent: Intent, lemma: str,
                phrasal: bool) -> None:
    obj = object_of(s, cue, clause, phrasal)
    if obj.cls == "none":
        obj = shared_object(s, clause) or obj
    if not object_ok(lemma, obj) or refers_to_nonserver(s, obj, clause):
        return
    span = [(cue.start, cue.end)]
    if clause.qkind == "plain" and intent in (Intent.stop, Intent.restart) and accuses(s, cue, clause, ctx):
        s.add(Intent.correction, 0.75, span, cue.start, obj.mention)
        return
    if clause.qkind in ("plain", "opinion", "why"):
        s.question(span, cue.start, obj.mention)
        return
    if clause.qkind == "why_you":
        return
    if clause.condition is not None and clause.condition not in ("whether",):
        return
    negated = ctx.negated or inherits_negation(s, clause)
    if negated:
        s.add(Intent.hold, 0.9, span, cue.start, obj.mention)
        return
    if intent == Intent.launch and "again" in s.low[cue.end : clause.end]:
        intent = Intent.restart
    strength = 0.9 if obj.cls in ("server", "pronoun") or lemma in P.RESTART_LEMMAS else 0.8
    if clause.qkind == "suggest" or "maybe" in s.low[clause.start : cue.start]:
        strength = 0.7
    s.add(intent, strength, span, cue.start, obj.mention)


def replacement(s: Scan, cue: Cue, clause: Clause, ctx: Context, lemma: str, form: str) -> None:
    """``replace the old TGI container on 8080 with one for mistral 7b``, ``swap vllm for sglang``,
    ``switch from vllm to sglang``, ``get rid of the vllm server``, ``free port 8080``: a stop of the
    server the words plainly name (for "free", the holder of the port), and a launch of the one
    after the joiner ("with", "for", "to"), whose entities are its own. An object that is not
    plainly a server makes no instruction: "replace the import", "get rid of the warning",
    "replace the api key"."""
    if form != "base" or ctx.subject is not None:
        return  # "I replaced the server", "it frees the port": reports, not instructions
    joiners = P.REPLACE_JOINERS.get(lemma, frozenset())
    joiner = next((i for i in range(cue.end, clause.end) if s.low[i] in joiners), clause.end)
    mention = plain_server(s, cue.end, joiner, joiners, port=lemma == "free")
    if mention is None:
        return
    span = [(cue.start, cue.end)]
    if clause.qkind in ("plain", "opinion", "why"):
        s.question(span, cue.start, mention)
        return
    if clause.qkind == "why_you" or (clause.condition is not None and clause.condition != "whether"):
        return
    if ctx.negated or inherits_negation(s, clause):
        s.add(Intent.hold, 0.9, span, cue.start, mention)
        return
    strength = 0.7 if clause.qkind == "suggest" or "maybe" in s.low[clause.start : cue.start] else 0.8
    s.add(Intent.stop, strength, span, cue.start, mention, own=(cue.end, joiner))
    if joiner < clause.end:
        new = scan_object(s, joiner + 1, clause, first_word=False)
        if new.cls in ("server", "pronoun"):
            s.add(Intent.launch, 0.7, [(joiner, joiner + 1)], joiner, new.mention)


def plain_server(s: Scan, start: int, end: int, joiners: frozenset[str], port: bool) -> str | None:
    """The words from ``start`` name a server outright: past determiners and adjectives, an entity
    (a port, with ``port``) or a server noun, and after it no other noun ("the api key"); its words."""
    i = start
    while i < end and (s.low[i] in P.DETERMINERS or s.low[i] in P.OBJECT_SKIP):
        i += 1
    if i >= end or not (s.is_entity(i, EntityLabel.port) if port else
                        s.is_entity(i) or s.low[i] in P.OBJECT_SERVER_NOUNS):
        return None
    head = i
    while i < end and s.server_word(i):
        i += 1
    after = s.low[i] if i < end else ""
    if after and any(ch.isalnum() for ch in after) and after not in joiners and (
            after not in P.PREPOSITIONS and after not in P.OBJECT_END):
        return None
    return s.span_text(head, i)


def accuses(s: Scan, cue: Cue, clause: Clause, ctx: Context) -> bool:
    """``did you just take it down?``, ``hang on, did you kill it?``: asking whether the agent did it,
    with "just" or an interjection, contradicts the action rather than asks about it."""
    if not ctx.you:
        return False
    before = s.low[clause.start : cue.start]
    if "just" in before:
        return True
    first = next(c for c in s.clauses if c.sentence == clause.sentence)
    words = [w for w in s.low[first.start : first.end] if any(ch.isalnum() for ch in w)]
    return first is not clause and len(words) <= 2 and s.low[first.start] in P.ALARM_OPENERS


def refers_to_nonserver(s: Scan, obj: Object, clause: Clause) -> bool:
    """``it``/``them`` whose only candidate is the clause just before, in the same sentence,
    which names something that is not a server and no server: "the notebook kernel died, can you
    restart it?" is not about a server."""
    if obj.cls != "pronoun" or (obj.mention or "").lower() not in ("it", "them") or clause.index == 0:
        return False
    before = s.clauses[clause.index - 1]
    if before.sentence != clause.sentence:
        return False
    words = range(before.start, before.end)
    if any(s.low[i].startswith(P.CANNOT_REACH) for i in words):
        return False  # "the client cannot connect, restart it": the server it cannot reach
    return any(s.low[i] in P.NONSERVER_NOUNS for i in words) and not any(
        s.server_word(i) for i in words)


def shared_object(s: Scan, clause: Clause) -> Object | None:
    """``kill and restart sglang``: a verb without object shares the next verb's."""
    index = clause.index
    if index + 1 >= len(s.clauses):
        return None
    nxt = s.clauses[index + 1]
    if nxt.sentence != clause.sentence or nxt.start + 1 >= nxt.end:
        return None
    if s.low[nxt.start] not in ("and", "or", "&"):
        return None
    verb = s.next_verb(nxt.start + 1, nxt)
    if verb is None or verb.start != nxt.start + 1:
        return None
    return scan_object(s, verb.end, nxt, first_word=True)


def inherits_negation(s: Scan, clause: Clause) -> bool:
    """``don't kill or restart it``: the second verb shares the first one's "don't"."""
    if s.low[clause.start] not in ("or", "and", "nor") or clause.start < 1:
        return False
    previous = [h for h in s.hits if h.intent == Intent.hold and h.spans[-1][1] == clause.start]
    return bool(previous)


def descriptive_base(s: Scan, cue: Cue, clause: Clause, ctx: Context, intent: Intent,
                      lemma: str) -> None:
    assert ctx.subject is not None
    subject, mention = s.subject_class(ctx.subject, clause)
    if s.low[ctx.subject] in ("i", "we"):
        subject = "self"
    span = [(cue.start, cue.end)]
    if not ctx.negated:
        # "doesn't this start?", "didn't it start": the negation stands before the subject
        j = ctx.subject - 1
        while j >= clause.start and (s.low[j] in P.AUXILIARIES or s.low[j] in P.NEGATORS):
            ctx.negated = ctx.negated or s.low[j] in P.NEGATORS
            j -= 1
    if subject == "self" and "myself" in s.low[cue.end : clause.end] and any(
            w in P.WILL_WORDS for w in s.low[ctx.subject : cue.start]):
        # "I'll run the server myself": the agent is to leave it (after "stop it, I'll run it
        # myself" the stop is the instruction)
        if not any(s.clauses[h.clause].sentence == clause.sentence for h in s.hits):
            s.add(Intent.hold, 0.8, span, cue.start, mention)
        return
    if ctx.negated and any(w in P.PRESCRIPTIVE for w in s.low[ctx.subject : cue.start]):
        return  # "the runner shouldn't run the containers": a rule, not a report that it does not
    if ctx.negated and intent == Intent.launch and subject in ("server", "pronoun", "self", "unknown"):
        if clause.condition is None or clause.qkind:
            s.add(Intent.not_ready, 0.8, [(ctx.subject, ctx.subject + 1), *span], cue.start, mention)
            if clause.qkind in ("why", "plain", "suggest"):
                s.question(span, cue.start, mention)
        return
    if clause.qkind in ("plain", "suggest", "opinion", "why") and verb_relevant(s, cue, clause, ctx):
        s.question(span, cue.start, mention)


def verb_relevant(s: Scan, cue: Cue, clause: Clause, ctx: Context) -> bool:
    if ctx.subject is not None:
        subject, _ = s.subject_class(ctx.subject, clause)
        if subject in ("server", "pronoun"):
            return True
    obj = scan_object(s, cue.end, clause, first_word=True)
    return obj.cls in ("server", "pronoun", "none")


def descriptive_past(s: Scan, cue: Cue, clause: Clause, ctx: Context, intent: Intent, lemma: str,
                      form: str) -> None:
    span = [(cue.start, cue.end)]
    if clause.qkind in ("plain", "suggest", "opinion"):
        if verb_relevant(s, cue, clause, ctx):
            s.question(span, cue.start)
        return
    if form == "past" and passive_instruction(s, cue, clause, ctx, intent):
        return
    if form == "3sg" and clause.condition is None and intent == Intent.launch and ctx.subject is not None:
        subject, mention = s.subject_class(ctx.subject, clause)
        said = s.low[max(clause.start, ctx.subject - 2) : clause.end]  # "now it starts", not "now let me …"
        clean = any(w in ("no", "without") and said[k + 1 : k + 2] in (["errors"], ["error"])
                    for k, w in enumerate(said))
        if subject in ("server", "pronoun") and not ctx.negated and (clean or not P.STARTS_FINE.isdisjoint(said)):
            s.add(Intent.ready, 0.6, span, cue.start, mention)  # "now it starts with no errors"
        return
    if form != "past" or clause.condition is not None:
        return
    if ctx.subject is None and not ctx.you:
        if ctx.already and intent in (Intent.launch, Intent.restart):
            s.add(Intent.correction, 0.75, span, cue.start)
            s.add(Intent.ready, 0.6, span, cue.start)
        return
    word = "you" if ctx.subject is None else s.low[ctx.subject]
    if word in ("you", "u"):
        sentence = clause.sentence
        words = {s.low[i] for c in s.clauses if c.sentence == sentence
                 for i in range(c.start, c.end)}
        if words & P.CORRECTION_MARKERS and intent in (Intent.stop, Intent.restart, Intent.launch):
            s.add(Intent.correction, 0.75, span, cue.start)
        return
    assert ctx.subject is not None
    subject, mention = s.subject_class(ctx.subject, clause)
    if word in ("i", "we"):
        if ctx.already and intent in (Intent.launch, Intent.restart):
            s.add(Intent.correction, 0.75, span, cue.start)
            s.add(Intent.ready, 0.6, span, cue.start)
        return
    if subject not in ("server", "pronoun"):
        return
    if intent == Intent.launch and lemma in ("start", "launch", "boot", "spin", "bring", "fire"):
        obj = scan_object(s, cue.end, clause, first_word=True)
        object_follows = obj.cls == "server" and not s.is_entity(cue.end, EntityLabel.port) and (
            s.low[cue.end] not in P.PREPOSITIONS)
        if obj.cls == "pronoun" or object_follows:
            return  # "it started the server": transitive, not a state
        s.add(Intent.not_ready if ctx.negated else Intent.ready, 0.6, span, cue.start, mention)
        if ctx.already and not ctx.negated:
            s.add(Intent.correction, 0.75, span, cue.start)
    elif intent == Intent.stop and lemma in P.KILLED_LEMMAS:
        s.add(Intent.not_ready, 0.6, span, cue.start, mention)


def passive_instruction(s: Scan, cue: Cue, clause: Clause, ctx: Context, intent: Intent) -> bool:
    """``the server must be killed``, ``it needs to be restarted``: a modal passive asks for the action
    (a hold when negated); it says nothing about the server's state yet."""
    j = cue.start - 1
    while j >= clause.start and s.low[j] in P.PASSIVE_ADVERBS:
        j -= 1
    if j < clause.start or s.low[j] not in ("be", "get", "gets"):
        return False
    before = s.low[max(clause.start, j - 3) : j]
    if not any(w in P.PASSIVE_MODALS for w in before):
        return False
    if ctx.subject is not None and s.subject_class(ctx.subject, clause)[0] in ("nonserver", "blocked"):
        return True
    negated = ctx.negated or any(w in P.NEGATORS for w in before)
    s.add(Intent.hold if negated else intent, 0.7, [(cue.start, cue.end)], cue.start)
    return True


def noun_restart(s: Scan, cue: Cue, clause: Clause, article: int) -> None:
    """``it needs a restart``, ``give it a quick restart``: a suggestion to restart."""
    before = s.low[clause.start : article]
    if any(w in ("need", "needs", "requires", "require", "do", "try", "give", "want", "deserves")
           for w in before) and clause.qkind is None and clause.condition is None:
        negated = any(w in P.NEGATORS for w in before)
        s.add(Intent.hold if negated else Intent.restart, 0.7, [(cue.start, cue.end)], cue.start)
