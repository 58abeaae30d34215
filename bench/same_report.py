"""Behaviour-preserving check for the HTML report: ``analyzer report`` before and after a change.

``bench/same_output.py`` holds ``check --format json`` to the byte; this does the same for the
page ``analyzer report`` writes, which ``check`` never renders: the code of a git revision
(``git archive`` into a temporary folder, first on ``sys.path``) against the working tree, one
session at a time, page against page.

    python bench/same_report.py --base HEAD                      # fixtures' sessions and the corpus's
    python bench/same_report.py --base HEAD --only analyzer/report/_env.py reports/x.html.j2
    python bench/same_report.py --base HEAD -- fixtures/claude-code big.jsonl

``--only PATH…`` compares the revision against the revision with just those working-tree files laid
over it, so other people's unfinished edits in a shared checkout do not count as a difference.
Sessions are the files given (folders are searched for ``*.jsonl``, ``*.json``, ``*.yaml`` and
``*.cast``), by default every file under ``fixtures/`` and ``../shared/corpus/`` that ``report``
reads; a file both sides refuse alike is skipped. Exit 0 when every page is byte-identical, 1 when
one differs (the first differing lines are shown).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from same_output import CORPUS, ROOT, export

_RUNNER = "import sys; sys.path.insert(0, sys.argv.pop(1)); from analyzer.cli import main; main()"
_SUFFIXES = (".jsonl", ".json", ".yaml", ".cast")


def sessions(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for given in map(Path, paths):
        if given.is_dir():
            out += sorted(p for p in given.rglob("*") if p.is_file() and p.name.endswith(_SUFFIXES))
        else:
            out.append(given)
    return out


def page(tree: Path, session: Path, out: Path, cache: Path) -> tuple[int, bytes]:
    """(exit code, the page) of ``report`` on ``session`` with the code of ``tree``."""
    env = {**os.environ, "SESSION_ANALYZER_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", _RUNNER, str(tree), "report", str(session), "-o", str(out)],
                          cwd=tree, capture_output=True, check=False, env=env)
    return done.returncode, out.read_bytes() if out.is_file() else done.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--base", required=True, help="git revision whose pages are the reference")
    ap.add_argument("--only", nargs="+", metavar="PATH", help="lay just these working-tree files over --base")
    ap.add_argument("paths", nargs="*", help="sessions or folders (default: fixtures/ and the corpus)")
    args = ap.parse_args()
    found = sessions(args.paths or [str(ROOT / "fixtures"), *([str(CORPUS)] if CORPUS.is_dir() else [])])
    with tempfile.TemporaryDirectory(prefix="same_report-") as tmp:
        work = Path(tmp)
        base = export(args.base, work / "base")
        if args.only:
            head = export(args.base, work / "head")
            for rel in args.only:
                (head / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, head / rel)
        else:
            head = ROOT
        differing, compared = [], 0

        def both(i: int, s: Path) -> tuple[Path, tuple[int, bytes], tuple[int, bytes]]:
            return (s, page(base, s, work / f"a{i}.html", work / "cache-a"),
                    page(head, s, work / f"b{i}.html", work / "cache-b"))

        with ThreadPoolExecutor(2) as pool:
            for s, (ca, a), (cb, b) in pool.map(lambda x: both(*x), enumerate(found)):
                if ca != 0 and cb != 0 and ca == cb:
                    continue  # not a session either side reports on
                compared += 1
                if (ca, a) != (cb, b):
                    differing.append(s)
                    print(f"--- {s} (exit {ca} -> {cb})")
                    lines = difflib.unified_diff(a.decode(errors="replace").splitlines(),
                                                 b.decode(errors="replace").splitlines(), n=0, lineterm="")
                    for ln in list(lines)[2:12]:
                        print("   ", ln[:200])
    if differing:
        print(f"same_report: {len(differing)} of {compared} pages differ")
        return 1
    print(f"same_report: identical ({compared} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
