"""The lifecycle stage: the world of server instances a session's events build.

What rule authors use, importable from here (``from analyzer.lifecycle import World, Kill``):

- ``World``: the query API (``kills()``, ``launches()``, ``ready_signals()``, ``failures()``,
  ``instructions_in_force()``, ``state_before()``/``state_after()``, ``user_refers_to()``,
  ``facts_of()``/``facts_about()``/``facts_at()``), ``Instance``, ``StateChange``;
- the facts, each pointing at the event it was read from: ``Launch``, ``Probe``, ``Ready``,
  ``Failure``, ``Kill`` (with its ``Victim``s), ``Instruction``, ``Correction``,
  ``ModelDisagreement``; ``Fact`` is their union, ``State`` the instance states;
- ``build_world(session)`` and the server ``Catalog``.

The names resolve on first use, so importing one submodule does not load the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from analyzer._lazy import lazy_exports

if TYPE_CHECKING:  # `X as X`: re-exported for type checkers too
    from analyzer.lifecycle.build import build_world as build_world
    from analyzer.lifecycle.catalog import Catalog as Catalog
    from analyzer.lifecycle.facts import Correction as Correction
    from analyzer.lifecycle.facts import Fact as Fact
    from analyzer.lifecycle.facts import Failure as Failure
    from analyzer.lifecycle.facts import Instruction as Instruction
    from analyzer.lifecycle.facts import Kill as Kill
    from analyzer.lifecycle.facts import Launch as Launch
    from analyzer.lifecycle.facts import ModelDisagreement as ModelDisagreement
    from analyzer.lifecycle.facts import Probe as Probe
    from analyzer.lifecycle.facts import Ready as Ready
    from analyzer.lifecycle.facts import State as State
    from analyzer.lifecycle.facts import Victim as Victim
    from analyzer.lifecycle.world import Instance as Instance
    from analyzer.lifecycle.world import StateChange as StateChange
    from analyzer.lifecycle.world import World as World

_EXPORTS = {
    **dict.fromkeys(("World", "Instance", "StateChange"), "analyzer.lifecycle.world"),
    "build_world": "analyzer.lifecycle.build",
    **dict.fromkeys(("Launch", "Probe", "Ready", "Failure", "Kill", "Victim", "Instruction", "Correction",
                     "ModelDisagreement", "Fact", "State"), "analyzer.lifecycle.facts"),
    "Catalog": "analyzer.lifecycle.catalog",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = [
    "Catalog", "Correction", "Fact", "Failure", "Instance", "Instruction", "Kill", "Launch", "ModelDisagreement",
    "Probe", "Ready", "State", "StateChange", "Victim", "World", "build_world",
]
