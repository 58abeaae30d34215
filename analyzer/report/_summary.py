""""What went wrong", in sentences a reader gets in two minutes: one generator per built-in rule,
built from the finding and the world, with times; a generic sentence for any other (user) rule.

A sentence is a list of ``Seg``: plain words, quoted user words, commands as code, and times that
link to their event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from analyzer.events import AssistantEvent, UserEvent
from analyzer.lifecycle.facts import Failure, Instruction, Kill, ModelDisagreement, Ready
from analyzer.lifecycle.world import World
from analyzer.report._clean import Cleaner, Seg
from analyzer.report._impact import Impact, Outage
from analyzer.report._when import Times
from analyzer.rules.api import Finding, and_list


@dataclass
class Context:
    world: World
    times: Times
    clean: Cleaner
    impacts: list[Impact] = field(default_factory=list)

    def at(self, index: int, capital: bool = True) -> list[Seg]:
        """``At 03:12`` (or ``At event #12``), the time linking to the event."""
        return [Seg("At " if capital else "at "), Seg(self.times.clock(index), href=f"#event-{index}")]

    def name(self, instance: str | None) -> str:
        """An instance's name, given its id (or already its name, as some rule details hold)."""
        key = resolve(self.world, instance)
        if key is not None:
            return self.clean(self.world.instances[key].name)
        return self.clean(instance) if instance else "a server"

    def said(self, index: int, room: int = 90) -> Seg:
        ev = self.world.event(index)
        text = ev.text if isinstance(ev, UserEvent | AssistantEvent) else ""
        return Seg(f"“{self.clean.one_line(text, room)}”", "said", href=f"#event-{index}")

    def outage_from(self, instance: str | None, event: int) -> Outage | None:
        for imp in self.impacts:
            if imp.instance.id == instance:
                for o in imp.outages:
                    if o.start == event:
                        return o
        return None

    def outage_tail(self, instance: str | None, event: int) -> list[Seg]:
        o = self.outage_from(instance, event)
        if o is None:
            return []
        if o.end is None:
            return [Seg(f" It was still not serving at the end of the log ({o.length} later).")]
        return [Seg(" It was not serving again until "), Seg(self.times.clock_of(self.times.done(o.end), o.end),
                                                             href=f"#event-{o.end}"),
                Seg(f" ({o.span}).")]


def resolve(world: World, ref: str | None) -> str | None:
    """The instance id for an id or a name (``sglang server on 10.1.230.181:30000``), else None."""
    if not ref:
        return None
    if ref in world.instances:
        return ref
    return next((k for k, inst in world.instances.items() if inst.name == ref), None)


def _related(f: Finding, role: str) -> int | None:
    return next((r.index for r in f.related if r.role == role), None)


def _ready_words(ctx: Context, index: int, instance: str | None) -> list[Seg]:
    ready = next((r for r in ctx.world.facts_at(index) if isinstance(r, Ready) and r.instance in (None, instance)),
                 None)
    source = ready.source if ready else "user"
    if source == "user":
        return [Seg("the user said it was ready ("), ctx.said(index, 60), Seg(")")]
    if source == "agent":
        return [Seg("the agent told the user it was up ("), ctx.said(index, 60), Seg(")")]
    if source == "probe":
        return [Seg("a probe showed it answering")]
    return [Seg("its log said it was ready")]


def _died_words(failure: Failure) -> str:
    return {"killed": "was killed at once", "oom": "ran out of memory at once",
            "address-in-use": "could not bind its port", "traceback": "crashed at once"}.get(
        failure.reason, "died at once")


def kill_after_ready(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    kills = [k for k in ctx.world.facts_at(at) if isinstance(k, Kill)
             and any(v.instance == f.instance for v in k.victims)]
    out = [*ctx.at(at), Seg(f" the agent killed the {ctx.name(f.instance)}")]
    if kills:
        out += [Seg(" with "), Seg(ctx.clean.one_line(kills[0].text, 90), "code")]
    ready = _related(f, "ready-signal")
    if ready is not None:
        out += [Seg(f", {ctx.times.between(ready, at)} after "), *_ready_words(ctx, ready, f.instance)]
    out.append(Seg("; no instruction to stop or restart it was in force."))
    return out + ctx.outage_tail(f.instance, at)


def duplicate_launch(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    collided = f.details.get("collided")
    if isinstance(collided, str):
        # the port was held by a server this log never started: a first launch, not "again"
        return [*ctx.at(at), Seg(f" the agent launched the {ctx.name(f.instance)}, whose port a server this "
                                 "session did not start already held ("),
                Seg(ctx.clean.one_line(collided, 80), "code"), Seg(").")]
    out = [*ctx.at(at), Seg(f" the agent launched the {ctx.name(f.instance)} again")]
    ready = _related(f, "ready-signal")
    prior = _related(f, "prior-launch")
    if ready is not None:
        out += [Seg(f", {ctx.times.between(ready, at)} after "), *_ready_words(ctx, ready, f.instance)]
    if prior is not None:
        state = ctx.world.state_at(f.instance or "", at)
        out += [Seg(", while the launch at "), Seg(ctx.times.clock(prior), href=f"#event-{prior}"),
                Seg(f" was still {state}")]
    died = next((x for x in ctx.world.facts_at(at) if isinstance(x, Failure) and x.launch_event == at), None)
    if died is not None:
        out += [Seg(f"; the duplicate {_died_words(died)} ("), Seg(ctx.clean.one_line(died.quote, 80), "code"),
                Seg(")")]
    out.append(Seg("."))
    return out


def over_broad_kill(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    kills = [k for k in ctx.world.facts_at(at) if isinstance(k, Kill)]
    grouped: dict[tuple[str, str], list[str]] = {}  # (singular, plural) wording -> the kills it fits
    for k in kills:
        one: list[str] = []
        many: list[str] = []
        hits = list(dict.fromkeys(ctx.clean(v.label) for v in k.victims if v.role in ("shell", "agent", "ssh-client")))
        if hits:
            one.append(f"also matches {and_list(hits)}")
            many.append(f"also match {and_list(hits)}")
        if k.also_matches_relaunch:
            one.append("matches the new server launched in the same command")
            many.append("match the new server launched in the same command")
        if k.generic:
            one.append("kills by a generic name")
            many.append("kill by a generic name")
        if one:
            grouped.setdefault((" and ".join(one), " and ".join(many)), []).append(ctx.clean.one_line(k.text, 90))
    clauses: list[list[Seg]] = []
    for (singular, plural), texts in grouped.items():
        segs: list[Seg] = []
        for n, text in enumerate(texts):
            if n:
                segs.append(Seg(" and " if n == len(texts) - 1 else ", "))
            segs.append(Seg(text, "code"))
        clauses.append([*segs, Seg(" " + (plural if len(texts) > 1 else singular))])
    out = [*ctx.at(at), Seg(" a kill hit more than its target")]
    for n, clause in enumerate(clauses):
        out += [Seg(": " if n == 0 else "; "), *clause]
    out.append(Seg("."))
    servers = list(dict.fromkeys(ctx.clean(v.label) for k in kills for v in k.victims if v.role == "server"))
    if servers:
        out.append(Seg(f" Servers it hit: {and_list(servers)}."))
    went_on = [d for d in ctx.world.facts_at(at) if isinstance(d, ModelDisagreement)]
    if any(d.shown_by_output for d in went_on):
        out.append(Seg(" (The output shows later commands in that shell still ran.)"))
    elif went_on:  # only the exit status says the shell went on: say that, not more
        out.append(Seg(f" (Its exit status says that shell went on: {ctx.clean.one_line(went_on[0].observed, 80)}.)"))
    return out


def unrequested_teardown(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    asked = [r.index for r in f.related if r.role == "instruction"]
    instructions = [i for e in asked for i in ctx.world.facts_at(e) if isinstance(i, Instruction)]
    wanted = list(dict.fromkeys(ctx.name(t) for i in instructions for t in i.targets))
    extra = [str(x) for x in f.details.get("unrequested", [])] or ([f.instance] if f.instance else [])
    if not instructions:
        # a server or container the session did not start, stopped while nothing asked for a stop
        # details name containers by their names ("tgi-old"), servers by their instance names
        names = [("the " if resolve(ctx.world, x) else "") + ctx.name(x) for x in extra]
        out: list[Seg] = [*ctx.at(at), Seg(f" the agent stopped {and_list(names)}, which this session did not start")]
        owner = _related(f, "owner-evidence")
        if owner is not None:
            out += [Seg(" (as the log shows at "), Seg(ctx.times.clock(owner), href=f"#event-{owner}"), Seg(")")]
        return [*out, Seg("; no instruction asked for it.")]
    action = instructions[0].action
    out = [Seg(f"The user asked to {action} {and_list(['the ' + w for w in wanted]) or 'one server'}")]
    if asked:
        out += [Seg(" ("), ctx.said(asked[0], 70), Seg(")")]
    out += [Seg(", but "), *ctx.at(at, capital=False),
            Seg(f" the agent also stopped {and_list(['the ' + ctx.name(x) for x in extra])}.")]
    down = [x for x in extra if (o := ctx.outage_from(resolve(ctx.world, x), at)) is not None and o.end is None]
    if down:
        it = "It was" if len(down) == 1 else ("Both were" if len(down) == 2 else "All were")
        out.append(Seg(f" {it} still down at the end of the log."))
    return out


def ignored_failure(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    failure = next((x for x in ctx.world.facts_at(at) if isinstance(x, Failure) and x.instance == f.instance), None)
    out = [*ctx.at(at), Seg(f" the output showed the {ctx.name(f.instance)} had died")]
    if failure is not None and failure.quote:
        out += [Seg(" ("), Seg(ctx.clean.one_line(failure.quote, 80), "code"), Seg(")")]
    claim = _related(f, "claims-success")
    if claim is not None:
        out += [Seg(", yet "), *ctx.at(claim, capital=False), Seg(" the agent reported it worked: "),
                ctx.said(claim, 90)]
    else:
        out.append(Seg(", and the agent moved on without looking at it"))
    out.append(Seg("."))
    return out


def user_correction(ctx: Context, f: Finding) -> list[Seg]:
    at = f.anchor.index
    out = [*ctx.at(at), Seg(" the user had to correct the agent: "), ctx.said(at, 120)]
    corrected = _related(f, "corrected-action")
    if corrected is not None:
        out += [Seg(" (about its action at "), Seg(ctx.times.clock(corrected), href=f"#event-{corrected}"),
                Seg(")")]
    out.append(Seg("."))
    return out


def generic(ctx: Context, f: Finding) -> list[Seg]:
    """Any rule without its own sentence: its id, then its message's first sentence."""
    message = ctx.clean.one_line(f.message, 240)
    first = message.split(". ")[0].rstrip(".")
    return [*ctx.at(f.anchor.index), Seg(" "), Seg(f.rule, "code"), Seg(f": {first}.")]


SENTENCES: dict[str, Callable[[Context, Finding], list[Seg]]] = {
    "kill-after-ready": kill_after_ready,
    "duplicate-launch": duplicate_launch,
    "over-broad-kill": over_broad_kill,
    "unrequested-teardown": unrequested_teardown,
    "ignored-failure": ignored_failure,
    "user-correction": user_correction,
}


def sentence(ctx: Context, f: Finding) -> list[Seg]:
    make = SENTENCES.get(f.rule, generic)
    try:
        return make(ctx, f)
    except Exception:  # a sentence is a courtesy: a surprise in the facts falls back, never breaks the report
        return generic(ctx, f)
