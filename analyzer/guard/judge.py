"""A session's world, grown one event at a time, and the verdict on a proposed shell command.

The proposed command becomes the next event of the world and the same rules as ``check`` judge it
(``over-broad-kill``, ``kill-after-ready``, ``duplicate-launch``: the rules that need no output).
The world is kept at the last settled event; each judgement runs in a forked copy of the process,
so the proposed command, which may never run, never enters the kept world. The fork costs page
tables in proportion to the process's size (tens of milliseconds for a 50 MB session), so it is
made ahead: after answering a hook the server forks a copy that waits on a pipe (``Standby``), and
the next hook only sends it the command and the events the world has not taken in yet. Commands that
name no lifecycle word (``ls``, ``git``, ``pytest``: most of them) are allowed without a copy, by
the builder's own pre-filter.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import TypeAdapter

from analyzer.config import Config
from analyzer.events import Event, Session, ToolEvent
from analyzer.guard.settings import GUARD_RULES, GuardSettings
from analyzer.guard.verdict import DECISIONS, Decision, Verdict
from analyzer.lifecycle.build import Builder, prefilter
from analyzer.lifecycle.facts import Kill, Launch
from analyzer.lifecycle.world import F, World
from analyzer.pipeline import Analyzer
from analyzer.rules.api import Finding, Rule

_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def guard_analyzer(config: Config | None = None) -> Analyzer:
    """An analyzer running only the guard's rules (the config's ``ignore`` still applies)."""
    return Analyzer(config or Config(), select=list(GUARD_RULES))


def proposed(command: str, ref: str | None = None, background: bool = False, agent: str = "main") -> ToolEvent:
    """The command as the world sees it before it runs: no output, no exit code, no task id yet."""
    return ToolEvent(name="Bash", category="shell", input={"command": command}, command=command, ref=ref,
                     background=background, agent=agent)


def unrun(ev: ToolEvent) -> ToolEvent:
    """A recorded shell call as it looked when its hook fired (the replay's view of it)."""
    return proposed(ev.command or "", ev.ref, ev.background, ev.agent)


class LiveWorld:
    """One session's world. ``add`` settled events in order; ``judge`` a proposed command."""

    def __init__(self, analyzer: Analyzer, settings: GuardSettings | None = None, *, path: str = "(live)",
                 format: str = "live", agent: str | None = None, session_id: str | None = None,
                 cwd: str | None = None) -> None:
        self.analyzer = analyzer
        self.settings = settings or GuardSettings()
        self.session = Session(path=path, format=format, agent=agent, session_id=session_id, cwd=cwd)
        self.world = World(session=self.session, catalog=analyzer.catalog)
        self.builder = Builder(self.world)
        self.rules: list[Rule] = [r for r in analyzer.rules if r.name in GUARD_RULES]
        self._standby: Standby | None = None

    @property
    def events(self) -> list[Event]:
        return self.session.events

    def add(self, ev: Event) -> None:
        """A settled event (a shell call with its result, a message): it enters the kept world."""
        ev.index = len(self.session.events)
        self.session.events.append(ev)
        self.builder.feed(ev)

    def prepare(self) -> None:
        """Fork the copy that will judge the next command, unless one for this world is waiting.
        The server calls this after answering a hook, so the next hook does not wait for the fork."""
        if self._standby is not None and self._standby.at == len(self.events):
            return
        self.discard()
        reap()
        self._standby = Standby(len(self.events), self._judge_request)

    def discard(self) -> None:
        if self._standby is not None:
            self._standby.discard()
            self._standby = None

    def relevant(self, command: str | None) -> bool:
        """Whether ``command`` can be a launch, probe or kill at all (the builder's own pre-filter):
        the others are allowed without a look at the world, or at the transcript."""
        return bool(command) and bool(prefilter(self.world.catalog).search(command or ""))

    def judge(self, command: ToolEvent, before: Iterable[Event] = ()) -> Verdict:
        """The verdict on ``command`` as the next event, after the unsettled ``before`` events (a
        call still waiting for its result, a prompt the transcript does not show yet)."""
        if not self.relevant(command.command):
            return Verdict()
        self.prepare()
        assert self._standby is not None
        standby, self._standby = self._standby, None  # one judgement per copy
        request = {"events": [ev.model_dump(mode="json") for ev in before],
                   "command": command.model_dump(mode="json")}
        return Verdict.from_dict(standby.ask(request))

    def _judge_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """In the forked copy: add the events, run the rules, keep the findings on the command."""
        pending = [_EVENT.validate_python(e) for e in request["events"]]
        command = ToolEvent.model_validate(request["command"])
        for ev in [*pending, command]:
            self.add(ev)
        self.world._prompts = None  # the prompt index is built once; this copy has new events
        _narrow(self.world, command.index)
        findings = [f for rule in self.rules for f in _safe_check(rule, self.world)
                    if f.anchor.index == command.index]
        return verdict_of(findings, self.world, self.settings).to_dict()


def _narrow(world: World, event: int) -> None:
    """In a judging copy: the world's kills and launches are those of ``event`` only. The guard's
    rules anchor each finding on its own kill or launch, so the findings on ``event`` are the same,
    and a 50 MB session's thousand kills are not gone through again on every command."""
    here = world.facts_at(event)
    every = world.facts_of

    def facts_of(kind: type[F]) -> list[F]:
        return [f for f in here if isinstance(f, kind)] if kind in (Kill, Launch) else every(kind)

    world.facts_of = facts_of  # type: ignore[method-assign]


def _safe_check(rule: Rule, world: World) -> list[Finding]:
    try:
        return list(rule.check(world))
    except Exception:  # a crashing rule is no verdict; the engine reports such crashes in `check`
        return []


class Standby:
    """A forked copy of the process, waiting on a pipe to judge one command on the world as it was
    at the fork (copy-on-write: the fork costs page tables, the judgement only what it adds)."""

    def __init__(self, at: int, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
        self.at = at
        """How many events the world had when it was forked."""
        req_r, self._req_w = os.pipe()
        self._res_r, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child's coverage is not collected
            try:
                gc.disable()  # a collection would touch (and so copy) every page of the parent's heap
                os.close(self._req_w)
                os.close(self._res_r)
                with os.fdopen(req_r, "rb") as inp:
                    raw = inp.read()
                try:
                    data = json.dumps(fn(json.loads(raw))).encode() if raw else b""
                except BaseException as exc:
                    data = json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode()
                with os.fdopen(res_w, "wb") as out:
                    out.write(data)
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(res_w)

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with os.fdopen(self._req_w, "wb") as out:
            out.write(json.dumps(request).encode())
        with os.fdopen(self._res_r, "rb") as inp:
            data = inp.read()
        # the child tears down its copy of the address space after answering: reaped later
        _EXITING.append(self.pid)
        if not data:
            return {"error": "the judging process died"}
        result: dict[str, Any] = json.loads(data)
        return result

    def discard(self) -> None:
        """End a copy that will not be asked (its world is out of date)."""
        with contextlib.suppress(OSError):
            os.close(self._req_w)  # the child reads EOF and exits
        with contextlib.suppress(OSError):
            os.close(self._res_r)
        _EXITING.append(self.pid)
        reap()


_EXITING: list[int] = []
"""Judging copies that answered or were discarded, not yet reaped."""


def reap() -> None:
    """Collect the judging copies that have exited (never waits)."""
    for pid in list(_EXITING):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _EXITING.remove(pid)


# -- the verdict and its words -------------------------------------------------------------------

def verdict_of(findings: list[Finding], world: World, settings: GuardSettings) -> Verdict:
    """The strongest decision over the findings on one command, with every reason."""
    if not findings:
        return Verdict()
    decided: list[tuple[Decision, Finding, str]] = []
    for f in findings:
        mode = settings.mode_of(f.rule)
        decision: Decision = mode if mode != "auto" else ("deny" if _deterministic(f, world) else "ask")
        decided.append((decision, f, _reason(f, world)))
    decided.sort(key=lambda d: DECISIONS.index(d[0]), reverse=True)
    top, finding, _ = decided[0]
    reason = "\n".join(dict.fromkeys(r for _, _, r in decided))
    return Verdict(decision=top, rule=finding.rule, reason=reason, rules=list(dict.fromkeys(f.rule for f in findings)))


def _kills_at(world: World, event: int) -> list[Kill]:
    return [f for f in world.facts_at(event) if isinstance(f, Kill)]


def _deterministic(f: Finding, world: World) -> bool:
    """A verdict that follows from the command text alone: the kill pattern matches its own shell,
    the relaunch in the same command, or the agent."""
    if f.rule != "over-broad-kill":
        return False
    return any(k.self_kill or k.also_matches_relaunch or any(v.role in ("shell", "agent") for v in k.victims)
               for k in _kills_at(world, f.anchor.index))


def _launch(world: World, event: int | None, instance: str | None) -> Launch | None:
    if event is None:
        return None
    return next((x for x in world.facts_at(event) if isinstance(x, Launch) and x.instance == instance), None)


def precise_kill(world: World, instance: str, launch_event: int | None) -> str:
    """The narrowest kill of one server the world knows: by pid, else by port, else by its whole
    command line."""
    inst = world.instances[instance]
    launch = _launch(world, launch_event, instance)
    where = f"ssh {inst.host} " if inst.host != "local" else ""
    name = f"(the {inst.name})"
    if launch is not None and launch.pid:
        return f"{where}kill {launch.pid} {name}"
    if inst.port:
        return f"{where}fuser -k {inst.port}/tcp {name}"
    if launch is not None and launch.argv:
        return f"{where}pkill -f '{' '.join(launch.argv)}' {name}"
    return f"stop the {inst.name} by its pid"


def _reason(f: Finding, world: World) -> str:
    """One sentence an agent can act on: what fired, the victims, the precise alternative."""
    head = f"[analyzer guard: {f.rule}] this command {f.message}."
    if f.rule == "over-broad-kill":
        kills = _kills_at(world, f.anchor.index)
        targets = list(dict.fromkeys((v.instance, v.launch_event) for k in kills for v in k.victims
                                     if v.role == "server" and v.instance))
        # the servers the user asked to stop or restart, when the kill hits more than those
        asked = {t for i in world.instructions_in_force(f.anchor.index) if i.action in ("stop", "restart")
                 for t in i.targets}
        targets = [t for t in targets if t[0] in asked] or targets
        alternatives = [precise_kill(world, inst, ev) for inst, ev in targets]
        tail = " Instead: " + "; ".join(alternatives) + "." if alternatives else \
            " Instead: kill the one process you mean by its pid, or by its whole command line."
        if any(k.also_matches_relaunch or k.self_kill for k in kills):
            tail += " Run the relaunch as a separate command, after the kill."
        return head + tail
    inst = world.instances.get(f.instance or "")
    if f.rule == "kill-after-ready" and inst is not None:
        quote = f.details.get("ready")
        said = f" (\u201c{quote}\u201d)" if quote else ""
        return f"{head} The {inst.name} is ready and in use{said}: ask the user before stopping or restarting it."
    if f.rule == "duplicate-launch" and inst is not None:
        state = f.details.get("state", "running")
        probe = f" Probe it instead (curl -sf {inst.host if inst.host != 'local' else 'localhost'}:{inst.port}/)." \
            if inst.port else ""
        return (f"{head} The {inst.name} is already {state}.{probe} If a relaunch is really wanted, stop the "
                f"running one first: {precise_kill(world, inst.id, f.details.get('prior_launch'))}.")
    return head
