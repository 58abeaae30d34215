"""Impact: how long each server was not serving, from its state history.

An outage starts when a ready instance leaves ``ready`` (a kill, a failure) and ends at its next
``ready``, or runs to the end of the log. A kill the user asked for (a stop or restart instruction
in force that names the instance, or names none) is a requested outage; the others are not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.lifecycle.facts import Failure, Kill
from analyzer.lifecycle.world import Instance, World
from analyzer.report._when import Times, duration


@dataclass
class Outage:
    start: int
    """The event where it stopped serving."""
    cause: str
    """``killed by `pkill …` ``, ``failed: <output line>``."""
    requested: bool
    """The user's instruction in force asked for this stop or restart."""
    end: int | None
    """The event of the next ready signal, None when it was still down at the end of the log."""
    seconds: float | None
    """How long, when the log has times."""
    span: str
    """``4 min 32 s``, ``3 events`` or ``16 min (to the end of the log)``."""
    length: str = ""
    """The span alone: ``16 min``."""
    failures: list[str] = field(default_factory=list)
    """What went wrong while it was down (a relaunch that died)."""


@dataclass
class Impact:
    instance: Instance
    outages: list[Outage]
    final_state: str
    findings: list[int]
    """Indexes (into the report's finding list) of findings about this instance."""

    @property
    def unplanned(self) -> list[Outage]:
        return [o for o in self.outages if not o.requested]

    @property
    def down_at_end(self) -> bool:
        return bool(self.outages) and self.outages[-1].end is None


def requested_stop(world: World, instance: str, event: int) -> bool:
    return any(i.action in ("stop", "restart") and (not i.targets or instance in i.targets)
               for i in world.instructions_in_force(event))


def outages(world: World, inst: Instance, times: Times) -> list[Outage]:
    out: list[Outage] = []
    current: Outage | None = None
    prev = "unknown"
    for change in inst.history:
        fact = world.facts[change.fact] if 0 <= change.fact < len(world.facts) else None
        if current is None and prev == "ready" and change.state in ("stopped", "failed", "unknown"):
            if isinstance(fact, Kill):
                cause = f"killed by `{fact.text}`"
                requested = requested_stop(world, inst.id, change.event)
            elif isinstance(fact, Failure):
                cause = f"failed: {fact.quote.strip() or fact.reason}"
                requested = False
            else:
                cause = change.reason
                requested = False
            current = Outage(start=change.event, cause=cause, requested=requested, end=None,
                             seconds=None, span="")
        elif current is not None and change.state == "failed" and isinstance(fact, Failure):
            current.failures.append(fact.quote.strip() or fact.reason)
        elif current is not None and change.state == "ready":
            current.end = change.event
            _measure(current, times)
            out.append(current)
            current = None
        prev = change.state
    if current is not None:
        _measure(current, times)
        out.append(current)
    return out


def _measure(o: Outage, times: Times) -> None:
    start = times.at(o.start)
    if o.end is not None:
        end = times.done(o.end)
        if start and end and times.meaningful:
            o.seconds = (end - start).total_seconds()
            o.span = o.length = duration(o.seconds)
        else:
            o.span = o.length = times.between(o.start, o.end)
        return
    last = times.last
    if start and last and times.meaningful:
        o.seconds = (last - start).total_seconds()
        o.length = duration(o.seconds)
    else:
        n = times.count - 1 - o.start
        o.length = f"{n} event{'s' if n != 1 else ''}"
    o.span = f"{o.length} (to the end of the log)"


def impacts(world: World, times: Times, finding_instances: list[set[str]]) -> list[Impact]:
    """Every instance with an outage or a finding, in the order the world met them."""
    rows: list[Impact] = []
    end = len(world.session.events)
    for inst in world.instances.values():
        found = [i for i, keys in enumerate(finding_instances) if inst.id in keys]
        outs = outages(world, inst, times)
        if not outs and not found:
            continue
        rows.append(Impact(instance=inst, outages=outs, final_state=inst.state_at(end), findings=found))
    return rows
