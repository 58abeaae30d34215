"""Ingest benchmark: how much slower and bigger than bare JSON parsing is ``analyzer.ingest.load``?

Generates a ~50 MB Claude Code session from the hand-made fixtures in ``fixtures/claude-code/``
(entries repeated with fresh ids and later times, shell results padded with build-log text), then
runs, each in its own process, (a) plain orjson parsing of every line and (b) ``load()`` of the file,
``--runs`` times each, and prints the medians of wall time, MB/s and peak RSS, and the ratios.

    python bench/ingest.py [--runs 5] [--entries 12000] [--shell 3000] [--mb 50] [--keep DIR]

Wall time is measured inside the child around the work only (not interpreter start or imports);
peak RSS is the child's ``ru_maxrss`` from ``os.wait4``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "claude-code"
TEMPLATES = [
    FIXTURES / "v1.0-dev-server-sidechain.jsonl",
    FIXTURES / "v2.0-kill-shell.jsonl",
    FIXTURES / "v2.1-sglang" / "7d0c7e4e-3b1a-4c2f-8e9d-5a6b7c8d9e0f.jsonl",
]
ID_RE = re.compile(rb"toolu_01[A-Za-z0-9]{22}|msg_01[A-Za-z0-9]{22}|"
                   rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LOG_LINE = ("[{n:06d}] INFO  compile  src/module_{m:03d}.ts -> dist/module_{m:03d}.js "
            "({k} kB, {ms} ms) cache=miss worker=3\n")

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, path = sys.argv[1], Path(sys.argv[2])
import orjson
if mode == "load":
    from analyzer.ingest import load
rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if mode == "orjson":
    n = 0
    with path.open("rb") as fh:
        for raw in fh:
            orjson.loads(raw)
            n += 1
    info = {"records": n}
else:
    s = load(path)
    info = {"records": s.counts.records, "events": s.counts.events, "shell": len(s.shell_calls()),
            "diagnostics": s.counts.diagnostics}
info["seconds"] = time.perf_counter() - t0
info["rss_before_kb"] = rss_before
print(json.dumps(info))
"""


def fresh_id(token: bytes, round_no: int) -> bytes:
    """The same id in another round: same shape, new characters."""
    digest = hashlib.blake2b(token + round_no.to_bytes(4, "big"), digest_size=32).hexdigest()
    if token.startswith((b"toolu_", b"msg_")):
        prefix = token[: token.index(b"_01") + 3]
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
        body = "".join(alphabet[int(digest[i: i + 2], 16) % len(alphabet)] for i in range(0, 44, 2))
        return prefix + body.encode()
    h = digest
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}".encode()


def shift_times(value: Any, delta: timedelta) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "timestamp" and isinstance(v, str) and v.endswith("Z"):
                ts = datetime.fromisoformat(v.replace("Z", "+00:00")) + delta
                out[k] = ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"
            else:
                out[k] = shift_times(v, delta)
        return out
    if isinstance(value, list):
        return [shift_times(v, delta) for v in value]
    return value


def build_log(size: int, seed: int) -> str:
    """Build-log text of about ``size`` bytes once JSON-encoded."""
    lines, n, total = [], 0, 0
    while total < size:
        line = LOG_LINE.format(n=n, m=(seed + n) % 997, k=(seed * 7 + n) % 300, ms=(n * 13) % 900)
        lines.append(line)
        total += len(line) + 1  # the newline is written as two characters, \n
        n += 1
    return "".join(lines)


def is_shell_result(entry: dict[str, Any]) -> bool:
    result = entry.get("toolUseResult")
    return isinstance(result, dict) and isinstance(result.get("stdout"), str) \
        and "backgroundTaskId" not in result


def bash_calls(entry: dict[str, Any]) -> int:
    if entry.get("type") != "assistant":
        return 0
    return sum(1 for b in entry["message"]["content"] if b.get("type") == "tool_use" and b.get("name") == "Bash")


def shell_pair(template_call: dict[str, Any], template_result: dict[str, Any], i: int) -> list[dict[str, Any]]:
    """An extra foreground shell call and its result, cloned from a template pair."""
    call = orjson.loads(orjson.dumps(template_call))
    result = orjson.loads(orjson.dumps(template_result))
    tool_id = fresh_id(call["message"]["content"][0]["id"].encode(), 10_000 + i).decode()
    call["message"]["content"][0]["id"] = tool_id
    port = 30000 + i % 7
    call["message"]["content"][0]["input"]["command"] = f"curl -s -o /dev/null -w '%{{http_code}}' localhost:{port}/health"
    call["uuid"] = fresh_id(call["uuid"].encode(), 10_000 + i).decode()
    result["message"]["content"][0]["tool_use_id"] = tool_id
    result["uuid"] = fresh_id(result["uuid"].encode(), 20_000 + i).decode()
    result["parentUuid"] = call["uuid"]
    return [call, result]


