"""The World: server instances, their state over the session, the facts behind every change, and
the graph that ties them to events. Rules are queries over it.

``build_world(session)`` walks the timeline once, in order, so a kill is evaluated against the
processes the world knows at that moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import networkx as nx
from pydantic import BaseModel, Field

from analyzer.events import Event, Session, UserEvent
from analyzer.lifecycle.catalog import Catalog, default_catalog
from analyzer.lifecycle.facts import Fact, Failure, Instruction, Kill, Launch, Ready, State

F = TypeVar("F", bound=BaseModel)

Relation = Literal[
    "launches", "probes", "asserts-ready", "reports-failure", "kills", "matched-by-kill", "replaces",
    "conflicts-with", "requested-by", "corrects",
]


class StateChange(BaseModel):
    """One step of an instance's state history."""

    state: State
    event: int
    """The event that is the evidence."""
    fact: int
    """Index into ``World.facts``."""
    reason: str
    """Why, in words."""


class Instance(BaseModel):
    """A server identity (host and port, else unit, container or task) over the session."""

    id: str
    """Stable key: ``gpu1:30001``, ``local:3000``, ``ct200/unit:sglang``, ``task:bash_1``."""
    server: str
    """Catalog kind of its (latest) launch."""
    label: str
    host: str
    port: int | None = None
    unit: str | None = None
    container: str | None = None
    task_ids: list[str] = Field(default_factory=list)
    launches: list[int] = Field(default_factory=list)
    """Event indexes of its launches."""
    history: list[StateChange] = Field(default_factory=list)

    @property
    def name(self) -> str:
        where = f"{self.host}:{self.port}" if self.port else (self.unit or self.container or self.host)
        return f"{self.label} on {where}"

    def state_at(self, event: int, inclusive: bool = True) -> State:
        state: State = "unknown"
        for change in self.history:
            if change.event < event or (inclusive and change.event == event):
                state = change.state
            else:
                break
        return state


@dataclass
class World:
    """Everything the lifecycle stage learned about a session."""

    session: Session
    catalog: Catalog
    facts: list[Fact] = field(default_factory=list)
    instances: dict[str, Instance] = field(default_factory=dict)
    graph: nx.MultiDiGraph = field(default_factory=nx.MultiDiGraph)
    notes: list[str] = field(default_factory=list)
    """What the builder skipped or could not read (never silent)."""

    # -- queries for rule authors ------------------------------------------------------------

    def event(self, index: int) -> Event:
        return self.session.events[index]

    def facts_of(self, kind: type[F]) -> list[F]:
        return [f for f in self.facts if isinstance(f, kind)]

    def facts_at(self, event: int) -> list[Fact]:
        return [f for f in self.facts if f.event == event]

    def state_at(self, instance: str, event: int, inclusive: bool = False) -> State:
        """The state of ``instance`` just before ``event`` (or after it, with ``inclusive``)."""
        inst = self.instances.get(instance)
        return inst.state_at(event, inclusive) if inst else "unknown"

    def evidence(self, instance: str, event: int) -> StateChange | None:
        """The state change in force just before ``event``."""
        inst = self.instances.get(instance)
        if inst is None:
            return None
        found = None
        for change in inst.history:
            if change.event < event:
                found = change
        return found

    def kills(self) -> list[Kill]:
        return self.facts_of(Kill)

    def launches(self, instance: str | None = None) -> list[Launch]:
        return [f for f in self.facts_of(Launch) if instance is None or f.instance == instance]

    def ready_signals(self, instance: str, before: int) -> list[Ready]:
        return [f for f in self.facts_of(Ready) if f.instance == instance and f.event < before]

    def failures(self, instance: str | None = None) -> list[Failure]:
        return [f for f in self.facts_of(Failure) if instance is None or f.instance == instance]

    def instructions_in_force(self, event: int) -> list[Instruction]:
        """User instructions that still apply at ``event``: those of the latest user prompt before
        it, plus any ``hold`` not lifted by a later instruction about the same target."""
        before = [f for f in self.facts_of(Instruction) if f.event < event]
        if not before:
            return []
        prompts = [e.index for e in self.session.events
                   if isinstance(e, UserEvent) and e.origin == "prompt" and e.index < event]
        latest_prompt = prompts[-1] if prompts else -1
        current = [f for f in before if f.event == latest_prompt]
        holds = [h for h in before if h.action == "hold" and h.event != latest_prompt and not any(
            g.event > h.event and g.action != "hold" and (set(g.targets) & set(h.targets) or not h.targets)
            for g in before)]
        return current + holds

    def user_messages_between(self, start: int, end: int) -> list[UserEvent]:
        return [e for e in self.session.events[start + 1 : end]
                if isinstance(e, UserEvent) and e.origin == "prompt"]

    # -- building ------------------------------------------------------------------------------

    def _add(self, fact: Fact) -> int:
        self.facts.append(fact)
        idx = len(self.facts) - 1
        self.graph.add_node(f"event:{fact.event}", type="event", index=fact.event)
        return idx

    def _edge(self, src: str, dst: str, relation: Relation, fact: int | None = None) -> None:
        for node in (src, dst):
            if node not in self.graph:
                kind, _, ident = node.partition(":")
                attrs: dict[str, Any] = {"type": kind}
                if kind == "event":
                    attrs["index"] = int(ident)
                self.graph.add_node(node, **attrs)
        self.graph.add_edge(src, dst, key=relation, relation=relation, fact=fact)

    def _change(self, instance: str, state: State, fact: int, reason: str) -> None:
        inst = self.instances[instance]
        event = self.facts[fact].event
        if inst.history and inst.history[-1].state == state:
            return
        inst.history.append(StateChange(state=state, event=event, fact=fact, reason=reason))


def build_world(session: Session, catalog: Catalog | None = None) -> World:
    """Rebuild what happened to every server in ``session``."""
    from analyzer.lifecycle._builder import Builder  # the walk; kept apart from the query API

    world = World(session=session, catalog=catalog or default_catalog())
    Builder(world).run()
    return world


def node_link(world: World) -> dict[str, Any]:
    """The graph as node-link JSON (stable across networkx versions)."""
    nodes = [{"id": n, **attrs} for n, attrs in world.graph.nodes(data=True)]
    links = [{"source": s, "target": t, "relation": d.get("relation"), "fact": d.get("fact")}
             for s, t, d in world.graph.edges(data=True)]
    return {"directed": True, "multigraph": True, "nodes": nodes, "links": links}


__all__ = ["Instance", "StateChange", "World", "build_world", "node_link"]
