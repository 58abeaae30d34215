"""Helpers for the shell parser tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyzer.shell import _shfmt
from analyzer.shell.model import ShellScript
from analyzer.shell.parse import clear_caches


def sets(script: ShellScript) -> dict[str, list[str]]:
    """The four ground-truth sets of shell-semantics section 1, derived from a parse.

    names: every effective program name; nested: names at depth >= 1 (reached through a nested
    script or an exec argv); subst: names inside a substitution; bg: names whose own script put
    them in the background with `&` (not a detaching launcher, not an inherited background).
    """
    return {
        "names": sorted({c.name for c in script.commands}),
        "nested": sorted({c.name for c in script.commands if c.depth >= 1}),
        "subst": sorted({c.name for c in script.commands if "substitution" in c.contexts}),
        "bg": sorted({c.name for c in script.commands if c.background_by == "&"}),
    }


@pytest.fixture
def without_shfmt(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Parse as if mvdan/sh (shfmt) were not installed."""
    monkeypatch.setattr(_shfmt, "binary", lambda: None)
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def need_shfmt() -> None:
    if not _shfmt.available():
        pytest.skip("shfmt (PyPI shfmt-py) is not installed")
