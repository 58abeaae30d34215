"""session-analyzer: postmortems of coding-agent sessions that run servers.

The public API is small; everything else is private modules:

- ``load(path)`` -> ``Session`` (ingest)
- ``analyze(path_or_session)`` -> ``Analysis`` (session, ``World``, ``Finding``s)
- ``Rule``, ``Severity``, ``Finding`` for rule authors
- event types: ``UserEvent``, ``AssistantEvent``, ``ToolEvent``, ``SystemEvent``, ``Event``
"""

from __future__ import annotations

from analyzer._memory import paused_gc

with paused_gc():  # typing, dataclasses, inspect and the rest live as long as the process: 16 passes for nothing
    from typing import TYPE_CHECKING

    from analyzer import _codecache
    from analyzer._lazy import lazy_exports

    _codecache.install()  # before any module of ours makes a dataclass

__version__ = "0.1.0"

if TYPE_CHECKING:
    from analyzer.events import (
        AssistantEvent,
        Diagnostic,
        Event,
        Session,
        SystemEvent,
        ToolEvent,
        UserEvent,
    )
    from analyzer.ingest import load
    from analyzer.lifecycle.world import World
    from analyzer.pipeline import Analysis, analyze
    from analyzer.rules import Finding, Rule, Severity

# Lazy re-exports: `import analyzer` must not pay for spaCy or tree-sitter.
_EXPORTS = {
    "load": "analyzer.ingest",
    "Session": "analyzer.events",
    "Event": "analyzer.events",
    "UserEvent": "analyzer.events",
    "AssistantEvent": "analyzer.events",
    "ToolEvent": "analyzer.events",
    "SystemEvent": "analyzer.events",
    "Diagnostic": "analyzer.events",
    "analyze": "analyzer.pipeline",
    "Analysis": "analyzer.pipeline",
    "World": "analyzer.lifecycle.world",
    "Rule": "analyzer.rules",
    "Finding": "analyzer.rules",
    "Severity": "analyzer.rules",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "Analysis",
    "AssistantEvent",
    "Diagnostic",
    "Event",
    "Finding",
    "Rule",
    "Session",
    "Severity",
    "SystemEvent",
    "ToolEvent",
    "UserEvent",
    "World",
    "__version__",
    "analyze",
    "load",
]
