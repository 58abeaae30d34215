"""Scale benchmark of ``analyzer report`` (against the peers' HTML conversion) and ``analyzer batch``
(``--jobs 1`` against ``--jobs 2``, and a re-run with nothing changed).

Every measurement is a whole process, as a user runs it: wall time from here, CPU time (user +
system) and peak RSS from ``os.wait4``'s rusage of the child. Each command runs once untimed
(bytecode cache, page cache), then ``--runs`` times interleaved; the tables show medians.

    python bench/report_batch.py report --peers-venv /tmp/peers   # 50 MB session, analyzer vs peers
    python bench/report_batch.py report --peers-venv /tmp/peers --session A.jsonl --session B.jsonl  # real ones
    python bench/report_batch.py report --peers-venv /tmp/peers --base 3809450  # and the analyzer at a revision
    python bench/report_batch.py batch                            # 1,000 sessions, jobs 1 vs 2, re-run
    python bench/report_batch.py batch --formats none --runs 1    # quicker: no per-session reports

Peers (``pip install claude-code-log claude-code-transcripts 'agent-trajviz[charts]'`` in their
own venv, given by ``--peers-venv``; those not installed there are skipped, and said so):

* ``claude-code-log FILE -o OUT.html --no-cache``: one HTML file;
* ``claude-code-transcripts json FILE -o DIR``: ``index.html`` and one page per 5 prompts;
* ``agent-trajviz --report FILE -o OUT.html``: a standalone HTML report (plotly charts).

Peers run with ``HOME`` pointed at an empty folder under the work folder, so no cache or
setting of the user's is read or written.

Inputs come from ``bench/scale.py``'s generators (the 50 MB session; the 1,000-session corpus
with a real archive's size profile) and go to a temporary folder, or to ``--out DIR``, where they
are kept and reused. ``--profile`` runs the analyzer command once more under pyinstrument.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # bench/scale.py: generators and the whole-process runner
from scale import Run

PEERS = ("claude-code-log", "claude-code-transcripts", "agent-trajviz")
CACHE = "SESSION_ANALYZER_CACHE_DIR"


@dataclass
class Contender:
    """One command to time: ``argv(out)`` writes its output at ``out``, which is cleared before each run."""

    name: str
    argv: Callable[[Path], list[str]]
    out: Path


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size if path.exists() else 0


def clear(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def timed(c: Contender, cwd: Path, keep_out: bool = False) -> Run:
    if not keep_out:
        clear(c.out)
    r = scale.run(c.argv(c.out), cwd)
    if r.code != 0:
        sys.exit(f"{c.name} failed with exit code {r.code}:\n{r.err[-2000:]}")
    return r


def table(results: dict[str, list[Run]], sizes: dict[str, int]) -> dict[str, float]:
    """Print medians; return the median wall time of each."""
    print(f"{'':26} {'wall s':>8} {'(min-max)':>13} {'CPU s':>7} {'peak RSS MB':>12} {'output MB':>10}")
    walls: dict[str, float] = {}
    for name, rs in results.items():
        w = [r.wall for r in rs]
        walls[name] = statistics.median(w)
        print(f"{name:26} {walls[name]:8.2f} {min(w):6.2f}-{max(w):<6.2f} "
              f"{statistics.median(r.cpu for r in rs):7.2f} {statistics.median(r.rss_mb for r in rs):12.1f} "
              f"{sizes.get(name, 0) / 2**20:10.1f}")
    return walls


def profile(argv: list[str], cwd: Path, top: int, env: dict[str, str] | None = None) -> None:
    """``argv`` (``python -m analyzer …``) once under pyinstrument; the functions with the most own time.
    The command line is given to ``main`` (``-c``): run as ``-m analyzer`` a one-shot command ends
    its process at once, before pyinstrument writes its report."""
    if argv[1:3] == ["-m", "analyzer"]:
        argv = [argv[0], "-c", "import sys; from analyzer.cli import main; main(sys.argv[1:])", *argv[3:]]
    r = scale.run([sys.executable, "-m", "pyinstrument", "-r", "text", "-p", "flat", "-p", "flat_time=self",
                   *argv[1:]], cwd, env)
    lines = r.out.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("Program:")), 0)
    body = [ln for ln in lines[start + 1:] if ln.strip()]
    print(f"profile (pyinstrument, own time, top {top}):")
    for ln in body[:top]:
        print(f"  {ln}")
    if not body:
        print(r.err[-1500:])


# -- report ---------------------------------------------------------------------------------------


def peer_contenders(venv: Path | None, session: Path, folder: Path) -> list[Contender]:
    if venv is None:
        print("no --peers-venv: peers skipped")
        return []
    home = folder / "peer-home"
    home.mkdir(exist_ok=True)

    def exe(name: str) -> list[str]:
        return ["env", f"HOME={home}", str(venv / "bin" / name)]

    found: list[Contender] = []
    for name in PEERS:
        if not (venv / "bin" / name).is_file():
            print(f"{name}: not installed in {venv}, skipped")
            continue
        if name == "claude-code-log":
            found.append(Contender(name, lambda o: [*exe("claude-code-log"), str(session), "-o", str(o),
                                                    "--no-cache"], folder / "out-ccl.html"))
        elif name == "claude-code-transcripts":
            found.append(Contender(name, lambda o: [*exe("claude-code-transcripts"), "json", str(session),
                                                    "-o", str(o)], folder / "out-cct"))
        else:
            found.append(Contender(name, lambda o: [*exe("agent-trajviz"), "--report", str(session),
                                                    "-o", str(o)], folder / "out-trajviz.html"))
    return found


def cmd_report(args: argparse.Namespace, folder: Path) -> None:
    if args.session:  # real sessions, each against the peers in its own table
        for i, given in enumerate(args.session):
            print(f"\n{given} ({given.stat().st_size / 2**20:.2f} MiB):")
            report_one(args, given.resolve(), folder / f"session-{i}")
        return
    path, said = scale.session_input(folder, args.mb, None, None)
    print(said)
    report_one(args, path, folder)


def report_one(args: argparse.Namespace, path: Path, folder: Path) -> None:
    """``analyzer report`` on ``path`` against the peers installed, interleaved."""
    folder.mkdir(parents=True, exist_ok=True)
    trees = folder.parent if args.session else folder
    # each analyzer its own cache folder (unless --env sets one): the spaCy pipeline and the message
    # readings are kept for one version of the pattern data, so two trees whose data differ, or
    # anyone's runs of another tree meanwhile, would replace each other's and make every run cold
    head = {CACHE: str(trees / "cache-head"), **(scale.head_env(args, trees) or {})}
    lead = ["env", *(f"{k}={v}" for k, v in head.items())]
    analyzer = Contender("analyzer report", lambda o: [*lead, sys.executable, "-m", "analyzer", "report", str(path),
                                                        "-o", str(o)], folder / "out-analyzer.html")
    contenders = [analyzer, *peer_contenders(args.peers_venv, path, folder)]
    base = scale.base_tree(args, trees)
    if base is not None:  # the same command with the code of --base, side by side
        settings = [f"{k}={v}" for k, v in {CACHE: str(trees / "cache-base"), **scale.analyzer_env(args)}.items()]
        contenders.insert(1, Contender(f"analyzer report {base[0]}", lambda o: [
            "env", *settings, f"PYTHONPATH={base[1]}", sys.executable, "-m", "analyzer", "report", str(path), "-o",
            str(o)],
            folder / "out-analyzer-base.html"))
    for c in list(contenders):
        try:
            timed(c, folder)
        except SystemExit as e:  # a peer that cannot read the file is reported, not fatal
            if c is analyzer:
                raise
            print(f"{c.name}: failed on the warm-up run, skipped: {str(e)[-300:]}")
            contenders.remove(c)
    results: dict[str, list[Run]] = {c.name: [] for c in contenders}
    for _ in range(args.runs):
        for c in contenders:
            results[c.name].append(timed(c, folder))
    walls = table(results, {c.name: size_of(c.out) for c in contenders})
    cpu = {n: statistics.median(r.cpu for r in rs) for n, rs in results.items()}
    if base is not None:
        then = f"analyzer report {base[0]}"
        print(f"{then} / analyzer report = {walls[then] / walls[analyzer.name]:.2f}x by wall, "
              f"{cpu[then] / cpu[analyzer.name]:.2f}x by CPU")
    peers = {n: w for n, w in walls.items() if not n.startswith(analyzer.name)}
    if peers:
        fastest = min(peers, key=lambda n: peers[n])
        target = "target > 1x for claude-code-transcripts" if args.session else "target >= 3x"
        print(f"fastest peer: {fastest}; {fastest} / analyzer report = {peers[fastest] / walls[analyzer.name]:.2f}x "
              f"by wall, {cpu[fastest] / cpu[analyzer.name]:.2f}x by CPU ({target}; medians of {args.runs} runs)")
    if args.profile:
        profile(analyzer.argv(analyzer.out)[len(lead):], folder, args.top, head)


# -- batch ----------------------------------------------------------------------------------------


def cmd_batch(args: argparse.Namespace, folder: Path) -> None:
    t0 = time.perf_counter()
    corpus = folder / f"corpus-{args.files}-seed{args.seed}"
    paths = scale.generate_corpus(corpus, args.files, args.seed)
    total = sum(p.stat().st_size for p in paths) / 2**20
    print(f"corpus {corpus}: {len(paths)} sessions, {total:.0f} MiB ({time.perf_counter() - t0:.1f} s)")
    for fmt in args.formats:
        def batch(jobs: int, fmt: str = fmt) -> Contender:
            return Contender(f"--jobs {jobs} --format-reports {fmt}",
                             lambda o: [sys.executable, "-m", "analyzer", "batch", str(corpus), "-o", str(o),
                                        "--jobs", str(jobs), "--format-reports", fmt],
                             folder / f"batch-{fmt}-j{jobs}")

        one, two = batch(1), batch(2)
        rerun = Contender(f"re-run (--jobs 2, {fmt})", two.argv, two.out)
        scale.run(one.argv(one.out), folder)  # bytecode and page cache; its output is cleared below
        results: dict[str, list[Run]] = {one.name: [], two.name: [], rerun.name: []}
        for _ in range(args.runs):
            results[one.name].append(timed(one, folder))
            results[two.name].append(timed(two, folder))
            results[rerun.name].append(timed(rerun, folder, keep_out=True))
        print(f"\nanalyzer batch over {len(paths)} sessions, --format-reports {fmt}:")
        walls = table(results, {one.name: size_of(one.out), two.name: size_of(two.out)})
        cpu = {name: statistics.median(r.cpu for r in rs) for name, rs in results.items()}
        print(f"speed-up jobs 1 -> 2: {walls[one.name] / walls[two.name]:.2f}x (target >= 1.8x); "
              f"re-run / first run (jobs 2): {walls[rerun.name] / walls[two.name] * 100:.1f} % of the wall time, "
              f"{cpu[rerun.name] / cpu[two.name] * 100:.1f} % of the CPU time (target < 5 %); "
              f"medians of {args.runs} runs")
        if args.profile:
            clear(one.out)
            profile(one.argv(one.out), folder, args.top)


def main(argv: list[str] | None = None) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", type=Path, help="keep generated inputs here (and reuse them)")
    common.add_argument("--runs", type=int, default=3)
    common.add_argument("--profile", action="store_true", help="also profile the analyzer once (pyinstrument)")
    common.add_argument("--top", type=int, default=25, help="lines of profile to show")
    common.add_argument("--base", metavar="REV", help="report: also time the analyzer at this git revision")
    common.add_argument("--head", metavar="REV", help="report: the analyzer at this revision, not the working tree")
    common.add_argument("--env", action="append", metavar="NAME=VALUE",
                        help="report: set for every analyzer run (repeatable); SESSION_ANALYZER_CACHE_DIR= runs cold")
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("report", parents=[common], help="analyzer report against the peers on one large session")
    r.add_argument("--mb", type=float, default=50.0)
    r.add_argument("--peers-venv", type=Path, help="venv holding the peers (e.g. /tmp/peers)")
    r.add_argument("--session", type=Path, action="append",
                   help="a real Claude Code session to measure instead of the generated one (repeatable)")
    b = sub.add_parser("batch", parents=[common], help="analyzer batch: jobs 1 vs 2, and a re-run")
    b.add_argument("--files", type=int, default=1000)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--formats", nargs="+", choices=("none", "html"), default=["none", "html"],
                   help="--format-reports values to measure")
    args = ap.parse_args(argv)
    scale.header()
    scale.dispatch({"report": cmd_report, "batch": cmd_batch}, args, "analyzer-report-batch-")


if __name__ == "__main__":
    main()
