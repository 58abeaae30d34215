"""Fast paths over tool outputs say exactly what the regexes they stand for say."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.lifecycle.build.tasks import _POLL_EXIT, _POLL_STATUS, _STATUS_WORDS, poll_outcome
from analyzer.lifecycle.catalog import Catalog, ServerKind, default_catalog, required_words
from analyzer.lifecycle.probes import _REFUSED, _REFUSED_HINTS, _REFUSED_WORDS, refused

_PIECES = ["Connection refused", "connection REFUSED", "Failed to connect", "Couldn't connect", "curl: (7)",
           "CURL: (52)", "curl: (56)", "curl: (28)", "curl: (6)", "Empty reply from server", "No route to host",
           "Connection reset", "timed out", "Timed Out", "ECONNREFUSED", "000", "0000", "\n", "\r\n", " ",
           "HTTP/1.1 200 OK", "ſ", "K", "İ", "é", "[000123] INFO compile"]


@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=8).map("".join))
def test_refused_is_the_regex(text: str) -> None:
    assert refused(text) == (_REFUSED.search(text) is not None)


def test_every_refusal_word_holds_a_hint() -> None:
    assert all(any(hint in word for hint in _REFUSED_HINTS) for word in _REFUSED_WORDS)


def test_refused_examples() -> None:
    assert refused("curl: (7) Failed to connect to localhost port 8000")
    assert refused("200\n000\n")  # curl -w '%{http_code}' of a refused connection
    assert not refused("[000001] INFO compile src/a.ts\n")
    assert refused("Connection reſet")  # not ASCII: the regex decides (ſ folds to s)


_CATALOG = default_catalog()
# the catalog's patterns compiled as it compiles them (it does so lazily, per kind)
_FAIL = [re.compile(p, re.M) for p in _CATALOG.common_failure]
_KIND_FAIL = {k.name: [re.compile(p, re.M) for p in k.failure] for k in _CATALOG.kinds}
_READY = {k.name: [re.compile(p) for p in k.ready] for k in _CATALOG.kinds}
_ANSWERS = [re.compile(p, re.M) for p in sorted({p for k in _CATALOG.kinds for p in k.answers})]
"""Probe answers' signatures (``lifecycle.probes.answered_by`` searches only answers holding a word)."""
_PATTERNS = [*_FAIL, *(p for ps in _KIND_FAIL.values() for p in ps), *(p for ps in _READY.values() for p in ps),
             *_ANSWERS]


def test_catalog_lines_combined_and_one_by_one_agree() -> None:
    cat = default_catalog()
    text = ("[2026-01-01] loading weights\nINFO:     Uvicorn running on http://0.0.0.0:8000\n"
            "The server is fired up and ready to roll!\nOSError: [Errno 98] Address already in use\n")
    for kind in [None, "sglang", "vllm", "uvicorn", "nope"]:
        for method, pats in [("ready", _READY.get(kind, []) if kind else [p for ps in _READY.values() for p in ps]),
                             ("failure", _FAIL + (_KIND_FAIL.get(kind, []) if kind else []))]:
            want = next((ln.strip() for ln in text.splitlines() if any(p.search(ln) for p in pats)), None)
            got = cat.ready_line(kind, text) if method == "ready" else cat.failure_line(kind, text)
            assert got == want, (kind, method)
    assert cat.ready_line("sglang", text) == "INFO:     Uvicorn running on http://0.0.0.0:8000"
    assert cat.failure_line("sglang", text) == "OSError: [Errno 98] Address already in use"


def test_catalog_patterns_that_cannot_be_joined_are_read_one_by_one() -> None:
    # a back-reference and an inline global flag would change meaning inside one joined regex
    kind = ServerKind(name="echo", label="echo server", programs=["echo-server"],
                      ready=[r"(\w+) ready \1", "(?i)LISTENING"], failure=[r"(?P<w>\w+)=(?P=w)"])
    cat = Catalog([kind], common_failure=["fatal"])
    assert cat.ready_line("echo", "x\nab ready ab\n") == "ab ready ab"
    assert cat.ready_line("echo", "ab ready cd\nnow listening\n") == "now listening"
    assert cat.ready_line("echo", "ab ready cd\n") is None
    assert cat.failure_line("echo", "a=b\nzz=zz\n") == "zz=zz"
    assert cat._combined[("ready", "echo")] is None and cat._combined[("failure", "echo")] is None


