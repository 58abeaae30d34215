"""Scale benchmark of ``analyzer check``: the whole command, as a user runs it, against the floor.

The floor is a whole Python process that orjson-parses every line of the same files and keeps
nothing: no analyzer can read a JSONL session faster. Both run as separate processes, interleaved
(floor, check, floor, check, …) so drift in a shared machine hits both alike; the table shows
medians (and the range) of wall time, CPU time (user + system) and peak RSS, the latter two from
``os.wait4``'s rusage of each child.

    python bench/scale.py session                   # ~50 MB Claude Code session, 5 runs
    python bench/scale.py session --mb 500 --runs 3  # ~500 MB (120,000 entries, 30,000 shell calls)
    python bench/scale.py corpus                    # 1,000 sessions with an archive's size profile
    python bench/scale.py tiny                      # start-up: a small fixture, --importtime too

Inputs are generated into a temporary folder, or into ``--out DIR``, where they are kept and
reused by later runs with the same parameters. Sessions come from ``bench/ingest.py``'s
generator (the fixture sessions repeated with fresh ids, shell results padded with build logs);
``--entries`` and ``--shell`` default to 12,000 and 3,000 per 50 MB. ``--profile`` runs ``check``
once more under pyinstrument (the ``bench`` extra) and prints the functions with the most own
time.

``--phases`` also times the phases of one check (imports, load, spaCy, world, rules, output) in
one process. ``generate_corpus()`` is importable: ``from scale import generate_corpus`` (with ``bench/`` on
``sys.path``), for the batch benchmark.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ingest  # bench/ingest.py: the session generator

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "fixtures" / "claude-code" / "v2.0-kill-shell.jsonl"

# The size profile of a real Claude Code archive (3,142 files, 1.24 GB): median 105 KB,
# p99 5.4 MB, largest 87 MB. Sizes are the quantiles of a log-normal with that median and p99.
MEDIAN_BYTES = 105 * 1024
P99_BYTES = 5.4 * 2**20
LARGEST_BYTES = 87 * 2**20
BYTES_PER_ENTRY = 50 * 2**20 / 12_000
"""Entries per byte of the 50 MB benchmark session (a shell call every fourth entry)."""

FLOOR = r"""
import os, sys
import orjson
records = 0
for arg in sys.argv[1:]:
    if os.path.isdir(arg):
        paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(arg) for f in fs if f.endswith(".jsonl"))
    else:
        paths = [arg]
    for path in paths:
        with open(path, "rb") as fh:
            for raw in fh:
                orjson.loads(raw)
                records += 1
print(f"{records} records")
"""

PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import analyzer.cli.check  # what `analyzer check` imports before it reads anything
from analyzer.ingest import load
from analyzer.ingest.base import paused_gc
from analyzer.lifecycle import language
from analyzer.lifecycle.world import build_world
from analyzer.pipeline import Analysis, Analyzer
from analyzer.report import text
from analyzer.rules.engine import run_rules
t1 = time.perf_counter()
analyzer = Analyzer()
t2 = time.perf_counter()
with paused_gc():  # as check runs one session
    session = load(sys.argv[1])
    t3 = time.perf_counter()
    language._pipeline()  # spaCy: imported and built when the first message is read
    t4 = time.perf_counter()
    world = build_world(session, analyzer.catalog)
    t5 = time.perf_counter()
    result = run_rules(world, analyzer.rules, known=set(analyzer.ruleset.rules))
    t6 = time.perf_counter()
    text.render([Analysis(session, world, result.findings, result.suppressed, result.problems)])
    t7 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "rules and catalog": t2 - t1, "load": t3 - t2, "spaCy": t4 - t3,
                  "world": t5 - t4, "rules": t6 - t5, "text output": t7 - t6}))
"""
"""Where one ``check`` of one session spends its time, phase by phase, in one process."""


# -- inputs ---------------------------------------------------------------------------------------


