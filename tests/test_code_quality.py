"""The project's own rules as tests: ruff clean, mypy strict on analyzer/, import layers kept."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=600)


def tool(name: str) -> str:
    found = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(found).exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_is_clean() -> None:
    r = run(tool("ruff"), "check", "analyzer", "tests", "rules", "bench", "fixtures/seeds/make_jsonl.py")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_is_clean_on_the_package() -> None:
    r = run(tool("mypy"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_pipeline_layers_are_kept() -> None:
    r = run(tool("lint-imports"))
    assert r.returncode == 0, r.stdout + r.stderr
