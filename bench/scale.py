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
    python bench/scale.py linear                    # phases at 5, 50 and 200 MB: exit 1 if one grows superlinearly
    python bench/scale.py session --base 3809450    # also check with the code of that revision, side by side

Inputs are generated into a temporary folder, or into ``--out DIR``, where they are kept and
reused by later runs with the same parameters. Sessions come from ``bench/ingest.py``'s
generator (the fixture sessions repeated with fresh ids, shell results padded with build logs);
``--entries`` and ``--shell`` default to 12,000 and 3,000 per 50 MB. ``--profile`` runs ``check``
once more under pyinstrument (the ``bench`` extra) and prints the functions with the most own
time.

``--phases`` also times the phases of one check (imports, load, spaCy, world, rules, output) in
one process. ``linear`` times them (and the HTML report's page) in CPU seconds at each of
``--sizes`` and fails loudly, exit 1, when a phase grows more than ``LINEAR_SLACK`` times faster
than the bytes between the two largest sizes. ``generate_corpus()`` is importable: ``from scale import generate_corpus`` (with ``bench/`` on
``sys.path``), for the batch benchmark.
"""

from __future__ import annotations

import argparse
import itertools
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
clock = time.process_time if "cpu" in sys.argv[2:] else time.perf_counter
t0 = clock()
import analyzer.cli.check  # what `analyzer check` imports before it reads anything
from analyzer.ingest import load
from analyzer._memory import paused_gc
from analyzer.lifecycle import language
from analyzer.lifecycle.build import build_world
from analyzer.pipeline import Analysis, Analyzer
from analyzer.report import text
from analyzer.rules.engine import run_rules
t1 = clock()
analyzer = Analyzer()
t2 = clock()
with paused_gc():  # as check runs one session
    session = load(sys.argv[1])
    t3 = clock()
    language._pipeline()  # spaCy: imported and built when the first message is read
    t4 = clock()
    world = build_world(session, analyzer.catalog)
    t5 = clock()
    result = run_rules(world, analyzer.rules, known=set(analyzer.ruleset.rules))
    t6 = clock()
    analysis = Analysis(session, world, result.findings, result.suppressed, result.problems)
    text.render([analysis])
    t7 = clock()
times = {"imports": t1 - t0, "rules and catalog": t2 - t1, "load": t3 - t2, "spaCy": t4 - t3,
         "world": t5 - t4, "rules": t6 - t5, "text output": t7 - t6}
if "html" in sys.argv[2:]:  # the report's page, as `analyzer report` renders it (consumed, not written)
    from analyzer.report.html import iter_html
    for _ in iter_html(analysis):
        pass
    times["html report"] = clock() - t7
print(json.dumps(times))
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


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Run:
    """One child process (``env`` added to ``child_env``): wall time from here, CPU time and peak
    RSS from its rusage."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, env={**child_env(cwd), **(env or {})})
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


def export(rev: str, into: Path) -> Path:
    """The code of git revision ``rev`` in ``into`` (``git archive``; the checkout is not touched),
    for a side-by-side run with ``PYTHONPATH`` pointing there. Reused when already there."""
    if not (into / "analyzer").is_dir():
        into.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True,
                                 check=True)
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def base_tree(args: argparse.Namespace, folder: Path, which: str = "base") -> tuple[str, Path] | None:
    """``(name, tree)`` of ``--base REV`` (or ``--head REV``), exported under ``folder``; None
    without the option."""
    rev = getattr(args, which, None)
    if not rev:
        return None
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True,
                         text=True, check=True).stdout.strip()
    return f"at {sha}", export(rev, folder / f"tree-{sha}")


def head_env(args: argparse.Namespace, folder: Path) -> dict[str, str] | None:
    """``PYTHONPATH`` for the code of ``--head REV`` (committed code only, not a shared checkout's
    unfinished edits), and the ``--env`` settings; None: the working tree as it is."""
    head = base_tree(args, folder, "head")
    env = analyzer_env(args)
    return {**env, "PYTHONPATH": str(head[1])} if head is not None else env or None


def analyzer_env(args: argparse.Namespace) -> dict[str, str]:
    """``--env NAME=VALUE`` settings for every analyzer run (not the floor or the peers), e.g.
    ``SESSION_ANALYZER_CACHE_DIR=`` for a first run: no pipeline, readings or template cache."""
    return dict(item.partition("=")[::2] for item in getattr(args, "env", None) or [])


