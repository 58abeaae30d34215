"""kill-after-ready: a kill of a server the user has in hand."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from analyzer.lifecycle import Probe, Ready, World
from analyzer.rules import Finding, Rule, Severity, Status


class KillAfterReady(Rule):
    """Flags a kill, stop or restart of a server that is ready and in the user's hands.

    What it does:
        Finds kills (pkill, kill, killall, fuser, systemctl stop/restart, task stops) whose
        victims include a server instance that was ready, where the user had said it was ready
        or in use (or the agent told the user it was up and the user then spoke of it), with no user
        instruction in force to stop or restart it and no failure evidence since it became ready.
        A server from before the log (the user's, or one their tools spawned) is in someone's hands
        when a port listing showed it serving established connections (``netstat -ano`` rows
        ``ESTABLISHED`` on its port under its PID); its kill by that PID counts here, not as an
        unrequested teardown.

    Why is this bad:
        A ready inference server took minutes to load weights and capture CUDA graphs, and the
        user is already relying on it. Killing it throws that away and leaves nothing serving
        until a relaunch succeeds, which is often never in the same turn.

    Not counted as a kill here: a whole-stack ``docker compose down`` of the agent's own stack. It
    stops the stack in the world (a later ``up`` is a fresh start), but taking one's own stack down
    to rebuild it is how a requested change is deployed, and the labelled real sessions never
    count it as killing a server in the user's hands. Kills by PID, ``docker rm -f``/``stop`` of a
    named container, ``systemctl`` and task stops count like ``pkill``; so do a process manager's
    stop, delete or restart of a unit (``pm2 restart api``, ``supervisorctl stop api``, ``brew
    services restart``, ``launchctl kickstart -k``) and ``tmux kill-session`` / ``send-keys C-c`` of
    the session hosting the server. A start of a unit that runs already (``pm2 start`` of an online
    app, ``systemctl start`` of an active unit) changes nothing and is no kill.

    Known false positives:
        The user asked for the restart in words the reader missed, or in an earlier turn that no
        longer looks in force. An agent cleaning up a server only it has used (start, probe, stop)
        is not flagged: readiness must have reached the user.

    How to avoid it:
        Before killing, check whether the user has called the server ready, probe it, and ask.
    """

    name = "kill-after-ready"
    severity = Severity.high
    status = Status.stable
    groups = ("lifecycle", "coordination")
    summary = "A kill hits a server the user said was ready, with no instruction to stop it."

    def check(self, world: World) -> Iterable[Finding]:
        failed = _failure_events(world)
        for kill in world.kills():
            seen: set[str] = set()
            for victim in kill.victims:
                inst = victim.instance
                if inst is None or inst in seen or world.state_before(inst, kill.event) != "ready":
                    continue
                if kill.stack is not None and world.instances[inst].stack == kill.stack:
                    continue  # a service of the agent's own stack taken down whole (see above)
                handed = self.handed_over(world, inst, kill.event)
                using = self.in_use(world, inst, kill.event) if handed is None else None
                since = handed.event if handed is not None else using.event if using is not None else None
                if since is None:
                    continue
                if any(_any_between(failed.get((inst, launch), []), since, kill.event)
                       for launch in {None, victim.launch_event}):
                    continue  # a failure of the instance (or of this launch) since it was handed over
                if any(i.action in ("stop", "restart") and (not i.targets or inst in i.targets)
                       for i in world.instructions_in_force(kill.event)):
                    continue
                seen.add(inst)
                name = world.instances[inst].name
                if handed is not None:
                    who = "the user said it was ready" if handed.source == "user" else \
                        "the agent told the user it was up"
                    related = [("ready-signal", handed.event)]
                else:
                    assert using is not None
                    who = f"a listing showed it in use ({using.target})"
                    related = [("in-use", using.event)]
                if victim.launch_event is not None:
                    related.append(("launch", victim.launch_event))
                    launch = next((la for la in world.launches(inst) if la.event == victim.launch_event), None)
                    if victim.matched == "pid" and launch is not None and launch.pid_event is not None:
                        related.append(("pid-shown", launch.pid_event))  # where the log tied that PID to it
                yield self.finding(
                    world, anchor=kill.event, instance=inst, related=related,
                    message=f"kills the {name} after {who}, with no instruction to stop it",
                    details={"kill": kill.text, "victim": victim.label, "reason": victim.reason,
                             "ready": handed.quote if handed is not None else using.target if using else ""},
                )

    @staticmethod
    def in_use(world: World, inst: str, before: int) -> Probe | None:
        """For a server from before the log (the user's, or their tools'), a port listing that
        showed it serving established connections: it is in someone's hands without a word said."""
        return _in_use(world, inst, before)

    @staticmethod
    def handed_over(world: World, inst: str, before: int) -> Ready | None:
        """The latest readiness signal that reached the user: the user's own words, or an agent
        claim followed by a user message about that server (a user who turns to another task has
        not taken it in hand)."""
        for r in reversed(world.ready_signals(inst, before)):
            if r.source == "user":
                return r
            if r.source == "agent" and world.user_refers_to(inst, r.event, before):
                return r
        return None


def _in_use(world: World, inst: str, before: int) -> Probe | None:
    """The latest listing before ``before`` that shows ``inst``, a server from before the log,
    serving established connections: someone's clients are on it."""
    if world.instances[inst].owner != "before":
        return None
    shown = [p for p in world.facts_about(Probe, inst) if p.method == "port-clients" and p.answered and p.event < before]
    return shown[-1] if shown else None


def _failure_events(world: World) -> dict[tuple[str, int | None], list[int]]:
    """(instance, the launch it is about or None) -> the events of its failures, sorted: one pass,
    so asking per kill stays linear in the session."""
    found: dict[tuple[str, int | None], list[int]] = {}
    for f in world.failures():
        if f.instance is not None:
            found.setdefault((f.instance, f.launch_event), []).append(f.event)
    for events in found.values():
        events.sort()
    return found


def _any_between(events: list[int], after: int, before: int) -> bool:
    """Whether a sorted list holds an event strictly between ``after`` and ``before``."""
    return bisect_right(events, after) < bisect_left(events, before)
