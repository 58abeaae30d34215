"""Targets: which servers each intent is about, from the entities of its clause group."""

from __future__ import annotations

from analyzer.lifecycle.language.model import Entity, EntityLabel, Intent, Target
from analyzer.lifecycle.language.scan import Scan


def targets(s: Scan) -> list[Target]:
    """Give each entity to the hit nearest before it in its clause group (else the first after it)."""
    by_group: dict[int, list[int]] = {}
    questions: dict[int, list[int]] = {}
    for h, hit in enumerate(s.hits):
        clause = s.clauses[hit.clause]
        if hit.intent == Intent.question:
            questions.setdefault(clause.sentence, []).append(h)
        else:
            by_group.setdefault(clause.group, []).append(h)
    per_hit: dict[int, list[Entity]] = {}
    for k, ent in enumerate(s.entities):
        tokens = [i for i in s.entity_tokens[k] if s.entity_at[i] == k]
        if not tokens:
            continue
        at = tokens[0]
        clause = s.clauses[s.clause_of[at]]
        candidates = by_group.get(clause.group, []) + questions.get(clause.sentence, [])
        inside = [h for h in candidates
                  if (own := s.hits[h].own) is not None and own[0] <= at < own[1]]
        before = [s.hits[h].anchor for h in candidates if s.hits[h].anchor <= at]
        after = [s.hits[h].anchor for h in candidates if s.hits[h].anchor > at]
        if inside:
            chosen = inside[:1]
        elif before or after:
            anchor = max(before) if before else min(after)
            chosen = [h for h in candidates if s.hits[h].anchor == anchor]
        else:
            continue
        for h in chosen:
            per_hit.setdefault(h, []).append(ent)
    out: list[Target] = []
    for h, hit in enumerate(s.hits):
        ents = per_hit.get(h, [])
        out.append(Target(
            kinds=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.kind)),
            ports=tuple(dict.fromkeys(int(e.value) for e in ents if e.label == EntityLabel.port)),
            hosts=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.host)),
            units=tuple(dict.fromkeys(e.value for e in ents if e.label == EntityLabel.unit)),
            mention=None if ents else hit.mention,
            text=" ".join(dict.fromkeys(e.text for e in sorted(ents, key=lambda e: e.start)))
            if ents else (hit.mention or ""),
        ))
    return out
