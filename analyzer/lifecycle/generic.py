"""Servers the catalog does not list: what makes a command a server of kind ``server`` (its port,
and that it runs on), and the listening lines servers print ("Listening on http://0.0.0.0:8123").

Precision first: a one-shot command (a client, a test run, a build, a kill) is never a server, and
a command is one only when it runs on (in the background, or a foreground call the harness cut
off) and something shows its port. No world state here; ``build.launches`` decides with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from analyzer.lifecycle.catalog import flag_value
from analyzer.shell.model import SimpleCommand

GENERIC_KIND = "server"
"""The ``Launch.server`` of a server no catalog kind matches."""

_PORT_FLAGS = ["--port", "-p", "--http-port", "--listen-port", "--server-port"]
_ADDRESS_FLAGS = ["--listen", "--addr", "--address", "--bind", "-b", "--host"]
"""Flags whose value may be ``[host]:port`` (``--listen :8080``, ``-b 0.0.0.0:9000``)."""

_NOT_SERVERS = frozenset({
    # clients and probes: they connect to a port, they do not bind one
    "curl", "wget", "http", "https", "xh", "nc", "ncat", "telnet", "ssh", "scp", "sftp", "rsync", "mosh",
    "psql", "pg_isready", "pg_dump", "mysql", "mysqladmin", "mongo", "mongosh", "redis-cli", "valkey-cli",
    "grpcurl", "ab", "wrk", "hey", "k6", "locust", "websocat", "openssl",
    # kills, listings and process managers (other steps read them)
    "kill", "pkill", "killall", "fuser", "taskkill", "lsof", "ss", "netstat", "ps", "pgrep", "top",
    "docker", "docker-compose", "podman", "kubectl", "helm", "systemctl", "service", "launchctl", "brew",
    "tmux", "screen", "pm2", "supervisorctl", "nohup", "setsid", "timeout", "watch",
    # shell built-ins, file tools, log readers
    "cd", "echo", "printf", "sleep", "wait", "export", "set", "source", ".", "true", "false", "test", "[",
    "cat", "tail", "head", "less", "more", "grep", "rg", "sed", "awk", "jq", "tee", "xargs", "find", "ls",
    "mkdir", "rm", "cp", "mv", "chmod", "touch", "git", "gh", "open", "xdg-open", "start",
    # test runners, builders, installers
    "pytest", "jest", "vitest", "mocha", "playwright", "cypress", "tsc", "eslint", "ruff", "mypy", "pip",
    "pip3", "uv", "poetry", "tox", "nox", "gcc", "cmake", "ninja", "javac",
})
"""Programs that are never a long-running server of their own, whatever their flags say."""

_ONE_SHOT_WORDS = frozenset({
    "test", "tests", "build", "lint", "install", "ci", "check", "typecheck", "format", "fmt", "migrate",
    "seed", "clean", "deploy", "publish", "release", "e2e", "coverage", "compile", "generate", "codegen",
    "help", "version", "--help", "--version", "-h", "-v", "--watch=false", "--run", "--once",
})
"""Subcommands and flags of a one-shot run (``npm run build``, ``make test``, ``ng test``)."""

_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "make", "just", "task", "bash", "sh", "zsh", "node",
                             "deno", "python", "python3", "ruby", "php", "java", "dotnet", "npx", "cargo", "go"})
_SCRIPT_FILE = re.compile(r"\.(?:[cm]?[jt]sx?|py|rb|php|sh|go|jar|exs?)$")
"""Programs whose own name says nothing: the script or target they run names the server."""

_LOCAL_HOST = r"(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|\[::\]|::|\*|(?:\d{1,3}\.){3}\d{1,3})"
LISTENING = re.compile(
    r"(?i)(?:listening\s+(?:on|at)|serving\s+(?:http\s+)?on|running\s+(?:on|at)|ready\s+on|started\s+(?:server\s+)?on"
    r"|server\s+(?:is\s+)?(?:(?:started|running|listening)\s+)?(?:on|at)|available\s+(?:on|at)|\bLocal:)"
    rf"\s*(?:(?:{_LOCAL_HOST}\s+)?port\s+(?P<bare>\d{{2,5}})\b|(?:https?://)?(?P<host>{_LOCAL_HOST})?:(?P<port>\d{{2,5}})(?![\d.]))"
)
"""A server's own line saying where it listens: "Listening on http://0.0.0.0:8123", "Serving HTTP on
0.0.0.0 port 8000", "running on http://127.0.0.1:5000", "Local: http://localhost:5173/", "listening on
:3000". The host must be a local or numeric address (not ``test_middleware.py:24``)."""
_ADDRESS_ARG = re.compile(rf"{_LOCAL_HOST}?:(?:[1-9]\d{{1,4}})")
"""A positional argument that is a local listening address."""
_LISTENING_HINTS = ("listen", "serving", "running", "ready on", "started", "available", "local:", "server")
_SCAN_CHARS = 16_000
"""Listening lines come in a server's first lines: only the start of a long output is read."""
_CUT_OFF_EXITS = frozenset({124, 130, 137, 143})
"""Exit statuses of a foreground run the harness or the user stopped (timeout, Ctrl-C, SIGKILL, SIGTERM)."""