def _entries_for(megabytes: float) -> tuple[int, int]:
    entries = max(1, round(megabytes * 2**20 / BYTES_PER_ENTRY))
    return entries, max(1, entries // 4)


def generate_session(out: Path, megabytes: float, entries: int | None = None, shell: int | None = None,
                     first_round: int = 0) -> dict[str, int]:
    """One Claude Code session of about ``megabytes`` MiB at ``out`` (``bench/ingest.py``'s
    generator). Below one round of the fixtures (~70 KB) the file is cut at a line boundary."""
    default_entries, default_shell = _entries_for(megabytes)
    made = ingest.generate(out, entries or default_entries, shell or default_shell, megabytes,
                           first_round=first_round)
    target = int(megabytes * 2**20)
    if made["bytes"] > target * 1.1:
        data = out.read_bytes()
        cut = data.rfind(b"\n", 0, target) + 1 or data.find(b"\n") + 1
        out.write_bytes(data[:cut])
        made = {"entries": data[:cut].count(b"\n"), "shell": -1, "bytes": cut}
    return made


def corpus_sizes(files: int) -> list[int]:
    """File sizes in bytes: log-normal quantiles (median 105 KB, p99 5.4 MB), the largest 87 MB."""
    sigma = math.log(P99_BYTES / MEDIAN_BYTES) / NormalDist().inv_cdf(0.99)
    sizes = [int(MEDIAN_BYTES * math.exp(sigma * NormalDist().inv_cdf((i + 0.5) / files))) for i in range(files)]
    sizes[-1] = int(LARGEST_BYTES)
    return sizes


def generate_corpus(out: Path, files: int = 1000, seed: int = 0) -> list[Path]:
    """``files`` Claude Code sessions under ``out`` with the size profile of a real archive
    (``corpus_sizes``), spread over 40 project folders as ``~/.claude/projects`` holds them, in
    shuffled size order. Every file has its own ids and padding. Reuses a corpus already there
    when its ``corpus.json`` says it was made with the same ``files`` and ``seed``."""
    manifest = out / "corpus.json"
    if manifest.is_file():
        meta = json.loads(manifest.read_text())
        if meta.get("files") == files and meta.get("seed") == seed:
            return [out / p for p in meta["paths"]]
    sizes = corpus_sizes(files)
    random.Random(seed).shuffle(sizes)
    paths: list[str] = []
    for i, size in enumerate(sizes):
        rel = f"project-{i % 40:02d}/{seed:02d}{i:06d}-5e55-4a0e-8b1c-{i:012d}.jsonl"
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        generate_session(path, size / 2**20, first_round=(seed * files + i) * 1000)
        paths.append(rel)
    manifest.write_text(json.dumps({"files": files, "seed": seed, "paths": paths}))
    return [out / p for p in paths]


def session_input(folder: Path, megabytes: float, entries: int | None, shell: int | None) -> tuple[Path, str]:
    """The benchmark session, generated unless ``folder`` already holds it."""
    e, s = entries or _entries_for(megabytes)[0], shell or _entries_for(megabytes)[1]
    path = folder / f"scale-{megabytes:g}mb-{e}e-{s}s.jsonl"
    if path.is_file():
        return path, f"reused {path}"
    t0 = time.perf_counter()
    made = ingest.generate(path, e, s, megabytes)
    return path, (f"generated {path.name}: {made['bytes'] / 2**20:.1f} MiB, {made['entries']} entries, "
                  f"{made['shell']} shell calls ({time.perf_counter() - t0:.1f} s)")


# -- measuring ------------------------------------------------------------------------------------


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float
    code: int
    out: str
    err: str


def child_env(folder: Path) -> dict[str, str]:
    """The children's environment: bytecode cached (under ``folder``, not in the repo), as an
    installed analyzer has its ``.pyc`` files; without it every run compiles every module again
    (0.6 s on the development machine, which sets PYTHONDONTWRITEBYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


def run(argv: list[str], cwd: Path) -> Run:
    """One child process: wall time from here, CPU time and peak RSS from its rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, env=child_env(cwd))
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode,
                   out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def floor_argv(paths: list[Path]) -> list[str]:
    return [sys.executable, "-c", FLOOR, *map(str, paths)]


def check_argv(paths: list[Path], extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "analyzer", "check", *map(str, paths), *extra]


