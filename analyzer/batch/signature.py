"""What decides whether a cached result still holds: file stats of a session and everything it
read, and one fingerprint of the analyzer code, rules and configuration."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import orjson

import analyzer
from analyzer.pipeline import Analyzer

Stat = list[int] | None
"""``[size, mtime_ns]`` of a file or folder, None when it does not exist."""


def stat_of(path: str | Path) -> Stat:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return as_stat(st)


def as_stat(st: os.stat_result) -> list[int]:
    """A stat the OS gave, in the cache's form."""
    return [st.st_size, st.st_mtime_ns]


def dependencies(main: str, sources: Iterable[str], fmt: str | None, member: str | None) -> dict[str, Stat]:
    """Stats of what a session read besides its main file, and of the folders they are in (a new
    sub-agent file or storage message changes its folder's mtime). The main file's own folder is
    left out: it changes whenever another session is written beside it."""
    main_path = Path(main)
    deps: dict[str, Stat] = {}
    folders: set[Path] = set()
    for src in sources:
        p = Path(src)
        if p == main_path:
            continue
        deps[str(p)] = stat_of(p)
        folders.add(p.parent)
    if main_path.suffix == ".jsonl" and fmt in (None, "claude-code"):
        folders.add(main_path.with_suffix("") / "subagents")  # sub-agent files appear later
    if member is not None:
        deps[f"{main}-wal"] = stat_of(f"{main}-wal")  # SQLite writes land here before the database
    folders.discard(main_path.parent)
    for folder in folders:
        deps[str(folder)] = stat_of(folder)
    return dict(sorted(deps.items()))


def _tree_stats(root: Path, suffixes: tuple[str, ...]) -> list[tuple[str, int, int]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(suffixes):
                p = Path(dirpath) / name
                st = p.stat()
                out.append((p.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return out


def code_stamp(templates: Path | None) -> dict[str, object]:
    """The installed analyzer: version, and stats of its code and report templates (so an edited
    checkout counts as another version)."""
    package = Path(analyzer.__file__).resolve().parent
    return {
        "version": analyzer.__version__,
        "code": _tree_stats(package, (".py", ".yaml", ".j2", ".json")),
        "templates": _tree_stats(templates, (".j2", ".css", ".js")) if templates and templates.is_dir() else [],
    }


def engine_signature(engine: Analyzer, templates: Path | None, extra: dict[str, object]) -> str:
    """One hash of everything besides the input that findings and reports depend on: the analyzer
    (``code_stamp``), the selected rules' source, the configuration and ``extra`` (command-line
    options)."""
    rules = []
    for rule in sorted(engine.rules, key=lambda r: r.name):
        loaded = engine.ruleset.rules.get(rule.name)
        source = b""
        if loaded is not None:
            try:
                source = Path(loaded.file).read_bytes()
            except OSError:
                source = loaded.file.encode()
        rules.append((rule.name, hashlib.sha256(source).hexdigest()))
    doc = {
        "analyzer": code_stamp(templates),
        "rules": rules,
        "config": engine.config.model_dump(mode="json", exclude={"source"}),
        "extra": extra,
    }
    return hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()
