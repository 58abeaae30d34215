"""tree-sitter + shim against mvdan/sh (``shfmt --to-json``) as the oracle: the effective argv of
every command at every depth must agree. Catches grammar regressions when tree-sitter-bash is
upgraded (shell-semantics §4, last paragraph)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzer.events import ToolEvent
from analyzer.ingest import IngestError, load
from analyzer.shell import _levels, _treesitter
from analyzer.shell.model import ShellScript
from analyzer.shell.parse import clear_caches, parse
from tests.conftest import FIXTURES

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "appendix_a.yaml").read_text())["cases"]
VALID = [c["command"] for c in CASES if c["valid"]]


def argv_set(script: ShellScript) -> list[tuple[int, str | None, tuple[str, ...]]]:
    return sorted((c.depth, c.host, tuple(c.effective_argv)) for c in script.commands)


def _shell_commands(paths: list[Path]) -> list[str]:
    out: list[str] = []
    for p in paths:
        try:
            session = load(str(p))
        except IngestError:
            continue
        out.extend(e.command for e in session.events if isinstance(e, ToolEvent) and e.command)
    return list(dict.fromkeys(out))


@contextmanager
def _oracle() -> Iterator[None]:
    """Every level goes to mvdan/sh: tree-sitter's self-check is made to flag everything."""
    real = _treesitter.parse

    def flagged(text: str) -> _treesitter.TsResult:
        result = real(text)
        result.problems.append("differential test: use the oracle")
        return result

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_levels._treesitter, "parse", flagged)
        clear_caches()
        try:
            yield
        finally:
            clear_caches()


def _compare(texts: list[str]) -> None:
    clear_caches()
    ours = {t: parse(t) for t in texts}
    with _oracle():
        theirs = {t: parse(t) for t in texts}
    mismatches = []
    for t in texts:
        assert theirs[t].parser.startswith("shfmt") or theirs[t].status != "ok", theirs[t].parser
        if ours[t].status == "ok" and theirs[t].status == "ok" and argv_set(ours[t]) != argv_set(theirs[t]):
            mismatches.append((t, argv_set(ours[t]), argv_set(theirs[t])))
    assert not mismatches, mismatches[:3]


def test_appendix_a_valid_commands_agree_with_mvdan_sh(need_shfmt: None) -> None:
    _compare(VALID)


def test_seed_fixture_commands_agree_with_mvdan_sh(need_shfmt: None) -> None:
    texts = _shell_commands(sorted((FIXTURES / "seeds").glob("*.session.yaml")))
    assert len(texts) > 20
    _compare(texts)


@pytest.mark.corpus
def test_corpus_commands_agree_with_mvdan_sh(corpus: Path, need_shfmt: None) -> None:
    texts = _shell_commands(sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix != ".md"))
    assert texts
    _compare(texts)
