"""The Cline, superopen and SpecStory detectors claim their own files and no other format's."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import FORMATS, detect
from analyzer.ingest.base import read_head
from tests.ingest._new_formats import MINE, every_file, format_of


@pytest.mark.parametrize("path", every_file(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_new_detector_claims_only_its_own_files(path: Path) -> None:
    head = read_head(path)
    fmt = format_of(path)
    assert [name for name in MINE if FORMATS[name].detect(path, head)] == ([fmt] if fmt else [])
    if fmt is not None:
        assert fmt == detect(path)[0].NAME  # and no format earlier in the registry takes it first
