"""Latency of the live guard's hook (``analyzer guard``): cold and warm, on a 50 MB transcript.

What an agent waits for on every shell command. Each measurement is one PreToolUse call, from the
hook JSON to the reply, against a private warm server started for the run (and stopped after it):

* cold start: the first call of a fresh server on a small session (server start, imports,
  spaCy, rules, the first world), and on the 50 MB session (plus reading it whole once);
* warm: calls on the 50 MB session once its world is warm, proposing the session's own shell
  commands in turn (``ls`` and ``git`` as well as launches, probes and kills; every tenth a restart
  whose ``pkill -f`` matches its own shell, which is denied), with the transcript
  growing by one call and its result before each (the tail reads only those bytes), ``--gap``
  seconds apart (an agent's commands are seconds apart: the server uses the gap to take in what
  the last call added and fork the copy that judges the next; ``--gap 0`` measures back to back);
* process: the same warm calls as the agent runs them, a new process each (interpreter start and
  imports included), in the three forms of the hook command: the one ``guard install`` writes
  (``python -I -S …/analyzer/guard/client.py``), ``python -m analyzer.guard`` and ``analyzer
  guard`` (the console script, click). Bytecode is cached as in an installed analyzer.

    python bench/guard.py                    # ~50 MB session, 300 warm calls
    python bench/guard.py --mb 5 --calls 100 --out /tmp/guard-bench

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
SMALL = Path(__file__).resolve().parent.parent / "fixtures" / "seeds" / "000-kill-after-ready.jsonl"


def _payload(transcript: Path, command: str, n: int, session: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": str(transcript), "cwd": str(transcript.parent),
                       "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": f"toolu_bench_{n}"}).encode()


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


def measure(folder: Path, megabytes: float, calls: int, process_calls: int, gap: float) -> None:
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
    commands = [e.command for e in load(big).events if isinstance(e, ToolEvent) and e.command]
    live = folder / "live.jsonl"
    try:
        stop_server(str(sock))
        _timed(None, _payload(SMALL, "pkill -f sglang", 0, "small"), sock, 60)  # fills the bytecode cache
        stop_server(str(sock))
        cold_small, _ = _timed(None, _payload(SMALL, "pkill -f sglang", 0, "small"), sock, 60)
        stop_server(str(sock))
        live.write_bytes(big.read_bytes())
        cold_big, _ = _timed(None, _payload(live, commands[0], 0, "bench"), sock, 120)
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
        argvs = {"installed: python -I -S client.py": shlex.split(hook_command("claude-code")),
                 "python -m analyzer.guard": [sys.executable, "-m", "analyzer.guard", "--agent", "claude-code"],
                 "analyzer guard (console script)": [str(console), "guard", "--agent", "claude-code"]}
        env = dict(os.environ)
        process: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        for name, argv in argvs.items():
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
    print(f"cold start, {megabytes:g} MB session         {cold_big:6.2f} s   (server start + reading it whole)")
    print(f"warm, in-process client ({calls} calls, {gap:g} s apart)  {_ms(warm)}   (target p99 ≤ 50 ms; "
          f"{blocked} answered deny/ask/warn)")
    for name, took in process.items():
        print(f"warm, a new process per call, {name} ({len(took)})".ljust(64) + f" {_ms(took)}"
              f"   (its own CPU: p50 {statistics.median(cpu[name]) * 1000:.1f} ms)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--out", type=Path, help="keep the generated session here (and reuse it)")
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--calls", type=int, default=300, help="warm calls through the in-process client")
    ap.add_argument("--process-calls", type=int, default=30, help="warm calls as new hook processes, per form")
    ap.add_argument("--gap", type=float, default=0.2, help="seconds between warm calls")
    args = ap.parse_args(argv)
    args.what = "guard"
    scale.dispatch({"guard": lambda a, folder: measure(folder, a.mb, a.calls, a.process_calls, a.gap)}, args,
                   "analyzer-guard-")


if __name__ == "__main__":
    main()