def compare(paths: list[Path], runs: int, extra: list[str], cwd: Path,
            base: tuple[str, Path] | None = None, head: dict[str, str] | None = None) -> dict[str, list[Run]]:
    """``runs`` interleaved runs of each, after one untimed run of each (it writes the bytecode
    cache and warms the page cache); with ``base``, also ``check`` with that tree's code; ``head``:
    the environment of ``check`` itself (``head_env``)."""
    todo: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "floor": (floor_argv(paths), None), "check": (check_argv(paths, extra), head)}
    if base is not None:
        todo[f"check {base[0]}"] = (check_argv(paths, extra), {**(head or {}), "PYTHONPATH": str(base[1])})
        # one cache folder per tree: the user's holds one spaCy pipeline and one readings store,
        # so two trees whose pattern data differ would replace each other's and both run cold
        for name, folder in (("check", "cache-head"), (f"check {base[0]}", "cache-base")):
            argv, env = todo[name]
            if "SESSION_ANALYZER_CACHE_DIR" not in (env or {}):
                todo[name] = (argv, {**(env or {}), "SESSION_ANALYZER_CACHE_DIR": str(cwd / folder)})
    for argv, env in todo.values():
        run(argv, cwd, env)
    results: dict[str, list[Run]] = {name: [] for name in todo}
    for _ in range(runs):
        for name, (argv, env) in todo.items():
            r = run(argv, cwd, env)
            if r.code not in (0, 1):
                sys.exit(f"{name} failed with exit code {r.code}:\n{r.err[-2000:]}")
            results[name].append(r)
    return results


def report(results: dict[str, list[Run]], megabytes: float, targets: str) -> None:
    med: dict[str, dict[str, float]] = {}
    width = max(8, *map(len, results))
    print(f"{'':{width}} {'wall s':>8} {'(min-max)':>13} {'CPU s':>7} {'MB/s':>7} {'peak RSS MB':>12} {'(min-max)':>13}")
    for name, rs in results.items():
        walls, cpus, rss = [r.wall for r in rs], [r.cpu for r in rs], [r.rss_mb for r in rs]
        med[name] = {"wall": statistics.median(walls), "cpu": statistics.median(cpus), "rss": statistics.median(rss)}
        m = med[name]
        print(f"{name:{width}} {m['wall']:8.3f} {min(walls):6.2f}-{max(walls):<6.2f} {m['cpu']:7.3f} "
              f"{megabytes / m['wall']:7.1f} {m['rss']:12.1f} {min(rss):6.0f}-{max(rss):<6.0f}")
    f = med["floor"]
    for name in (n for n in med if n != "floor"):
        c = med[name]
        print(f"ratio {name}/floor: wall {c['wall'] / f['wall']:.2f}x, CPU {c['cpu'] / f['cpu']:.2f}x, "
              f"peak RSS {c['rss'] / f['rss']:.2f}x  (medians of {len(results[name])} runs; {targets})")
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


def importtime(paths: list[Path], extra: list[str], cwd: Path, top: int) -> None:
    """``check`` once under ``python -X importtime``: the imports with the largest cumulative time."""
    r = run([sys.executable, "-X", "importtime", *check_argv(paths, extra)[1:]], cwd)
    rows = []
    for ln in r.err.splitlines():
        if ln.startswith("import time:") and "|" in ln:
            _, cum, name = ln.split("|", 2)
            if cum.strip().isdigit():
                rows.append((int(cum), name.rstrip()))
    print(f"python -X importtime, largest cumulative (top {top}):")
    for cum, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cum / 1000:7.1f} ms {name}")


def phases(path: Path, runs: int, cwd: Path, base: tuple[str, Path] | None = None,
           head: dict[str, str] | None = None) -> None:
    """The phases of one check in one process (``PHASES``), medians of ``runs``; with ``base``, also
    with that tree's code (``head``: the environment of the first, ``head_env``)."""
    if base is not None:
        phases(path, runs, cwd, head=head)
        print(f"... and {base[0]}:")
    env = {**(head or {}), "PYTHONPATH": str(base[1])} if base is not None else head
    medians = phase_medians(path, runs, cwd, env=env)
    total = sum(medians.values())
    print(f"phases in one process (medians of {runs}; wall s, share):")
    for name, m in medians.items():
        print(f"  {name:18} {m:7.3f}  {m / total:5.1%}")
    print(f"  {'sum':18} {total:7.3f}  (plus interpreter start, ~0.02 s)")


def phase_medians(path: Path, runs: int, cwd: Path, *options: str,
                  env: dict[str, str] | None = None) -> dict[str, float]:
    """``PHASES`` on ``path``, ``runs`` times: the median seconds of each phase (wall, or CPU with
    the option ``cpu``; ``html`` adds the report's page)."""
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        r = run([sys.executable, "-c", PHASES, str(path), *options], cwd, env)
        if r.code != 0:
            sys.exit(f"phases failed on {path.name}:\n{r.err[-2000:]}")
        for name, secs in json.loads(r.out).items():
            times.setdefault(name, []).append(secs)
    return {name: statistics.median(v) for name, v in times.items()}


LINEAR_SLACK = 1.35
"""How much faster than the size a phase may grow between two sizes before it counts as
superlinear: timings on a shared machine move by ±30 %."""
LINEAR_FLOOR_S = 0.1
"""A phase that takes less than this at the larger size is not judged (noise, not growth)."""


