"""State cues: the server is up, ready, down, refused, crashed — or the word is used another way.

A state word needs a subject that can be a server (by tier: "S" words stand alone, "G" and
"REPORT" words need a server, a pronoun or none, "W" words a server), a follower that keeps it a
state ("up to you" and "ready for review" are not), and no condition; in a question it asks.
"""

from __future__ import annotations

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.clauses import Clause, Cue
from analyzer.lifecycle.language.model import Intent
from analyzer.lifecycle.language.scan import Scan


def state(s: Scan, cue: Cue) -> None:
    """Read one state cue: ready or not ready, a correction when negated or \"already\", or a question."""
    clause = s.clause(cue.start)
    label = cue.label
    tier = P.STATE_TIER[label]
    ready = label.startswith("READY")
    words = s.low[cue.start : cue.end]
    if tier != "USE" and words[0] in P.NOMINAL_DOWN and cue.start > 0 and s.low[
            cue.start - 1] in P.DETERMINERS:
        return
    negated = past = copula = already = hypothetical = False
    j = cue.start - 1
    while j >= clause.start:
        w = s.low[j]
        if w in P.HYPOTHETICAL:
            hypothetical = True
        if w in P.NEGATORS:
            negated = True
        elif w == "already":
            already = True
        elif w in P.COPULAS or w in P.AUXILIARIES or w == "m":
            copula = True
            past = past or w in P.PAST_COPULAS
            if w == "be" and j > clause.start and s.low[j - 1] == "to" and (
                    j - 2 < clause.start or s.low[j - 2] not in P.SEEM_VERBS):
                hypothetical = True  # "wait for it to be healthy", "needs to be up": not yet said to be
            if w in ("its", "it's"):
                break
        elif w in P.STATE_SKIP or (w == "no" and j + 1 < s.n and s.low[j + 1] == "longer"):
            pass
        else:
            break
        j -= 1
    subject = "none"
    mention: str | None = None
    head = j if j >= clause.start else None
    if head is not None and s.low[head] in P.NEGATIVE_SUBJECTS:
        negated = not negated
        subject, mention = "pronoun", None
        head = None
    if head is not None and s.low[head] in ("its", "it's"):
        subject, mention = "pronoun", "it"
    elif head is not None:
        if tier == "USE":
            subject = "ok"
        elif copula or s.subject_head(head) or tier == "REPORT":
            subject, mention = s.subject_class(head, clause)
        elif s.low[head] in P.REPORT_VERBS and not ready:
            subject, mention = ("none", None)
            if head > clause.start:
                subject, mention = s.subject_class(head - 1, clause)
            if subject == "blocked" and tier == "S":
                subject = "none"  # "I'm getting connection refused": the user reports the server's answer
        else:
            return
    if not subject_allowed(s, tier, subject, head, cue):
        return
    if hypothetical and not negated and clause.qkind is None:
        return  # "it should work now": an expectation
    if words == ["work"] and subject == "none":
        return  # "great work", "work on X"
    if words == ["work"] and not copula and head is not None and s.low[head] not in P.PLURAL_SUBJECTS and (
            not s.low[head].endswith("s") or s.low[head].endswith("'s")) and not any(
            w in P.AUXILIARIES for w in s.low[clause.start : head]):
        return  # "backend work", "this work": a noun; the verb would be "works" (but "did the restart work?")
    if words == ["down"] and head is not None and s.low[head] in ("compose", "docker-compose"):
        return  # "docker compose down": the command, not a state
    if head is not None and any(s.low[k] in P.CAUSATIVES and s.low[k + 1] != "sure"
                                for k in range(max(clause.start, head - 4), head)):
        return  # "make the app ready for production": an instruction to get it there, not a state
    if words[0] in ("works", "work") and head is not None and s.low[head] == "that":
        return  # "that works": agreement, not a server
    before = s.low[max(clause.start, cue.start - 3) : cue.start]
    able = any(w in ("can", "could", "able", "ca") for w in before)
    if words[0] in ("reach", "access", "hit", "curl", "ping", "query", "open") and not able:
        return  # only "I can reach it" says it is up; "hit it with the benchmark" is an instruction
    if not follower_ok(s, cue, clause, subject, copula):
        return
    if tier == "REPORT" and not s.sentence_has_server(cue.start):
        return
    span = [(cue.start, cue.end)]
    if clause.verify is not None and clause.verify <= cue.start:
        s.question(span, cue.start, mention)
        return
    if clause.qkind in ("plain", "suggest", "request", "opinion"):
        s.question(span, cue.start, mention)
        return
    if clause.condition is not None:
        return
    is_ready = ready != negated
    strength = {"S": 0.9, "G": 0.8, "W": 0.7, "USE": 0.85, "REPORT": 0.7}[tier]
    if subject == "none" and words == ["ready"] and not negated:
        strength = 0.9
    if negated and not ready:
        s.add(Intent.correction, 0.7, span, cue.start)
    s.add(Intent.ready if is_ready else Intent.not_ready, strength, span, cue.start, mention,
              past=past and is_ready)
    already = already or "already" in s.low[cue.end : min(clause.end, cue.end + 4)]
    if already and is_ready:
        s.add(Intent.correction, 0.75, [(j + 1, cue.end)] if j + 1 < cue.start else span, cue.start)
    if clause.qkind == "why":
        s.question(span, cue.start, mention)


