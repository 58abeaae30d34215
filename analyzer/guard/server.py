"""The warm per-user guard server: one Unix socket, one world per session, spaCy and the rules
loaded once. The hook client starts it on first use (``python -m analyzer.guard.server``); it
exits after ``idle`` seconds without a call. One call at a time: a hook waits for the one before
(judging takes milliseconds once a session is warm).

Wire format (``analyzer.guard.client``): the raw hook JSON in, the agent's reply out; the server
parses, judges and answers in the agent's protocol, then appends the decision to the log and
brings the session's world up to date, both after the reply has gone (off the hook's clock).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import signal
import socket
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from analyzer.config import Config, find_config, load_config
from analyzer.events import Event, Session, ToolEvent, UserEvent
from analyzer.guard import decide
from analyzer.guard.agents import AGENTS
from analyzer.guard.client import IDLE_ENV, MODES, default_log, lock_path, pid_path, runtime_dir, socket_path
from analyzer.guard.judge import LiveWorld, guard_analyzer, proposed
from analyzer.guard.settings import GuardSettings, guard_settings
from analyzer.guard.tail import ASIDE_BYTES, Tail, read_aside, tail_for
from analyzer.guard.verdict import Decision, HookCall, Reply, Verdict
from analyzer.lifecycle.language.pipeline import pipeline
from analyzer.pipeline import Analyzer

SEND_AT_MOST = 32
"""Unsettled or new events sent along to the judging copy; past that the kept world takes them in
first (a first call on a long transcript)."""
MAX_SESSIONS = 32
"""Worlds kept warm; the least recently used goes first."""


class SessionState:
    """One session's world, kept current from its transcript and its hook calls."""

    def __init__(self, call: HookCall, analyzer: Analyzer, settings: GuardSettings) -> None:
        self.analyzer, self.settings = analyzer, settings
        self.agent = call.agent
        self.tail: Tail | None = tail_for(call.agent, call.transcript_path)
        self.path = call.transcript_path or "(hooks)"
        self.session_id = call.session_id
        self.cwd = call.cwd
        self.prompts: list[str] = []
        """Prompts a hook delivered that the transcript does not show yet."""
        self.live = self._fresh()
        self.fed = 0
        """Events of ``tail.events`` the kept world has taken in."""
        self.first_read = True

    def _read(self) -> bool:
        """The tail's new bytes; a large transcript's first read runs aside while spaCy loads."""
        assert self.tail is not None
        if self.first_read:
            self.first_read = False
            with contextlib.suppress(OSError):
                if os.stat(self.path).st_size >= ASIDE_BYTES:
                    return read_aside(self.tail, self._warm)
        return self.tail.read()

    def _warm(self) -> None:
        """Load what the walk over the transcript needs: the rules' and the builder's first-use work
        (through the public path) and spaCy's pipeline. The pipeline explicitly: the warm-up's own
        message is read from the readings kept on disk once any process has read it, without spaCy,
        and a session's new messages would then load spaCy in the walk, after the read, not beside it."""
        self.analyzer.analyze_session(Session(path="<warm-up>", format="live", events=[
            UserEvent(index=0, text="Start the API on port 8000 and leave it running"),
            ToolEvent(index=1, name="Bash", category="shell", command="nohup uvicorn app:api --port 8000 &")]))
        pipeline()

    def _fresh(self) -> LiveWorld:
        return LiveWorld(self.analyzer, self.settings, path=self.path, format=self.agent, agent=self.agent,
                         session_id=self.session_id, cwd=self.cwd)

    def _new_world(self) -> None:
        """The transcript was rewritten: start again from its first event."""
        self.live.discard()
        self.live, self.fed = self._fresh(), 0

    def sync(self) -> None:
        """Take in what the transcript gained; settled events enter the kept world, and a copy of
        it is forked for the next judgement (after the hook was answered: off its clock)."""
        if self.tail is not None:
            if self._read():
                self._new_world()
            events = self.tail.events
            while self.fed < len(events) and self.tail.settled(events[self.fed]):
                ev = events[self.fed]
                if isinstance(ev, UserEvent) and ev.text.strip() in self.prompts:
                    self.prompts.remove(ev.text.strip())
                self.live.add(ev)
                self.fed += 1
        self.live.prepare()

    def handle(self, call: HookCall) -> Verdict:
        if call.event == "prompt" and call.prompt:
            if self.tail is None:
                self.live.add(UserEvent(text=call.prompt))
            else:
                self.prompts.append(call.prompt.strip())
            return Verdict()
        if call.event == "post" and call.command and self.tail is None:
            ev = proposed(call.command, call.tool_use_id, call.background)
            ev.output, ev.exit_code = call.output or "", call.exit_code
            self.live.add(ev)
        if call.event != "pre" or not self.live.relevant(call.command):
            return Verdict()  # the transcript is read after the reply (``Server.after``)
        assert call.command is not None
        before: list[Event] = []
        if self.tail is not None:
            if self._read():
                self._new_world()
            if len(self.tail.events) - self.fed > SEND_AT_MOST:
                self.sync()  # a first read: the kept world takes it in (cheaper than sending it)
            # what the kept world has not taken in goes to the judging copy; the transcript may
            # already hold the call being judged: that one is the proposed event itself
            before = [ev for ev in self.tail.events[self.fed:]
                      if not (isinstance(ev, ToolEvent) and call.tool_use_id and ev.ref == call.tool_use_id)]
        shown = {ev.text.strip() for ev in before if isinstance(ev, UserEvent)}
        # a prompt the transcript does not show yet is newer than all it shows
        before += [UserEvent(text=p) for p in self.prompts if p not in shown]
        return self.live.judge(proposed(call.command, call.tool_use_id, call.background), before)


