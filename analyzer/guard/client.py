"""The hook command's own process: hand the agent's hook JSON to the warm server, write its answer.

A hook runs on every shell command, so this module is the whole of what the hook process loads:
the standard library's ``os``, ``sys``, ``time`` and the C ``_socket`` module, nothing of the
analyzer's package (no pydantic, spaCy, click, ``json``, ``typing`` or ``pathlib``). The server
parses the JSON, judges, answers in the agent's protocol and writes the decision log after the
reply has gone. The installer runs this file directly (``python -I -S …/analyzer/guard/client.py
--agent NAME``): no ``site``, no package ``__init__``.

Fails open: a server that cannot start, an error, or no answer within the time budget allows the
command (the agent is never stuck behind the guard); only then does this process read the JSON
itself, to log why and to answer "allow" in the agent's exact form.

Wire format, one request per connection: ``hook AGENT MODE DEADLINE T0\\n`` and the raw hook
JSON, then end of input (``MODE`` is ``-`` for the configured modes; ``DEADLINE`` and ``T0`` are
``time.monotonic()`` values, a clock shared by the processes of one machine); the answer is
``EXIT LEN_STDOUT LEN_STDERR\\n`` and those bytes. ``stop\\n`` asks the server to exit.
"""

from __future__ import annotations

import _socket
import os
import sys
import time

TYPE_CHECKING = False
"""mypy reads a name so called as true: ``typing`` itself is an import the hook does without."""
if TYPE_CHECKING:
    import subprocess

DEFAULT_TIMEOUT = 3.0
"""Seconds a hook may wait for a verdict (a first call also starts the server and reads the
transcript); past it the command is allowed."""
AGENT_NAMES = ("claude-code", "codex", "cursor", "gemini")
"""The protocols the server answers (``analyzer.guard.agents.AGENTS``; a test keeps them equal)."""
MODES = ("deny", "ask", "warn")
DIR_ENV = "ANALYZER_GUARD_DIR"
"""The folder of the warm server's socket, pid and lock files (tests point it at a temp folder)."""
LOG_ENV = "ANALYZER_GUARD_LOG"
IDLE_ENV = "ANALYZER_GUARD_IDLE"
"""Seconds without a call after which the warm server exits (overrides the config)."""
USAGE = "usage: analyzer guard --agent {claude-code,codex,cursor,gemini} [--mode deny|ask|warn] [--timeout S]\n"


def runtime_dir() -> str:
    """Per user, private: ``$ANALYZER_GUARD_DIR``, else ``$XDG_RUNTIME_DIR/analyzer-guard``, else
    ``$TMPDIR`` or ``/tmp`` ``/analyzer-guard-<uid>`` (not ``tempfile``: a slow import)."""
    env = os.environ
    if env.get(DIR_ENV):
        folder = env[DIR_ENV]
    elif env.get("XDG_RUNTIME_DIR"):
        folder = os.path.join(env["XDG_RUNTIME_DIR"], "analyzer-guard")
    else:
        folder = os.path.join(env.get("TMPDIR") or "/tmp", f"analyzer-guard-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


WIRE = 2
"""The wire format's version, in the server's file names: after an upgrade the hook starts a new
server instead of talking to one that reads another format (which idles out on its own)."""


def socket_path(folder: str) -> str:
    return os.path.join(folder, f"guard-{WIRE}.sock")


def pid_path(folder: str) -> str:
    return os.path.join(folder, f"guard-{WIRE}.pid")


def lock_path(folder: str) -> str:
    return os.path.join(folder, f"guard-{WIRE}.lock")


def default_log() -> str:
    """``$ANALYZER_GUARD_LOG``, else ``$XDG_STATE_HOME`` or ``~/.local/state`` ``/analyzer/guard.jsonl``."""
    if os.environ.get(LOG_ENV):
        return os.environ[LOG_ENV]
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "analyzer", "guard.jsonl")


