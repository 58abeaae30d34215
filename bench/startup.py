"""Start-up benchmark: what every ``analyzer check`` pays before and besides reading its session.

``check`` on the 8-event seed fixture (``fixtures/seeds/004-restart-sglang-systemd.session.yaml``:
two user messages, so spaCy is imported and its pipeline made), side by side in one run with the
interpreter's own floor, each a whole process, run once untimed and then ``--runs`` times
interleaved; medians of CPU time (user + system, from ``os.wait4``), wall time and peak RSS.

    python bench/startup.py                  # floor, check with the pipeline cache warm, and with it off
    python bench/startup.py --phases         # also: where one check's time goes, phase by phase
    python bench/startup.py --importtime     # also: the slowest imports (python -X importtime)
    python bench/startup.py --profile        # also: a pyinstrument profile of one check
    python bench/startup.py --base fbc52f1   # also: check with the code of that revision, side by side

Contenders: ``python -c pass`` (the interpreter), ``python -c "import pydantic, click, orjson"``
(the libraries every command needs), ``check`` with the pipeline cache warm (a user's second and
later runs), and ``check`` with the cache off (``SESSION_ANALYZER_CACHE_DIR=``: what the first run
pays, or a read-only home). Targets (issue 18): ≤ 0.25 s CPU and ≤ 80 MB peak RSS.
"""

from __future__ import annotations

import argparse
import json
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
    from analyzer.lifecycle._spacy import import_spacy
    import_spacy(); mark("spaCy import")
    from analyzer.lifecycle.language import pipeline
    pipeline.pipeline(); mark("spaCy pipeline")
    world = build_world(session, analyzer.catalog); mark("world")
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


def contenders(fixture: Path, base: tuple[str, Path] | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    py = sys.executable
    check = [py, "-m", "analyzer", "check", str(fixture)]
    found = {
        "python -c pass": ([py, "-c", "pass"], {}),
        "import pydantic, click, orjson": ([py, "-c", "import pydantic, click, orjson"], {}),
        "check, cache warm": (check, {}),
        "check, cache off": (check, {"SESSION_ANALYZER_CACHE_DIR": ""}),
    }
    if base is not None:
        found[f"check at {base[0]}"] = (check, {"PYTHONPATH": str(base[1])})
    return found


def export(rev: str, into: Path) -> Path:
    """The code of git revision ``rev`` in ``into`` (``git archive``; the checkout is not touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], capture_output=True, check=True)
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def measure(fixture: Path, runs: int, folder: Path, base: tuple[str, Path] | None = None) -> dict[str, list[Run]]:
    cache = folder / "cache"
    todo = contenders(fixture, base)
    results: dict[str, list[Run]] = {name: [] for name in todo}
    for i in range(runs + 1):  # the first round is untimed: bytecode cache, page cache, pipeline cache
        for name, (argv, env) in todo.items():
            r = scale.run(argv, folder, {"SESSION_ANALYZER_CACHE_DIR": str(cache), **env})
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
    warm, off = results["check, cache warm"], results["check, cache off"]
    floor = statistics.median(r.cpu for r in results["python -c pass"])
    w_cpu, w_rss = statistics.median(r.cpu for r in warm), statistics.median(r.rss_mb for r in warm)
    print(f"check (cache warm) / python -c pass: CPU {w_cpu / floor:.1f}x; cache warm / off: CPU "
          f"{w_cpu / statistics.median(r.cpu for r in off):.2f}x, peak RSS "
          f"{w_rss / statistics.median(r.rss_mb for r in off):.2f}x (medians of {len(warm)} runs)")
    print(f"targets: CPU <= {TARGET_CPU} s: {'met' if w_cpu <= TARGET_CPU else 'NOT met'} ({w_cpu:.3f}); "
          f"peak RSS <= {TARGET_RSS:.0f} MB: {'met' if w_rss <= TARGET_RSS else 'NOT met'} ({w_rss:.1f})")


def phases(fixture: Path, runs: int, folder: Path) -> None:
    times: dict[str, list[float]] = {}
    for _ in range(runs):
        r = scale.run([sys.executable, "-c", PHASES, str(fixture)], folder,
                      {"SESSION_ANALYZER_CACHE_DIR": str(folder / "cache")})
        if r.code != 0:
            sys.exit(f"phases failed:\n{r.err[-2000:]}")
        for name, secs in json.loads(r.out).items():
            times.setdefault(name, []).append(secs)
    print(f"phases of one check in one process (CPU s, medians of {runs}; cache warm):")
    for name, values in times.items():
        print(f"  {name:22} {statistics.median(values):7.3f}")
    total = sum(statistics.median(v) for n, v in times.items() if n != "gc passes")
    print(f"  {'sum':22} {total:7.3f}  (then click's parsing, output and exit)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--fixture", type=Path, default=FIXTURE)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", type=Path, help="work folder (bytecode and pipeline cache); default: a temporary one")
    ap.add_argument("--phases", action="store_true", help="also time each phase of one check in one process")
    ap.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    ap.add_argument("--profile", action="store_true", help="also profile one check (pyinstrument)")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--base", metavar="REV", help="also time check with the code of this git revision, side by side")
    args = ap.parse_args(argv)
    scale.header()
    fixture = args.fixture.resolve()

    def go(_: argparse.Namespace, folder: Path) -> None:
        print(f"input: {fixture.relative_to(ROOT) if fixture.is_relative_to(ROOT) else fixture}")
        base = (args.base, export(args.base, folder / "base")) if args.base else None
        table(measure(fixture, args.runs, folder, base))
        if args.phases:
            phases(fixture, args.runs, folder)
        if args.importtime:
            scale.importtime([fixture], [], folder, args.top)
        if args.profile:
            scale.profile([fixture], [], folder, args.top)

    args.what = "startup"
    scale.dispatch({"startup": go}, args, "analyzer-startup-")


if __name__ == "__main__":
    main()
