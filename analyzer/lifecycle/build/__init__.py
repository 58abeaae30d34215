"""The lifecycle builder, split by concern: ``base`` (state and lookups), ``messages``,
``launches``, ``probes``, ``kills``, ``compose``, ``tasks``; ``builder`` puts the steps together.
``build_world`` is the stage's entry point; the query API it returns lives in ``world``, which
imports nothing of this package."""

from __future__ import annotations

from analyzer._memory import paused_gc
from analyzer.events import Session
from analyzer.lifecycle.build._util import _prefilter as prefilter
from analyzer.lifecycle.build.builder import Builder
from analyzer.lifecycle.catalog import Catalog, default_catalog
from analyzer.lifecycle.world import World

__all__ = ["Builder", "build_world", "prefilter"]


def build_world(session: Session, catalog: Catalog | None = None) -> World:
    """Rebuild what happened to every server in ``session``: its ``World``."""
    world = World(session=session, catalog=catalog or default_catalog())
    with paused_gc():
        Builder(world).run()
    return world