def compare(paths: list[Path], runs: int, extra: list[str], cwd: Path) -> dict[str, list[Run]]:
    """``runs`` interleaved runs of each, after one untimed run of each (it writes the bytecode
    cache and warms the page cache)."""
    results: dict[str, list[Run]] = {"floor": [], "check": []}
    run(floor_argv(paths), cwd)
    run(check_argv(paths, extra), cwd)
    for _ in range(runs):
        for name in results:
            argv = floor_argv(paths) if name == "floor" else check_argv(paths, extra)
            r = run(argv, cwd)
            if r.code not in (0, 1):
                sys.exit(f"{name} failed with exit code {r.code}:\n{r.err[-2000:]}")
            results[name].append(r)
    return results


def report(results: dict[str, list[Run]], megabytes: float, targets: str) -> None:
    med: dict[str, dict[str, float]] = {}
    print(f"{'':8} {'wall s':>8} {'(min-max)':>13} {'CPU s':>7} {'MB/s':>7} {'peak RSS MB':>12} {'(min-max)':>13}")
    for name, rs in results.items():
        walls, cpus, rss = [r.wall for r in rs], [r.cpu for r in rs], [r.rss_mb for r in rs]
        med[name] = {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "rss": statistics.median(rss)}
        m = med[name]
        print(f"{name:8} {m['wall']:8.3f} {min(walls):6.2f}-{max(walls):<6.2f} {m['cpu']:7.3f} "
              f"{megabytes / m['wall']:7.1f} {m['rss']:12.1f} {min(rss):6.0f}-{max(rss):<6.0f}")
    f, c = med["floor"], med["check"]
    print(f"ratio check/floor: wall {c['wall'] / f['wall']:.2f}x, CPU {c['cpu'] / f['cpu']:.2f}x, "
          f"peak RSS {c['rss'] / f['rss']:.2f}x  (medians of {len(results['check'])} runs; {targets})")
    last = results["check"][-1]
    tail = [ln for ln in last.out.strip().splitlines()[-1:]]
    print(f"check says: {tail[0] if tail else '(nothing)'}; floor read {results['floor'][-1].out.strip()}")
    notes = [ln for ln in last.err.splitlines() if ln.strip()]
    if notes:
        print("check stderr (first 5 lines):")
        for ln in notes[:5]:
            print(f"  {ln}")


def profile(paths: list[Path], extra: list[str], cwd: Path, top: int) -> None:
    """``check`` once under pyinstrument; the functions with the most own time."""
    argv = [sys.executable, "-m", "pyinstrument", "-r", "text", "-p", "flat", "-p", "flat_time=self",
            "-m", "analyzer", "check", *map(str, paths), *extra]
    r = run(argv, cwd)
    lines = r.out.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Program:")), 0)
    body = [ln for ln in lines[start + 1:] if ln.strip()]
    print(f"profile (pyinstrument, own time, top {top}):")
    for ln in body[:top]:
        print(f"  {ln}")
    if not body:
        print(r.err[-1500:])


def phases(path: Path, runs: int, cwd: Path) -> None:
    """The phases of one check in one process (``PHASES``), medians of ``runs``."""
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        r = run([sys.executable, "-c", PHASES, str(path)], cwd)
        if r.code != 0:
            sys.exit(f"phases failed:\n{r.err[-2000:]}")
        for name, secs in json.loads(r.out).items():
            times.setdefault(name, []).append(secs)
    total = sum(statistics.median(v) for v in times.values())
    print(f"phases in one process (medians of {runs}; wall s, share):")
    for name, values in times.items():
        m = statistics.median(values)
        print(f"  {name:18} {m:7.3f}  {m / total:5.1%}")
    print(f"  {'sum':18} {total:7.3f}  (plus interpreter start, ~0.02 s)")


def header() -> None:
    import importlib.metadata as md

    versions = ", ".join(f"{p} {md.version(p)}" for p in ("orjson", "pydantic", "spacy", "networkx"))
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Python {sys.version.split()[0]}, {versions}; {os.cpu_count()} CPUs, load average {load}")


# -- commands -------------------------------------------------------------------------------------