@dataclass(frozen=True)
class Listening:
    """A listening line: the port, the address it names (None: any), the line itself."""

    port: int
    host: str | None
    line: str


GENERIC_HINT = re.compile(r"--(?:port|listen|addr|address|bind)\b|(?<![\w-])-[pb]\s*\d|\bPORT=|(?<![&>|])&(?![&>])")
"""Text of a command line that may launch a server no catalog program names: a port or address
flag, ``PORT=``, a lone ``&`` (the launch pre-filter lets such calls through)."""


def listening_line(text: str | None) -> Listening | None:
    """The first line of ``text`` in which a server says where it listens, or None."""
    if not text:
        return None
    head = text[:_SCAN_CHARS]
    low = head.lower()
    if not any(h in low for h in _LISTENING_HINTS):
        return None
    m = LISTENING.search(head)
    if m is None:
        return None
    port = int(m.group("port") or m.group("bare"))
    if not 0 < port < 65536:
        return None
    start = head.rfind("\n", 0, m.start()) + 1
    end = head.find("\n", m.end())
    line = re.sub(r"</?[a-z_-]+>", "", head[start : end if end >= 0 else len(head)])  # a harness's <stdout> tags
    return Listening(port, m.group("host"), line.strip())


def _as_port(value: str | None) -> int | None:
    if value is None or "$" in value:
        return None
    m = re.fullmatch(r"(?:\S*:)?(\d{2,5})", value.strip())
    port = int(m.group(1)) if m else 0
    return port if 0 < port < 65536 else None


def command_port(cmd: SimpleCommand) -> tuple[int, str] | None:
    """The port a command says its server binds, and where that is written: a port flag
    (``--port 8123``, ``-p 8123``), an address flag with a port (``--listen :8080``) or ``PORT=``."""
    rest = cmd.effective_argv[1:]
    port = _as_port(flag_value(rest, _PORT_FLAGS))
    if port is not None:
        return port, "flag"
    address = flag_value(rest, _ADDRESS_FLAGS)
    if address is not None and ":" in address:
        port = _as_port(address)
        if port is not None:
            return port, "bind"
    for word in rest:
        if _ADDRESS_ARG.fullmatch(word):  # `manage.py runserver 0.0.0.0:8000`, `serve :8080`
            return int(word.rsplit(":", 1)[1]), "arg"
    port = _as_port(cmd.env.get("PORT"))
    return (port, "env") if port is not None else None


def server_name(cmd: SimpleCommand) -> str:
    """How a generic server is named: its script, target or program (``serve.sh``, ``make dev``,
    ``npm run api``, ``rails``)."""
    argv = cmd.effective_argv
    prog = PurePosixPath(argv[0].replace("\\", "/")).name
    if prog not in _SCRIPT_RUNNERS:
        return prog
    if cmd.script_path:
        return PurePosixPath(cmd.script_path.replace("\\", "/")).name
    words = [w for w in argv[1:] if not w.startswith("-")]
    script = next((w for w in words if _SCRIPT_FILE.search(w)), None)
    if script:  # `node --import tsx/esm src/main.ts`: the script, not a flag's value
        return PurePosixPath(script.replace("\\", "/")).name
    if prog in ("npm", "pnpm", "yarn", "bun") and words[:1] == ["run"]:
        words = words[1:]
        return f"{prog} run {words[0]}" if words else prog
    return f"{prog} {words[0]}" if words else prog


def may_serve(cmd: SimpleCommand) -> bool:
    """Whether a command can be a long-running server at all: not a client, a kill, a listing, a
    tool the other steps read, nor a one-shot run (``npm run build``, ``make test``, ``--help``)."""
    argv = cmd.effective_argv
    if not argv or (cmd.dynamic and "$" in argv[0]):
        return False
    prog = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower()
    if prog in _NOT_SERVERS or "=" in prog:
        return False
    words = {w.lower() for w in argv[1:4]}
    return not words & _ONE_SHOT_WORDS


def cut_off(interrupted: bool, exit_code: int | None, output: str | None) -> bool:
    """A foreground call that did not end on its own: interrupted, timed out, stopped by a signal.
    A server run in the foreground only returns so (a test runner that prints a URL returns by itself)."""
    if interrupted or exit_code in _CUT_OFF_EXITS:
        return True
    tail = (output or "")[-400:].lower()
    return "timed out" in tail or ("timeout" in tail and "command" in tail)