def subject_allowed(s: Scan, tier: str, subject: str, head: int | None, cue: Cue) -> bool:
    """Whether a state word of this tier can be said of this subject."""
    if tier == "USE":
        return True
    if subject in ("blocked", "nonserver"):
        return tier == "REPORT" and subject == "blocked" and head is not None and s.low[head] in (
            "i", "we", "m", "'m")
    if tier == "S":
        return True
    if tier in ("G", "REPORT"):
        return subject in ("server", "pronoun", "none")
    return subject == "server"  # W


def follower_ok(s: Scan, cue: Cue, clause: Clause, subject: str, copula: bool) -> bool:
    """Reject verb uses of state words: "up to you", "running the tests", "ready for review"."""
    nxt = s.low[cue.end] if cue.end < clause.end else ""
    word = s.low[cue.start]
    if nxt in ("-", "/") and cue.end < s.n and s.starts[cue.end] == s.ends[cue.end - 1]:
        return False  # "offline-first", "live/staging": part of a compound word
    if cue.end - cue.start == 1 and word in P.ADJECTIVE_STATES and not copula:
        after = cue.end
        while after < s.n and s.low[after] in ("\u201c", '"', "'", "\u2018", "("):
            after += 1
        # an opening "(" or quote ends the clause, so what it opens is looked at past the clause end
        skipped_open = after > cue.end
        follower = s.low[after] if after < s.n and (after < clause.end or skipped_open) else ""
        if follower.isalpha() and not follower.endswith("ly") and follower not in P.BARE_FOLLOWERS and (
                follower not in P.CONNECTIVES) and (
                not s.is_entity(after)) and after not in s.cue_starts:
            return False  # "responsive design", "this live campaign", "Offline \u201cintegration\u201d"
    if word == "running" and nxt.isalpha() and not nxt.endswith("ly") and nxt not in P.BARE_FOLLOWERS and (
            nxt not in P.CONNECTIVES) and not s.is_entity(cue.end) and nxt not in P.SERVER_NOUNS:
        return False  # "not running composer install": running a command
    if cue.end - cue.start == 1 and word == "up" and nxt == "to":
        return False
    if word == "ready" and nxt in ("to", "for") and cue.end - cue.start == 1:
        purpose = s.low[cue.end + 1] if cue.end + 1 < s.n else ""
        return subject == "server" or (subject in ("pronoun", "none") and purpose in P.READY_FOR_OK)
    if nxt in P.DETERMINERS and word not in ("serving", "serves", "loading", "hitting", "using"):
        return subject not in ("none",) and word not in ("running", "working")
    if word in ("working", "works", "work") and nxt in ("on", "with", "for"):
        return cue.end + 1 < clause.end and s.is_entity(cue.end + 1)
    if subject == "none" and not copula and nxt and nxt not in P.BARE_FOLLOWERS and any(
            ch.isalnum() for ch in nxt) and not s.is_entity(cue.end):
        return cue.end in s.cue_starts  # "502 bad gateway"; not "responsive layout", "up next"
    return True
