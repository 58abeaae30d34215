"""over-broad-kill: a kill whose victims exceed what it was meant to hit."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from analyzer.lifecycle.facts import Kill
from analyzer.lifecycle.world import World
from analyzer.rules import Finding, Rule, Severity, Status


class OverBroadKill(Rule):
    """Flags a kill that hits more than its target.

    What it does:
        Uses the kill semantics of pkill, pgrep, killall, fuser and kill to list what a kill really
        hits, and fires when that includes: the shell running the command (the pattern matches the
        command's own text, so the rest of the command never runs), the relaunch in the same
        command, the agent itself, a local ssh client, or everything with a generic name
        (``node``, ``python``, ``zsh``) or every GPU process (``fuser -k /dev/nvidia*``).

    Why is this bad:
        ``pkill -f`` matches the whole command line of every process, including the shell that
        runs the pkill when the pattern appears in the script text. The relaunch after it never
        runs, the tool call dies with exit 143/137 (255 through ssh), and servers nobody meant to
        touch go down with it.

    Known false positives:
        The process model is a prediction: a harness that runs commands from a file instead of
        ``bash -c`` is not hit by its own pattern. When the output shows later commands ran, the
        analyzer records the disagreement and still reports the pattern's reach.

    How to avoid it:
        Kill by pid or port (``kill $(cat pidfile)``, ``fuser -k 30001/tcp``), use ``pkill -A``
        (procps-ng 4.0.1+), anchor patterns on the exact server, and never relaunch in the same
        command string as a ``pkill -f``.
    """

    name = "over-broad-kill"
    severity = Severity.high
    status = Status.stable
    groups = ("lifecycle", "shell")
    summary = "A kill pattern also hits its own shell, the relaunch, the agent or unrelated processes."

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        flag_generic: bool = Field(True, description="Flag kills by a generic name (node, python, zsh…).")

    def check(self, world: World) -> Iterable[Finding]:
        by_event: dict[int, list[Kill]] = {}
        for kill in world.kills():
            by_event.setdefault(kill.event, []).append(kill)
        for event, kills in by_event.items():
            reasons: list[str] = []
            related: list[tuple[str, int]] = []
            instance = None
            for k in kills:
                for v in k.victims:
                    if v.role in ("shell", "agent", "ssh-client"):
                        reasons.append(f"`{k.text}` hits {v.label}: {v.reason}")
                if k.also_matches_relaunch:
                    reasons.append(f"`{k.text}` also matches the relaunch in the same command")
                    related += [("relaunch", e) for e in k.also_matches_relaunch if e != event]
                if k.generic and self.options.flag_generic:  # type: ignore[attr-defined]
                    names = ", ".join(v.label for v in k.victims[:4]) or "whatever runs there"
                    reasons.append(f"`{k.text}` kills by a generic name: {names}")
                servers = [v for v in k.victims if v.instance]
                instance = instance or (servers[0].instance if servers else None)
                for v in servers:
                    if v.launch_event is not None and (r := ("matched-process", v.launch_event)) not in related:
                        related.append(r)
            if not reasons:
                continue
            unique = list(dict.fromkeys(reasons))
            tail = " The commands after it in that shell never run." if any(k.self_kill for k in kills) else ""
            yield self.finding(
                world, anchor=event, instance=instance, related=related,
                message="; ".join(unique) + "." + tail,
                details={"kills": [k.model_dump(mode="json") for k in kills]},
            )
