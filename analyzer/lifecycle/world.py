"""The World: server instances, their state over the session, the facts behind every change, and
the graph that ties them to events. Rules are queries over it.

``build_world(session)`` walks the timeline once, in order, so a kill is evaluated against the
processes the world knows at that moment.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from analyzer.events import Event, Session, UserEvent
from analyzer.lifecycle.catalog import Catalog
from analyzer.lifecycle.facts import Fact, Failure, Instruction, Kill, Launch, Ready, State

if TYPE_CHECKING:
    import networkx as nx

F = TypeVar("F", bound=BaseModel)

Relation = Literal[
    "launches", "probes", "asserts-ready", "reports-failure", "kills", "matched-by-kill", "replaces",
    "conflicts-with", "requested-by", "corrects",
]


_SERVER_TALK = re.compile(r"\b(?:server|service|api|app|site|page|endpoint|backend|frontend|localhost|"
                          r"https?://|browser|dashboard|works?|working|loads?|running|up|"
                          r"looks? (?:good|great|fine|right|broken)|click\w*|tr(?:y|ied) it)\b")
"""Words a user uses about a running server, whatever its kind."""

class StateChange(BaseModel):
    """One step of an instance's state history."""

    model_config = ConfigDict(defer_build=True)

    state: State
    event: int
    """The event that is the evidence."""
    fact: int
    """Index into ``World.facts``."""
    reason: str
    """Why, in words."""


class Instance(BaseModel):
    """A server identity (host and port, else unit, container or task) over the session."""

    model_config = ConfigDict(defer_build=True)

    id: str
    """Stable key: ``gpu1:30001``, ``local:3000``, ``ct200/unit:sglang``, ``task:bash_1``."""
    server: str
    """Catalog kind of its (latest) launch."""
    label: str
    """Human name of its kind (``sglang server``, ``docker compose (shop)``)."""
    host: str
    """``local`` or the ssh host it runs on."""
    port: int | None = None
    """The port it listens on, when a launch, a probe or a listing showed it."""
    unit: str | None = None
    """The systemd unit, for a unit; the unit's name in its process manager for a pm2 app, a
    supervisor program, a brew service or a launchd job (``server`` says which manager)."""
    session: str | None = None
    """The tmux or screen session hosting it (``tmux:api``): ``kill-session`` and ``send-keys C-c``
    of that session reach it."""
    container: str | None = None
    """The container name; ``compose:<project>`` for a compose stack."""
    task_ids: list[str] = Field(default_factory=list)
    """The harness's background task ids that ran it."""
    launches: list[int] = Field(default_factory=list)
    """Event indexes of its launches."""
    owner: Literal["agent", "before", "other"] = "agent"
    """Who started it: the agent in this session, someone before the log began (a host service
    the agent stops, found only by that stop), or someone else during it (another project whose
    containers share this one's compose name)."""
    owner_evidence: int | None = None
    """For ``other``: the event whose output shows someone else made it."""
    owner_detail: str = ""
    """For ``other``: what that output shows, in one sentence."""
    members: list[str] = Field(default_factory=list)
    """For a compose stack: the containers its ``up`` output showed it creating or starting (each
    service is an instance of its own, whose ``stack`` is this one's key)."""
    stack: str | None = None
    """For a compose service (``local/container:compose:shop/api``): its stack's key."""
    started_by: str | None = None
    """For ``agent``: which agent's call first launched it, ``main`` or a sub-agent's id (a
    sub-agent's tool calls act in the same world as the main agent's)."""
    handed_at: int | None = None
    """The main agent's message that first handed it to the user: said it runs or serves, or gave
    its local URL while it was starting or ready. None: never handed over."""
    requested_at: list[int] = Field(default_factory=list)
    """The user's prompts whose instructions named it (launch, stop, restart, hold): the user's words
    put it in scope there."""
    pids: list[int] = Field(default_factory=list)
    """PIDs a process manager's output showed for it (``pm2 list``, ``supervisorctl status``,
    ``Main PID:``), oldest first; a launch's own PID is on the launch."""
    history: list[StateChange] = Field(default_factory=list)
    """Its states in timeline order, each with the event and fact that are the evidence."""

    @property
    def name(self) -> str:
        """How findings name it: ``sglang server on gpu1:30001``."""
        where = f"{self.host}:{self.port}" if self.port else self.host
        return f"{self.label} on {where}"

    @property
    def name_words(self) -> set[str]:
        """Lower-case words (4+ letters) of its label, kind, unit and container that a message
        naming it would use ("streamlit", "worker.service"); not the generic "server"."""
        return {w.lower() for w in re.findall(r"[A-Za-z][\w.-]{3,}", " ".join(
            filter(None, (self.label, self.server, self.unit, self.container))))} - {"server", "systemd", "program"}

    def state_at(self, event: int, inclusive: bool = True) -> State:
        """Its state just after ``event`` (without ``inclusive``: just before it). Note the default
        is the opposite of ``World.state_at``'s; ``World.state_before``/``state_after`` say it."""
        # the history is appended in timeline order, so the changes before ``event`` are a prefix
        history = self.history
        if inclusive:
            k = bisect_right(history, event, key=_event_of)
        else:
            k = bisect_left(history, event, key=_event_of)
        return history[k - 1].state if k else "unknown"


