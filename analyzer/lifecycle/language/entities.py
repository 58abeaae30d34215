"""Entities: the servers a message names — ports, hosts, server kinds and units.

Regexes over the read parts of the text (``patterns``), gated by one pass that finds which of them
can match at all, and the kinds ``PhraseMatcher`` over the tokens. Where two entities overlap, the
first group wins: units, then ports, kinds, hosts (a host may sit inside a port: "localhost:8080").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.model import Entity, EntityLabel
from analyzer.lifecycle.language.pastes import Prepared, segments
from analyzer.lifecycle.language.pipeline import Pipeline

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


def _valid_port(raw: str) -> bool:
    value = int(raw)
    return 0 < value < 65536


def _year_like(raw: str) -> bool:
    return len(raw) == 4 and raw[:2] in ("19", "20")


_GATE_WORDS: Final = sorted({g for gates in P.ENTITY_GATES.values() for g in gates}, key=len, reverse=True)
_GATES: Final = re.compile("(?=(" + "|".join(re.escape(g) for g in _GATE_WORDS) + "))")
"""One pass over the message finds which entity regexes are worth running."""


def find_entities(prep: Prepared, doc: Doc, pipe: Pipeline, tokens: list[Token]) -> list[Entity]:
    """The entities in the read parts of the message, ordered by position."""
    units, ports, hosts = regex_entities(prep)
    return choose(len(prep.masked), units, ports, token_kinds(prep, doc, pipe, tokens), hosts)


def regex_entities(prep: Prepared) -> tuple[list[Entity], list[Entity], list[Entity]]:
    """The units, ports and hosts the regexes find (no tokens needed: the gate's path reads these
    without spaCy)."""
    masked = prep.masked
    parts = segments(prep)
    present = {m.group(1) for m in _GATES.finditer(prep.compact.lower())}  # overlapping: "-p" in "--port"

    def scan(rx: re.Pattern[str]) -> Iterator[re.Match[str]]:
        if present.isdisjoint(P.ENTITY_GATES[rx]):
            return
        # only the read parts: regexes over long blanked pastes would cost as much as the pastes
        for start, end in parts:
            yield from rx.finditer(masked, start, end)

    units: list[Entity] = []
    for rx in (P.UNIT_SUFFIX, P.SYSTEMCTL_UNIT, P.DOCKER_CONTAINER, P.KIND_PREFIXED_UNIT):
        for m in scan(rx):
            value = m.group("unit")
            start, end = m.span("unit")
            low = value.lower()
            hint = P.KIND_ALIASES.get(low)
            if hint is None:
                prefix = low.replace("_", "-").split("-")[0].split(".")[0]
                hint = P.KIND_ALIASES.get(prefix)
            units.append(Entity(EntityLabel.unit, value, start, end, value, kind=hint))

    ports: list[Entity] = []
    hosts: list[Entity] = []

    def add_port(start: int, end: int, raw: str) -> None:
        if _valid_port(raw):
            ports.append(Entity(EntityLabel.port, str(int(raw)), start, end, masked[start:end]))
        follow = P.PORT_LIST_NEXT.match(masked, end)
        while follow is not None:
            if _valid_port(follow.group("port")) and not _year_like(follow.group("port")):
                s, e = follow.span("port")
                ports.append(Entity(EntityLabel.port, str(int(follow.group("port"))), s, e, masked[s:e]))
            follow = P.PORT_LIST_NEXT.match(masked, follow.end())

    for m in scan(P.HOSTPORT):
        host = m.group("host")
        add_port(m.start(), m.end(), m.group("port"))
        if host and host not in P.BIND_ALL and host.lower() not in P.NOT_HOSTS and not _is_kind(host):
            hosts.append(Entity(EntityLabel.host, host.lower(), m.start("host"), m.end("host"), host))
    for m in scan(P.PORTWORD):
        add_port(m.start(), m.end(), m.group("port"))
    for rx in (P.DOCKER_PUBLISH, P.POSITIONAL_PORT):
        for m in scan(rx):
            add_port(m.start("port"), m.end("port"), m.group("port"))
    for m in scan(P.BARE_PORT):
        if not _year_like(m.group("port")):
            add_port(m.start("port"), m.end("port"), m.group("port"))

    for m in scan(P.USER_AT_HOST):
        hosts.append(Entity(EntityLabel.host, m.group("host").lower(), m.start(), m.end(), m.group(0)))
    for m in scan(P.IPV4):
        ip = m.group(0)
        if ip != "0.0.0.0" and all(int(octet) < 256 for octet in ip.split(".")):
            hosts.append(Entity(EntityLabel.host, ip, m.start(), m.end(), ip))
    for m in scan(P.LOCALHOST):
        hosts.append(Entity(EntityLabel.host, "localhost", m.start(), m.end(), m.group(0)))
    for rx in (P.MARKED_HOST, P.SUFFIXED_HOST):
        for m in scan(rx):
            name = m.group("host")
            if _hostname_like(name):
                hosts.append(Entity(EntityLabel.host, name.lower(), m.start("host"), m.end("host"), name))
    return units, ports, hosts


def token_kinds(prep: Prepared, doc: Doc, pipe: Pipeline, tokens: list[Token]) -> list[Entity]:
    """The server kinds the kinds ``PhraseMatcher`` and the kind-named tokens find."""
    masked = prep.masked
    kinds: list[Entity] = []
    spans = pipe.filter_spans(pipe.kinds(doc, as_spans=True))
    for span in spans:
        start, end = prep.original(span.start_char), prep.original(span.end_char - 1) + 1
        kinds.append(Entity(EntityLabel.kind, span.label_, start, end, masked[start:end]))
    for token in tokens:
        low = token.lower_
        if ("-" in low or "." in low) and low not in P.KIND_ALIASES:
            prefix = low.replace("_", "-").split("-")[0].split(".")[0]
            if prefix in P.KIND_PREFIXES and prefix in P.KIND_ALIASES:
                start = prep.original(token.idx)
                kinds.append(Entity(EntityLabel.kind, P.KIND_ALIASES[prefix], start, start + len(token),
                                    token.text))
    return kinds


def choose(size: int, units: list[Entity], ports: list[Entity], kinds: list[Entity],
           hosts: list[Entity]) -> list[Entity]:
    """Overlaps resolved in a text of ``size`` characters, first come, first kept: units, then
    ports, kinds, hosts; a host may sit inside a port ("localhost:8080"). Ordered by position."""
    chosen: list[Entity] = []
    taken = bytearray(size)
    taken_not_port = bytearray(size)
    for group in (units, ports, kinds, hosts):
        for ent in sorted(group, key=lambda e: (e.start, -(e.end - e.start))):
            mask = taken_not_port if ent.label == EntityLabel.host else taken
            if any(mask[ent.start : ent.end]):
                continue
            chosen.append(ent)
            taken[ent.start : ent.end] = b"\x01" * (ent.end - ent.start)
            if ent.label != EntityLabel.port:
                taken_not_port[ent.start : ent.end] = b"\x01" * (ent.end - ent.start)
    return sorted(chosen, key=lambda e: (e.start, e.label))


def _is_kind(name: str) -> bool:
    return name.lower() in P.KIND_ALIASES


def _hostname_like(name: str) -> bool:
    # a digit (gpu2, ct200, gpu-node-3) or a dotted name (db.internal.example): hyphenated English words
    # ("to re-import", "on follow-up") are not hosts
    if not (any(ch.isdigit() for ch in name) or name.count(".") >= 2):
        return False
    if P.NOT_A_HOST.match(name) or _is_kind(name):
        return False
    low = name.lower()
    prefix = low.replace("_", "-").split("-")[0]
    return prefix not in P.KIND_PREFIXES