_MORE = [re.compile(p) for p in (r"(a|bc)+d", r"x(?:yz)?w", r"(?>abc)q", r"a{2,3}b", r"(?i:ab)cd", r"[|]x\b",
                                 r"^\s*(?:\S+: )?(?:line \d+: )?\d+ (?:Killed|Aborted)\b")]


@pytest.mark.parametrize("pattern", _PATTERNS + _MORE, ids=lambda p: p.pattern[:40])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_match_holds_a_required_word(pattern: re.Pattern[str], data: st.DataObject) -> None:
    words = required_words(pattern)
    text = data.draw(st.from_regex(pattern))
    assert pattern.search(text)
    if words is not None:
        assert any(w in text for w in words), (text, words)


def test_required_words_of_the_catalog_and_when_there_are_none() -> None:
    assert required_words(re.compile(r"\bOOM\b|Out of memory: Killed process")) == {"OOM", "Out of memory: Killed process"}
    assert required_words(re.compile(r"Traceback \(most recent call last\)")) == {"Traceback (most recent call last)"}
    assert required_words(re.compile(r"a|b")) is None  # one-letter branches are a character class
    assert required_words(re.compile(r"(?i)ready")) is None and required_words(re.compile(r".*")) is None
    assert all(required_words(p) for p in _FAIL)  # so failure lines are found without a line loop
    assert all(required_words(p) for p in _ANSWERS)  # so most probe answers are not searched at all


@given(st.lists(st.sampled_from(["Traceback (most recent call last):", "  File x", "ERROR:  [Errno 98] in use",
                                 "Killed", "1234 Killed   python x", "OOM", "OOMs", "INFO ok", "core dumped",
                                 "Uvicorn running on http://0.0.0.0:8000", "uvicorn running", "\r", "",
                                 "Address already in use"]), max_size=8).map("\n".join))
def test_failure_and_ready_lines_are_the_first_matching_line(text: str) -> None:
    for kind in [None, "sglang", "uvicorn"]:
        fail = _FAIL + (_KIND_FAIL.get(kind, []) if kind else [])
        ready = _READY.get(kind, []) if kind else [p for ps in _READY.values() for p in ps]
        assert _CATALOG.failure_line(kind, text) == _first(fail, text)
        assert _CATALOG.ready_line(kind, text) == _first(ready, text)


def _first(patterns: list[re.Pattern[str]], text: str) -> str | None:
    return next((ln.strip() for ln in text.splitlines() if any(p.search(ln) for p in patterns)), None)


_POLL_PIECES = ["<status>", "</status>", "running", "failed", "killed", "Status: ", "DONE", "FAILED", "\n", " ",
                "<exit_code>", "</exit_code>", "1", "-2", "Exit code:", "Exit code: 3", "Process exited with code",
                "Status:", "exit_code", "x"]


@given(st.lists(st.one_of(st.sampled_from(_POLL_PIECES), st.text(max_size=4)), max_size=10).map("".join),
       st.sampled_from([None, 0, 3]))
def test_a_poll_outcome_is_what_its_regexes_say(text: str, exit_code: int | None) -> None:
    # poll_outcome searches only outputs holding its regexes' literals
    code = exit_code
    if code is None and (m := _POLL_EXIT.search(text)):
        code = int(m.group(1) or m.group(2))
    said = _POLL_STATUS.search(text)
    status = _STATUS_WORDS.get((said.group(1) or said.group(2)).lower(), "") if said else ""
    assert poll_outcome(text, exit_code) == (status or ("running" if code is None else "completed"), code)
