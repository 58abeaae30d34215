"""Fast paths over tool outputs say exactly what the regexes they stand for say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from analyzer.lifecycle.catalog import Catalog, ServerKind, default_catalog
from analyzer.lifecycle.probes import _REFUSED, refused

_PIECES = ["Connection refused", "connection REFUSED", "Failed to connect", "Couldn't connect", "curl: (7)",
           "CURL: (52)", "curl: (56)", "curl: (28)", "curl: (6)", "Empty reply from server", "No route to host",
           "Connection reset", "timed out", "Timed Out", "ECONNREFUSED", "000", "0000", "\n", "\r\n", " ",
           "HTTP/1.1 200 OK", "ſ", "K", "İ", "é", "[000123] INFO compile"]


@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=8).map("".join))
def test_refused_is_the_regex(text: str) -> None:
    assert refused(text) == (_REFUSED.search(text) is not None)


def test_refused_examples() -> None:
    assert refused("curl: (7) Failed to connect to localhost port 8000")
    assert refused("200\n000\n")  # curl -w '%{http_code}' of a refused connection
    assert not refused("[000001] INFO compile src/a.ts\n")
    assert refused("Connection reſet")  # not ASCII: the regex decides (ſ folds to s)


def test_catalog_lines_combined_and_one_by_one_agree() -> None:
    cat = default_catalog()
    text = ("[2026-01-01] loading weights\nINFO:     Uvicorn running on http://0.0.0.0:8000\n"
            "The server is fired up and ready to roll!\nOSError: [Errno 98] Address already in use\n")
    for kind in [None, "sglang", "vllm", "uvicorn", "nope"]:
        for method, pats in [("ready", cat._ready.get(kind, []) if kind else
                              [p for ps in cat._ready.values() for p in ps]),
                             ("failure", cat._fail + (cat._kind_fail.get(kind, []) if kind else []))]:
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
