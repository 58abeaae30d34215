"""Every sentence about a hit, written from its :class:`HitReason` (the one place that words them).

A reason reads ``<lead> '<quote>': <consequence>`` when the kill matched text of the process
(``pkill -f 'x' matches its command line '…x…': it is the agent's shell …; it dies with
SIGKILL…``), else it is one sentence (``fuser -k 8000/tcp: it holds a socket on local port
8000``). :func:`parts` gives the three pieces, so a report can mark the quote without parsing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model's Hit.reason is written here: no import at run time, no cycle
    from analyzer.shell.kill.model import Above, HitReason

_QUOTED_NAMES = {"command line": "command line", "process name": "process name", "pid": "PID",
                 "process group": "process group"}
"""Matched fields whose text the reason quotes, and the words for each."""


@dataclass(frozen=True, slots=True)
class ReasonParts:
    """A reason cut where it quotes the process's text."""

    lead: str
    """Up to the quote (``pkill -9 -f … matches its command line``); the whole reason when nothing
    is quoted."""
    quote: str | None
    """The process's text, shortened around the match, or None."""
    quote_span: tuple[int, int] | None
    """Where in ``quote`` the kill matched."""
    consequence: str
    """After the quote: what the hit does (``it is the agent's shell …; it dies with SIGKILL``)."""


def excerpt(subject: str, span: tuple[int, int] | None, width: int = 90) -> tuple[str, tuple[int, int] | None]:
    """The subject, shortened around the match with ``…``, and the match's span in that excerpt."""
    if len(subject) <= width:
        return subject, span
    if span is None:
        return subject[: width - 1] + "…", None
    a, b = span
    room = max(10, (width - (b - a)) // 2)
    start, end = max(0, a - room), min(len(subject), b + room)
    lead = "…" if start else ""
    shown = lead + subject[start:end] + ("…" if end < len(subject) else "")
    inner = (len(lead) + max(a, start) - start, len(lead) + min(b, end) - start)
    return shown, inner


def above_words(above: Above) -> str:
    """``the agent's shell running this command …``, ``the `sudo` process wrapping it``."""
    if above.kind == "harness":
        return "the agent's shell running this command (its argv holds the whole command)"
    if above.kind == "remote-shell":
        return f"the remote shell sshd started on {above.host} for this ssh command"
    if above.kind == "su-shell":
        return "the shell `su -c` started"
    if above.kind == "session-shell":
        return f"the shell {above.name} runs this command in"
    if above.kind == "launcher":
        return f"the `{above.name}` process above it"
    if above.kind == "wrapper":
        return f"the `{above.name}` process wrapping it"
    return f"the `{above.name}` shell running this command"


def fate_words(why: HitReason) -> str:
    """What the signal does to a process above the kill, as the tail of ``it is <above>``."""
    sig, kind = why.signal_name, why.program
    if why.fate == "ignores":
        return f", an interactive shell, which ignores SIG{sig}"
    if why.fate == "stops":
        return f"; SIG{sig} stops it, so the commands after this {kind} wait until it is continued"
    if why.fate == "relays":
        return (f"; sudo catches SIG{sig} and relays it to the command it runs ({kind}), "
                "which dies there (procps merge request 160)")
    if why.fate == "dies":
        return f"; it dies with SIG{sig}"
    if why.fate == "dies-with-its-commands":
        return f"; it dies with SIG{sig}, so the commands after this {kind} in it never run"
    return ""


def _consequence(why: HitReason) -> str:
    if why.above is not None:
        return f"it is {above_words(why.above)}{fate_words(why)}"
    if why.agent:
        return "it is the agent's own process, so the session itself dies"
    return ""


def _unit(why: HitReason) -> str:
    how = "kills every process in" if why.verb == "kill" else "stops"
    return (f"systemctl {why.verb} {why.target} {how} its unit ({why.subject}); with the default "
            "KillMode=control-group every process of the unit dies")


def _stops(why: HitReason) -> str:
    """What a process manager's verb does to the unit it names."""
    return "restarts" if why.verb in ("restart", "reload", "gracefulReload") or why.verb.startswith("startOr") else "stops"


_SENTENCES: dict[str, Callable[[HitReason], str]] = {
    "process group of a match": lambda w: f"{w.written} -g: same process group as a match",
    "port": lambda w: f"{w.written} {w.target}/tcp: it holds a socket on local port {w.target}",
    "open file": lambda w: f"{w.written} {w.target}: it has {w.subject} open",
    "unit": _unit,
    "launchd job": lambda w: f"launchctl {w.verb} {w.subject} stops the launchd job running it",
    "container": lambda w: f"docker {w.verb} {w.target or 'every container'}: it runs in container {w.subject}",
    "compose container": lambda w: (f"docker compose {w.verb}: it runs in compose container {w.subject} "
                                    f"(service {w.target})"),
    "tmux session": lambda w: (f"tmux send-keys -t {w.target} C-c interrupts what runs in the foreground of "
                               f"session {w.subject}" if w.verb == "send-keys" else
                               f"tmux {w.verb} closes session {w.subject}, which runs it"),
    "screen session": lambda w: (f"screen -S {w.target} -X stuff ^C interrupts what runs in the foreground of "
                                 f"session {w.subject}" if w.verb == "stuff" else
                                 f"screen -S {w.target} -X {w.verb} ends the session running it"),
    "task": lambda w: f"{w.written} {w.target} stops the background task that started it",
    "pm2 app": lambda w: f"pm2 {w.verb} {w.target} {_stops(w)} pm2 app {w.subject}, which runs it",
    "supervisor program": lambda w: f"supervisorctl {w.verb} {w.target} {_stops(w)} program {w.subject}, which runs it",
    "brew service": lambda w: f"brew services {w.verb} {w.target} {_stops(w)} the {w.subject} service, which runs it",
}
"""The one sentence of each matched field that quotes no process text."""


def parts(why: HitReason) -> ReasonParts:
    """The reason in its three pieces (see :class:`ReasonParts`)."""
    if why.matched in _QUOTED_NAMES and why.subject is not None:
        quote, span = excerpt(why.subject, why.span)
        return ReasonParts(f"{why.written} matches its {_QUOTED_NAMES[why.matched]}", quote, span,
                           _consequence(why))
    return ReasonParts(_SENTENCES[why.matched](why), None, None, "")


def sentence(why: HitReason) -> str:
    """The reason as one sentence a person can check."""
    p = parts(why)
    if p.quote is None:
        return p.lead
    return f"{p.lead} '{p.quote}'" + (f": {p.consequence}" if p.consequence else "")