class Server:
    def __init__(self) -> None:
        self.sessions: OrderedDict[tuple[str, str, str], SessionState] = OrderedDict()
        self.configs: dict[str, tuple[Analyzer, GuardSettings]] = {}
        self.last: SessionState | None = None

    def config_for(self, cwd: str | None) -> tuple[str, Analyzer, GuardSettings]:
        path = find_config(Path(cwd)) if cwd and Path(cwd).is_dir() else None
        key = str(path or "")
        if key not in self.configs:
            config = load_config(path) if path else Config()
            self.configs[key] = (guard_analyzer(config), guard_settings(config))
        return key, *self.configs[key]

    def judge(self, call: HookCall) -> tuple[Verdict, str | None]:
        """The verdict on one parsed hook call, and the decision log its project configures."""
        key, analyzer, settings = self.config_for(call.cwd)
        skey = (call.agent, call.session_id or call.transcript_path or "(none)", key)
        state = self.sessions.get(skey)
        if state is None:
            state = self.sessions[skey] = SessionState(call, analyzer, settings)
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)[1].live.discard()
        self.sessions.move_to_end(skey)
        self.last = state
        return state.handle(call), settings.log

    def hook(self, agent: str, raw: bytes, mode: Decision | None = None) -> tuple[Reply, dict[str, Any] | None, str]:
        """One hook request: the agent's reply, the decision to log (None: nothing to log) and
        where. Never raises: a failure is an allow whose log line says why."""
        call, unreadable = decide.parse(agent, raw)
        log: str | None = None
        if unreadable:
            verdict = Verdict(error=unreadable)
        elif call.event == "other":
            verdict = Verdict()
        else:
            try:
                verdict, log = self.judge(call)
            except Exception as exc:  # fail open: a config error, a crash in the world
                verdict = Verdict(error=f"{type(exc).__name__}: {exc}")
        answer = decide.reply(call, verdict, mode)
        line = decide.record(call, verdict, 0.0) if decide.logged(call, verdict) else None
        return answer, line, log or default_log()

    def after(self) -> None:
        """Once the hook has its answer: bring the last session's world up to date."""
        state, self.last = self.last, None
        if state is not None:
            state.sync()

    def close(self) -> None:
        for state in self.sessions.values():
            state.live.discard()

    def idle(self) -> float:
        if os.environ.get(IDLE_ENV):
            return float(os.environ[IDLE_ENV])
        return min((s.idle for _, s in self.configs.values()), default=GuardSettings().idle)


def _read_all(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _answer(server: Server, conn: socket.socket, request: bytes) -> None:
    """Answer one ``hook`` request, then log it (its latency is the client's, up to the answer)."""
    head, _, raw = request.partition(b"\n")
    try:
        _, agent, mode, deadline, t0 = head.decode().split()
        if agent not in AGENTS or mode not in (*MODES, "-"):
            raise ValueError(agent)
        limit, start = float(deadline), float(t0)
    except ValueError:
        conn.sendall(decide.encode(Reply(stderr="guard: a request this server does not read\n")))
        return
    answer, line, log = server.hook(agent, raw, None if mode == "-" else mode)  # type: ignore[arg-type]
    with contextlib.suppress(OSError):
        conn.sendall(decide.encode(answer))
        conn.shutdown(socket.SHUT_WR)  # the hook has all it needs: it need not wait for the log line
    sent = time.monotonic()
    # past the deadline the client has failed open and logs that itself
    if line is not None and sent <= limit:
        line["latency_ms"] = round((sent - start) * 1000, 2)
        decide.write_log(log, line)


def serve(folder: Path) -> int:
    """Run until idle; 0 also when another server already holds the folder's lock."""
    lock = open(lock_path(str(folder)), "w")  # noqa: SIM115 - held for the server's whole life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server is up: the client will reach it
    sock_path = Path(socket_path(str(folder)))
    with contextlib.suppress(FileNotFoundError):
        sock_path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(sock_path))
    os.chmod(sock_path, 0o600)
    sock.listen(16)
    pid_file = Path(pid_path(str(folder)))
    pid_file.write_text(str(os.getpid()))
    # a plain kill (logout, `kill PID`) still removes the socket and pid file on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = Server()
    last = time.monotonic()
    try:
        while True:
            sock.settimeout(max(0.05, server.idle() - (time.monotonic() - last)))
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                break
            last = time.monotonic()
            with conn:
                conn.settimeout(30)
                try:
                    request = _read_all(conn)
                    if request.startswith(b"stop"):
                        conn.sendall(b"stopped\n")
                        break
                    _answer(server, conn, request)
                except Exception as exc:  # one bad call never takes the server down
                    print(f"guard: a request failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            try:
                server.after()
            except Exception as exc:  # the next call reads again; this one was answered
                print(f"guard: updating the world failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            last = time.monotonic()
    finally:
        server.close()
        sock.close()
        with contextlib.suppress(FileNotFoundError):
            sock_path.unlink()
        with contextlib.suppress(FileNotFoundError):
            pid_file.unlink()
        lock.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.guard.server")
    parser.add_argument("--dir", type=Path, default=None, help="socket folder (default: the per-user one)")
    args = parser.parse_args(argv)
    return serve(args.dir or Path(runtime_dir()))


if __name__ == "__main__":
    sys.exit(main())
