"""analyzer.lifecycle.language.intents, verbs and states: each cue read in its context."""

from __future__ import annotations

import pytest

from analyzer.lifecycle.language import Intent, read_message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("don't restart it", {Intent.hold}),
        ("restart it", {Intent.restart}),
        ("no need to kill it", {Intent.hold}),
        ("kill it", {Intent.stop}),
        ("not ready yet", {Intent.not_ready}),
        ("it isn't working", {Intent.not_ready}),
        ("it's not down", {Intent.ready, Intent.correction}),
        ("it didn't start", {Intent.not_ready}),
        ("don't forget to restart vllm", {Intent.restart}),
        ("why don't you restart it", {Intent.restart}),
        ("Don't kill or restart anything", {Intent.hold}),
        ("nothing is listening on 30000", {Intent.not_ready}),
    ],
)
def test_negation(text: str, expected: set[Intent]) -> None:
    assert read_message(text).intents == expected




@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("is it ready?", {Intent.question}),
        ("is it up", {Intent.question}),
        ("did it start?", {Intent.question}),
        ("can you restart it?", {Intent.restart}),
        ("should we restart it?", {Intent.question}),
        ("why is the server down?", {Intent.question, Intent.not_ready}),
        ("why did you kill it?", {Intent.correction}),
        ("ready to proceed with the refactor?", set()),
    ],
)
def test_questions_are_not_assertions(text: str, expected: set[Intent]) -> None:
    assert read_message(text).intents == expected


def test_question_scope_is_the_asking_clause() -> None:
    r = read_message("vllm is up but tgi keeps crashing, can you restart tgi?")
    assert r.intents == {Intent.ready, Intent.not_ready, Intent.restart}
