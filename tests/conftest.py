from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real third-party logs; tests using it skip when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    return CORPUS


@pytest.fixture
def memory_root() -> Iterator[str]:
    """A fresh folder of fsspec's ``memory://`` filesystem (one per process), removed afterwards."""
    fsspec = pytest.importorskip("fsspec")
    name = f"sessions-{uuid.uuid4().hex[:8]}"
    yield name
    fs = fsspec.filesystem("memory")
    if fs.exists(f"/{name}"):
        fs.rm(f"/{name}", recursive=True)


def put(root: str, rel: str, data: bytes) -> str:
    """Write ``data`` at ``memory://root/rel``; returns that URL."""
    import fsspec

    fsspec.filesystem("memory").pipe(f"/{root}/{rel}", data)
    return f"memory://{root}/{rel}"
