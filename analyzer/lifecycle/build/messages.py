"""Steps for user and agent messages: instructions, readiness said in words, corrections."""

from __future__ import annotations

import re
from pathlib import PurePath

from analyzer.events import AssistantEvent, ToolEvent, UserEvent
from analyzer.lifecycle.build._util import (
    _PASTED,
    _SERVER_WORDS,
    _STATE_TALK,
    _TYPED_LENGTH,
    _kind_matches,
    _unit,
)
from analyzer.lifecycle.build.base import WalkBase
from analyzer.lifecycle.facts import (
    Correction,
    Instruction,
    Kill,
    Launch,
    Ready,
)
from analyzer.lifecycle.language import MessageReading, Target, read_message
from analyzer.lifecycle.probes import (
    norm_host,
)
from analyzer.lifecycle.world import World

_LOCAL_URL = r"(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1\]):(?P<port>\d{2,5})\b"
_IN_USE = re.compile(
    r"(?i)\b(?:i(?:'ve| have)(?: got)?|i'm|i am|we(?:'ve| have|'re| are)|my)\b[^.?!\n]{0,50}?"
    r"\b(?:open|opened|using|use|running|up|serving|started|on)\b[^.?!\n]{0,40}?" + _LOCAL_URL)
"""A user's sentence saying a server at a local URL is theirs and in use: "I have it open on
localhost:3000", "I'm using http://127.0.0.1:8000", "my app is running on localhost:5173"."""
_GIVEN_URL = re.compile(r"(?<![\w.])" + _LOCAL_URL)
"""A local address the agent gives: ``http://localhost:3000``, ``127.0.0.1:8000``."""
_STATED_PID = re.compile(
    r"(?i)\b(?:running|started|listening|serving|launched|up)\b[^.\n]{0,40}?\(?\b(?:as |with )?"
    r"(?:pid|process id|process)\s*[:=#]?\s*(?P<pid>\d{2,8})\b")
"""The agent naming a server's PID: "running as PID 4242", "started (pid 4242)"."""
_PORT_IN_TEXT = re.compile(r"(?<![\d.]):(\d{2,5})\b|\bport (\d{2,5})\b")

_ROLE_SKIP = frozenset({
    "the", "a", "an", "my", "your", "our", "this", "that", "these", "those", "old", "new", "current",
    "existing", "running", "local", "main", "other", "same", "whole", "previous", "original", "stuck", "hung",
    "dead", "broken", "crashed", "first", "second", "last", "live", "prod", "production", "dev", "staging",
})
"""Determiners and adjectives around a role word ("the old api container")."""
_NOT_ROLES = frozenset({
    "server", "servers", "srv", "service", "services", "container", "containers", "instance", "instances",
    "process", "processes", "daemon", "endpoint", "endpoints", "deployment", "engine", "stack", "one", "ones",
    "it", "them", "everything", "all", "both", "box", "machine", "node", "pod", "cluster", "port", "whatever",
    "webserver", "proxy", "gateway", "docker", "task", "job", "session",
})
"""Head nouns that name no particular server ("the server", "the container"): no role."""
_ROLE_HEADS = frozenset({"app", "application"})
"""Heads dropped after a role word ("the web app") and kept alone ("the app")."""
_ROLE_FAMILIES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "backend": (frozenset({"uvicorn", "gunicorn", "flask", "django", "fastapi", "spring-boot", "java-jar",
                           "phoenix", "rails", "node", "express"}), frozenset()),
    "frontend": (frozenset({"next", "vite", "astro", "angular", "npm-script", "webpack"}), frozenset()),
    "db": (frozenset({"postgres", "mysql", "mongodb"}),
           frozenset({"postgres", "postgresql", "mysql", "mariadb", "mongo", "mongodb"})),
}
"""Role words that also name servers by what they are: catalog kinds of the family, and image or
program names among their command's words (``postgres:16``)."""
_ROLE_FAMILIES["database"] = _ROLE_FAMILIES["db"]
_DIR_FLAGS = frozenset({"--prefix", "-C", "--cwd", "--dir", "--app-dir", "--chdir", "--workdir", "-w"})
"""Flags whose value is the folder a server runs from (``npm --prefix frontend run dev``)."""
_CONJUNCTIONS = re.compile(r"\s*(?:,|&|/|\+|\band\b|\bor\b)\s*")
_NAME_SPLIT = re.compile(r"[-./:@\\\s]+")


