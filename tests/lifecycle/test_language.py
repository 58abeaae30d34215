"""analyzer.lifecycle.language: the labelled set message by message, the reading's accessors, the memo (reader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzer.lifecycle import language
from analyzer.lifecycle.language import (
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


# --- evidence and strength --------------------------------------------------------------------------------


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


# --- memo --------------------------------------------------------------------------------


def test_batch_keeps_order_and_memoises() -> None:
    language.clear_cache()
    texts = ["Ready", "kill it", "Ready", "is it up?"]
    readings = read_messages(texts)
    intents = [sorted(i.value for i in r.intents) for r in readings]
    assert intents == [["ready"], ["stop"], ["ready"], ["question"]]
    assert readings[0] is readings[2]
    assert read_message("kill it") is readings[1]
