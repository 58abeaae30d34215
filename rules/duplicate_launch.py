"""duplicate-launch: launching a server whose identity is already taken by a live one."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analyzer.lifecycle import Failure, Launch, World
from analyzer.rules import Finding, Rule, Severity, Status


class DuplicateLaunch(Rule):
    """Flags a launch while an instance with the same identity is starting or ready.

    What it does:
        Finds launches on a host and port (or systemd unit, container) where an earlier launch is
        still starting or ready and nothing stopped it in between. Declarative tools reconcile:
        ``systemctl start`` of an active unit and ``docker compose up`` of a running stack are not
        launched twice; a compose ``up`` collides only while an earlier ``up`` of it still runs
        (a background task that has not ended), and each such ``up`` is reported once. Not a
        duplicate: a retry after the earlier launch visibly failed, ended with its tool call or
        task, or stopped answering on its port; two scripts that only share a kind's default port.

        Also flagged: a launch that dies because its port is taken (``EADDRINUSE``, "Another next
        dev server is already running") while no launch of this log holds it: the occupant was
        started before the log or by the user, and the agent launched as if the port were free.

    Why is this bad:
        The duplicate cannot bind the port or get the GPUs: it dies at once (``Killed``,
        ``Address already in use``, CUDA OOM), or worse, it races the live one. Either way the agent
        wastes minutes and often misreads the failure as a problem with the live server.

    Known false positives:
        Launches whose port the analyzer could not see (a ``$PORT`` variable, a config file) are
        keyed by host and kind and may look alike when they are not. A background ``up`` whose end
        the log never shows (no notification, no ``docker compose ps``) is believed still running.
        A port taken by an unrelated program (not another copy of the server) reads as a
        collision with a server from before the log: the output rarely says which.

    How to avoid it:
        Probe the port (``curl -sf host:port/health``) before launching; stop the old one first if
        a relaunch is really wanted.
    """

    name = "duplicate-launch"
    severity = Severity.medium
    status = Status.stable
    groups = ("lifecycle",)
    summary = "A server is launched again while the same one is starting or ready."

    def check(self, world: World) -> Iterable[Finding]:
        for launch in world.facts_of(Launch):
            if launch.collided and launch.ran and launch.instance is not None:
                inst = world.instances[launch.instance]
                named = re.search(r"[:.](\d{2,5})\b", launch.collided)
                # the port the launch or its refusal names: a stack's instance may know another
                port = launch.port or (int(named.group(1)) if named else None) or inst.port
                held = f":{port}" if port else "its port"
                yield self.finding(
                    world, anchor=launch.event, instance=launch.instance,
                    message=f"launches the {inst.name} while a server this session did not start already holds "
                            f"{held}: {launch.collided[:160]!r}",
                    details={"collided": launch.collided},
                )
                continue
            if launch.duplicate_of is None or not launch.ran or launch.instance is None:
                continue
            if launch.overlaps:
                held = []
                for port, event in launch.overlaps:
                    prior = next((f for f in world.facts_at(event) if isinstance(f, Launch) and f.port == port), None)
                    if prior is not None and prior.instance:
                        held.append(f"the {world.instances[prior.instance].label} still holds :{port}")
                ports = " and ".join(f":{p}" for p, _ in launch.overlaps)
                yield self.finding(
                    world, anchor=launch.event, instance=launch.instance,
                    related=[("prior-launch", e) for _, e in launch.overlaps],
                    message=f"launches the {world.instances[launch.instance].label}, whose containers publish "
                            f"{ports}, while {', '.join(held) or 'an earlier launch holds them'}",
                    details={"prior_launch": launch.duplicate_of, "ports": [p for p, _ in launch.overlaps]},
                )
                continue
            inst = world.instances[launch.instance]
            state = world.state_at(launch.instance, launch.event)
            died = next((f for f in world.facts_at(launch.event)  # indexed: not every failure per launch
                         if isinstance(f, Failure) and f.launch_event == launch.event), None)
            related = [("prior-launch", launch.duplicate_of)]
            ready = world.ready_signals(launch.instance, launch.event)
            if ready:
                related.append(("ready-signal", ready[-1].event))
            tail = f"; the duplicate died at once ({_REASONS.get(died.reason, died.reason)})" if died else ""
            yield self.finding(
                world, anchor=launch.event, instance=launch.instance, related=related,
                message=f"launches the {inst.name} again while the earlier launch is still {state}{tail}",
                details={"prior_launch": launch.duplicate_of, "state": state,
                         **({"died": died.quote} if died else {})},
            )


_REASONS = {"killed": "Killed", "oom": "out of memory", "address-in-use": "address already in use",
            "traceback": "a Traceback", "exit": "non-zero exit", "crash": "crashed", "error": "an error"}
