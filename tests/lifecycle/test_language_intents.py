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


# --- causes found by the blind labelling of real prompts (bench/messages.labels.yaml) ---------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # what runs the server is still the server ("your own server task": a background task)
        ("don't upgrade anything, just restart your own server task", {Intent.restart}),
        ("restart the server tests", set()),
        # "we" is the subject of a past verb, not someone asked to act
        ("ok, remove everything back to where we started talking about the popup", set()),
        # asking whether the agent just did it objects to it; a plain question stays a question
        ("hang on, did you just take it down?", {Intent.correction}),
        ("did you just restart vllm?", {Intent.correction}),
        ("did you restart vllm?", {Intent.question}),
        # a modal passive asks for the action, it is no state
        ("the server must be killed first", {Intent.stop}),
        ("it needs to be restarted", {Intent.restart}),
        ("the api must not be restarted", {Intent.hold}),
        ("the tests must be stopped", set()),
        # the user takes the launch over
        ("i'll run the server myself, tell me what to check", {Intent.hold}),
        # a rule about what a script should do is no failure report
        ("the test script shouldn't run the containers", set()),
        # an error the user met running a server says it is not up
        ("i have a database connection error when i run the server", {Intent.not_ready}),
        ("fix the issue, I was trying to run the server!", {Intent.not_ready}),
        ("starting the docker for this app ends in an error", {Intent.not_ready}),
        ("i get a type error when i run the tests", set()),
        ("no errors when I run the server", set()),
        ("do you get an error when you run the server?", {Intent.question}),
        # state words used another way
        ("keep the backend work small", set()),
        ("make the app ready for production and restart the backend", {Intent.restart}),
        ("clean up afterwards with docker compose down", set()),
        ("the script waits for the api to be healthy", set()),
        ("the server seems to be hanging on requests", {Intent.not_ready}),
        ("it ships a responsive design and a live demo", set()),
        ("the queue containers are not running composer install", set()),
        ("we need to come up with a plan", set()),
        ("bring it up with the new flags", {Intent.launch}),
        ("is the api healthy or still loading?", {Intent.question}),
        # a constraint written as a noun phrase
        ("No Docker, no app start unless explicitly needed.", {Intent.hold}),
        # a unit of work is no server
        ("do not start the next slice yet", set()),
        ("start implementation now", set()),
        # states the word lists did not know
        ("it stalls at the build step", {Intent.not_ready}),
        ("now it starts with no errors", {Intent.ready}),
        ("the server starts on port 8000 by default", set()),
    ],
)
def test_real_prompt_causes(text: str, expected: set[Intent]) -> None:
    assert read_message(text).intents == expected
