"""user-correction: the user contradicts the agent about server state."""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.lifecycle import Correction, Kill, Launch, Ready, World
from analyzer.rules import Finding, Rule, Severity, Status


class UserCorrection(Rule):
    """Flags a user message that corrects the agent about a server's state.

    What it does:
        Finds user messages like "No the first launch already worked, it's still ready" and
        relates them to the agent action they correct (the latest launch or kill before them).

    Why is this bad:
        A correction means the agent acted on a wrong picture of the system. It is the clearest
        sign, in the user's own words, of where a postmortem should look.

        Also flagged: a user report of a server down or broken ("am getting 502 bad gateway")
        right after the agent's own evidence showed it serving and the agent reported back: the
        report contradicts the picture the agent gave.

    Known false positives:
        Corrections about something other than server state ("no, the other file") when they use
        the same words ("already works").
    """

    name = "user-correction"
    severity = Severity.medium
    status = Status.stable
    groups = ("coordination",)
    summary = "The user contradicts the agent about a server's state."

    def check(self, world: World) -> Iterable[Finding]:
        for c in world.facts_of(Correction):
            related = [("corrected-action", c.corrects)] if c.corrects is not None else []
            words = " ".join(getattr(world.event(c.event), "text", c.quote).split())
            quoted = words if len(words) <= 70 else words[:69] + "…"
            if c.disputes is not None and c.instance is not None:
                ready = next((r for r in world.facts_at(c.disputes) if isinstance(r, Ready)), None)
                shown = f"the agent's {ready.source}" if ready and ready.source in ("probe", "agent") else "its log"
                yield self.finding(
                    world, anchor=c.event, instance=c.instance, related=[("disputed-ready", c.disputes), *related],
                    message=f"the user reports the {world.instances[c.instance].name} broken after {shown} showed "
                            f"it serving and the agent reported back: “{quoted}”",
                    details={"quote": c.quote},
                )
                continue
            what = _action(world, c.corrects) if c.corrects is not None else "the agent"
            yield self.finding(
                world, anchor=c.event, instance=c.instance, related=related,
                message=f"the user corrects {what}: “{quoted}”",
                details={"quote": c.quote},
            )


def _action(world: World, event: int) -> str:
    """How to name the corrected step: the agent's launch or kill of a server."""
    facts = world.facts_at(event)
    launch = next((f for f in facts if isinstance(f, Launch) and f.instance), None)
    kill = next((f for f in facts if isinstance(f, Kill)), None)
    if launch is not None and launch.instance is not None:
        verb = "restart" if kill is not None else "launch"
        return f"the agent's {verb} of the {world.instances[launch.instance].name}"
    if kill is not None:
        return f"the agent's `{kill.text}`"
    return "the agent"