def superlinear(small: dict[str, float], large: dict[str, float], size_ratio: float) -> list[str]:
    """The phases whose time grew more than ``size_ratio * LINEAR_SLACK`` times, each with its growth."""
    bad = []
    for name, t in large.items():
        before = small.get(name, 0.0)
        if t >= LINEAR_FLOOR_S and t > max(before, 1e-3) * size_ratio * LINEAR_SLACK:
            bad.append(f"{name}: {before:.3f} s -> {t:.3f} s ({t / max(before, 1e-3):.1f}x for {size_ratio:.1f}x the bytes)")
    return bad


def cmd_linear(args: argparse.Namespace, folder: Path) -> None:
    """The phases of one check (and its HTML report) at each size; exits 1, loudly, when a phase
    grows faster than linearly between the two largest sizes (by default 50 and 200 MB)."""
    sizes = sorted(args.sizes)
    inputs = []
    for mb in sizes:
        path, said = session_input(folder, mb, None, None)
        print(said)
        inputs.append(path)
    env = head_env(args, folder)
    phase_medians(inputs[0], 1, folder, "cpu", "html", env=env)  # untimed: bytecode, page and pipeline caches
    measured: list[tuple[float, dict[str, float]]] = []
    for path in inputs:
        measured.append((path.stat().st_size / 2**20, phase_medians(path, args.runs, folder, "cpu", "html", env=env)))
    names = list(measured[-1][1])
    print(f"phases of one check and its HTML report in one process (CPU s, medians of {args.runs}), "
          "then s per MiB:")
    print(f"{'phase':18}" + "".join(f"{mb:>9.0f} MB" for mb, _ in measured) + "".join(f"{mb:>8.0f} s/MB" for mb, _ in measured))
    for name in names:
        row = "".join(f"{t[name]:12.3f}" for _, t in measured)
        per = "".join(f"{t[name] / mb:13.4f}" for mb, t in measured)
        print(f"{name:18}{row}{per}")
    for (mb_a, a), (mb_b, b) in itertools.pairwise(measured):
        growth = ", ".join(f"{n} {b[n] / a[n]:.1f}x" for n in names if a.get(n, 0) > 1e-3 and b[n] >= LINEAR_FLOOR_S)
        print(f"growth {mb_a:.0f} -> {mb_b:.0f} MB ({mb_b / mb_a:.1f}x the bytes): {growth or '-'}")
    if len(measured) < 2:
        return
    (mb_a, a), (mb_b, b) = measured[-2:]
    failures = superlinear(a, b, mb_b / mb_a)
    print(f"linear from {mb_a:.0f} to {mb_b:.0f} MB in every phase: {'NO' if failures else 'yes'} (a phase may "
          f"grow at most {LINEAR_SLACK}x faster than the bytes; phases under {LINEAR_FLOOR_S} s are not judged)")
    if failures:
        print("\n".join(["", f"SUPERLINEAR GROWTH from {mb_a:.0f} to {mb_b:.0f} MB:", *(f"  {f}" for f in failures)]),
              file=sys.stderr)
        sys.exit(1)


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
    results = compare([path], args.runs, args.check_args, folder, base_tree(args, folder),
                      head_env(args, folder))
    targets = ("targets: wall <= 3x, peak RSS < 250 MB" if args.mb <= 100 else "target: peak RSS < 1 GB")
    report(results, size, targets)
    if args.phases:
        phases(path, args.runs, folder, base_tree(args, folder), head_env(args, folder))
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
    results = compare([corpus], args.runs, args.check_args, folder, base_tree(args, folder),
                      head_env(args, folder))
    report(results, total, "one process over the whole folder")
    if args.profile:
        profile([corpus], args.check_args, folder, args.top)


def cmd_tiny(args: argparse.Namespace, folder: Path) -> None:
    print(f"input: {TINY.relative_to(ROOT)} ({TINY.stat().st_size / 1024:.0f} KiB)")
    results = compare([TINY], args.runs, args.check_args, folder, base_tree(args, folder),
                      head_env(args, folder))
    report(results, TINY.stat().st_size / 2**20, "start-up: interpreter, imports, rules, catalog")
    if args.importtime:
        importtime([TINY], args.check_args, folder, args.top)
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
    common.add_argument("--base", metavar="REV", help="also time check with the code of this git revision, side by side")
    common.add_argument("--head", metavar="REV", help="time check with the code of this revision, not the working tree")
    common.add_argument("--env", action="append", metavar="NAME=VALUE",
                        help="set for every analyzer run (repeatable); SESSION_ANALYZER_CACHE_DIR= runs cold")
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
    lin = sub.add_parser("linear", parents=[common], help="phases at several sizes; exit 1 if one grows superlinearly")
    lin.add_argument("--sizes", type=float, nargs="+", default=[5.0, 50.0, 200.0], metavar="MB",
                     help="session sizes in MB; the two largest are judged (default: 5 50 200)")
    args = ap.parse_args(argv)
    header()
    dispatch({"session": cmd_session, "corpus": cmd_corpus, "tiny": cmd_tiny, "linear": cmd_linear}, args,
             "analyzer-scale-")


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
