"""Finding sessions under folders: every file or folder some format detects, minus the files a
parent session loads itself (Claude Code ``<session>/subagents/agent-*.jsonl``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from analyzer.ingest import FORMATS, IngestError, detect

_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".tox"})
_SKIP_SUFFIXES = frozenset({".py", ".pyc", ".md", ".txt", ".html", ".png", ".jpg", ".toml", ".cfg", ".lock"})


def _loaded_by_parent(path: Path) -> bool:
    return path.parent.name == "subagents" and path.name.startswith("agent-")


def _folder_format(path: Path) -> bool:
    """A folder that a format reads whole (opencode storage)."""
    return any(fmt.detect(path, b"") for fmt in FORMATS.values())


def discover(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every session under ``paths``. A file given by name is always yielded (loading it reports
    its error); files found by walking are yielded only when some format detects them."""
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            yield p
            continue
        if _folder_format(p):
            yield p
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            here = Path(root)
            if here != p and _folder_format(here):
                dirs[:] = []
                yield here
                continue
            for name in sorted(files):
                f = here / name
                if f.suffix in _SKIP_SUFFIXES or _loaded_by_parent(f) or name.startswith("."):
                    continue
                if f.name.endswith(".cases.yaml"):
                    continue  # rule cases hold many sessions; `analyzer rules test` runs them
                try:
                    detect(f)
                except IngestError:
                    continue
                yield f
