"""The real-world benchmark: the built-in rules on the labelled public sessions of ../shared/corpus.

Runs ``analyzer check --format json`` over every file ``labels.yaml`` names (in ``--jobs``
processes), scores the findings against the labels (``analyzer.rules.scoring``) and prints, per
rule and overall, true positives, false positives, misses, tolerated and unscored findings,
precision and recall; then every false positive and every miss with its file, anchor, the finding's
message or the label's note. ``--json`` prints the same as one document for machines.

    python bench/realworld.py                      # the table, then every FP and miss
    python bench/realworld.py --rule duplicate-launch --verbose
    python bench/realworld.py --json > score.json
    python bench/realworld.py --write-baseline     # after an improvement: raise the committed baseline

The baseline (``bench/realworld_baseline.json``) is what ``tests/rules/test_corpus.py`` holds the
pack to: precision and recall may not drop below it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from analyzer.rules.scoring import (  # noqa: E402
    FileLabels,
    Observed,
    Score,
    Tally,
    load_labels,
    score_check_document,
)

CORPUS = ROOT.parent / "shared" / "corpus"
BASELINE = ROOT / "bench" / "realworld_baseline.json"


def check_json(paths: list[Path], jobs: int) -> dict[str, Any]:
    """``analyzer check --format json`` over ``paths``, split into ``jobs`` processes by size."""
    chunks: list[list[Path]] = [[] for _ in range(max(1, min(jobs, len(paths))))]
    sizes = [0] * len(chunks)
    for p in sorted(paths, key=lambda p: -p.stat().st_size):  # largest first onto the lightest chunk
        i = sizes.index(min(sizes))
        chunks[i].append(p)
        sizes[i] += p.stat().st_size

    def run(chunk: list[Path]) -> dict[str, Any]:
        cmd = [sys.executable, "-m", "analyzer", "check", "--format", "json", *map(str, chunk)]
        # run from an empty folder: the built-in pack as shipped, no project config found upwards
        with tempfile.TemporaryDirectory() as cwd:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, check=False,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
        try:
            doc: dict[str, Any] = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise SystemExit(f"realworld: check exited {proc.returncode} without a JSON document:\n"
                             f"{proc.stderr[-2000:]}") from None
        return doc

    with ThreadPoolExecutor(len(chunks)) as pool:
        docs = list(pool.map(run, [c for c in chunks if c]))
    return {"sessions": [s for d in docs for s in d.get("sessions", [])],
            "errors": [e for d in docs for e in d.get("errors", [])]}


def collect(corpus: Path, labels: list[FileLabels], jobs: int) -> tuple[Score, float]:
    present = [corpus / fl.file for fl in labels if (corpus / fl.file).exists()]
    started = time.perf_counter()
    doc = check_json(present, jobs)
    seconds = time.perf_counter() - started
    sc = score_check_document(labels, doc, corpus)
    for fs in sc.files:
        if not (corpus / fs.labels.file).exists():
            fs.error = "file absent"
    return sc, seconds


# -------------------------------------------------------------------------------------- printing

def _ratio(v: float | None) -> str:
    return "  -  " if v is None else f"{v:5.3f}"


def _row(name: str, t: Tally) -> str:
    return (f"{name:<22} {t.tp:>4} {t.fp:>4} {t.missed:>5} {t.tolerated:>5} {t.unscored:>5}   "
            f"{_ratio(t.precision)}  {_ratio(t.recall)}")


def _clip(text: str, width: int, verbose: bool, indent: str) -> str:
    text = " ".join(text.split())
    if verbose:
        return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent)
    room = width - len(indent)
    return indent + (text if len(text) <= room else text[: room - 1] + "…")


def print_report(sc: Score, seconds: float, rule: str | None, file_part: str | None, verbose: bool,
                 baseline: dict[str, Any] | None) -> None:
    width = min(shutil.get_terminal_size((110, 24)).columns, 140)
    files = [fs for fs in sc.files if not file_part or file_part in fs.labels.file]
    shown = Score(files)
    print(f"realworld: {len(files)} labelled files, check took {seconds:.1f} s")
    print(f"{'rule':<22} {'TP':>4} {'FP':>4} {'miss':>5} {'tol':>5} {'unsc':>5}   {'prec':>5}  {'rec':>5}")
    for name in shown.rules():
        if rule is None or name == rule:
            print(_row(name, shown.tally(name)))
    total = shown.tally(rule)
    print(_row("ALL" if rule is None else f"ALL ({rule})", total))
    if baseline and rule is None and not file_part:
        print(f"{'baseline':<22} {baseline['tp']:>4} {baseline['fp']:>4} {baseline['missed']:>5}"
              f" {'':>5} {'':>5}   {_ratio(baseline['precision'])}  {_ratio(baseline['recall'])}")
    noisy = shown.noisy_negatives()
    negatives = [fs for fs in files if fs.labels.negative]
    print(f"negative sessions with any finding: {len(noisy)} of {len(negatives)}")
    broken = [fs for fs in files if fs.error]
    if broken:
        print(f"\nnot analyzed cleanly ({len(broken)}):")
        for fs in broken:
            print(_clip(f"{fs.labels.file}: {fs.error}", width, verbose, "  "))

    def keep(r: str) -> bool:
        return rule is None or r == rule

    fps = [(fs.labels.file, [(f.line, f.where, f.rule, f.message)
                             for f in sorted((f for f in fs.false if keep(f.rule)), key=lambda f: f.line or 0)])
           for fs in files]
    _listing("false positives", fps, width, verbose)
    misses = [(fs.labels.file, [(m.line, m.ref or "?", m.rule, m.note) for m in fs.missed if keep(m.rule)])
              for fs in files]
    _listing("misses", misses, width, verbose)


def _listing(title: str, groups: list[tuple[str, list[tuple[int | None, str, str, str]]]], width: int,
             verbose: bool) -> None:
    """One block of the report: per file, one line per finding or label (line, rule, text)."""
    groups = [(file, rows) for file, rows in groups if rows]
    if not groups:
        return
    print(f"\n{title} ({sum(len(rows) for _, rows in groups)}):")
    for file, rows in groups:
        print(f"  {file} ({len(rows)})")
        for line, where, rule, text in rows:
            print(_clip(f"{f'L{line}' if line else where:>6} {rule}: {text}", width, verbose, "    "))


def as_json(sc: Score, seconds: float) -> dict[str, Any]:
    def tally(t: Tally) -> dict[str, Any]:
        return {"tp": t.tp, "fp": t.fp, "missed": t.missed, "tolerated": t.tolerated,
                "unscored": t.unscored, "precision": t.precision, "recall": t.recall}

    def obs(f: Observed) -> dict[str, Any]:
        return {"rule": f.rule, "line": f.line, "ref": f.ref, "index": f.index, "message": f.message}

    return {
        "seconds": round(seconds, 2),
        "overall": tally(sc.tally()),
        "rules": {r: tally(sc.tally(r)) for r in sc.rules()},
        "negatives_with_findings": [fs.labels.file for fs in sc.noisy_negatives()],
        "files": [{
            "file": fs.labels.file, "error": fs.error,
            "true": [{"rule": lb.rule, "line": lb.line, "ref": lb.ref, "findings": [obs(f) for f in hits]}
                     for lb, hits in fs.true],
            "false": [obs(f) for f in fs.false],
            "missed": [{"rule": m.rule, "line": m.line, "ref": m.ref, "note": m.note} for m in fs.missed],
            "tolerated": [obs(f) for f in fs.tolerated],
            "unscored": [obs(f) for f in fs.unscored],
        } for fs in sc.files],
    }


def baseline_of(sc: Score) -> dict[str, Any]:
    """The overall figures, rounded down: the committed baseline must never exceed what was measured."""
    t = sc.tally()

    def floor4(v: float | None) -> float | None:
        return None if v is None else math.floor(v * 10_000) / 10_000

    return {"tp": t.tp, "fp": t.fp, "missed": t.missed, "precision": floor4(t.precision),
            "recall": floor4(t.recall)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus folder (default: %(default)s)")
    ap.add_argument("--labels", type=Path, default=None, help="labels file (default: CORPUS/labels.yaml)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="check processes (default: cores)")
    ap.add_argument("--rule", help="show only this rule")
    ap.add_argument("--file", dest="file_part", help="show only files whose path contains this")
    ap.add_argument("--verbose", "-v", action="store_true", help="print messages and notes whole")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    ap.add_argument("--write-baseline", action="store_true", help=f"write the overall figures to {BASELINE.name}")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"realworld: no corpus at {args.corpus}", file=sys.stderr)
        return 2
    labels = load_labels(args.labels or args.corpus / "labels.yaml")
    sc, seconds = collect(args.corpus, labels, args.jobs)
    baseline = json.loads(BASELINE.read_text()) if BASELINE.exists() else None
    if args.json:
        print(json.dumps(as_json(sc, seconds), indent=1))
    else:
        print_report(sc, seconds, args.rule, args.file_part, args.verbose, baseline)
    if args.write_baseline:
        BASELINE.write_text(json.dumps(baseline_of(sc), indent=1) + "\n")
        print(f"wrote {BASELINE.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
