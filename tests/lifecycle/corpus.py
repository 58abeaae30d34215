"""The world of a corpus session, built once per test run and shared by the corpus-marked world
tests (``tests/lifecycle/test_corpus_*.py``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import World


@cache
def _world(path: str) -> World:
    return build_world(load(path))


def world_of(corpus: Path, name: str) -> World:
    """The world of ``corpus / name`` (treat it as read-only: other tests share it)."""
    return _world(str(corpus / name))