def _sentence_around(text: str, at: int) -> str:
    start = max(text.rfind(".", 0, at), text.rfind("\n", 0, at)) + 1
    ends = [e for e in (text.find(". ", at), text.find("\n", at)) if e >= 0]
    return text[start : min(ends) if ends else len(text)]


class MessageSteps(WalkBase):
    """Steps for user and agent messages: instructions, readiness said in words, corrections."""

    def __init__(self, world: World) -> None:
        super().__init__(world)
        self.unbound: list[tuple[Instruction, tuple[int, ...], str, set[str]]] = []
        """The latest prompt's stops and restarts that name a port no instance held when said
        ("replace the old TGI container on 8080", "free port 8080"), each with that port, its host
        and the containers listings showed publishing it: what holds the port, once the log shows
        it in that turn, is what they name (``bind_late``)."""

    def on_shell(self, ev: ToolEvent) -> None:
        super().on_shell(ev)
        if self.unbound:
            self.bind_late(ev)

    def bind_late(self, ev: ToolEvent) -> None:
        """Give each unbound instruction the instances that now hold its port: one this call
        launched or found there (a listener from before the log), or a container a listing showed
        publishing it (``docker ps``), whoever made it: the user named it by its port."""
        for ins, ports, host, names in self.unbound:
            for port in ports:
                shown = self.containers.publisher(host, port)
                if shown is not None:
                    names.add(shown[1].name)
            found = [key for key, inst in self.w.instances.items() if key not in ins.targets and inst.host == host
                     and (inst.port in ports or (inst.container is not None and inst.container in names))]
            for key in found:
                ins.targets.append(key)
                self.w.link(f"instance:{key}", f"event:{ins.event}", "requested-by", self.w.position(ins))
                if ins.event not in self.w.instances[key].requested_at:
                    self.w.instances[key].requested_at.append(ins.event)

    def targets(self, targets: tuple[Target, ...], r: MessageReading, entity_fallback: bool = True) -> list[str]:
        """Instances the targets of one intent refer to. A role word ("the api", "the backend") is
        the one live server called so (``role_named``); a bare "it"/"the server" is the instance
        most recently touched; a target naming nothing falls back to the message's own entities."""
        found: list[str] = []
        for t in targets or (Target(),):
            ports, hosts, kinds, units = t.ports, t.hosts, t.kinds, t.units
            if t.unspecified:
                # a bare "it" in a message that names a port elsewhere means that port; kinds are
                # weaker ("Streamlit Cloud" is not the local streamlit), so only users' count
                ports, hosts, units = r.ports, r.hosts, r.units
                kinds = r.kinds if entity_fallback else ()
            if not (ports or hosts or kinds or units):
                cur = self.current()
                # "the worker": a process manager's unit of that name; "the api": the one live
                # server called so (none when two are); else the server in play
                role = self.role_named(t.text) if t.mention else None
                matches = self.units_named(t.text) or (role if role is not None else [cur] if cur else [])
            else:
                # another project's container is not what "the docker"/"the db" of this session means
                # a server from before the log is meant only where its port is named
                matches = [key for key, inst in self.w.instances.items() if inst.owner != "other"
                           and (inst.owner != "before" or inst.port in ports)
                           and (not ports or inst.port in ports)
                           and (not hosts or any(norm_host(h, "local") == inst.host for h in hosts))
                           and (not kinds or any(_kind_matches(k, inst) for k in kinds))
                           and (not units or (inst.unit is not None and _unit(inst.unit) in map(_unit, units)))]
            found += [m for m in matches if m not in found]
        return found

    def role_named(self, text: str) -> list[str] | None:
        """The live servers role words name ("the api container", "the backend and the db"): per
        name, the one whose container, unit or session is called so, else the one with the word
        among its names' parts, its command's modules and paths, or its log file, else, for
        backend/frontend/db, the one of that family. None when the words hold no role word, or one
        that nothing matches (the caller falls back as before); [] when a name fits two servers or
        a part of the words names none (precision over recall: what is not resolved whole names
        nothing)."""
        parts = [self.roles_of(part) for part in _CONJUNCTIONS.split(text.lower())]
        if not any(parts):
            return None
        live = [key for key, inst in self.w.instances.items() if inst.owner != "other" and (
            self.live.get(key) or (inst.history and inst.history[-1].state in ("starting", "ready")))]
        names = {key: self.name_parts(key) for key in live}
        found: list[str] = []
        for roles in parts:
            one: list[str] = []
            for tier in range(3 if roles else 0):  # whole names, then their parts, then the family
                one = [key for key in live if all(
                    r in names[key][min(tier, 1)] or (tier == 2 and self.w.instances[key].owner == "agent"
                                                      and self.of_family(r, key, names[key][1])) for r in roles)]
                if one:
                    break
            if not one and len(parts) == 1:
                return None
            if len(one) != 1:
                return []
            found += [k for k in one if k not in found]
        return found

    @staticmethod
    def roles_of(words: str) -> list[str]:
        """The role words of one noun phrase: "the old api container" -> ["api"]; none for "the server"."""
        kept = [w for w in re.findall(r"[a-z0-9][\w.-]*", words) if w not in _ROLE_SKIP and w not in _NOT_ROLES]
        return [w for w in kept if w not in _ROLE_HEADS] if len(kept) > 1 else kept

    def name_parts(self, key: str) -> tuple[set[str], set[str]]:
        """The words an instance is called by: its container, unit and session names, the module
        and path components of its live launches' commands (``api.main:app``, ``backend/server.js``,
        ``--prefix frontend``) and their log files' stems, split at ``-./:@`` and lowercased; and
        first its names whole (the container ``api``, not ``api-gateway``, is "the api")."""
        inst = self.w.instances[key]
        names = [inst.container, inst.unit, inst.session.partition(":")[2] if inst.session else None]
        whole = {name.lower() for name in names if name}
        for fi in self.live.get(key, []):
            launch = self.w.facts[fi]
            if not isinstance(launch, Launch):
                continue
            names += [launch.container, launch.unit]
            if launch.log_file:
                names.append(PurePath(launch.log_file.replace("\\", "/")).stem)
            argv = launch.argv
            for k, arg in enumerate(argv):
                if k and argv[k - 1] in _DIR_FLAGS:
                    names.append(arg)
                elif not arg.startswith("-") and any(c in arg for c in "/.:"):
                    names.append(arg.split(":")[0] if not arg.startswith(("/", ".")) else arg)
        return whole, whole | {part for name in names if name for part in _NAME_SPLIT.split(name.lower())
                               if part and not part.isdigit()}

    def of_family(self, role: str, key: str, names: set[str]) -> bool:
        """Whether the instance is of the family a generic role names: a backend framework for
        "the backend", a dev server for "the frontend", a database image for "the db"."""
        family = _ROLE_FAMILIES.get(role)
        return family is not None and (self.w.instances[key].server in family[0] or bool(family[1] & names))

    def on_user(self, ev: UserEvent) -> None:
        self.unbound = []  # a new prompt: the earlier one's instructions are no longer the current ones
        self.user_has_open(ev)
        r = read_message(ev.text)
        if not r.intents:
            return
        if r.has("ready") and not r.has("question"):
            quote = r.quote("ready")
            for inst in self.targets(r.targets.get("ready", ()), r):  # type: ignore[call-overload]
                said = Ready(event=ev.index, instance=inst, source="user", strength="medium", quote=quote,
                             detail=f"the user says it is ready: {quote!r}")
                self.state_from(said, "ready", "the user said it is ready", "asserts-ready")
        for action in ("launch", "stop", "restart", "hold"):
            if not r.has(action):
                continue
            targets = r.targets.get(action, ())  # type: ignore[call-overload]
            named = any(not t.unspecified or self.units_named(t.text) or (t.mention and self.role_named(t.text))
                        for t in targets)
            insts = self.targets(targets, r) if named or r.ports or r.kinds or r.units else []
            text = ", ".join(t.text for t in targets if t.text) or "unspecified"
            fi = self.w.record(Instruction(event=ev.index, action=action, targets=insts, target_text=text,
                                         quote=r.quote(action), detail=f"the user asks to {action} {text}"))
            for inst in insts:
                self.w.link(f"instance:{inst}", f"event:{ev.index}", "requested-by", fi)
                if ev.index not in self.w.instances[inst].requested_at:
                    self.w.instances[inst].requested_at.append(ev.index)
            ports = tuple(p for t in targets for p in t.ports)
            if not insts and ports and action in ("stop", "restart"):
                hosts = {norm_host(h, "local") for t in targets for h in t.hosts} or {"local"}
                instruction = self.w.facts[fi]
                assert isinstance(instruction, Instruction)
                self.unbound += [(instruction, ports, h, set()) for h in hosts]
        disputed = self.disputed(ev, r)
        if (r.has("correction") or disputed) and self.about_server_state(ev.text, r):
            corrected = self.last_action(ev.index)
            quote = r.quote("correction") or r.quote("not_ready") or ev.text.strip()[:200]
            fi = self.w.record(Correction(
                event=ev.index, quote=quote, corrects=corrected,
                instance=disputed.instance if disputed and not r.has("correction") else self.current(),
                disputes=disputed.event if disputed and not r.has("correction") else None,
                detail=f"the user corrects the agent: {quote!r}"))
            if corrected is not None:
                self.w.link(f"event:{ev.index}", f"event:{corrected}", "corrects", fi)

    def disputed(self, ev: UserEvent, r: MessageReading) -> Ready | None:
        """The readiness a user message contradicts: it says a server is down or broken ("am
        getting 502 bad gateway") that the world holds ready on the agent's evidence, after the
        agent presented its results, whatever words the message uses."""
        if not r.has("not_ready") or r.has("question"):
            return None
        targets = r.targets.get("not_ready", ())  # type: ignore[call-overload]
        for inst in self.targets(targets, r):
            if self.live_state(inst, ev.index) != "ready":
                continue
            ready = self.w.ready_signals(inst, ev.index)
            if ready and ready[-1].source != "user" and any(
                    isinstance(e, AssistantEvent) for e in self.w.session.events[ready[-1].event + 1 : ev.index]):
                return ready[-1]
        return None

    def about_server_state(self, text: str, r: MessageReading) -> bool:
        """Whether a correction can be about what the agent believes of a server: the agent has
        launched, killed or announced one; the message is no pasted prompt, spec or report; and it
        names a server or speaks of one's state ("already running", "you killed it")."""
        if not self.w.instances:
            return False  # nothing the agent did to a server yet: the first message, a task prompt
        if r.truncated or len(text) > _TYPED_LENGTH or _PASTED.match(text):
            return False  # a pasted document: its "don't …" and "why …" are the document's
        if r.ports or r.kinds or r.units or r.hosts:
            return True
        return _STATE_TALK.search(text) is not None

    def last_action(self, before: int) -> int | None:
        acts = [f.event for f in self.w.facts if isinstance(f, Launch | Kill) and f.event < before]
        return acts[-1] if acts else None

    def user_has_open(self, ev: UserEvent) -> None:
        """The user says they are using a server at a local URL ("I have it open on
        localhost:3000"): where no instance of this log is on that port, it is one from before the
        log, the user's, and their words are its (medium) readiness."""
        text = ev.text
        if len(text) > _TYPED_LENGTH or _PASTED.match(text) or ":" not in text:
            return
        for m in _IN_USE.finditer(text):
            port = int(m.group("port"))
            if self.find(host="local", port=port) and f"local:{port}@before" not in self.w.instances:
                continue  # the agent's own server on that port: the reader's readiness covers it
            quote = m.group(0).strip()
            key = self.before_instance(ev.index, "local", port, None, f"the user says: {quote!r}")
            said = Ready(event=ev.index, instance=key, source="user", strength="medium", quote=quote,
                         detail=f"the user says they use it: {quote!r}")
            self.state_from(said, "ready", "the user says they use it", "asserts-ready")

    def agent_pid(self, ev: AssistantEvent) -> None:
        """The agent states a server's PID ("the API is running as PID 4242"): bound to the latest
        live launch of the instance the sentence names by port, else of the current one, when no
        output showed that launch's PID. Output read later still overrides it (``pid_claimed``)."""
        for m in _STATED_PID.finditer(ev.text):
            sentence = _sentence_around(ev.text, m.start())
            ports = [int(p.group(1) or p.group(2)) for p in _PORT_IN_TEXT.finditer(sentence)]
            insts = [k for p in ports for k in self.find(port=p) if self.live.get(k)] if ports else []
            inst = insts[0] if insts else (None if ports else self.current())
            lives = self.live.get(inst or "", [])
            if not lives:
                continue
            launch = self.w.facts[lives[-1]]
            if isinstance(launch, Launch) and launch.pid is None:
                launch.pid, launch.pid_event = int(m.group("pid")), ev.index
                launch.detail += f" (PID {launch.pid}, as the agent says at event {ev.index})"

    def handed(self, ev: AssistantEvent, inst: str) -> None:
        """The main agent's message gives ``inst`` to the user (a sub-agent reports to the agent)."""
        if ev.agent == "main" and self.w.instances[inst].handed_at is None:
            self.w.instances[inst].handed_at = ev.index

    def url_given(self, ev: AssistantEvent) -> None:
        """The agent gives the user a local URL (``http://localhost:3000``) of a live server of this
        log, one that is starting or ready: the server is handed over."""
        for m in _GIVEN_URL.finditer(ev.text):
            for inst in self.find(host="local", port=int(m.group("port"))):
                if self.live.get(inst) and self.live_state(inst, ev.index) in ("starting", "ready"):
                    self.handed(ev, inst)

    def on_agent(self, ev: AssistantEvent) -> None:
        if ev.text and _STATED_PID.search(ev.text):
            self.agent_pid(ev)
        if ev.text and ("localhost:" in ev.text or "127.0.0.1:" in ev.text or "0.0.0.0:" in ev.text):
            self.url_given(ev)
        if not ev.text or len(ev.text) > 4000:
            return  # long write-ups mix plans, history and claims; their readiness words mislead
        r = read_message(ev.text, documents=False)  # its lists are its claims, not a pasted spec
        if not r.has("ready") or r.has("question") or r.has("not_ready"):
            return
        quote = r.quote("ready")
        targets = r.targets.get("ready", ())  # type: ignore[call-overload]
        # agents write long messages about many things: only the claim's own words count
        if not any(not t.unspecified for t in targets) and not _SERVER_WORDS.search(quote):
            return  # "reviewers can access it": a claim about something, not clearly a server here
        claimed = self.targets(targets, r, entity_fallback=False)
        # "TGI is running on :8080": of the servers the words fit, the one that runs, not the old
        # one the log shows stopped (the words fit both)
        running = [i for i in claimed if self.live_state(i, ev.index) != "stopped"]
        for inst in running or claimed:
            fi = self.w.record(Ready(event=ev.index, instance=inst, source="agent", strength="weak",
                                   quote=quote, detail=f"the agent says it is up: {quote!r}"))
            if self.live_state(inst, ev.index) in ("starting", "unknown"):
                self.w.change_state(inst, "ready", fi, "the agent said it is up")
            self.handed(ev, inst)
            self.w.link(f"event:{ev.index}", f"instance:{inst}", "asserts-ready", fi)
