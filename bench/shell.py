"""Throughput of the shell parser (``analyzer.shell.parse.parse``: tree-sitter, shim, self-check,
mvdan/sh fallback, repair, wrappers, nested scripts) on one core.

Corpus: the 78 bash-valid commands of shell-semantics appendix A, each repeated with variations
(ports, paths, hosts, model names, flags), plus commands generated from templates of what agents
run (launches, health loops, ssh wrappers, kills, docker/tmux, heredoc scripts), plus the 7
broken ones of the appendix. Commands are classified by what the parser had to do:

- valid: tree-sitter's self-check passed (the fast path);
- flagged: re-parsed with mvdan/sh (one ``shfmt`` subprocess) or repaired.

Measured (CPU time of this process, best of ``--runs``):

1. distinct commands, caches cleared: every command is parsed from scratch (nested scripts that
   repeat across commands still hit the nested-level cache, as they would in a session);
2. session streams: ``--sessions`` sessions of ``--calls`` shell calls each, drawn from a working
   set of ``--working-set`` distinct commands per session (agents repeat health checks, log
   tails and relaunches); what a batch over sessions sees. Memoisation (an LRU of 2048 texts)
   makes a repeat a dictionary lookup.

    /work/venv/bin/python bench/shell.py                # --distinct 4000 --runs 3
    /work/venv/bin/python bench/shell.py --corpus ../shared/corpus   # also real commands
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analyzer.shell import _levels, _treesitter  # noqa: E402
from analyzer.shell.parse import build, clear_caches, parse  # noqa: E402

APPENDIX = ROOT / "tests" / "shell" / "appendix_a.yaml"

_MODELS = ["Qwen2.5-7B-Instruct", "Llama-3.1-8B-Instruct", "DeepSeek-V3", "Qwen3-32B", "gemma-2-9b-it",
           "Mistral-7B-v0.3", "gpt-oss-20b", "Phi-4"]
_HOSTS = ["root@10.1.230.174", "gpu1", "gpu-node-3", "ubuntu@172.31.4.20", "ops@dgx-02", "h100-7"]
_SERVERS = ["sglang.launch_server", "vllm.entrypoints.openai.api_server", "uvicorn app:api"]

_TEMPLATES = [
    "nohup python -m {server} --model-path /data/models/{model} --port {port} --tp {tp} > /tmp/s{port}.log 2>&1 &",
    "CUDA_VISIBLE_DEVICES={gpus} vllm serve /models/{model} --port {port} --gpu-memory-utilization 0.{pct} &> v{port}.log &",
    "curl -s http://127.0.0.1:{port}/health",
    "curl -sf localhost:{port}/v1/models | python3 -m json.tool | head -{n}",
    "for i in $(seq 1 {n}); do curl -s localhost:{port}/health >/dev/null && break; sleep {s}; done",
    "ssh {host} 'tail -n {n} /tmp/s{port}.log'",
    "ssh {host} 'nvidia-smi --query-gpu=memory.used --format=csv; pgrep -af {short} || true'",
    "ssh {host} 'export CUDA_HOME=/usr/local/cuda && nohup python3 -m {server} --port {port} > /tmp/l{port} 2>&1 &\n"
    "echo \"PID: $!\"'",
    "pkill -f \"{short}.*--port {port}\"; sleep {s}; nohup python -m {server} --port {port} > /tmp/r.log 2>&1 &",
    "kill $(pgrep -f '{short}.*{port}') 2>/dev/null; sleep {s}",
    "ps aux | grep {short} | grep -v grep | awk '{{print $2}}' | xargs -r kill -{sig}",
    "lsof -ti tcp:{port} | xargs -r kill -9",
    "fuser -k {port}/tcp || true",
    "docker exec -it sgl-{port} bash -c 'curl -s localhost:{port}/health'",
    "docker logs --tail {n} sgl-{port} 2>&1 | grep -i error",
    "tmux new-session -d -s srv{port} 'python -m {server} --port {port} 2>&1 | tee /tmp/t{port}.log'",
    "sudo systemctl restart sglang@{port}.service && systemctl status sglang@{port} --no-pager | head -{n}",
    "cat > /root/serve{port}.sh <<'EOF'\n#!/bin/bash\nexport NCCL_DEBUG=INFO\n"
    "exec python3 -m {server} --port {port} \"$@\"\nEOF\nchmod +x /root/serve{port}.sh",
    "ssh {host} bash -s <<'EOF'\npkill -f {short}\nsleep {s}\nnohup python -m {server} --port {port} > /tmp/x.log 2>&1 &\nEOF",
    "cd /srv/app && git pull && pip install -r requirements.txt -q && timeout {n} pytest -x -q tests/",
    "grep -n \"ERROR\\|Traceback\" /tmp/s{port}.log | tail -{n}",
    "watch -n {s} 'nvidia-smi; curl -s localhost:{port}/metrics | grep -c num_requests'",
]


def _fill(template: str, rng: random.Random) -> str:
    server = rng.choice(_SERVERS)
    return template.format(
        server=server, short=server.split(".")[-1].split()[0], model=rng.choice(_MODELS),
        port=rng.choice([8000, 8001, 8080, 30000, 30001, 30002]) + rng.randrange(0, 50),
        tp=rng.choice([1, 2, 4, 8]), gpus=",".join(str(g) for g in range(rng.choice([1, 2, 4]))),
        pct=rng.randrange(50, 95), n=rng.randrange(5, 200), s=rng.randrange(1, 30), host=rng.choice(_HOSTS),
        sig=rng.choice([9, 15, "TERM"]),
    )


def _vary(command: str, rng: random.Random, i: int) -> str:
    """A variant of an appendix command: other ports/numbers, and a trailing no-op so it is distinct."""
    out = []
    for tok in command.split(" "):
        if tok.isdigit() and len(tok) >= 4:
            tok = str(int(tok) + rng.randrange(1, 999))
        out.append(tok)
    return " ".join(out) + f"\n: {i}"


def corpus(n_distinct: int, seed: int) -> tuple[list[str], list[str]]:
    """(distinct commands, the broken appendix commands)."""
    rng = random.Random(seed)
    cases = yaml.safe_load(APPENDIX.read_text())["cases"]
    valid = [c["command"] for c in cases if c["valid"]]
    broken = [c["command"] for c in cases if not c["valid"]]
    texts: dict[str, None] = {}
    i = 0
    while len(texts) < n_distinct:
        if i % 2 == 0:
            texts[_vary(valid[i // 2 % len(valid)], rng, i)] = None
        else:
            texts[_fill(rng.choice(_TEMPLATES), rng)] = None
        i += 1
    return list(texts), broken


def real_commands(folder: Path) -> list[str]:
    from analyzer.events import ToolEvent
    from analyzer.ingest import IngestError, load

    out: dict[str, None] = {}
    for p in sorted(folder.rglob("*")):
        if not p.is_file() or p.suffix == ".md":
            continue
        try:
            session = load(str(p))
        except IngestError:
            continue
        for e in session.events:
            if isinstance(e, ToolEvent) and e.command:
                out[e.command] = None
    return list(out)


def classify(texts: list[str]) -> tuple[list[str], list[str]]:
    """(valid: tree-sitter's self-check passes, flagged: mvdan/sh or repair needed)."""
    valid, flagged = [], []
    for t in texts:
        (flagged if _treesitter.parse(_levels.sanitize(t)).problems else valid).append(t)
    return valid, flagged


def cpu_rate(texts: list[str], runs: int, fn: Callable[[str], object], cold: bool = True) -> tuple[float, float]:
    """(best commands/s, median commands/s) of ``fn`` over ``texts`` in CPU time."""
    rates = []
    for _ in range(runs):
        if cold:
            clear_caches()
        t0 = time.process_time()
        for t in texts:
            fn(t)
        dt = time.process_time() - t0
        rates.append(len(texts) / dt if dt > 0 else float("inf"))
    return max(rates), statistics.median(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--distinct", type=int, default=4000)
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--calls", type=int, default=250)
    ap.add_argument("--working-set", type=int, default=60)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--corpus", type=Path, default=None, help="a folder of real sessions (shared/corpus)")
    args = ap.parse_args()

    texts, broken = corpus(args.distinct, args.seed)
    valid, flagged = classify(texts)
    flagged += broken
    avg = sum(map(len, valid)) / max(1, len(valid))
    parsed = [parse(t) for t in valid]
    simple = sum(len(p.commands) for p in parsed) / max(1, len(parsed))
    nested = sum(any(c.depth for c in p.commands) for p in parsed) / max(1, len(parsed))
    print(f"corpus: {len(texts) + len(broken)} distinct commands: {len(valid)} valid "
          f"(avg {avg:.0f} chars, {simple:.1f} simple commands, {nested:.0%} with a nested script), "
          f"{len(flagged)} flagged (mvdan/sh or repair)")
    del parsed  # kept results make every later garbage collection slower
    print(f"{'commands per CPU second':34} {'best':>9} {'median':>9}")

    def row(label: str, rates: tuple[float, float]) -> None:
        print(f"{label:34} {rates[0]:9,.0f} {rates[1]:9,.0f}")

    parser_of: dict[str, int] = {}
    for t in flagged:
        p = parse(t).parser
        parser_of[p] = parser_of.get(p, 0) + 1
    row("distinct valid, cold caches", cpu_rate(valid, args.runs, parse))
    row("  same, results not kept", cpu_rate(valid, args.runs, lambda t: build(t, None)))
    row("distinct flagged, cold caches", cpu_rate(flagged, args.runs, parse))
    row("  tree-sitter parse+shim only", cpu_rate(valid, args.runs, _treesitter.parse))
    rng = random.Random(args.seed)
    pool = valid + flagged
    stream: list[str] = []
    for _ in range(args.sessions):
        working = rng.sample(pool, min(args.working_set, len(pool)))
        stream.extend(rng.choice(working) for _ in range(args.calls))
    print(f"session streams: {args.sessions} x {args.calls} calls, {len(set(stream))} distinct "
          f"({sum(t in set(flagged) for t in stream)} calls flagged)")
    row("session streams, memoised", cpu_rate(stream, args.runs, parse))
    print("flagged parsed by: " + ", ".join(f"{k} {v}" for k, v in sorted(parser_of.items())))
    if args.corpus is not None and args.corpus.is_dir():
        real = real_commands(args.corpus)
        rv, rf = classify(real)
        rp = [parse(t) for t in real]
        print(f"real corpus: {len(real)} distinct commands ({len(rv)} valid, {len(rf)} flagged; avg "
              f"{sum(map(len, real)) / max(1, len(real)):.0f} chars, "
              f"{sum(len(p.commands) for p in rp) / max(1, len(rp)):.1f} simple commands)")
        del rp
        row("real, distinct, cold caches", cpu_rate(real, args.runs, parse))


if __name__ == "__main__":
    main()
