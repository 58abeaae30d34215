"""The format registry, lazy: a format's module is imported when it is used, not to be looked up.

Every format module costs its import (module-level regexes, dataclasses, tables: 2-25 ms each,
~0.15 s for all of them), and ``detect()`` used to import all of them to ask each in turn. Each
entry (``FormatSpec``) names its module and states what the module's own ``detect()`` needs to
see before it can claim anything: whether it reads folders, which byte the head can open with,
which bytes the head must hold. Detection asks, in the registry's order, only the formats a path
and head pass those tests for, so a ``.session.yaml`` imports the fixture reader alone and a
Claude Code JSONL the Claude Code reader alone; the answer is the one asking every format gives,
because a spec only ever rules out a format whose ``detect()`` would say no
(``tests/ingest/test_lazy_registry.py`` holds every spec to that on the fixtures, the corpus and
mutated heads).

File names are not among the tests on purpose: formats decide from content (``FormatModule``),
so a Claude Code log saved as ``notes.txt`` is still one, and a name cannot rule a format out.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from analyzer._lazy import LazyRegistry
from analyzer.ingest.base import FormatModule


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """What the registry knows of one format without importing it. Each test is a necessary
    condition of the module's ``detect()`` saying yes; leaving one out (the default) only costs
    an import, while one that is too strict would change which format a file is read as."""

    module: str
    """The format module's dotted path."""
    folders: bool = False
    """Whether ``detect()`` can claim a folder (it sees ``head`` b"" then); False: files only."""
    leads: bytes | None = None
    """Bytes the head can open with, past ASCII whitespace (``head.lstrip()[:1]``, as the
    modules test it: a BOM is a lead of its own); None: any."""
    not_leads: bytes = b""
    """Bytes the head cannot open with (the fixture reader declines JSON)."""
    needle: bytes | None = None
    """Bytes every head it claims contains (a literal the module's own test requires)."""

    def may_claim(self, folder: bool, head: bytes, lead: bytes) -> bool:
        """False only when the module's ``detect()`` is sure to return None for this input
        (``folder``: the path is a folder; ``lead``: ``head.lstrip()[:1]``)."""
        if folder:
            return self.folders
        if self.leads is not None and (not lead or lead not in self.leads):
            return False
        if lead and lead in self.not_leads:
            return False
        return self.needle is None or self.needle in head


class Registry(LazyRegistry[FormatSpec, FormatModule]):
    """Format name -> its module, in detection order. Looking a format up imports its module;
    listing names does not. ``claim()`` is detection itself, importing only the formats whose
    spec allows the input."""

    def _load(self, spec: FormatSpec) -> FormatModule:
        return cast(FormatModule, importlib.import_module(spec.module))

    def candidates(self, path: Path, head: bytes) -> Iterator[FormatModule]:
        """In detection order, the formats that may claim ``path`` with ``head`` (see
        ``FormatModule.detect``), each imported only when reached."""
        folder = path.is_dir()
        lead = head.lstrip()[:1]
        for name, spec in self._specs.items():
            if spec.may_claim(folder, head, lead):
                yield self[name]

    def claim(self, path: Path, head: bytes) -> tuple[FormatModule, str] | None:
        """The first format whose ``detect()`` claims ``path``, with its reason; None if none."""
        for fmt in self.candidates(path, head):
            reason = fmt.detect(path, head)
            if reason:
                return fmt, reason
        return None
