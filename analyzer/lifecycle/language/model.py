"""The reading of a user message: intents, the servers they are about, the words they rest on.

These are the types ``read_message`` returns; everything else in the package is how they are found.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Intent(StrEnum):
    """What a user message says or asks about a server."""

    ready = "ready"
    not_ready = "not_ready"
    launch = "launch"
    stop = "stop"
    restart = "restart"
    correction = "correction"
    hold = "hold"
    question = "question"


INSTRUCTIONS: Final = frozenset({Intent.launch, Intent.stop, Intent.restart, Intent.hold})


class EntityLabel(StrEnum):
    port = "port"
    host = "host"
    kind = "kind"
    unit = "unit"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Words of the message (character span into the original text) that a reading rests on."""

    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Entity:
    """A server reference in the message."""

    label: EntityLabel
    value: str
    """Normalised: the port number, a lowercase host, a canonical kind, or the unit name."""
    start: int
    end: int
    text: str
    """The words as written (``*:30001``, ``port 8000``, ``root@10.1.2.3``)."""
    kind: str | None = None
    """For a unit named after a server kind (``sglang-k26-ddtree``), that kind."""


@dataclass(frozen=True, slots=True)
class Target:
    """The server(s) one intent is about, from the entities in its clause."""

    kinds: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    hosts: tuple[str, ...] = ()
    units: tuple[str, ...] = ()
    mention: str | None = None
    """How the message names it when no entity does ("it", "the server", "the old one")."""
    text: str = ""
    """The target as written: its entities' words ("sglang *:30001") or the mention; "" if none."""

    @property
    def unspecified(self) -> bool:
        """True when no kind, port, host or unit is named ("restart it")."""
        return not (self.kinds or self.ports or self.hosts or self.units)


@dataclass(frozen=True, slots=True)
class IntentHit:
    """One occurrence of an intent in a message."""

    intent: Intent
    strength: float
    """0..1: how plainly the words say it (a bare "Ready" 0.9; "maybe restart it?" 0.7)."""
    evidence: tuple[Evidence, ...]
    target: Target


@dataclass(frozen=True, slots=True)
class Skipped:
    """A part of the message that was not read, and why."""

    start: int
    end: int
    reason: str
    """``code-fence``, ``harness``, ``log``, ``paste``, ``quote``, ``heading`` or ``length-cap``."""


@dataclass(frozen=True, slots=True)
class MessageReading:
    """What one user message says about servers."""

    intents: frozenset[Intent]
    hits: tuple[IntentHit, ...]
    entities: tuple[Entity, ...]
    skipped: tuple[Skipped, ...] = ()
    truncated: bool = False
    """True when the message was longer than ``MAX_ANALYSED_CHARS`` and its middle was not read."""

    def has(self, intent: Intent | str) -> bool:
        return Intent(intent) in self.intents

    @property
    def confidence(self) -> dict[Intent, float]:
        """The strongest hit per intent."""
        out: dict[Intent, float] = {}
        for hit in self.hits:
            out[hit.intent] = max(out.get(hit.intent, 0.0), hit.strength)
        return out

    @property
    def targets(self) -> dict[Intent, tuple[Target, ...]]:
        """The servers each intent is about, one target per hit."""
        out: dict[Intent, list[Target]] = {}
        for hit in self.hits:
            out.setdefault(hit.intent, []).append(hit.target)
        return {intent: tuple(ts) for intent, ts in out.items()}

    def evidence(self, intent: Intent | str) -> tuple[Evidence, ...]:
        wanted = Intent(intent)
        return tuple(ev for hit in self.hits if hit.intent == wanted for ev in hit.evidence)

    def quote(self, intent: Intent | str) -> str:
        """The words behind an intent, for a report ("" when the message does not carry it)."""
        return " … ".join(dict.fromkeys(ev.text for ev in self.evidence(intent)))

    def _values(self, label: EntityLabel) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.value for e in self.entities if e.label == label))

    @property
    def ports(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self._values(EntityLabel.port))

    @property
    def kinds(self) -> tuple[str, ...]:
        return self._values(EntityLabel.kind)

    @property
    def hosts(self) -> tuple[str, ...]:
        return self._values(EntityLabel.host)

    @property
    def units(self) -> tuple[str, ...]:
        return self._values(EntityLabel.unit)
