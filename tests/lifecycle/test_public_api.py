"""The lifecycle API rule authors write against: public names, each documented."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import analyzer.lifecycle as lifecycle
from analyzer.lifecycle import Instance, World

RULES = Path(__file__).resolve().parents[2] / "rules"


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in lifecycle.__all__:
        obj = getattr(lifecycle, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name


def test_every_world_and_instance_query_has_a_docstring() -> None:
    for cls in (World, Instance):
        public = [n for n, v in vars(cls).items() if not n.startswith("_") and (callable(v) or isinstance(v, property))]
        assert public
        undocumented = [n for n in public if not inspect.getdoc(getattr(cls, n))]
        assert undocumented == [], f"{cls.__name__}: {undocumented}"


def test_the_built_in_rules_import_only_the_public_lifecycle_api() -> None:
    for rule in RULES.glob("*.py"):
        text = rule.read_text()
        assert "analyzer.lifecycle." not in text, rule.name  # `from analyzer.lifecycle import …`


def test_importing_the_package_loads_no_submodule() -> None:
    code = "import sys, analyzer.lifecycle; print(sorted(m for m in sys.modules if m.startswith('analyzer.lifecycle.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