def cmd_session(args: argparse.Namespace, folder: Path) -> None:
    path, said = session_input(folder, args.mb, args.entries, args.shell)
    print(said)
    size = path.stat().st_size / 2**20
    results = compare([path], args.runs, args.check_args, folder)
    targets = ("targets: wall <= 3x, peak RSS < 250 MB" if args.mb <= 100 else "target: peak RSS < 1 GB")
    report(results, size, targets)
    if args.phases:
        phases(path, args.runs, folder)
    if args.profile:
        profile([path], args.check_args, folder, args.top)


def cmd_corpus(args: argparse.Namespace, folder: Path) -> None:
    t0 = time.perf_counter()
    corpus = folder / f"corpus-{args.files}-seed{args.seed}"
    paths = generate_corpus(corpus, args.files, args.seed)
    sizes = sorted(p.stat().st_size for p in paths)
    total = sum(sizes) / 2**20
    print(f"corpus {corpus}: {len(paths)} sessions, {total:.0f} MiB, median {sizes[len(sizes) // 2] / 1024:.0f} KiB, "
          f"p99 {sizes[int(len(sizes) * 0.99)] / 2**20:.1f} MiB, largest {sizes[-1] / 2**20:.0f} MiB "
          f"({time.perf_counter() - t0:.1f} s)")
    results = compare([corpus], args.runs, args.check_args, folder)
    report(results, total, "one process over the whole folder")
    if args.profile:
        profile([corpus], args.check_args, folder, args.top)


def cmd_tiny(args: argparse.Namespace, folder: Path) -> None:
    print(f"input: {TINY.relative_to(ROOT)} ({TINY.stat().st_size / 1024:.0f} KiB)")
    results = compare([TINY], args.runs, args.check_args, folder)
    report(results, TINY.stat().st_size / 2**20, "start-up: interpreter, imports, rules, catalog")
    if args.importtime:
        r = run([sys.executable, "-X", "importtime", *check_argv([TINY], args.check_args)[1:]], folder)
        rows = []
        for ln in r.err.splitlines():
            if ln.startswith("import time:") and "|" in ln:
                _, cum, name = ln.split("|", 2)
                if cum.strip().isdigit():
                    rows.append((int(cum), name.rstrip()))
        print(f"python -X importtime, largest cumulative (top {args.top}):")
        for cum, name in sorted(rows, reverse=True)[: args.top]:
            print(f"  {cum / 1000:7.1f} ms {name}")
    if args.profile:
        profile([TINY], args.check_args, folder, args.top)


def main(argv: list[str] | None = None) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", type=Path, help="keep generated inputs here (and reuse them)")
    common.add_argument("--runs", type=int, default=5)
    common.add_argument("--profile", action="store_true", help="also profile one check run (pyinstrument)")
    common.add_argument("--top", type=int, default=25, help="lines of profile or import times to show")
    common.add_argument("--check-arg", dest="check_args", action="append", default=[],
                        help="extra argument for `analyzer check` (repeatable), e.g. --check-arg=--format=json")
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("session", parents=[common], help="one large session: check against the floor")
    s.add_argument("--mb", type=float, default=50.0)
    s.add_argument("--entries", type=int, help="default: 12,000 per 50 MB")
    s.add_argument("--shell", type=int, help="shell calls; default: 3,000 per 50 MB")
    s.add_argument("--phases", action="store_true", help="also time each phase of one check in one process")
    c = sub.add_parser("corpus", parents=[common], help="1,000 sessions in one check run against the floor")
    c.add_argument("--files", type=int, default=1000)
    c.add_argument("--seed", type=int, default=0)
    t = sub.add_parser("tiny", parents=[common], help="start-up cost: check on a small fixture")
    t.add_argument("--importtime", action="store_true", help="list the slowest imports")
    args = ap.parse_args(argv)
    header()
    dispatch({"session": cmd_session, "corpus": cmd_corpus, "tiny": cmd_tiny}, args, "analyzer-scale-")


def dispatch(commands: dict[str, Callable[[argparse.Namespace, Path], None]], args: argparse.Namespace,
             prefix: str) -> None:
    """Run the sub-command ``args.what`` in ``args.out`` (kept, inputs reused) or a temporary folder."""
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        commands[args.what](args, args.out.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            commands[args.what](args, Path(tmp))


if __name__ == "__main__":
    main()
