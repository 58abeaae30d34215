"""The 85 commands of shell-semantics appendix A, with the note's ground truth."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzer.shell.parse import parse
from tests.shell.conftest import sets

CASES: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "appendix_a.yaml").read_text())["cases"]


def test_corpus_is_complete() -> None:
    assert len(CASES) == 85
    assert sum(c["valid"] for c in CASES) == 78


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_sets_match_ground_truth(case: dict[str, Any], need_shfmt: None) -> None:
    script = parse(case["command"])
    expected = {k: sorted(case[k]) for k in ("names", "nested", "subst", "bg")}
    assert sets(script) == expected, script.notes


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_status(case: dict[str, Any], need_shfmt: None) -> None:
    script = parse(case["command"])
    # a log's truncation marker means the text is not the whole command, even when it parses
    cut = "[truncated" in case["command"]
    assert script.status == ("ok" if case["valid"] and not cut else "recovered"), script.notes


def test_broken_commands_say_how_they_were_repaired() -> None:
    by_name = {c["name"]: parse(c["command"]) for c in CASES if not c["valid"]}
    assert by_name["bad_unbalanced_dq"].parser == "tree-sitter+repair"
    assert any("appended '\"'" in n for n in by_name["bad_unbalanced_dq"].notes)
    assert any("'; done'" in n for n in by_name["bad_truncated_loop"].notes)
    assert any("dropped 'sle'" in n for n in by_name["bad_truncated_loop"].notes)


def test_without_shfmt_flagged_commands_are_marked_unchecked(without_shfmt: None) -> None:
    case = next(c for c in CASES if c["name"] == "multiline_pipeline_then_kill")
    script = parse(case["command"])
    assert script.status == "ok"
    assert script.parser == "tree-sitter (unchecked)"
    assert any("shfmt) not installed" in n for n in script.notes)
    clean = next(c for c in CASES if c["name"] == "real_pkill_chain")
    assert parse(clean["command"]).parser == "tree-sitter"
