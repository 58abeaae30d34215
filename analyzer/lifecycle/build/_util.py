"""Helpers of the walk: command shapes (compose, docker, detach flags), output readings and the
prefilter that skips commands no server can be in."""

from __future__ import annotations

import re
from functools import lru_cache

from analyzer.events import ToolEvent
from analyzer.lifecycle.catalog import Catalog, flag_value
from analyzer.lifecycle.containers import (
    ContainerRow,
)
from analyzer.lifecycle.facts import (
    Launch,
)
from analyzer.lifecycle.probes import (
    PORTLESS_PROBES,
    DeadJob,
    norm_host,
)
from analyzer.lifecycle.world import Instance
from analyzer.shell import kill as killsem
from analyzer.shell.docker import docker_command
from analyzer.shell.model import ShellFrame, ShellScript, SimpleCommand

_SERVER_WORDS = re.compile(r"\b(?:server|service|endpoint|api|app|it'?s up|is up|running|serving|listening)\b", re.I)
_STATE_TALK = re.compile(r"\b(?:server|service|endpoint|api|app|site|port|process|instance|container|launch\w*|"
                         r"running|serving|listening|up|down|ready|started|stopped|restart\w*|kill\w*|"
                         r"dead|died|crash\w*|work(?:s|ed|ing)?|same process|old (?:version|behaviou?r))\b", re.I)
"""Words of a sentence about a server's state."""
_TYPED_LENGTH = 2000
"""Longer user messages are pasted documents (task prompts, specs, audit reports), not replies."""
_PASTED = re.compile(r"\s*(?:#{1,3} |\*\*[A-Z]|<[a-z_-]+>|```)")
"""A message that opens like a document: a heading, a bold title, a tag, a code fence."""
_ALIVE_ONLY = frozenset({"task-poll", "process-list", "systemctl"})
"""Probes that show a process is alive, not that it answers requests."""
_LOG_READERS = frozenset({"tail", "cat", "head", "less", "grep", "rg", "journalctl", "docker", "more"})
_SYSTEMCTL_START = frozenset({"start", "restart", "reload-or-restart", "try-restart"})


_LIFECYCLE_WORDS = (
    "kill", "pkill", "killall", "fuser", "systemctl", "docker", "docker-compose", "nohup", "tmux", "screen",
    "setsid", "curl", "wget", "tail", "cat", "grep", "journalctl", "bash", "sh", "ssh", "pgrep", "ps", "python",
    "python3", "node", "npx", "kubectl", "taskkill", "Stop-Process", "cmd", "powershell", "pwsh",
)


@lru_cache(maxsize=16)  # per catalog (hashed by identity): built once, not for every shell call
def _prefilter(catalog: Catalog) -> re.Pattern[str]:
    words = {*_LIFECYCLE_WORDS, *PORTLESS_PROBES, *(p for k in catalog.kinds for p in k.programs if "*" not in p),
             *(m for k in catalog.kinds for m in k.modules)}
    alternatives = "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True))
    return re.compile(rf"(?<![\w.-])(?:{alternatives})(?![\w-])|:\d{{2,5}}\b|localhost")


def _unit(name: str) -> str:
    return name.removesuffix(".service")


_KIND_FAMILY: dict[str, tuple[str, ...]] = {
    "llama.cpp": ("llama-cpp",), "http.server": ("http-server",), "fastapi": ("uvicorn", "gunicorn"),
    "node": ("node", "npm-script", "next", "vite"), "dev-server": ("npm-script", "next", "vite", "node"),
    "docker": ("docker", "compose"),
    # the jar a coding agent builds and runs is its Spring Boot app (the catalog's java-jar kind)
    "spring-boot": ("spring-boot", "java-jar"),
}


def _kind_matches(kind: str, inst: Instance) -> bool:
    """A kind the user named (language reader's canonical names) against an instance; a compose
    stack answers to its members' names ("nginx" is the stack whose ``repo-nginx-1`` serves)."""
    if inst.server in _KIND_FAMILY.get(kind, (kind,)):
        return True
    # a word of the label ("container tgi"), not a piece of a name in it ("container tgi-old …")
    return kind in (inst.unit or "") or re.search(rf"(?<![\w-]){re.escape(kind)}(?![\w-])", inst.label.lower()) \
        is not None or any(re.search(rf"(?<![a-z0-9]){re.escape(kind)}(?![a-z0-9])", m.lower()) for m in inst.members)


def _frame_label(frame: ShellFrame) -> str:
    if frame.via == "ssh":
        return f"the remote shell on {frame.host} running this command"
    if frame.via == "harness":
        return "the agent's own shell running this tool call"
    return f"the shell `{' '.join(frame.argv[:2])} …` running this command"


