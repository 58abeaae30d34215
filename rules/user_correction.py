"""user-correction: the user contradicts the agent about server state."""

from __future__ import annotations

from collections.abc import Iterable

from analyzer.lifecycle.facts import Correction
from analyzer.lifecycle.world import World
from analyzer.rules import Finding, Rule, Severity, Status


class UserCorrection(Rule):
    """Flags a user message that corrects the agent about a server's state.

    What it does:
        Finds user messages like "No the first launch already worked, it's still ready" and
        relates them to the agent action they correct (the latest launch or kill before them).

    Why is this bad:
        A correction means the agent acted on a wrong picture of the system. It is the clearest
        sign, in the user's own words, of where a postmortem should look.

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
            target = f" (about event {c.corrects})" if c.corrects is not None else ""
            yield self.finding(
                world, anchor=c.event, instance=c.instance, related=related,
                message=f"the user corrects the agent{target}: {c.quote!r}. The agent acted on a wrong "
                        "picture of the server's state.",
            )
