"""The hook command's own side: read the agent's JSON, ask the warm server, answer in the agent's
protocol, log the decision. Imports only the standard library and the protocol modules, so a call
costs a socket round trip, not spaCy.

Fails open: a malformed payload, a server that cannot start, an error, or a verdict later than the
time budget allows the command (the agent is never stuck behind the guard), and the log says why.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from analyzer.guard.agents import AGENTS
from analyzer.guard.paths import default_log, pid_path, runtime_dir, socket_path
from analyzer.guard.verdict import Decision, HookCall, Reply, Verdict

DEFAULT_TIMEOUT = 3.0
"""Seconds a hook may wait for a verdict (a first call also starts the server and reads the
transcript); past it the command is allowed."""


def run(agent: str, raw: bytes, timeout: float = DEFAULT_TIMEOUT, mode: Decision | None = None,
        folder: Path | None = None) -> Reply:
    """One hook call, end to end. Never raises."""
    start = time.monotonic()
    protocol = AGENTS[agent]
    log: str | None = None
    try:
        payload = json.loads(raw or b"{}")
        call = protocol.parse(payload if isinstance(payload, dict) else {})
    except (ValueError, TypeError) as exc:
        call, verdict = HookCall(agent=agent, event="other"), Verdict(error=f"unreadable hook input: {exc}")
    else:
        verdict = Verdict()
        if call.event != "other":
            try:
                answer = ask(call, start + timeout, folder)
                verdict = Verdict.from_dict(answer.get("verdict") or {})
                log = answer.get("log")
            except Exception as exc:  # fail open, whatever went wrong
                verdict = Verdict(error=f"{type(exc).__name__}: {exc}")
    if verdict.error:
        verdict.decision = "allow"  # an error is never a block
    elif mode is not None and verdict.decision != "allow":
        verdict.decision = mode
    if call.event == "pre" or verdict.error:
        write_log(log, call, verdict, time.monotonic() - start)
    return protocol.answer(verdict, call)


def ask(call: HookCall, deadline: float, folder: Path | None = None) -> dict[str, Any]:
    """The server's answer about ``call``, starting the server when none is listening."""
    folder = folder or runtime_dir()
    sock = connect(folder, deadline)
    with sock:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        sock.sendall(json.dumps({"call": call.to_dict()}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    answer: dict[str, Any] = json.loads(data)
    return answer


def connect(folder: Path, deadline: float) -> socket.socket:
    path = str(socket_path(folder))
    started = False
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(path)
            return sock
        except (FileNotFoundError, ConnectionRefusedError):
            sock.close()
            if not started:
                start_server(folder)
                started = True
            if time.monotonic() >= deadline:
                raise TimeoutError("the guard server did not start within the time budget") from None
            time.sleep(0.02)


def start_server(folder: Path) -> None:
    """The warm server, detached from the hook (its own session: the agent's Ctrl-C is not its)."""
    import subprocess  # only a first call starts the server: not imported on every hook

    log = open(folder / "server.log", "ab")  # noqa: SIM115 - handed to the child
    with log:
        subprocess.Popen([sys.executable, "-m", "analyzer.guard.server", "--dir", str(folder)],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                         close_fds=True)


def stop_server(folder: Path | None = None, wait: float = 5.0) -> bool:
    """Ask the server to exit; True when one was running."""
    folder = folder or runtime_dir()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(wait)
            sock.connect(str(socket_path(folder)))
            sock.sendall(b'{"op": "stop"}\n')
            sock.recv(64)
    except OSError:
        return False
    end = time.monotonic() + wait
    while pid_path(folder).exists() and time.monotonic() < end:
        time.sleep(0.02)
    return True


def write_log(path: str | None, call: HookCall, verdict: Verdict, seconds: float) -> None:
    """One JSON line per decision; a log that cannot be written never fails the hook."""
    record = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "agent": call.agent, "session": call.session_id,
        "transcript": call.transcript_path, "tool_use_id": call.tool_use_id, "command": call.command,
        "verdict": verdict.decision, "rule": verdict.rule, "rules": verdict.rules, "reason": verdict.reason,
        "latency_ms": round(seconds * 1000, 2), "error": verdict.error,
    }
    target = Path(path) if path else default_log()
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:  # one write: appends of a line do not interleave
            f.write(json.dumps(record) + "\n")