def _normalise_hosts(script: ShellScript) -> ShellScript:
    """Hosts as the world keys them (``root@h`` and ``h`` are one machine)."""
    if not any(c.host for c in script.commands):
        return script

    def nh(h: str | None) -> str | None:
        n = None if h is None else norm_host(h, "local")
        return None if n == "local" else n

    cmds = [c.model_copy(update={"host": nh(c.host), "shells": [
        s.model_copy(update={"host": nh(s.host)}) for s in c.shells]}) for c in script.commands]
    return script.model_copy(update={"commands": cmds})


def _match_span(pattern: str, subject: str) -> tuple[int, int] | None:
    from analyzer.shell.ere import ere_span

    got = ere_span(pattern, subject)
    return got if isinstance(got, tuple) else None


def _same_command(reported: str, cmd: SimpleCommand) -> bool:
    """bash's job line quotes the command (cut with ``...`` in logs); compare on the first words."""
    words = reported.rstrip(". ").removesuffix("...").split()
    if not words:
        return False
    head = " ".join(words[: min(len(words), 4)])
    return head in " ".join(cmd.argv) or " ".join(cmd.effective_argv).startswith(head)


_NOT_FOUND = re.compile(r"command not found: (\S+)|(?:^|\s)([^\s:]+): (?:command )?not found", re.M)


def _not_found(cmd: SimpleCommand, script: ShellScript, output: str) -> bool:
    """The shell says the launch's program (or a wrapper in front of it) does not exist."""
    names = {w.rsplit("/", 1)[-1] for w in cmd.wrappers} | {c.name for c in _lineage(cmd, script)}
    for m in _NOT_FOUND.finditer(output):
        if (m.group(1) or m.group(2) or "").rsplit("/", 1)[-1] in names:
            return True
    return False


_DETACHED_SERVERS = frozenset({"systemd", "compose", "docker"})
def _bang_assignments(text: str, launches: list[tuple[SimpleCommand, int]]) -> dict[str, int]:
    """``NAME=$!`` assignments of a command line -> the launch fact of the background command
    right before each (``$!`` is the PID of the latest background job)."""
    out: dict[str, int] = {}
    spans = sorted((c.span[0], fi) for c, fi in launches if c.background and c.span and _own_job(c))
    for m in re.finditer(r"(?<![\w$])(\w+)=\$!", text):
        before = [fi for start, fi in spans if start < m.start()]
        if before:
            out[m.group(1)] = before[-1]
    return out


def _own_job(cmd: SimpleCommand) -> bool:
    """A background command that is its own job, so ``$!`` is its PID: not one inside a
    backgrounded ``( … )`` subshell or pipeline, whose ``$!`` is the subshell or the last stage
    (killing that leaves the server running)."""
    return "subshell" not in cmd.contexts and "pipeline" not in cmd.contexts


def _echoed_pids(script: ShellScript, ran: list[tuple[SimpleCommand, int]], output: str) -> dict[int, int]:
    """``cmd & echo $!``: each ``echo $!`` prints the PID of the background launch before it, as a
    line holding only that number; matched in order when every echo printed one."""
    echoes = [c for c in script.commands if c.name == "echo" and any("$!" in a for a in c.argv[1:])]
    if not echoes:
        return {}
    numbers = [int(n) for n in re.findall(r"^\s*(\d{2,8})\s*$", output, re.M)]
    if len(numbers) != len(echoes):
        return {}
    out: dict[int, int] = {}
    for echo, pid in zip(echoes, numbers, strict=True):
        before = [fi for c, fi in ran if c.background and _own_job(c) and c.position < echo.position]
        if before:
            out[before[-1]] = pid
    return out


def _join(cwd: str, path: str) -> str:
    """``cd``'s target from ``cwd``, with ``/`` separators (Windows paths and drives kept)."""
    path = path.replace("\\", "/")
    if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:/", path) or not cwd:
        joined = path
    else:
        joined = f"{cwd.rstrip('/')}/{path}"
    parts: list[str] = []
    for part in joined.split("/"):
        if part == "..":
            if parts and parts[-1] not in ("", ".."):
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _docker_verb(argv: list[str]) -> str | None:
    """The verb of a ``docker``/``docker compose``/``docker-compose`` command (``up``, ``ps``,
    ``run``…); ``container ls`` and ``compose ls`` are ``ps`` too. None for other programs."""
    cmd = docker_command(argv)
    if cmd is None or cmd.verb is None:
        return None
    return "ps" if cmd.verb in ("ps", "ls") else cmd.verb


def _compose_ps(argv: list[str]) -> bool:
    """``docker compose [-f FILE] ps`` / ``docker-compose ps`` (running containers only: no ``-a``)."""
    cmd = docker_command(argv)
    return cmd is not None and cmd.compose and cmd.verb == "ps" and not {"-a", "--all"} & set(cmd.args)