def one_round(templates: list[list[bytes]], pair: tuple[dict[str, Any], dict[str, Any]], r: int,
              extra: int, first_extra: int) -> list[dict[str, Any]]:
    """The fixtures once more with fresh ids, plus ``extra`` shell call/result pairs."""
    batch = [orjson.loads(ID_RE.sub(lambda m: fresh_id(m.group(0), r), raw)) for t in templates for raw in t]
    for i in range(extra):
        batch.extend(shell_pair(*pair, first_extra + i))
    return batch


def generate(out: Path, entries: int, shell: int, megabytes: float, first_round: int = 0) -> dict[str, int]:
    """Write the session to ``out``. ``first_round`` numbers the rounds from there, so sessions made
    with different values have different ids and padding text (``bench/scale.py``'s corpus)."""
    templates = [t.read_bytes().splitlines() for t in TEMPLATES]
    parsed = [orjson.loads(raw) for t in templates for raw in t]
    v2_0 = [orjson.loads(raw) for raw in templates[1]]
    pair = (v2_0[8], v2_0[9])  # v2.0 health check: call + result
    assert bash_calls(pair[0]) == 1 and is_shell_result(pair[1])
    lines_per_round, shell_per_round = len(parsed), sum(bash_calls(e) for e in parsed)
    # rounds R and extra pairs X: R*lines + 2X = entries and R*shell + X = shell calls
    rounds = max(1, round((entries - 2 * shell) / (lines_per_round - 2 * shell_per_round)))
    extra_total = max(0, shell - rounds * shell_per_round)
    extras = [extra_total // rounds + (r < extra_total % rounds) for r in range(rounds)]
    sample = one_round(templates, pair, 0, extras[0], 0)
    results_per_round = sum(map(is_shell_result, sample))
    bytes_per_round = sum(len(orjson.dumps(e)) + 1 for e in sample)
    room = megabytes * 2**20 - rounds * bytes_per_round
    pad = max(0, int(room / (rounds * results_per_round) / 2))  # the text is in content and stdout
    written = {"entries": 0, "shell": 0}
    with out.open("wb") as fh:
        for r in range(rounds):
            delta = timedelta(hours=r)
            batch = one_round(templates, pair, first_round + r, extras[r], sum(extras[:r]))
            for n, entry in enumerate(batch):
                if is_shell_result(entry):
                    text = build_log(pad, (first_round + r) * 1000 + n)
                    entry["toolUseResult"]["stdout"] = text
                    entry["message"]["content"][0]["content"] = text
                written["shell"] += bash_calls(entry)
                fh.write(orjson.dumps(shift_times(entry, delta)) + b"\n")
                written["entries"] += 1
    written["bytes"] = out.stat().st_size
    return written


def run_child(mode: str, path: Path) -> dict[str, Any]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, str(path)], stdout=subprocess.PIPE,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} child failed with exit code {proc.returncode}")
    info: dict[str, Any] = json.loads(out)
    info["peak_rss_mb"] = usage.ru_maxrss / 1024  # Linux: kilobytes
    info["base_rss_mb"] = info.pop("rss_before_kb") / 1024
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--entries", type=int, default=12_000)
    ap.add_argument("--shell", type=int, default=3_000)
    ap.add_argument("--mb", type=float, default=50.0)
    ap.add_argument("--keep", type=Path, help="write the generated session here and keep it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "bench-session.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        made = generate(path, args.entries, args.shell, args.mb)
        size_mb = made["bytes"] / 2**20
        print(f"generated {path.name}: {size_mb:.1f} MB, {made['entries']} entries, {made['shell']} shell calls")
        results: dict[str, list[dict[str, Any]]] = {"orjson": [], "load": []}
        for _ in range(args.runs):
            for mode in results:  # interleaved, so drift in the machine hits both alike
                results[mode].append(run_child(mode, path))
        print(f"{'':8} {'wall s':>8} {'MB/s':>8} {'peak RSS MB':>12} {'(at start)':>11}")
        med: dict[str, dict[str, float]] = {}
        for mode, runs in results.items():
            secs = statistics.median(r["seconds"] for r in runs)
            rss = statistics.median(r["peak_rss_mb"] for r in runs)
            base = statistics.median(r["base_rss_mb"] for r in runs)
            med[mode] = {"secs": secs, "rss": rss}
            print(f"{mode:8} {secs:8.3f} {size_mb / secs:8.1f} {rss:12.1f} {base:11.1f}")
        last = results["load"][-1]
        print(f"load: {last['records']} records, {last['events']} events, {last['shell']} shell calls, "
              f"{last['diagnostics']} diagnostics")
        print(f"ratio load/orjson: time {med['load']['secs'] / med['orjson']['secs']:.2f}x, "
              f"peak RSS {med['load']['rss'] / med['orjson']['rss']:.2f}x  (medians of {args.runs} runs)")


if __name__ == "__main__":
    main()
