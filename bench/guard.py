"""Latency of the live guard's hook (``analyzer guard``): cold and warm, on a 50 MB transcript.

What an agent waits for on every shell command. Each measurement is one PreToolUse call, from the
hook JSON to the reply, against a private warm server started for the run (and stopped after it):

* cold start: the first call of a fresh server on a small session (server start, imports,
  spaCy, rules, the first world), and on the 50 MB session (plus reading it whole once): as a new
  session (no reading of its messages kept on disk: spaCy reads them) and as a server restart on a
  session it has read before (the readings store holds them); both with the spaCy pipeline cache
  filled, as after any first use. The bench keeps its own cache folder (``SESSION_ANALYZER_CACHE_DIR``);
* cold, as in a session: a turn begins with the agent's prompt hook (``UserPromptSubmit``), which
  starts the server and is answered before the world is built; the server builds it while the model
  thinks (``--think`` seconds), and the turn's first ``PreToolUse`` is timed;
* warm: calls on the 50 MB session once its world is warm, proposing the session's own shell
  commands in turn (``ls`` and ``git`` as well as launches, probes and kills; every tenth a restart
  whose ``pkill -f`` matches its own shell, which is denied), with the transcript
  growing by one call and its result before each (the tail reads only those bytes), ``--gap``
  seconds apart (an agent's commands are seconds apart: the server uses the gap to take in what
  the last call added and fork the copy that judges the next; ``--gap 0`` measures back to back);
* process: the same warm calls as the agent runs them, a new process each (interpreter start and
  imports included), in the forms of the hook command: the one ``guard install`` writes
  (``[ -f …/client.py ] && exec python -I -S …/client.py``, through ``bash -c`` as the agents run
  it), the Claude Code plugin's (``sh hooks/guard.sh``, through ``bash -c`` too:
  the same client, its interpreter read from the ``analyzer`` script's ``#!`` line), ``python -m
  analyzer.guard`` and ``analyzer guard`` (the console script, click). Bytecode is cached as in an
  installed analyzer.

    python bench/guard.py                    # ~50 MB session, 300 warm calls
    python bench/guard.py --mb 5 --calls 100 --out /tmp/guard-bench
    python bench/guard.py --calls 0 --process-calls 0   # the cold starts only
    python bench/guard.py --cold-profile     # the first call's phases in CPU seconds (what load moves least)

``--cold-profile`` runs the phases of a 50 MB first call one after the other in this process and
prints each one's CPU time: the server's imports, the warm-up (the rules' first use and spaCy's
pipeline), reading the transcript, pickling and unpickling what the read's forked copy hands back,
and the walk that builds the world. The server runs the warm-up beside the read, on two cores, so
its first call's critical path is imports + max(warm-up, read + pickle) + unpickle + walk.

Targets (issue 15): warm p99 ≤ 50 ms, cold start ≤ 1.5 s. Numbers in ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # bench/scale.py: the session generator

from analyzer.events import ToolEvent
from analyzer.guard.client import run, stop_server
from analyzer.guard.install import hook_command
from analyzer.ingest import load

SELF_KILL = "pkill -f 'uvicorn app:api'; nohup uvicorn app:api --port 8000 > api.log 2>&1 &"
CPU: list[float] = []
"""CPU seconds of each hook process (user + system): less moved by the machine's load than the wall time."""
ROOT = Path(__file__).resolve().parent.parent
SMALL = ROOT / "fixtures" / "seeds" / "000-kill-after-ready.jsonl"


def _payload(transcript: Path, command: str, n: int, session: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(transcript.parent),
                       "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": f"toolu_bench_{n}"}).encode()


def _prompt(transcript: Path, session: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(transcript.parent),
                       "hook_event_name": "UserPromptSubmit", "prompt": "go on"}).encode()


def _forget_readings(cache: Path) -> None:
    """A new session: no reading of its messages kept from an earlier process (the spaCy pipeline
    cache stays: it is filled once per installation)."""
    for f in cache.rglob("readings*"):
        f.unlink()


def _append_call(transcript: Path, n: int, command: str) -> None:
    """The transcript grows as in a live session: one Bash call and its result."""
    lines = [
        {"type": "assistant", "uuid": f"ab{n}", "sessionId": "bench", "timestamp": "2026-10-01T10:00:00Z",
         "message": {"id": f"mb{n}", "role": "assistant", "content": [
             {"type": "tool_use", "id": f"toolu_grow_{n}", "name": "Bash", "input": {"command": command}}]}},
        {"type": "user", "uuid": f"ub{n}", "sessionId": "bench", "timestamp": "2026-10-01T10:00:01Z",
         "message": {"role": "user", "content": [
             {"type": "tool_result", "tool_use_id": f"toolu_grow_{n}", "content": "ok"}]}},
    ]
    with transcript.open("a") as f:
        f.write("".join(json.dumps(x) + "\n" for x in lines))


