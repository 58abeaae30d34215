"""Start-up benchmark: what every ``analyzer check`` pays before and besides reading its session.

``check`` on the 8-event seed fixture (``fixtures/seeds/004-restart-sglang-systemd.session.yaml``:
two user messages that give instructions, so they are read with spaCy unless their readings are
kept), side by side in one run with the interpreter's own floor, each a whole process, run once
untimed and then ``--runs`` times interleaved; medians of CPU time (user + system, from
``os.wait4``), wall time and peak RSS.

    python bench/startup.py                  # floor, check cold, warm, on a new session and with the cache off
    python bench/startup.py --phases         # also: where one check's time goes, cold and warm
    python bench/startup.py --importtime     # also: the slowest imports of a warm check (python -X importtime)
    python bench/startup.py --profile        # also: a pyinstrument profile of one warm check
    python bench/startup.py --base fbc52f1   # also: check cold and warm with the code of that revision
    python bench/startup.py --head f0bdaf3 --base 8b348b5   # committed code on both sides, not the tree
    python bench/startup.py --head HEAD --base 0884fa8 --instructions   # also callgrind's count of each (load-proof)

Contenders: ``python -c pass`` (the interpreter), ``python -c "import pydantic, click, orjson"``
(the libraries every command needs), ``check`` **cold** (an empty cache folder for every run: the
first run on a machine, which builds the spaCy pipeline, reads every message with spaCy and writes
both caches), ``check`` **warm** (the pipeline and the message readings kept by an earlier run of
the same session: the postmortem loop's second and later calls), ``check`` on a **new session**
(every cache warm but the message readings: a session not checked before, whose messages are read
with spaCy from the kept pipeline), and ``check`` with the cache off
(``SESSION_ANALYZER_CACHE_DIR=``: a read-only home; nothing is read or written). The bytecode cache
is warm for all of them (an installed analyzer has its ``.pyc`` files). Targets (issue 18): ≤ 0.25 s
CPU and ≤ 80 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # bench/scale.py: the whole-process runner and the bytecode cache
from scale import Run

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"
TARGET_CPU, TARGET_RSS = 0.25, 80.0

PHASES = r"""
import gc, json, sys, time
clock = time.process_time
marks = [("interpreter", clock())]
def mark(name): marks.append((name, clock()))
collected = []
def on_gc(phase, info, t=[0.0]):
    if phase == "start": t[0] = time.perf_counter()
    else: collected.append(time.perf_counter() - t[0])
gc.callbacks.append(on_gc)
import analyzer.cli.check  # what `analyzer check` imports before it reads anything
from analyzer.ingest import load
from analyzer._memory import paused_gc
from analyzer.lifecycle.build import build_world
from analyzer.pipeline import Analysis, Analyzer
from analyzer.report import text
from analyzer.rules.engine import run_rules
mark("imports")
analyzer = Analyzer()
mark("rules and catalog")
with paused_gc():  # as check runs one session
    session = load(sys.argv[1]); mark("load")
    world = build_world(session, analyzer.catalog)  # reads the messages: kept readings, the gate or spaCy
    mark("world (spaCy imported)" if "spacy" in sys.modules else "world (no spaCy)")
    result = run_rules(world, analyzer.rules, known=set(analyzer.ruleset.rules)); mark("rules")
    text.render([Analysis(session, world, result.findings, result.suppressed, result.problems)])
    mark("text output")
gc.collect(0); mark("gc after the session")  # the young generation now holds all of the above
out = {name: t - marks[i][1] for i, (name, t) in enumerate(marks[1:])}
out["interpreter"] = marks[0][1]
out["gc passes"] = sum(collected)
print(json.dumps(out))
"""
"""One check's phases in one process, in CPU seconds; ``gc passes`` is the collector's share of them."""


COLD = "cold"
"""The cache setting that stands for an empty cache folder, new for every run."""
NEW = "new:"
"""Prefixes a warm cache folder's name: a copy of it without the readings of messages, new for
every run (a session not checked before: spaCy is imported from the kept pipeline, the messages
read with it; every other cache is warm)."""


def contenders(fixture: Path, base: tuple[str, Path] | None,
               head: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The processes to time; ``head``: the environment of ``check`` itself (``{}`` for the working
    tree, ``PYTHONPATH`` of an exported revision with ``--head``)."""
    py = sys.executable
    check = [py, "-m", "analyzer", "check", str(fixture)]
    found = {
        "python -c pass": ([py, "-c", "pass"], {}),
        "import pydantic, click, orjson": ([py, "-c", "import pydantic, click, orjson"], {}),
        "check, cold": (check, {**head, "SESSION_ANALYZER_CACHE_DIR": COLD}),
        "check, warm": (check, head),
        "check, new session": (check, {**head, "SESSION_ANALYZER_CACHE_DIR": NEW + "cache"}),
        "check, cache off": (check, {**head, "SESSION_ANALYZER_CACHE_DIR": ""}),
    }
    if base is not None:
        found[f"check at {base[0]}, cold"] = (check, {"PYTHONPATH": str(base[1]), "SESSION_ANALYZER_CACHE_DIR": COLD})
        found[f"check at {base[0]}, warm"] = (check, {"PYTHONPATH": str(base[1]),
                                                       "SESSION_ANALYZER_CACHE_DIR": "base-cache"})
        found[f"check at {base[0]}, new session"] = (check, {"PYTHONPATH": str(base[1]),
                                                              "SESSION_ANALYZER_CACHE_DIR": NEW + "base-cache"})
    return found