def _event_of(change: StateChange) -> int:
    return change.event


@dataclass(slots=True)
class _Listing:
    """Some facts in ``World.facts`` order, their events, and whether those events never decrease
    (the walk appends facts in timeline order; a hand-built world might not)."""

    facts: list[Any] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    ordered: bool = True

    def add(self, fact: Any) -> None:
        if self.events and fact.event < self.events[-1]:
            self.ordered = False
        self.facts.append(fact)
        self.events.append(fact.event)

    def before(self, event: int) -> list[Any]:
        """The facts whose event is below ``event``, in order."""
        if self.ordered:
            return self.facts[: bisect_left(self.events, event)]
        return [f for f in self.facts if f.event < event]

    def at(self, event: int) -> list[Any]:
        """The facts whose event is ``event``, in order."""
        if self.ordered:
            return self.facts[bisect_left(self.events, event) : bisect_right(self.events, event)]
        return [f for f in self.facts if f.event == event]


@dataclass
class World:
    """Everything the lifecycle stage learned about a session.

    The queries below are indexed: each index is built on first use and extended as facts are
    appended (``record``), so a rule asking once per kill or per event stays linear in the session.
    ``facts`` is append-only; the builder never removes or replaces a fact."""

    session: Session
    catalog: Catalog
    facts: list[Fact] = field(default_factory=list)
    instances: dict[str, Instance] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the builder skipped or could not read (never silent)."""
    _nodes: dict[str, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)
    _edges: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict, init=False, repr=False)
    _graph: nx.MultiDiGraph | None = field(default=None, init=False, repr=False)
    _positions: dict[int, int] = field(default_factory=dict, init=False, repr=False)
    """id(fact) -> its index in ``facts``."""
    _kinds: dict[Any, tuple[list[int], _Listing]] = field(default_factory=dict, init=False, repr=False)
    """kind -> ([facts indexed so far], the facts of that kind)."""
    _at: tuple[list[int], dict[int, list[Fact]]] = field(default_factory=lambda: ([0], {}), init=False, repr=False)
    _per_instance: dict[Any, tuple[list[int], dict[str | None, _Listing]]] = field(
        default_factory=dict, init=False, repr=False)
    """kind -> ([facts of that kind indexed so far], instance -> its facts of that kind)."""
    _prompts: tuple[list[int], list[int], bool] | None = field(default=None, init=False, repr=False)
    """(``index`` of each user prompt, its position in ``session.events``, whether the indexes
    ascend), in timeline order."""
    _lifted: tuple[int, dict[int, int | None], _Listing] = field(
        default_factory=lambda: (-1, {}, _Listing()), init=False, repr=False)
    """(instructions seen, id(hold) -> the first later instruction event that lifts it or None, the holds)."""

    # -- the graph (networkx is imported when a caller first asks for it) ------------------------

    @property
    def graph(self) -> nx.MultiDiGraph:
        """Instances and events tied by relations (``launches``, ``kills``, ``asserts-ready``…)."""
        if self._graph is None:
            import networkx as nx

            graph = nx.MultiDiGraph()
            for node, attrs in self._nodes.items():
                graph.add_node(node, **attrs)
            for (src, dst, key), data in self._edges.items():
                graph.add_edge(src, dst, key=key, **data)
            self._graph = graph
        return self._graph

    # -- queries for rule authors ------------------------------------------------------------

    def event(self, index: int) -> Event:
        """The timeline event at ``index`` (every fact's ``event`` is such an index): its ``ref``,
        ``line`` and ``source`` locate it in the log."""
        return self.session.events[index]

    def _of(self, kind: Any) -> list[Any]:
        """Facts that are instances of ``kind``, in order (the index itself: do not mutate)."""
        return self._listing(kind).facts

    def _listing(self, kind: Any) -> _Listing:
        entry = self._kinds.get(kind)
        if entry is None:
            entry = self._kinds[kind] = ([0], _Listing())
        done, listing = entry
        if done[0] > len(self.facts):  # the list was replaced: start over
            done[0] = 0
            listing = _Listing()
            self._kinds[kind] = (done, listing)
        if done[0] != len(self.facts):
            for f in self.facts[done[0]:]:
                if isinstance(f, kind):
                    listing.add(f)
            done[0] = len(self.facts)
        return listing

    def _of_instance(self, kind: Any, instance: str | None) -> _Listing:
        """Facts of ``kind`` about ``instance`` (the index itself: do not mutate)."""
        entry = self._per_instance.get(kind)
        if entry is None:
            entry = self._per_instance[kind] = ([0], {})
        done, by_instance = entry
        of_kind = self._of(kind)
        if done[0] > len(of_kind):
            done[0] = 0
            by_instance.clear()
        if done[0] != len(of_kind):
            for f in of_kind[done[0]:]:
                listing = by_instance.get(f.instance)
                if listing is None:
                    listing = by_instance[f.instance] = _Listing()
                listing.add(f)
            done[0] = len(of_kind)
        return by_instance.get(instance) or _Listing()

    def facts_of(self, kind: type[F]) -> list[F]:
        """Every fact of ``kind`` (``Launch``, ``Kill``, ``Ready``…), in timeline order (a copy)."""
        return list(self._of(kind))

    def facts_about(self, kind: type[F], instance: str | None) -> list[F]:
        """The facts of ``kind`` about ``instance`` (``None``: facts tied to no instance), in
        timeline order; indexed once for the whole world, so asking per victim stays linear."""
        return list(self._of_instance(kind, instance).facts)

    def facts_at(self, event: int) -> list[Fact]:
        """Every fact read from the event at ``event``, of any kind, in the order they were made."""
        done, by_event = self._at
        if done[0] > len(self.facts):
            done[0] = 0
            by_event.clear()
        if done[0] != len(self.facts):
            for f in self.facts[done[0]:]:
                by_event.setdefault(f.event, []).append(f)
            done[0] = len(self.facts)
        return list(by_event.get(event, ()))

    def state_at(self, instance: str, event: int, inclusive: bool = False) -> State:
        """The state of ``instance`` just before ``event`` (with ``inclusive``: just after it, the
        event's own changes included); ``"unknown"`` for a key the world does not hold. Same
        answers as ``state_before`` and ``state_after``, which say which one they mean."""
        inst = self.instances.get(instance)
        return inst.state_at(event, inclusive) if inst else "unknown"

    def state_before(self, instance: str, event: int) -> State:
        """The state of ``instance`` when ``event`` began: what a command run there met."""
        return self.state_at(instance, event, inclusive=False)

    def state_after(self, instance: str, event: int) -> State:
        """The state of ``instance`` once ``event`` was over (its own launches and kills applied)."""
        return self.state_at(instance, event, inclusive=True)

    def evidence(self, instance: str, event: int) -> StateChange | None:
        """The state change in force just before ``event``: its ``reason`` and ``fact`` (an index
        into ``facts``) say why the instance was in that state; None before its first change."""
        inst = self.instances.get(instance)
        if inst is None:
            return None
        found = None
        for change in inst.history:
            if change.event < event:
                found = change
        return found

    def kills(self) -> list[Kill]:
        """Every kill, stop or end the log shows (``pkill``, ``kill PID``, ``systemctl stop``, a
        task stop, a foreground server ending with its command), in timeline order. Each lists
        its ``victims`` with why they match; a kill whose shell died first has a note saying so."""
        return self.facts_of(Kill)

    def launches(self, instance: str | None = None) -> list[Launch]:
        """Launches in timeline order, of ``instance`` or of all. ``duplicate_of`` names the live
        launch one collides with; ``ran`` is False when the process model predicts it never ran."""
        if instance is None:
            return self.facts_of(Launch)
        return list(self._of_instance(Launch, instance).facts)

    def ready_signals(self, instance: str, before: int) -> list[Ready]:
        """The readiness evidence for ``instance`` from events before ``before``, oldest first:
        each ``Ready`` has its ``source`` (probe, log, user, agent) and ``strength`` (a probe's
        answer is strong, the agent's claim weak) and the ``quote`` it rests on."""
        return self._of_instance(Ready, instance).before(before)

    def failures(self, instance: str | None = None) -> list[Failure]:
        """Failures in timeline order, of ``instance`` or of all: a launch that died (``reason``:
        address-in-use, oom, traceback, exit…), a probe refused, a log's error line; with the
        ``quote`` and, for a launch, its ``launch_event``."""
        if instance is None:
            return self.facts_of(Failure)
        return list(self._of_instance(Failure, instance).facts)

    def instructions_in_force(self, event: int) -> list[Instruction]:
        """User instructions that still apply at ``event``: those of the latest user prompt before
        it, plus any ``hold`` not lifted by a later instruction about the same target."""
        listing = self._listing(Instruction)
        before = listing.before(event)
        if not before:
            return []
        latest_prompt = self._latest_prompt(event)
        current: list[Instruction] = [f for f in listing.at(latest_prompt) if f.event < event]
        lifted, holds = self._hold_lifts(listing.facts)
        in_force = []
        for h in holds.before(event):
            if h.event != latest_prompt:
                lift = lifted[id(h)]
                if lift is None or lift >= event:
                    in_force.append(h)
        return current + in_force

    def _hold_lifts(self, instructions: list[Instruction]) -> tuple[dict[int, int | None], _Listing]:
        """For each hold, the earliest event of a later non-hold instruction about the same target
        (any target, for a hold that names none): the hold is in force before that event only."""
        done, lifts, holds = self._lifted
        if done != len(instructions):
            lifts, holds = {}, _Listing()
            for h in instructions:
                if h.action != "hold":
                    continue
                holds.add(h)
                targets = set(h.targets)
                events = [g.event for g in instructions if g.event > h.event and g.action != "hold"
                          and (targets & set(g.targets) or not h.targets)]
                lifts[id(h)] = min(events) if events else None
            self._lifted = (len(instructions), lifts, holds)
        return lifts, holds

    def _prompt_index(self) -> tuple[list[int], list[int], bool]:
        if self._prompts is None:
            indexes: list[int] = []
            positions: list[int] = []
            for pos, e in enumerate(self.session.events):
                if isinstance(e, UserEvent) and e.origin == "prompt":
                    indexes.append(e.index)
                    positions.append(pos)
            ordered = all(a <= b for a, b in pairwise(indexes))
            self._prompts = (indexes, positions, ordered)
        return self._prompts

    def _latest_prompt(self, event: int) -> int:
        """``index`` of the last user prompt (in timeline order) whose index is below ``event``."""
        indexes, _, ordered = self._prompt_index()
        if ordered:
            k = bisect_left(indexes, event)
            return indexes[k - 1] if k > 0 else -1
        below = [i for i in indexes if i < event]  # a hand-built session with unordered indexes
        return below[-1] if below else -1

    def user_messages_between(self, start: int, end: int) -> list[UserEvent]:
        """The user's own prompts strictly between events ``start`` and ``end`` (harness notes,
        tool results and pasted command output are not prompts); ``start=-1`` from the first."""
        events = self.session.events
        lo, hi, _ = slice(start + 1, end).indices(len(events))
        if hi <= lo:
            return []
        positions = self._prompt_index()[1]
        chosen = positions[bisect_left(positions, lo) : bisect_left(positions, hi)]
        return [cast(UserEvent, events[p]) for p in chosen]

    def user_refers_to(self, instance: str, start: int, end: int) -> UserEvent | None:
        """The first user prompt strictly between ``start`` and ``end`` that is about ``instance``:
        it names its port, a word of its kind, unit or container, a URL, or a server in general
        words ("the app", "the page", "localhost"). A user who moves on to another task has not
        taken a server in hand."""
        inst = self.instances[instance]
        names = inst.name_words
        for msg in self.user_messages_between(start, end):
            low = msg.text.lower()
            if (inst.port and re.search(rf"(?<!\d){inst.port}(?!\d)", msg.text)) or _SERVER_TALK.search(low) \
                    or any(n in low for n in names):
                return msg
        return None

    # -- recording: what the builder calls; rules only read -------------------------------------

    def record(self, fact: Fact) -> int:
        """Append ``fact`` (the builder's; rules only read) and return its index in ``facts``."""
        self.facts.append(fact)
        idx = len(self.facts) - 1
        self._positions[id(fact)] = idx
        node = f"event:{fact.event}"
        attrs = self._nodes.get(node)
        if attrs is None:
            self._nodes[node] = {"type": "event", "index": fact.event}
        else:
            attrs.update(type="event", index=fact.event)
        if self._graph is not None:
            self._graph.add_node(node, type="event", index=fact.event)
        return idx

    def position(self, fact: Fact) -> int:
        """The index of ``fact`` in ``facts`` (``facts.index`` without comparing every fact)."""
        idx = self._positions.get(id(fact))
        if idx is not None and idx < len(self.facts) and self.facts[idx] is fact:
            return idx
        return self.facts.index(fact)

    def link(self, src: str, dst: str, relation: Relation, fact: int | None = None) -> None:
        """Tie graph nodes ``src`` and ``dst`` (``event:12``, ``instance:local:8000``) by ``relation``,
        with the fact that is the evidence (the builder's; rules read ``graph``)."""
        for node in (src, dst):
            if node not in self._nodes:
                kind, _, ident = node.partition(":")
                attrs: dict[str, Any] = {"type": kind}
                if kind == "event":
                    attrs["index"] = int(ident)
                self._nodes[node] = attrs
                if self._graph is not None:
                    self._graph.add_node(node, **attrs)
        data = self._edges.get((src, dst, relation))
        if data is None:
            self._edges[(src, dst, relation)] = {"relation": relation, "fact": fact}
        else:
            data.update(relation=relation, fact=fact)
        if self._graph is not None:
            self._graph.add_edge(src, dst, key=relation, relation=relation, fact=fact)

    def change_state(self, instance: str, state: State, fact: int, reason: str) -> None:
        """Append a state change of ``instance`` with fact ``fact`` as its evidence (the builder's);
        a change to the state it is already in is no change."""
        inst = self.instances[instance]
        event = self.facts[fact].event
        if inst.history and inst.history[-1].state == state:
            return
        inst.history.append(StateChange(state=state, event=event, fact=fact, reason=reason))


def node_link(world: World) -> dict[str, Any]:
    """The graph as node-link JSON (stable across networkx versions)."""
    nodes = [{"id": n, **attrs} for n, attrs in world.graph.nodes(data=True)]
    links = [{"source": s, "target": t, "relation": d.get("relation"), "fact": d.get("fact")}
             for s, t, d in world.graph.edges(data=True)]
    return {"directed": True, "multigraph": True, "nodes": nodes, "links": links}


__all__ = ["Instance", "StateChange", "World", "node_link"]