def _compose_rows(output: str, rows: list[ContainerRow]) -> list[str]:
    """The container rows of a ``docker compose ps`` table (its header and warnings left out).
    Where the table's header is printed, only the rows under it (``rows``, the output's parsed
    tables) count: the same call may go on to print a ``docker ps`` table of every project's."""
    if re.search(r"^NAME\s+IMAGE\s+.*\bSERVICE\b", output, re.M):
        return [r.name for r in rows if r.service]
    return [ln for ln in output.splitlines() if ln.strip() and not ln.lstrip().startswith(("NAME", "time=", "WARN"))
            and "level=warning" not in ln]


_SERVER_PID = re.compile(r"Started server process \[(\d+)\]|Listening at: \S+ \((\d+)\)")
"""A server's own line naming its (master) process: uvicorn's, gunicorn's."""
_BIND_SECONDS = 10.0
"""A server that is not listening this long after its launch is not merely starting (GPU kinds aside)."""
_SLEEP = re.compile(r"(?:^|[;&|(]\s*)sleep\s+(\d+(?:\.\d+)?)\b")
_SCRIPT_RUNNERS = frozenset({"npm-script"})
"""Kinds whose launch runs the server as a child with a command line the log does not show."""
_SCRIPT_RUNNER_PROGRAMS = frozenset({"npm", "pnpm", "yarn", "bun"})
_CONNECTING = frozenset({"http", "port-check", "redis-ping"})
"""Probes that connect to the server's port: no answer means nothing listens there."""


def _returned_in_foreground(ev: ToolEvent, cmd: SimpleCommand, launch: Launch) -> bool:
    """The launch ran in the foreground of a tool call that has returned."""
    if cmd.background or ev.background or cmd.via in ("tmux", "screen"):
        return False
    if launch.server in _DETACHED_SERVERS and _detached(cmd, launch):
        return False
    return ev.output is not None or ev.exit_code is not None or ev.interrupted or ev.by_user


def _detached(cmd: SimpleCommand, launch: Launch) -> bool:
    """systemctl returns while the unit runs on; docker run -d / compose up -d return at once."""
    if launch.server == "systemd":
        return True
    return _detach_flag(cmd.effective_argv[1:8])


def _detached_up(argv: list[str]) -> bool:
    """``docker compose up -d`` / ``--detach`` (``-d`` after ``up``)."""
    return _detach_flag(argv[argv.index("up") + 1:] if "up" in argv else [])


def _detach_flag(words: list[str]) -> bool:
    """``-d``, ``--detach`` or a bundle of short flags holding ``d`` (``-itd``)."""
    return any(a in ("-d", "--detach") or (a.startswith("-") and not a.startswith("--") and "d" in a[1:])
               for a in words)


def _one_unit_each(cmd: SimpleCommand) -> list[SimpleCommand]:
    """``systemctl start a b`` starts two units: one command per unit, else the command itself."""
    argv = cmd.effective_argv
    if cmd.name != "systemctl" or len(argv) < 4 or argv[1] not in _SYSTEMCTL_START:
        return [cmd]
    units = [a for a in argv[2:] if not a.startswith("-")]
    return [cmd.model_copy(update={"effective_argv": [argv[0], argv[1], u]}) for u in units] or [cmd]


def _lineage(cmd: SimpleCommand, script: ShellScript) -> list[SimpleCommand]:
    """``cmd`` and the commands that start its nesting levels (``bash serve.sh`` around the
    server the script execs), innermost first."""
    out = [cmd]
    while out[-1].parent is not None and len(out) < 8:
        out.append(script.commands[out[-1].parent])
    return out


def _skipped(stopper: killsem.KillVerdict, cmd: SimpleCommand, script: ShellScript) -> bool:
    """``cmd`` never runs because ``stopper`` took down its shell: it, or the command that would
    start its nested level (the ``bash serve.sh`` around a script's commands), is skipped."""
    seen: set[int] = set()
    node: SimpleCommand | None = cmd
    while node is not None and node.position not in seen:
        seen.add(node.position)
        if node.position > stopper.command.position and stopper.skips(node):
            return True
        node = script.commands[node.parent] if node.parent is not None else None
    return False


def _observed_ran(later: list[SimpleCommand], output: str, dead: list[DeadJob]) -> bool:
    """The output shows some of ``later`` ran: bash reports one of them as a job, or the literal
    text of an ``echo``/``printf`` among them is in the output."""
    for c in later:
        if any(_same_command(d.command, c) for d in dead):
            return True
        if c.name in ("echo", "printf") and len(c.argv) > 1:
            literal = re.split(r"\$", " ".join(c.argv[1:]))[0].strip()
            if len(literal) >= 3 and literal in output:
                return True
        if c.name == "curl" and (fmt := flag_value(c.argv[1:], ["-w", "--write-out"])):
            literal = fmt.split("%", 1)[0].strip()  # `-w "server: %{http_code}"` prints "server: "
            if len(literal) >= 3 and literal in output:
                return True
    return False