def _ms(seconds: list[float]) -> str:
    if not seconds:  # --calls 0 / --process-calls 0: the cold starts only
        return "(not measured)"
    q = statistics.quantiles(seconds, n=100, method="inclusive") if len(seconds) > 1 else seconds * 99
    return f"p50 {q[49] * 1000:7.1f} ms   p99 {q[98] * 1000:7.1f} ms   max {max(seconds) * 1000:7.1f} ms"


def _timed(agent_argv: list[str] | None, raw: bytes, folder: Path, timeout: float,
           env: dict[str, str] | None = None) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    if agent_argv is None:
        out, _, _ = run("claude-code", raw, timeout, folder=str(folder))
        return time.perf_counter() - t0, out
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(agent_argv, input=raw, capture_output=True, timeout=120,
                          env={**(env or os.environ), "ANALYZER_GUARD_DIR": str(folder)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return time.perf_counter() - t0, done.stdout


def measure(folder: Path, megabytes: float, calls: int, process_calls: int, gap: float, think: float) -> None:
    big, note = scale.session_input(folder, megabytes, None, None)
    print(note)
    sock = folder / "sock"
    sock.mkdir(exist_ok=True)
    # the server and the hook processes run with bytecode cached, as an installed analyzer has it
    # (the development machine sets PYTHONDONTWRITEBYTECODE: every start would compile the package)
    os.environ.update(scale.child_env(folder))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["ANALYZER_GUARD_DIR"] = str(sock)
    os.environ["ANALYZER_GUARD_LOG"] = str(folder / "decisions.jsonl")
    os.environ.setdefault("ANALYZER_GUARD_IDLE", "120")
    cache = folder / "cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    os.environ["SESSION_ANALYZER_CACHE_DIR"] = str(cache)
    commands = [e.command for e in load(big).events if isinstance(e, ToolEvent) and e.command]
    live = folder / "live.jsonl"
    try:
        stop_server(str(sock))
        _timed(None, _payload(SMALL, "pkill -f sglang", 0, "small"), sock, 60)  # fills the bytecode cache
        stop_server(str(sock))
        cold_small, _ = _timed(None, _payload(SMALL, "pkill -f sglang", 0, "small"), sock, 60)
        stop_server(str(sock))
        live.write_bytes(big.read_bytes())
        _forget_readings(cache)
        cold_big, _ = _timed(None, _payload(live, commands[0], 0, "bench"), sock, 120)
        stop_server(str(sock))  # its readings are written on the way out
        cold_restart, _ = _timed(None, _payload(live, commands[0], -1, "bench"), sock, 120)
        stop_server(str(sock))
        _forget_readings(cache)
        cold_prompt, _ = _timed(None, _prompt(live, "bench"), sock, 120)
        time.sleep(think)
        first_pre, _ = _timed(None, _payload(live, commands[0], -2, "bench"), sock, 120)
        warm, blocked = [], 0
        for n in range(calls):
            # every tenth proposal is a restart that kills its own shell (answered with a deny)
            command = SELF_KILL if n % 10 == 9 else commands[n % len(commands)]
            _append_call(live, n, command)
            time.sleep(gap)
            seconds, out = _timed(None, _payload(live, command, n + 1, "bench"), sock, 10)
            warm.append(seconds)
            blocked += bool(out)
        console = Path(sys.executable).with_name("analyzer")
        plugin = f"sh {shlex.quote(str(ROOT / 'hooks' / 'guard.sh'))} --agent claude-code"
        argvs = {"installed: python -I -S client.py": ["bash", "-c", hook_command("claude-code")],
                 "plugin: sh hooks/guard.sh": ["bash", "-c", plugin],
                 "python -m analyzer.guard": [sys.executable, "-m", "analyzer.guard", "--agent", "claude-code"],
                 "analyzer guard (console script)": [str(console), "guard", "--agent", "claude-code"]}
        # the plugin's hook finds the analyzer on PATH, in Claude Code's environment
        env = {**os.environ, "CLAUDE_PLUGIN_ROOT": str(ROOT),
               "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        process: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        for name, argv in argvs.items() if process_calls else ():
            process[name] = []
            CPU.clear()
            _timed(argv, _payload(live, "ls", 0, "bench"), sock, 10, env)  # writes the bytecode cache
            for n in range(process_calls):
                time.sleep(gap)
                payload = _payload(live, commands[n % len(commands)], 10**6 + n, "bench")
                process[name].append(_timed(argv, payload, sock, 10, env)[0])
            cpu[name] = CPU[1:]  # the first filled the bytecode cache
    finally:
        stop_server(str(sock))
    print(f"\ntranscript {big.stat().st_size / 2**20:.1f} MiB, {len(commands)} shell calls; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores\n")
    print(f"cold start, small session           {cold_small:6.2f} s   (target ≤ 1.5 s)")
    print(f"cold start, {megabytes:g} MB session, new     {cold_big:6.2f} s   (server start + reading it whole; "
          "no readings kept)")
    print(f"cold start, {megabytes:g} MB session, restart {cold_restart:6.2f} s   (its readings kept by the last server)")
    print(f"as in a session: the prompt hook first  {cold_prompt:6.2f} s, then the first PreToolUse {think:g} s later "
          f"{first_pre:6.2f} s")
    print(f"warm, in-process client ({calls} calls, {gap:g} s apart)  {_ms(warm)}   (target p99 ≤ 50 ms; "
          f"{blocked} answered deny/ask/warn)")
    for name, took in process.items() if process_calls else ():
        print(f"warm, a new process per call, {name} ({len(took)})".ljust(64) + f" {_ms(took)}"
              f"   (its own CPU: p50 {statistics.median(cpu[name]) * 1000:.1f} ms)")


def cold_profile(folder: Path, megabytes: float) -> None:
    """The phases of a first call on the 50 MB session, in CPU seconds, run here one after the other
    (a new session: the readings store emptied first; the spaCy pipeline cache kept)."""
    import pickle

    from analyzer.events import Session, UserEvent
    from analyzer.guard.judge import LiveWorld, guard_analyzer
    from analyzer.guard.tail import ClaudeTail

    big, note = scale.session_input(folder, megabytes, None, None)
    print(note)
    cache = folder / "cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    os.environ["SESSION_ANALYZER_CACHE_DIR"] = str(cache)
    _forget_readings(cache)
    if not any(cache.glob("spacy-pipeline-*")):
        print("(the spaCy pipeline cache was empty: the warm-up builds it, once)")
    cpu = time.process_time
    # the server's imports, in a process of their own (this one has imported much of it already)
    imports = float(subprocess.run(
        [sys.executable, "-c", "import time; import analyzer.guard.server; print(time.process_time())"],
        capture_output=True, text=True, check=True, env=scale.child_env(folder)).stdout)
    analyzer = guard_analyzer()
    t = cpu()
    analyzer.analyze_session(Session(path="<warm-up>", format="live", events=[
        UserEvent(index=0, text="Start the API on port 8000 and leave it running"),
        ToolEvent(index=1, name="Bash", category="shell", command="nohup uvicorn app:api --port 8000 &")]))
    from analyzer.lifecycle.language.pipeline import pipeline

    pipeline()
    warm = cpu() - t
    tail = ClaudeTail(big)
    t = cpu()
    tail.read()
    read = cpu() - t
    t = cpu()
    blob = pickle.dumps((False, tail.__dict__), protocol=pickle.HIGHEST_PROTOCOL)
    dumped = cpu() - t
    t = cpu()
    pickle.loads(blob)
    loaded = cpu() - t
    live = LiveWorld(analyzer)
    t = cpu()
    for ev in tail.events:
        live.add(ev)
    walk = cpu() - t
    print(f"CPU s: imports (the server's, a process of their own) {imports:.3f}  warm-up {warm:.3f}  read {read:.3f} ({len(tail.events)} events)  "
          f"pickle {dumped:.3f}  unpickle {loaded:.3f}  walk {walk:.3f}")
    print(f"critical path: imports + max(warm-up, read + pickle) + unpickle + walk = "
          f"{imports + max(warm, read + dumped) + loaded + walk:.2f} s of CPU")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, help="keep the generated session here (and reuse it)")
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--calls", type=int, default=300, help="warm calls through the in-process client")
    ap.add_argument("--process-calls", type=int, default=30, help="warm calls as new hook processes, per form")
    ap.add_argument("--gap", type=float, default=0.2, help="seconds between warm calls")
    ap.add_argument("--think", type=float, default=2.0,
                    help="seconds between the prompt hook and the turn's first PreToolUse (the model thinking)")
    ap.add_argument("--cold-profile", action="store_true", help="the first call's phases in CPU seconds, in this process")
    args = ap.parse_args(argv)
    args.what = "guard"
    if args.cold_profile:
        scale.dispatch({"guard": lambda a, folder: cold_profile(folder, a.mb)}, args, "analyzer-guard-")
        return
    scale.dispatch({"guard": lambda a, folder: measure(folder, a.mb, a.calls, a.process_calls, a.gap, a.think)}, args,
                   "analyzer-guard-")


if __name__ == "__main__":
    main()
