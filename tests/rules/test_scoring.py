"""Scoring findings against hand labels (analyzer.rules.scoring), on small hand-written labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.rules.scoring import (
    FileLabels,
    Label,
    LabelError,
    Observed,
    load_labels,
    score,
    score_check_document,
)

LABELS = """
- file: chat/a.json
  format: chat
  lifecycle: true
  expect:
    - {rule: duplicate-launch, ref: toolu_A, ref_kind: tool_call, line: 40, alt_refs: [toolu_B, "line:77"]}
    - {rule: user-correction, ref: null, ref_kind: user_message, line: 90}
  tolerate:
    - {rule: duplicate-launch, ref: toolu_T, ref_kind: tool_call, line: 60}
  forbid: [duplicate-launch, user-correction, kill-after-ready]
- file: codex/quiet.jsonl
  format: codex
  expect: []
  forbid: [duplicate-launch]
"""


def obs(rule: str, line: int | None, ref: str | None = None, source: str | None = None) -> Observed:
    return Observed(file="chat/a.json", rule=rule, message="m", line=line, ref=ref, source=source)


@pytest.fixture
def labels(tmp_path: Path) -> list[FileLabels]:
    p = tmp_path / "labels.yaml"
    p.write_text(LABELS)
    return load_labels(p)


def test_a_label_matches_its_id_its_alternatives_or_its_line() -> None:
    label = Label(rule="duplicate-launch", ref="toolu_A", line=40, alt_refs=["toolu_B", "line:77"])
    assert label.matches(obs("duplicate-launch", 12, "toolu_A"))  # the id, wherever its line
    assert label.matches(obs("duplicate-launch", None, "toolu_B"))
    assert label.matches(obs("duplicate-launch", 77))  # an alternative line
    assert label.matches(obs("duplicate-launch", 40))  # the line, for a finding without an id
    assert not label.matches(obs("kill-after-ready", 40, "toolu_A"))  # another rule
    # the same line, but another call named by id (two calls of one chat message share a line)
    assert not label.matches(obs("duplicate-launch", 40, "toolu_OTHER"))
    # a line of a sub-agent file is not a line of the main file
    assert not label.matches(obs("duplicate-launch", 40, None, source="sub/agent-1.jsonl"))


def test_a_user_message_label_matches_by_line_whatever_the_finding_calls_the_message() -> None:
    label = Label(rule="user-correction", ref=None, ref_kind="user_message", line=90)
    assert label.matches(obs("user-correction", 90, "uuid-1234"))
    assert not label.matches(obs("user-correction", 91, "uuid-1234"))


def test_scores_count_true_false_missed_tolerated_and_unscored(labels: list[FileLabels]) -> None:
    found = {"chat/a.json": [
        obs("duplicate-launch", 40, "toolu_A"), obs("duplicate-launch", 77),  # one label found twice: one TP
        obs("duplicate-launch", 60, "toolu_T"),  # tolerated
        obs("kill-after-ready", 12, "toolu_K"),  # forbidden and unlabelled: FP
        obs("ignored-failure", 50, "toolu_I"),  # not judged in this file
    ], "codex/quiet.jsonl": [Observed("codex/quiet.jsonl", "duplicate-launch", "m", line=3)]}
    sc = score(labels, found)
    total = sc.tally()
    assert (total.tp, total.fp, total.missed, total.tolerated, total.unscored) == (1, 2, 1, 1, 1)
    assert total.precision == pytest.approx(1 / 3) and total.recall == pytest.approx(1 / 2)
    dup = sc.tally("duplicate-launch")
    assert (dup.tp, dup.fp, dup.missed) == (1, 1, 0) and dup.recall == 1.0
    assert [m.rule for m in sc.files[0].missed] == ["user-correction"]
    assert [fs.labels.file for fs in sc.noisy_negatives()] == ["codex/quiet.jsonl"]
    assert sc.rules() == ["duplicate-launch", "ignored-failure", "kill-after-ready", "user-correction"]


def test_nothing_found_and_nothing_expected_has_no_ratio(labels: list[FileLabels]) -> None:
    t = score(labels[1:], {}).tally()
    assert (t.precision, t.recall) == (None, None)


def test_a_check_document_is_scored_by_path_under_the_corpus(labels: list[FileLabels], tmp_path: Path) -> None:
    doc = {
        "sessions": [
            {"path": str(tmp_path / "chat" / "a.json"), "diagnostics": [{"level": "error", "message": "lost 3"}],
             "findings": [{"rule": "user-correction", "message": "m", "anchor": {"index": 5, "ref": "u1", "line": 90}}]},
            {"path": str(tmp_path / "elsewhere.jsonl"),
             "findings": [{"rule": "duplicate-launch", "message": "m", "anchor": {"line": 1}}]},
        ],
        "errors": [{"path": str(tmp_path / "codex" / "quiet.jsonl"), "message": "not a session log"}],
    }
    sc = score_check_document(labels, doc, tmp_path)
    a, quiet = sc.files
    assert [lb.rule for lb, _ in a.true] == ["user-correction"] and a.error == "1 error diagnostic(s), first: lost 3"
    assert quiet.error == "not a session log" and quiet.findings == []
    assert sc.tally().fp == 0  # the unlabelled file's finding is not scored


def test_a_labels_file_off_the_schema_is_refused_naming_the_entry(tmp_path: Path) -> None:
    p = tmp_path / "labels.yaml"
    p.write_text("- file: a.json\n  expect:\n    - {ref: x}\n")
    with pytest.raises(LabelError, match="entry 1"):
        load_labels(p)
    p.write_text("file: a.json\n")
    with pytest.raises(LabelError, match="a list of file entries"):
        load_labels(p)
