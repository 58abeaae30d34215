"""The gate in front of spaCy: a message it stops reads exactly as spaCy would have read it.

The gate (``analyzer.lifecycle.language.gate``) lets a message go untokenized when it holds no word
a matcher can match; these tests read real and hand-written messages both ways and require the
same reading, and check the one assumption the gate's vocabulary makes about the tokenizer."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
import yaml

from analyzer.events import AssistantEvent, UserEvent
from analyzer.lifecycle.language import patterns as P
from analyzer.lifecycle.language.gate import gate_words, may_match, required_words
from analyzer.lifecycle.language.pipeline import pipeline
from analyzer.lifecycle.language.reader import read_fresh

ROOT = Path(__file__).resolve().parents[2]
LABELLED = [m["text"] for m in yaml.safe_load(
    (Path(__file__).parent / "messages.yaml").read_text(encoding="utf-8"))["messages"]]


def session_texts(folder: Path) -> tuple[list[str], list[str]]:
    """The user messages and the agent messages the world reads (``build.messages``) of every
    session file under ``folder``, distinct, in file order."""
    from analyzer.ingest import load

    users: dict[str, None] = {}
    agents: dict[str, None] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            session = load(path)
        except Exception:  # not a session (notes, manifests, labels)
            continue
        for ev in session.events:
            if isinstance(ev, UserEvent) and ev.text:
                users[ev.text] = None
            elif isinstance(ev, AssistantEvent) and ev.text and len(ev.text) <= 4000:
                agents[ev.text] = None
    return list(users), list(agents)


def assert_gate_is_exact(texts: Iterable[str], documents: bool) -> int:
    """Every text reads the same with and without the gate; returns how many the gate stopped."""
    texts = list(texts)
    gated = read_fresh(texts, documents=documents)
    plain = read_fresh(texts, documents=documents, gate=False)
    stopped = 0
    for k, ((reading, tokenized), (expected, _)) in enumerate(zip(gated, plain, strict=True)):
        assert reading == expected, f"message {k} reads differently behind the gate"
        stopped += not tokenized
    return stopped


def test_labelled_messages_read_the_same_behind_the_gate() -> None:
    texts = [*LABELLED, "thanks!", "continue", "yes, go ahead on :8080 at 10.0.0.2", "ssh gpu-node-3 please"]
    for documents in (True, False):
        assert assert_gate_is_exact(texts, documents) >= 3


def test_fixture_messages_read_the_same_behind_the_gate() -> None:
    users, agents = session_texts(ROOT / "fixtures")
    assert len(users) > 50
    stopped = assert_gate_is_exact(users, True) + assert_gate_is_exact(agents, False)
    assert stopped > 0, "the gate stops some real messages, or it saves nothing"


@pytest.mark.corpus
def test_corpus_messages_read_the_same_behind_the_gate(corpus: Path) -> None:
    """Every user message of the corpus (bench/messages.labels.yaml's 300 are among them) and every
    agent message the world reads."""
    users, agents = session_texts(corpus)
    labels = yaml.safe_load((ROOT / "bench" / "messages.labels.yaml").read_text(encoding="utf-8"))["messages"]
    digests = {hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()[:12] for t in users}
    # bench/messages.py finds 287 of its 300 labels (the rest name aider replies no longer read as the user's)
    assert sum(str(label["sha"]) in digests for label in labels) >= 280
    stopped = assert_gate_is_exact(users, True) + assert_gate_is_exact(agents, False)
    assert stopped > 100


def test_a_kind_alias_starts_with_a_token_the_gate_knows() -> None:
    """The kinds PhraseMatcher matches an alias's tokens; the gate takes its first word for its
    first token, which holds while the tokenizer keeps that word whole."""
    nlp = pipeline().nlp
    words = gate_words()
    for alias in P.KIND_ALIASES:
        first = nlp.make_doc(alias)[0].lower_
        assert any(w in first for w in words), alias


def test_every_cue_pattern_needs_a_word_of_the_gate() -> None:
    """Each pattern's required words are in the vocabulary, and a pattern with no required listed
    word (which the gate could not stand in front of) is refused."""
    from analyzer.lifecycle.language.gate import pattern_groups

    words = set(gate_words())
    for patterns in pattern_groups().values():
        for pattern in patterns:
            assert set(required_words(pattern)) <= words
    assert required_words([{"LOWER": {"IN": ["a"]}, "OP": "?"}, {"LOWER": {"IN": ["bbb"]}}]) == ("bbb",)
    with pytest.raises(ValueError):
        required_words([{"LOWER": {"NOT_IN": ["x"]}}, {"LOWER": {"IN": ["y"]}, "OP": "*"}])


def test_the_gate_compares_lowercase_text() -> None:
    assert may_match("please restart sglang")
    assert not may_match("thanks!")
    assert all(w == w.lower() for w in gate_words())


def test_a_message_the_gate_stops_is_read_without_importing_spacy(tmp_path: Path) -> None:
    code = """
import sys
from analyzer.lifecycle.language import read_message
r = read_message("thanks, go ahead on :8080")
assert not r.intents and r.ports == (8080,), r
assert "spacy" not in sys.modules, "the gate let spaCy in"
"""
    env = {"SESSION_ANALYZER_CACHE_DIR": "", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
