"""Behaviour-preserving check: ``analyzer check --format json`` before and after a change.

A refactor must not move a finding, a diagnostic or a byte of the JSON document. This runs
``analyzer check --format json`` over the bundled fixtures and the real corpus twice, once with
the code of a git revision (``git archive`` into a temporary folder, put first on ``sys.path``)
and once with the working tree, and compares the documents session by session, then byte for byte.

    python bench/same_output.py --base HEAD~3          # that revision against the working tree
    python bench/same_output.py --base A --head B      # two revisions
    python bench/same_output.py --base HEAD -- fixtures/seeds   # only these paths

Exit 0 when the outputs are byte-identical, 1 when they differ (the differing sessions are listed
with the first lines of a diff), 2 on a usage error. Each side runs from its own tree, so its own
``pyproject.toml`` configuration, rule pack and catalog apply.
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# Runs the CLI of the tree named by argv[1] with the rest of argv as its arguments.
_RUNNER = "import sys; sys.path.insert(0, sys.argv.pop(1)); from analyzer.cli import main; main()"


def export(rev: str, into: Path) -> Path:
    """The files of ``rev`` in ``into`` (no .git: nothing of the checkout is touched)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev],
                             capture_output=True, check=False)
    if archive.returncode:
        sys.exit(f"same_output: cannot read revision {rev!r}: {archive.stderr.decode(errors='replace').strip()}")
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def check(tree: Path, paths: list[str]) -> bytes:
    """The JSON document ``check`` prints for ``paths`` with the code of ``tree``."""
    cmd = [sys.executable, "-c", _RUNNER, str(tree), "check", "--format", "json", *paths]
    done = subprocess.run(cmd, cwd=tree, capture_output=True, check=False)
    if done.returncode not in (0, 1, 2) or not done.stdout.strip():
        sys.exit(f"same_output: check failed in {tree} (exit {done.returncode}):\n"
                 + done.stderr.decode(errors="replace")[-2000:])
    return done.stdout


def sessions(doc: bytes) -> dict[str, Any]:
    data = json.loads(doc)
    out = {f"{s.get('path')}#{s.get('session_id')}": s for s in data.get("sessions", [])}
    out["<errors>"] = data.get("errors")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="git revision whose output is the reference")
    ap.add_argument("--head", help="git revision to compare (default: the working tree)")
    ap.add_argument("paths", nargs="*", help="sessions or folders (default: fixtures/ and the corpus)")
    args = ap.parse_args()
    paths = [str(Path(p).resolve()) for p in args.paths] or [str(ROOT / "fixtures")]
    if not args.paths and CORPUS.is_dir():
        paths.append(str(CORPUS))
    with tempfile.TemporaryDirectory(prefix="same_output-") as tmp:
        base = export(args.base, Path(tmp) / "base")
        head = export(args.head, Path(tmp) / "head") if args.head else ROOT
        with ThreadPoolExecutor(2) as pool:
            before_f, after_f = pool.submit(check, base, paths), pool.submit(check, head, paths)
            before, after = before_f.result(), after_f.result()
        shutil.rmtree(base, ignore_errors=True)
    if before == after:
        print(f"same_output: identical ({len(after):,} bytes, {len(sessions(after)) - 1} sessions)")
        return 0
    old, new = sessions(before), sessions(after)
    differing = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    print(f"same_output: {len(differing)} of {len(new) - 1} sessions differ")
    for key in differing:
        a = json.dumps(old.get(key), indent=1, sort_keys=True).splitlines()
        b = json.dumps(new.get(key), indent=1, sort_keys=True).splitlines()
        print(f"--- {key}")
        for line in list(difflib.unified_diff(a, b, "base", "head", n=1, lineterm=""))[2:40]:
            print("   ", line)
    if not differing:
        print("same_output: the sessions are equal but the bytes are not (key order or formatting)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