def export(rev: str, into: Path) -> Path:
    """The code of git revision ``rev`` in ``into`` (``git archive``; the checkout is not touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True, check=True)
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def measure(fixture: Path, runs: int, folder: Path, base: tuple[str, Path] | None = None,
            head: dict[str, str] | None = None) -> dict[str, list[Run]]:
    todo = contenders(fixture, base, head or {})
    results: dict[str, list[Run]] = {name: [] for name in todo}
    for i in range(runs + 1):  # the first round is untimed: bytecode cache, page cache, the warm caches
        for k, (name, (argv, env)) in enumerate(todo.items()):
            setting = env.get("SESSION_ANALYZER_CACHE_DIR", "cache")
            if setting == COLD:
                setting = f"cold-{i}-{k}"  # a folder no run has used
            elif setting.startswith(NEW):  # the warm folder without the readings of its messages
                warm, setting = setting.removeprefix(NEW), f"new-{i}-{k}"
                shutil.copytree(folder / warm, folder / setting,
                                ignore=shutil.ignore_patterns("readings-*"), dirs_exist_ok=True)
            cache = str(folder / setting) if setting else ""
            r = scale.run(argv, folder, {**env, "SESSION_ANALYZER_CACHE_DIR": cache})
            if r.code not in (0, 1):
                sys.exit(f"{name} failed with exit code {r.code}:\n{r.err[-2000:]}")
            if i:
                results[name].append(r)
    return results


def table(results: dict[str, list[Run]]) -> None:
    print(f"{'':32} {'CPU s':>7} {'(min-max)':>13} {'wall s':>7} {'peak RSS MB':>12}")
    for name, rs in results.items():
        cpu = [r.cpu for r in rs]
        print(f"{name:32} {statistics.median(cpu):7.3f} {min(cpu):6.3f}-{max(cpu):<6.3f} "
              f"{statistics.median(r.wall for r in rs):7.3f} {statistics.median(r.rss_mb for r in rs):12.1f}")

    def med(name: str, attr: str) -> float:
        return float(statistics.median(getattr(r, attr) for r in results[name]))

    floor = med("python -c pass", "cpu")
    print(f"check / python -c pass by CPU: cold {med('check, cold', 'cpu') / floor:.1f}x, "
          f"warm {med('check, warm', 'cpu') / floor:.1f}x (medians of {len(results['check, warm'])} runs)")
    for state in ("cold", "warm", "new session"):
        based = [n for n in results if n.startswith("check at ") and n.endswith(f", {state}")]
        if based:
            print(f"{state}: now / {based[0].removesuffix(f', {state}')}: CPU "
                  f"{med(f'check, {state}', 'cpu') / med(based[0], 'cpu'):.2f}x, peak RSS "
                  f"{med(f'check, {state}', 'rss_mb') / med(based[0], 'rss_mb'):.2f}x")
    for state in ("cold", "warm", "new session", "cache off"):
        c, m = med(f"check, {state}", "cpu"), med(f"check, {state}", "rss_mb")
        print(f"targets, {state}: CPU <= {TARGET_CPU} s: {'met' if c <= TARGET_CPU else 'NOT met'} ({c:.3f}); "
              f"peak RSS <= {TARGET_RSS:.0f} MB: {'met' if m <= TARGET_RSS else 'NOT met'} ({m:.1f})")


def phases(fixture: Path, runs: int, folder: Path, head: dict[str, str] | None = None, label: str = "",
           warm: str = "cache") -> None:
    """Where one check's CPU goes, cold and warm (``PHASES``); ``head``: the environment of the code
    to run (a revision's ``PYTHONPATH``), ``label`` says which in the output, ``warm`` is the cache
    folder ``measure`` warmed for that code."""
    for state in ("cold", "warm"):
        times: dict[str, list[float]] = {}
        for i in range(runs):
            cache = folder / (f"phases-cold-{warm}-{i}" if state == "cold" else warm)
            r = scale.run([sys.executable, "-c", PHASES, str(fixture)], folder,
                          {**(head or {}), "SESSION_ANALYZER_CACHE_DIR": str(cache)})
            if r.code != 0:
                sys.exit(f"phases failed:\n{r.err[-2000:]}")
            for name, secs in json.loads(r.out).items():
                times.setdefault(name, []).append(secs)
        print(f"phases of one check {label or 'of the tree'} in one process (CPU s, medians of {runs}; {state}):")
        for name, values in times.items():
            print(f"  {name:24} {statistics.median(values):7.3f}")
        total = sum(statistics.median(v) for n, v in times.items() if n != "gc passes")
        print(f"  {'sum':24} {total:7.3f}  (then click's parsing, output and exit)")


def instructions(fixture: Path, folder: Path, sides: dict[str, dict[str, str]]) -> None:
    """Instructions of one warm ``check`` per side (``valgrind --tool=callgrind``, ~50x slower): a
    count the load of a shared machine does not move, unlike CPU time (it does not see what the
    collector's and the teardown's cache misses cost, only their instructions). ``sides``: label ->
    the environment of its code; each runs warm, from the cache folder ``measure`` filled for it."""
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed")
        return
    counts: dict[str, int] = {}
    for label, env in sides.items():
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                sys.executable, "-m", "analyzer", "check", str(fixture)]
        r = scale.run(argv, folder, env)
        found = [ln for ln in r.err.splitlines() if "Collected :" in ln]
        if r.code not in (0, 1) or not found:
            sys.exit(f"callgrind of {label} failed:\n{r.err[-2000:]}")
        counts[label] = int(found[-1].rsplit(":", 1)[1])
    first = next(iter(counts.values()))
    print("instructions of one warm check (callgrind):")
    for label, n in counts.items():
        print(f"  {label:32} {n / 1e6:9.1f} M  {n / first:6.3f}x")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", type=Path, help="work folder (bytecode and pipeline cache); default: a temporary one")
    ap.add_argument("--phases", action="store_true", help="also time each phase of one check in one process")
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    ap.add_argument("--profile", action="store_true", help="also profile one check (pyinstrument)")
    ap.add_argument("--instructions", action="store_true",
                    help="also count one warm check's instructions, and the base's (valgrind callgrind)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--base", metavar="REV", help="also time check with the code of this git revision, side by side")
    ap.add_argument("--head", metavar="REV", help="time check with the code of this revision, not the working tree")
    args = ap.parse_args(argv)
    scale.header()
    fixture = args.fixture.resolve()

    def go(_: argparse.Namespace, folder: Path) -> None:
        print(f"input: {fixture.relative_to(ROOT) if fixture.is_relative_to(ROOT) else fixture}")
        base = (args.base, export(args.base, folder / "base")) if args.base else None
        head = {"PYTHONPATH": str(export(args.head, folder / "head"))} if args.head else {}
        table(measure(fixture, args.runs, folder, base, head))
        if args.phases:
            phases(fixture, args.runs, folder, head, f"at {args.head}" if args.head else "")
            if base is not None:
                phases(fixture, args.runs, folder, {"PYTHONPATH": str(base[1])}, f"at {base[0]}", "base-cache")
        if args.instructions:
            sides = {f"check at {args.head}" if args.head else "check": {**head, "SESSION_ANALYZER_CACHE_DIR":
                                                                         str(folder / "cache")}}
            if base is not None:
                sides[f"check at {base[0]}"] = {"PYTHONPATH": str(base[1]),
                                                 "SESSION_ANALYZER_CACHE_DIR": str(folder / "base-cache")}
            instructions(fixture, folder, sides)
        os.environ["SESSION_ANALYZER_CACHE_DIR"] = str(folder / "cache")  # the warm check's folder
        os.environ.update(head)  # the same code for the import list and the profile
        if args.importtime:
            scale.importtime([fixture], [], folder, args.top)
        if args.profile:
            scale.profile([fixture], [], folder, args.top)

    args.what = "startup"
    scale.dispatch({"startup": go}, args, "analyzer-startup-")


if __name__ == "__main__":
    main()
