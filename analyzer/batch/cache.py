"""``OUT/.cache.json``: each session's result, reused while the session's files, the analyzer and
the rules are unchanged."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from analyzer.batch.job import SessionResult
from analyzer.batch.signature import Stat, stat_of

CACHE_NAME = ".cache.json"
_LAYOUT = 1
"""Bumped when the cache file's own shape changes."""


@dataclass
class Cache:
    path: Path
    fingerprint: str
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Session key → ``SessionResult.to_dict()``."""
    previous: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The entries of the last run, whatever its fingerprint (their report files, to clean up)."""
    carry: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Entries of sessions not looked at in this run, saved again as they were."""

    @classmethod
    def load(cls, out: Path, fingerprint: str) -> Cache:
        path = out / CACHE_NAME
        cache = cls(path, fingerprint)
        try:
            doc = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return cache
        if not isinstance(doc, dict) or doc.get("layout") != _LAYOUT or not isinstance(doc.get("entries"), dict):
            return cache
        cache.previous = doc["entries"]
        if doc.get("fingerprint") == fingerprint:
            cache.entries = dict(doc["entries"])
        return cache

    def fresh(self, key: str, stat: Callable[[str], Stat] = stat_of) -> SessionResult | None:
        """The cached result for ``key`` if none of the files it was read from changed (``stat``:
        how to stat them; URLs are looked up in the run's listing)."""
        entry = self.entries.get(key)
        if entry is None or entry.get("retry"):
            return None
        try:
            result = SessionResult.from_dict(entry)
        except TypeError:
            return None
        if result.main_stat is None or stat(result.abs_path) != result.main_stat:
            return None
        if any(stat(p) != (list(s) if s is not None else None) for p, s in result.deps.items()):
            return None
        for part in result.listed():  # a file's other sessions come from the cache with it
            part.cached = True
        return result

    def save(self, results: dict[str, SessionResult]) -> None:
        """Write the cache of this run (atomically: an interrupted write leaves the old one)."""
        entries: dict[str, dict[str, Any]] = {k: v for k, v in self.carry.items() if k not in results}
        for key, r in results.items():
            d = r.to_dict()
            d["cached"] = False
            entries[key] = d
        data = orjson.dumps({"layout": _LAYOUT, "fingerprint": self.fingerprint,
                             "entries": dict(sorted(entries.items()))})
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, self.path)
