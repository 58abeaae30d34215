"""over-broad-kill: a kill whose victims exceed what it was meant to hit."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from analyzer.lifecycle import Kill, Launch, ModelDisagreement, World
from analyzer.rules import Finding, Rule, Severity, Status, and_list


class OverBroadKill(Rule):
    """Flags a kill that hits more than its target.

    What it does:
        Uses the kill semantics of pkill, pgrep, killall, fuser and kill to list what a kill really
        hits, and fires when that includes: the shell running the command (the pattern matches the
        command's own text, so the rest of the command never runs), the relaunch in the same
        command, the agent itself, a local ssh client, or everything with a generic name
        (``node``, ``python``, ``zsh``) or every GPU process (``fuser -k /dev/nvidia*``). A
        command line every project's instance shares is generic too: ``pkill -f next-server``
        (Next.js titles every server process so) or ``ps aux | grep "docker compose up"`` hits
        the same server of every other project on the machine; a pattern that names its own
        app, port or project (``uvicorn shop.api:app --port 8000``) is scoped, and so is a bare
        program name an agent kills its own one server by (``pkill -f uvicorn``).
        A process manager's ``all`` is generic too: ``pm2 delete all`` / ``pm2 kill``,
        ``supervisorctl stop|restart all`` (and ``reload``), ``brew services stop --all`` reach every
        unit of that manager on the host, the ones other projects or the user started included.
        A kill by PID of Docker Desktop's backend is one too: Docker reported an address allocated
        ("Bind for 0.0.0.0:3000 failed: port is already allocated": a container publishes it) and a
        port listing of a Docker Desktop host (Windows ``netstat -ano``, macOS ``lsof`` naming
        ``com.docke…``/``vpnkit``) showed that PID listening there; the backend forwards every
        published port, so the engine and every container stop with it. On Linux each published
        port has its own ``docker-proxy``: killing one breaks only that port and is not flagged.

    Why is this bad:
        A kill reaches every process its pattern matches, not the one meant. ``pkill -f`` matches
        the whole command line of every process, including the shell that runs the pkill when the
        pattern appears in the script text: the relaunch after it never runs, the tool call dies
        with exit 143/137 (255 through ssh), and servers nobody meant to touch go down with it. A
        kill by a generic name (``pkill -9 zsh``, ``killall python``) takes down every such process
        on the machine, the user's own shells and other servers included.

    Known false positives:
        The process model is a prediction: a harness that runs commands from a file instead of
        ``bash -c`` is not hit by its own pattern. When the output shows later commands ran, the
        observation wins: the shell is not reported as a victim, while the relaunch and generic
        victims still are. A harness known to type commands into a long-lived interactive shell
        (SWE-agent, OpenHands) keeps its shell, so a relaunch after the kill is not a victim there
        unless the kill also took other servers down.

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
            clauses: list[str] = []  # one short clause per unintended victim
            reasons: list[dict[str, str]] = []  # the long why of each, for reports
            related: list[tuple[str, int]] = []
            instance = None
            # the output shows later commands ran: the shell evidently survived its own pattern
            observed_ran = any(isinstance(f, ModelDisagreement) and f.instance is None for f in world.facts_at(event))
            shown_ran = any(isinstance(f, ModelDisagreement) and f.instance is None and f.shown_by_output
                            for f in world.facts_at(event))
            for k in kills:
                for v in k.victims:
                    if v.role == "shell" and observed_ran:
                        reasons.append({"kill": k.text, "victim": v.label, "why": v.reason,
                                        "observed": "the output shows the shell went on"})
                    elif v.role in _ROLE_NAMES:
                        clause = f"{_ROLE_NAMES[v.role]} ({_why(k)} is in its command line)"
                        reasons.append({"kill": k.text, "victim": v.label, "why": v.reason})
                        if clause not in clauses and not any(c.startswith(_ROLE_NAMES[v.role]) for c in clauses):
                            clauses.append(clause)
                # the relaunch starts after the kill has exited: it is lost only with the shell that
                # would run it (``bash -c "pkill -f X; X &"``), not in an interactive shell (SWE-agent)
                shell_hit = k.self_kill or any(v.role == "shell" for v in k.victims)
                if k.also_matches_relaunch and ((shell_hit and not shown_ran) or _beyond_restart(world, k)):
                    clauses.append(f"the relaunch after it ({_why(k)} matches it)")
                    reasons.append({"kill": k.text, "victim": "the relaunch in the same command",
                                    "why": f"the pattern {k.pattern!r} matches the relaunched server's command line"})
                    related += [("relaunch", e) for e in k.also_matches_relaunch if e != event]
                if k.generic and self.options.flag_generic:  # type: ignore[attr-defined]
                    clauses.append(f"{_everything(k)} (`{k.text}`)")
                    reasons.append({"kill": k.text, "victim": _everything(k),
                                    "why": "; ".join(k.notes) or "a generic name"})
                servers = [v for v in k.victims if v.instance]
                instance = instance or (servers[0].instance if servers else None)
                for v in servers:
                    if v.launch_event is not None and (r := ("matched-process", v.launch_event)) not in related:
                        related.append(r)
            if not clauses:
                continue
            tail = "; the rest of the command never runs" if any(k.self_kill for k in kills) and not observed_ran else ""
            victims = list(dict.fromkeys(clauses))
            listed = and_list(victims)
            yield self.finding(
                world, anchor=event, instance=instance, related=related,
                message=f"kills more than its target: {listed}{tail}",
                details={"victims": reasons, "kills": [k.model_dump(mode="json") for k in kills]},
            )


_ROLE_NAMES = {"shell": "its own shell", "agent": "the agent", "ssh-client": "the local ssh client"}


def _beyond_restart(world: World, kill: Kill) -> bool:
    """Whether a kill reaches servers other than the one its command relaunches. When the output
    shows the shell went on, a pattern that matches the relaunch harmed nothing, unless it also
    took other servers down (seed 002: one restart, three servers)."""
    relaunched = {f.instance for e in kill.also_matches_relaunch for f in world.facts_at(e)
                  if isinstance(f, Launch)}
    return any(v.instance and v.instance not in relaunched for v in kill.victims)


def _why(kill: Kill) -> str:
    """The kill's pattern, quoted short, as the subject of a "why" clause."""
    if kill.pattern:
        pattern = kill.pattern if len(kill.pattern) <= 40 else kill.pattern[:39] + "…"
        return f"`{pattern}`"
    return f"`{kill.text}`"


def _everything(kill: Kill) -> str:
    """What a generic kill selects, as the kill model names it."""
    return kill.selects or f"every process `{kill.pattern or kill.text}` selects"
