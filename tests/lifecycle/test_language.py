"""analyzer.lifecycle.language: the labelled set message by message, then focused behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import spacy
import yaml

from analyzer.lifecycle import language
from analyzer.lifecycle.language import (
    MAX_ANALYSED_CHARS,
    EntityLabel,
    Intent,
    MessageReading,
    read_message,
    read_messages,
)

SET = yaml.safe_load((Path(__file__).parent / "messages.yaml").read_text(encoding="utf-8"))["messages"]

KNOWN_MISSES: dict[str, str] = {}
"""Labelled messages the reader is known to get wrong, with why (each must still fail)."""


def _case_id(case: dict[str, Any]) -> str:
    return case["text"].replace("\n", " ")[:60]


def _check(case: dict[str, Any], reading: MessageReading) -> list[str]:
    problems: list[str] = []
    got = sorted(i.value for i in reading.intents)
    if got != sorted(case.get("intents") or []):
        problems.append(f"intents {got} != {sorted(case.get('intents') or [])}")
    for key in ("ports", "kinds", "hosts", "units"):
        if sorted(getattr(reading, key)) != sorted(case.get(key) or []):
            problems.append(f"{key} {sorted(getattr(reading, key))} != {sorted(case.get(key) or [])}")
    for intent, wanted in (case.get("targets") or {}).items():
        targets = reading.targets.get(Intent(intent), ())
        shaped = [
            {k: sorted(v) for k, v in (("kinds", t.kinds), ("ports", t.ports), ("hosts", t.hosts),
                                       ("units", t.units)) if v}
            for t in targets
        ]
        expected = [{k: sorted(v) for k, v in w.items()} for w in wanted]
        if shaped != expected:
            problems.append(f"targets[{intent}] {shaped} != {expected}")
    return problems


@pytest.mark.parametrize("case", SET, ids=_case_id)
def test_labelled_message(case: dict[str, Any]) -> None:
    reading = read_message(case["text"])
    problems = _check(case, reading)
    if case["text"] in KNOWN_MISSES:
        assert problems, f"known miss now passes, remove it from KNOWN_MISSES: {case['text']!r}"
        pytest.xfail(KNOWN_MISSES[case["text"]])
    assert not problems, "; ".join(problems)


def test_labelled_set_is_large_varied_and_misses_stay_rare() -> None:
    assert len(SET) >= 150
    assert len({c["text"] for c in SET}) == len(SET), "duplicate messages in the set"
    for intent in Intent:
        assert sum(intent.value in (c.get("intents") or []) for c in SET) >= 15, intent
    assert sum(not c.get("intents") for c in SET) >= 30, "too few hard negatives"
    assert set(KNOWN_MISSES) <= {c["text"] for c in SET}
    assert len(KNOWN_MISSES) < 0.1 * len(SET)


# --- negation ---------------------------------------------------------------------------------------


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


# --- questions ----------------------------------------------------------------------------------------


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


# --- entities -------------------------------------------------------------------------------------------


def test_entities_carry_spans_into_the_original_text() -> None:
    text = "ssh root@10.1.2.3 and restart sglang-k26-ddtree, then check localhost:8080 and port 9000"
    r = read_message(text)
    for ent in r.entities:
        assert text[ent.start : ent.end] == ent.text
    by_value = {(e.label, e.value): e for e in r.entities}
    assert by_value[(EntityLabel.host, "10.1.2.3")].text == "root@10.1.2.3"
    unit = by_value[(EntityLabel.unit, "sglang-k26-ddtree")]
    assert unit.kind == "sglang"
    assert by_value[(EntityLabel.port, "8080")].text == "localhost:8080"
    assert by_value[(EntityLabel.host, "localhost")].text == "localhost"
    assert by_value[(EntityLabel.port, "9000")].text == "port 9000"
    assert r.kinds == (), "a kind inside a unit name is the unit's, not a separate kind"


@pytest.mark.parametrize(
    ("text", "ports", "hosts"),
    [
        ("serve on *:30001", (30001,), ()),
        ("bind 0.0.0.0:30000", (30000,), ()),
        ("curl :8000/health", (8000,), ()),
        ("--port=8000 and --port 8001", (8000, 8001), ()),
        ("docker run -p 8080:80 nginx", (8080,), ()),
        ("kill the vllm server on gpu2", (), ("gpu2",)),
        ("on the CT200 machine", (), ("ct200",)),
        ("load it on GPU 2", (), ()),
        ("run it on qwen3-8b with fp8 on h100", (), ()),
        ("it happened at 10:30 in 2024", (), ()),
    ],
)
def test_ports_and_hosts(text: str, ports: tuple[int, ...], hosts: tuple[str, ...]) -> None:
    r = read_message(text)
    assert r.ports == ports
    assert r.hosts == hosts


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("text-generation-inference", "tgi"),
        ("llama-server", "llama.cpp"),
        ("the sglang router", "sglang-router"),
        ("python -m http.server", "http.server"),
        ("TensorRT-LLM", "trtllm"),
        ("npm run dev", "node"),
        ("the vite dev server", "vite"),
    ],
)
def test_kinds_are_canonical(text: str, kind: str) -> None:
    assert read_message(text).kinds == (kind,)


# --- targets per clause ---------------------------------------------------------------------------------


def test_seed_restart_names_only_the_server_on_30001() -> None:
    r = read_message("Restart sglang to serve on *:30001, other than that looking great")
    (target,) = r.targets[Intent.restart]
    assert (target.kinds, target.ports, target.hosts) == (("sglang",), (30001,), ())
    assert target.text == "sglang *:30001"


def test_each_instruction_gets_its_own_clause_entities() -> None:
    r = read_message("restart tgi on gpu-node-3 and leave vllm alone")
    (restart,) = r.targets[Intent.restart]
    (hold,) = r.targets[Intent.hold]
    assert (restart.kinds, restart.hosts) == (("tgi",), ("gpu-node-3",))
    assert hold.kinds == ("vllm",)


def test_unspecified_target_keeps_the_words() -> None:
    r = read_message("kill the old one and relaunch on 30001")
    (stop,) = r.targets[Intent.stop]
    (restart,) = r.targets[Intent.restart]
    assert stop.unspecified and stop.mention == "the old one"
    assert restart.ports == (30001,) and not restart.unspecified


def test_states_target_their_subject() -> None:
    r = read_message("vllm on 8000 is down but sglang on 30000 is still up, only restart vllm")
    assert [t.ports for t in r.targets[Intent.not_ready]] == [(8000,)]
    assert [t.ports for t in r.targets[Intent.ready]] == [(30000,)]
    assert [t.kinds for t in r.targets[Intent.restart]] == [("vllm",)]


# --- evidence and strength ---------------------------------------------------------------------------------


def test_evidence_quotes_the_original_words() -> None:
    text = "No the first launch already worked, it\u2019s still ready"
    r = read_message(text)
    assert r.intents == {Intent.ready, Intent.correction}
    for ev in r.evidence(Intent.ready):
        assert text[ev.start : ev.end] == ev.text
    assert "ready" in r.quote(Intent.ready)
    assert r.quote(Intent.stop) == ""


def test_suggestion_is_weaker_than_an_order() -> None:
    plain = read_message("restart it").confidence[Intent.restart]
    maybe = read_message("maybe restart it?").confidence[Intent.restart]
    assert maybe < plain


# --- pastes and long input ---------------------------------------------------------------------------------


def test_pasted_server_log_in_a_fence_is_not_the_user_saying_ready() -> None:
    text = ("what does this mean?\n```\nINFO:     Application startup complete.\n"
            "INFO:     Uvicorn running on http://0.0.0.0:8000\n```")
    r = read_message(text)
    assert r.intents == frozenset()
    assert r.ports == ()
    assert [s.reason for s in r.skipped] == ["code-fence"]


def test_unfenced_log_lines_are_skipped_but_the_prose_after_is_read() -> None:
    log = "\n".join(f"INFO:     127.0.0.1:5{i:04d} - \"GET /health HTTP/1.1\" 200 OK" for i in range(30))
    text = f"here you go\n{log}\nit's up now, leave vllm running"
    r = read_message(text)
    assert r.intents == {Intent.ready, Intent.hold}
    assert any(s.reason == "paste" for s in r.skipped)
    (ready,) = r.evidence(Intent.ready)
    assert ready.text == "up" and text[ready.start : ready.end] == "up", "offsets survive the skipped paste"
    (kind,) = r.entities
    assert text[kind.start : kind.end] == "vllm"


def test_traceback_without_fence_is_skipped() -> None:
    text = ("the server crashed with this:\nTraceback (most recent call last):\n"
            "  File \"app.py\", line 3, in <module>\n"
            "    app.run(port=5000)\nOSError: [Errno 98] Address already in use")
    r = read_message(text)
    assert r.intents == {Intent.not_ready}
    assert r.ports == ()


def test_single_pasted_ready_line_and_harness_blocks_are_not_read() -> None:
    sglang_ready_line = "[2025-11-02 10:11:12] The server is fired up and ready to roll!"
    assert read_message(sglang_ready_line).intents == frozenset()
    assert read_message(" \u2713 Ready in 2.3s").intents == frozenset()
    assert read_message("<bash-input>systemctl restart sglang</bash-input>").intents == frozenset()
    r = read_message("<system-reminder>the server is ready</system-reminder>\nis it up?")
    assert r.intents == {Intent.question}


def test_inline_log_tail_is_cut_off_the_prose_line() -> None:
    r = read_message("i still get this error when i run the server: ERROR:    Application startup complete")
    assert r.intents == {Intent.not_ready}
    assert [s.reason for s in r.skipped] == ["log"]


def test_quoted_words_are_not_the_users_assertion() -> None:
    r = read_message('you keep saying "it is ready" but it is not responding')
    assert r.intents == {Intent.not_ready}
    assert [s.reason for s in r.skipped] == ["quote"]


def test_long_message_is_read_at_head_and_tail_and_says_so() -> None:
    middle = "We discussed the tokenizer design at length. " * 400
    text = f"Thanks for the summary.\n{middle}\nrestart sglang on :30001 please"
    r = read_message(text)
    assert len(text) > MAX_ANALYSED_CHARS and r.truncated
    assert r.intents == {Intent.restart} and r.ports == (30001,)
    assert any(s.reason == "length-cap" for s in r.skipped)
    hidden = read_message(f"{middle[:5000]} kill the server now {middle[:5000]}")
    assert hidden.truncated and Intent.stop not in hidden.intents, "the unread middle is a documented limit"


def test_huge_paste_does_not_blow_up() -> None:
    log = "\n".join(f"INFO 11-02 10:11:{i % 60:02d} engine.py:{i}] Avg prompt throughput: {i} tokens/s"
                    for i in range(5000))
    r = read_message(f"{log}\nok it's ready")
    assert r.intents == {Intent.ready}
    assert r.entities == ()


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "?!?", "\x00\x01 restart", "a" * 20000, "``` unclosed",
                                  "</task-notification> <task-notification>", "\u200b" * 50])
def test_odd_input_never_raises(text: str) -> None:
    r = read_message(text)
    assert isinstance(r, MessageReading)
    assert r.intents <= {Intent.restart}


# --- pipeline and memo ----------------------------------------------------------------------------------


def test_only_a_blank_pipeline_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_models(*_: object, **__: object) -> None:
        raise AssertionError("spacy.load must never be called: no model download")

    monkeypatch.setattr(spacy, "load", no_models)
    monkeypatch.setattr(language, "_PIPELINE", None)
    language.clear_cache()
    assert read_message("restart sglang").intents == {Intent.restart}
    pipe = language._pipeline()
    assert pipe.nlp.pipe_names == []
    assert pipe.nlp.lang == "en"
    assert pipe.nlp.vocab.vectors.size == 0
    assert language._pipeline() is pipe, "built once per process"


def test_batch_keeps_order_and_memoises() -> None:
    language.clear_cache()
    texts = ["Ready", "kill it", "Ready", "is it up?"]
    readings = read_messages(texts)
    intents = [sorted(i.value for i in r.intents) for r in readings]
    assert intents == [["ready"], ["stop"], ["ready"], ["question"]]
    assert readings[0] is readings[2]
    assert read_message("kill it") is readings[1]


@pytest.mark.parametrize(("text", "mention"), [
    ("restart the api container", "the api container"),
    ("stop the docs server", "the docs server"),
    ("restart the api", "the api"),
])
def test_the_target_mention_keeps_its_head_noun(text: str, mention: str) -> None:
    (hit,) = read_message(text).hits
    assert hit.target.mention == mention