def run(agent: str, raw: bytes, timeout: float = DEFAULT_TIMEOUT, mode: str | None = None,
        folder: str | None = None) -> tuple[bytes, bytes, int]:
    """One hook call, end to end: (stdout, stderr, exit code) in the agent's protocol. Never raises."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    try:
        head = f"hook {agent} {mode or '-'} {deadline!r} {t0!r}\n".encode()
        return ask(head + raw, deadline, folder)
    except Exception as exc:  # fail open, whatever went wrong
        return fail_open(agent, raw, f"{type(exc).__name__}: {exc}", t0)


def ask(request: bytes, deadline: float, folder: str | None = None) -> tuple[bytes, bytes, int]:
    """The server's answer, starting the server when none is listening."""
    sock = connect(folder or runtime_dir(), deadline)
    try:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(request)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    except TimeoutError:
        raise TimeoutError("no verdict within the time budget (--timeout)") from None
    finally:
        sock.close()
    data = b"".join(chunks)
    head, sep, body = data.partition(b"\n")
    fields = head.split()
    if not sep or len(fields) != 3:
        raise ValueError(f"the guard server answered {data[:80]!r}")
    code, n_out, n_err = (int(f) for f in fields)
    if len(body) != n_out + n_err:
        raise ValueError("the guard server's answer was cut short")
    return body[:n_out], body[n_out:], code


def connect(folder: str, deadline: float) -> _socket.socket:
    """A connection to the server, starting it when none listens. A server that dies as it starts
    (an import error, a broken install) fails this hook open at once, not at the deadline."""
    path = socket_path(folder)
    server = None
    while True:
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if server is None:
                server = start_server(folder)
            status = server.poll()
            if status:  # 0 is a server that found another one starting: wait for that one
                raise RuntimeError(f"the guard server exited as it started (status {status}; "
                                   f"its errors: {os.path.join(folder, 'server.log')})") from None
            if time.monotonic() >= deadline:
                raise TimeoutError("the guard server did not start within the time budget") from None
            time.sleep(0.02)


def start_server(folder: str) -> subprocess.Popen[bytes]:
    """The warm server, detached from the hook (its own session: the agent's Ctrl-C is not its),
    run by this interpreter (the one the analyzer is installed in) without ``-S``."""
    import subprocess  # only a first call starts the server: not imported on every hook

    with open(os.path.join(folder, "server.log"), "ab") as log:
        return subprocess.Popen([sys.executable, "-m", "analyzer.guard.server", "--dir", folder],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                close_fds=True, cwd=_source_root())


def stop_server(folder: str | None = None, wait: float = 5.0) -> bool:
    """Ask the server to exit; True when one was running."""
    folder = folder or runtime_dir()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(wait)
        sock.connect(socket_path(folder))
        sock.sendall(b"stop\n")
        sock.shutdown(_socket.SHUT_WR)
        sock.recv(64)
    except OSError:
        return False
    finally:
        sock.close()
    end = time.monotonic() + wait
    while os.path.exists(pid_path(folder)) and time.monotonic() < end:
        time.sleep(0.02)
    return True


def _source_root() -> str:
    """The folder holding the ``analyzer`` package this file belongs to."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fail_open(agent: str, raw: bytes, error: str, t0: float) -> tuple[bytes, bytes, int]:
    """Allow, in the agent's form, and log why. The only path that reads the JSON here (rare:
    the protocol modules are imported from this file's own package, which ``-S`` does not hide)."""
    try:
        if _source_root() not in sys.path:
            sys.path.append(_source_root())
        from analyzer.guard import decide

        return decide.fail_open(agent, raw, error, time.monotonic() - t0, default_log())
    except Exception:  # not even that: allow silently (every protocol reads no output as allow)
        return b"", b"", 0


def main(argv: list[str] | None = None) -> int:
    """``client.py --agent NAME [--mode M] [--timeout S]``: the hook, argv parsed by hand
    (``argparse`` costs the hook more than the rest of this module)."""
    args = sys.argv[1:] if argv is None else argv
    opts: dict[str, str] = {}
    i = 0
    while i < len(args):
        name, eq, value = args[i].partition("=")
        if name not in ("--agent", "--mode", "--timeout"):
            sys.stderr.write(USAGE)
            return 64  # not 2: Claude Code and Codex read exit 2 as "block"
        if not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        opts[name] = value
        i += 1
    try:
        agent, mode = opts["--agent"], opts.get("--mode")
        timeout = float(opts.get("--timeout", DEFAULT_TIMEOUT))
        if agent not in AGENT_NAMES or (mode is not None and mode not in MODES):
            raise ValueError(agent)
    except (KeyError, ValueError):
        sys.stderr.write(USAGE)
        return 64
    out, err, code = run(agent, sys.stdin.buffer.read(), timeout, mode)
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
