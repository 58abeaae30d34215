"""ignored-failure: a lifecycle command shows a server died, and the agent goes on."""

from __future__ import annotations

import re
from collections.abc import Iterable

from analyzer.events import AssistantEvent, ToolEvent, UserEvent
from analyzer.lifecycle import Failure, Kill, Launch, Probe, Ready, World
from analyzer.rules import Finding, Rule, Severity, Status

_ACK = re.compile(r"\b(?:kill(?:ed)?|fail(?:ed|ure|s)?|crash(?:ed)?|died|dead|error|oom|out of memory|"
                  r"not (?:running|up|started)|address already in use|didn'?t start|exit(?:ed)? with)\b", re.I)
# A claim of success is a verb ("Restarted sglang.", "it is relaunched"), not an adjective ("the
# deployed Streamlit URL").
_CLAIM = re.compile(r"(?:^|[.!:;]\s+|\b(?:is|are|was|were|been|now|successfully|have|has|I've)\s+)"
                    r"(?:re)?(?:started|launched|deployed)\b"
                    r"|\b(?:is|are|now) (?:up|running|serving|ready|live)\b"
                    r"|\bup and running\b|\bready (?:on|at)\b|\bserving on\b", re.I | re.M)
_SERVER_WORDS = re.compile(r"\b(?:server|service|api|app|container|endpoint|backend|frontend|it)\b", re.I)


class IgnoredFailure(Rule):
    """Flags a server failure shown in a lifecycle command's output that the agent does not act on.

    What it does:
        When the output of a launch, kill or task poll shows the server died or could not start
        (``Killed``, OOM, ``Address already in use``, a Traceback, a non-zero exit), checks what the
        agent does next, up to the user's next message: claiming success, or moving on without
        mentioning the failure, reading the log, probing or retrying, is flagged.

    Why is this bad:
        The user is told (or left to believe) that a server is up when it is not. The next hour is
        spent debugging the wrong thing.

        Not flagged: an output the harness cut ("…N bytes truncated…", "[N characters truncated]"),
        where the hidden part may show the server came back (a reloader's restart, a retry), and
        a turn the user aborted before the agent said anything (an interrupt is not moving on).

        Looking includes reading a log with a file tool (``Read``, ``view_file``) as well as
        with a shell command, probing the server and launching it again.

    Known false positives:
        The agent may have looked at the failure in a way the analyzer does not see as such (a
        ``ps`` listing, a log under a name that does not say it is one).
    """

    name = "ignored-failure"
    severity = Severity.medium
    status = Status.stable
    groups = ("lifecycle",)
    summary = "The output shows the server died, and the agent goes on as if it worked."

    def check(self, world: World) -> Iterable[Finding]:
        events = world.session.events
        for failure in world.facts_of(Failure):
            if failure.reason == "refused" or failure.instance is None:
                continue
            at = failure.event
            if not any(isinstance(f, Launch | Kill) for f in world.facts_at(at)) and failure.launch_event is None:
                continue
            shown = events[at]
            if isinstance(shown, ToolEvent) and shown.truncated:
                continue  # the harness cut the output: what it hid may show the server came back
            acknowledged = False
            claimed: int | None = None
            logs: tuple[str, ...] | None = None  # the instance's log files, gathered once, when first needed
            # by index, not ``events[at + 1:]``: a slice copies the rest of the timeline per failure
            # (quadratic in a long session), and the walk mostly stops within the turn
            for i in range(at + 1, len(events)):
                ev = events[i]
                if isinstance(ev, UserEvent) and ev.origin == "interrupt":
                    acknowledged = True  # the turn was aborted: the agent was stopped, it did not move on
                    break
                if isinstance(ev, UserEvent) and ev.origin == "prompt":
                    break
                if isinstance(ev, AssistantEvent) and ev.agent == events[at].agent and ev.text.strip():
                    if _ACK.search(ev.text):
                        acknowledged = True
                        break
                    ready = [r for r in world.facts_at(ev.index) if isinstance(r, Ready) and r.instance == failure.instance]
                    if ready or (_CLAIM.search(ev.text) and _about(world, failure, ev.text)):
                        claimed = ev.index  # says it worked without a word about the failure
                        break
                if isinstance(ev, ToolEvent) and any(
                    isinstance(f, Probe | Launch) and f.instance == failure.instance for f in world.facts_at(ev.index)
                ):
                    acknowledged = True
                    break
                if isinstance(ev, ToolEvent) and ev.command:
                    logs = _log_files(world, failure.instance) if logs is None else logs
                    if _mentions_log(logs, ev.command):
                        acknowledged = True
                        break
                if isinstance(ev, ToolEvent) and ev.category == "file" and _reads_a_log(ev):
                    acknowledged = True  # the agent opened a log with its file tool
                    break
            if acknowledged:
                continue
            inst = world.instances[failure.instance]
            related = [("claims-success", claimed)] if claimed is not None else []
            if failure.launch_event is not None and failure.launch_event != at:
                related.append(("launch", failure.launch_event))
            how = "the agent then says it works" if claimed is not None else "the agent moves on without looking"
            yield self.finding(
                world, anchor=at, instance=failure.instance, related=related,
                message=f"the output shows the {inst.name} died ({_REASONS.get(failure.reason, failure.reason)}); {how}",
                details={"reason": failure.reason, "quote": failure.quote.strip()},
            )


_REASONS = {"killed": "Killed", "oom": "out of memory", "address-in-use": "address already in use",
            "traceback": "a Traceback", "exit": "non-zero exit", "crash": "crashed", "error": "an error"}


def _log_files(world: World, instance: str) -> tuple[str, ...]:
    """The log files of the instance's launches (one instance can have thousands of launches: this
    is gathered once per failure, not once per command after it)."""
    return tuple(sorted({launch.log_file for launch in world.launches(instance) if launch.log_file}))


def _mentions_log(logs: tuple[str, ...], command: str) -> bool:
    return any(log in command or log.rsplit("/", 1)[-1] in command for log in logs)


_LOG_PATH = re.compile(r"(?:\.log|\.out|\.err)\b|[\\/]logs?[\\/]|\blog\b", re.I)


def _reads_a_log(ev: ToolEvent) -> bool:
    """A file tool call whose path names a log (``api.log``, ``.next/dev/logs/…``, ``task-3.log``)."""
    return any(isinstance(v, str) and ("path" in k.lower() or k.lower() == "file") and _LOG_PATH.search(v)
               for k, v in ev.input.items())


def _about(world: World, failure: Failure, text: str) -> bool:
    """Whether an agent message can be about the failed instance: it names its port, a word of its
    kind, unit or container, or a server in general words."""
    assert failure.instance is not None
    inst = world.instances[failure.instance]
    names = inst.name_words
    low = text.lower()
    return bool((inst.port and str(inst.port) in text) or any(n in low for n in names) or _SERVER_WORDS.search(text))
