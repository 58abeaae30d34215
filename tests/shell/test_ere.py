"""POSIX ERE as pgrep evaluates it (glibc regcomp/regexec), and the translator used without glibc."""

from __future__ import annotations

import random
import threading
import warnings

import pytest

from analyzer.shell import _glibc_regex, ere
from analyzer.shell.ere import (
    bre_to_ere,
    ere_search,
    ere_span,
    ere_to_python,
    glibc_available,
    translated_search,
)

needs_glibc = pytest.mark.skipif(not glibc_available(), reason="glibc regcomp not available")

# shell-semantics §9: the table measured with glibc 2.36 (1 match, . no match, E regex error)
SUBJECTS = [
    "python3 -m sglang.launch_server --model-path /data/models/X --port 30001 --tp 8",
    "python -m vllm.entrypoints.openai.api_server --port 8000",
    'bash -c pkill -f "launch_server.*3000[01]"; sleep 2',
    "sglang::scheduler_TP0",
    "python3 ./a\\b.py",
    "vllm serve /m --port 8000",
]
TABLE = [
    ("launch_server.*3000[01]", "1....."),
    ("sglang.launch_server", "1....."),
    ("[l]aunch_server", "1.1..."),
    ("launch_server|launch_router", "1.1..."),
    ("python.*--port[= ]8000( |$)", ".1...."),
    (r"port \d+", "......"),
    ("port [[:digit:]]{5}", "1....."),
    (r"\<vllm\>", ".1...1"),
    (r"\bvllm\b", ".1...1"),
    (r"a[\.]b", "....1."),
    (r"a\\b", "....1."),
    ("*launch", "EEEEEE"),
    ("(?i)VLLM", "EEEEEE"),
    ("launch_server.*disaggregation", "......"),
    (r"port\s+3000[01]", "1....."),
    ("sglang::", "...1.."),
    ("x{", "EEEEEE"),
    ("^python", "11..1."),
    ("8000$", ".1...1"),
    (r"[^[:space:]]+\.py", "....1."),
]


def _row(search: object, pattern: str) -> str:
    out = []
    for s in SUBJECTS:
        got = search(pattern, s)  # type: ignore[operator]
        out.append("E" if got is None else ("1" if got else "."))
    return "".join(out)


@pytest.mark.parametrize(("pattern", "expected"), TABLE)
def test_ere_search_reproduces_the_measured_glibc_table(pattern: str, expected: str) -> None:
    assert _row(ere_search, pattern) == expected


@pytest.mark.parametrize(("pattern", "expected"), TABLE)
def test_translator_reproduces_the_measured_glibc_table(pattern: str, expected: str) -> None:
    assert _row(lambda p, s: (lambda r: None if r is None else r is not False)(translated_search(p, s)), pattern) == expected


def test_where_python_re_differs_ere_reads_the_posix_way() -> None:
    # \d is the letter d in ERE, not a digit
    assert ere_search(r"port \d+", "python -m x --port 8000") is False
    assert ere_search(r"port \d+", "a port ddd") is True
    # POSIX classes are classes
    assert ere_search("[[:digit:]]{4}", "port 8000") is True
    # (?i) is Python-only: pgrep exits 2
    assert ere_search("(?i)vllm", "VLLM serve") is None
    # GNU word boundaries
    assert ere_search(r"\<vllm\>", "vllm serve /m") is True
    assert ere_search(r"\<vllm\>", "myvllm serve") is False
    # a backslash inside a bracket is literal: [\.] is backslash or dot
    assert ere_search(r"a[\.]b", "a\\b") is True
    assert ere_search(r"a[\.]b", "a.b") is True
    assert ere_search(r"a[\.]b", "axb") is False
    # an unmatched { is an error in glibc, a literal in Python
    assert ere_search("x{", "x{") is None
    assert ere_search(r"[^[:space:]]+\.py", "python3 ./a\\b.py") is True


def test_stacked_quantifiers_and_a_lone_close_paren_are_valid_posix() -> None:
    for pattern in ("a**", "a+?", "a?*", "a{2}{3}", "(ab)+*"):
        assert ere_search(pattern, "xx aaaaaa ab") is not None, pattern
    assert ere_search("a{2}{3}", "aaaaa") is False  # (a{2}){3} needs six
    assert ere_search("a{2}{3}", "aaaaaa") is True
    assert ere_search("a)", "xa)y") is True  # an unmatched ) is a literal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ere_to_python("a**") == "a*"
        assert ere_to_python("a{2}{3}") == "(?:a{2}){3}"


def test_exact_and_ignore_case_as_pgrep_x_and_i() -> None:
    assert ere_search("python3", "python3", exact=True) is True
    assert ere_search("python", "python3", exact=True) is False
    assert ere_search("a|python3", "python3", exact=True) is True  # -x wraps as ^(P)$
    assert ere_search("VLLM", "vllm serve", icase=True) is True
    assert ere_search("VLLM", "vllm serve") is False


@needs_glibc
def test_glibc_icase_quirks_are_mirrored_by_the_translator() -> None:
    # measured: with REG_ICASE an escaped lower-case letter never matches, range ends fold up
    for pattern, subject in ((r"\t", "t"), (r"\T", "t"), ("[a-[]", "b"), ("[a-[]", "1")):
        want = ere_span(pattern, subject, icase=True)
        got = translated_search(pattern, subject, icase=True)
        assert (want is None, want is False) == (got is None, got is False), pattern


def test_span_is_in_characters_for_highlighting() -> None:
    subject = "python3 -m sglang.launch_server --port 30001"
    span = ere_span("launch_server.*3000[01]", subject)
    assert span == (18, len(subject))
    assert subject[18:] == "launch_server --port 30001"
    assert ere_span("é+b", "xxééb") == (2, 5)  # UTF-8 byte offsets converted back


def test_bre_as_grep_reads_it() -> None:
    assert ere_span("[l]aunch_server", "python -m x.launch_server", basic=True) not in (None, False)
    assert ere_span(r"\(a\|b\)c", "xbc", basic=True) not in (None, False)
    assert ere_span("a+", "a+", basic=True) not in (None, False)  # + is literal in a BRE
    assert ere_span("a+", "aa", basic=True) is False
    assert bre_to_ere(r"\(a\|b\)+x\{2\}") == r"(a|b)\+x{2}"
    assert bre_to_ere("*a") == r"\*a"


def test_invalid_patterns_are_none_not_exceptions() -> None:
    for pattern in ("(", "[abc", "a{2,1}", "\\", "[[:nope:]]", "a{99999}", "(?=x)", "+a"):
        assert ere_search(pattern, "abc") is None, pattern
        assert translated_search(pattern, "abc") is None, pattern


def test_cache_evicts_and_frees_without_changing_answers() -> None:
    for i in range(ere._CACHE_SIZE + 40):
        assert ere_search(f"tok{i}x", f"a tok{i}x b") is True
    assert ere_search("tok0x", "tok0x") is True
    assert len(_glibc_regex._CACHE) <= ere._CACHE_SIZE


def test_concurrent_callers_get_consistent_answers() -> None:
    errors: list[str] = []

    def worker(k: int) -> None:
        for i in range(200):
            pat = f"w{k}_{i % 7}[0-9]+"
            if ere_search(pat, f"x w{k}_{i % 7}42") is not True or ere_search(pat, "nothing") is not False:
                errors.append(pat)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# random differential: the translator against glibc itself
_ATOMS = [
    "a", "b", "x", "3", ".", "\\.", "\\d", "\\w", "\\s", "\\b", "\\<", "\\>", "\\W", "\\B", "[ab]", "[^a]",
    "[[:digit:]]", "[[:space:]]", "[a-c]", "[\\.]", "[]a]", "[a-]", "[z-a]", "[[:foo:]]", "(", ")", "|", "*",
    "+", "?", "{2}", "{1,}", "{,2}", "{", "}", "^", "$", "(?", "\\1", "\\", "[", "-", " ", "py", "[[=a=]]",
    "{}", "\\`", "\\'", "\\(", "[a", "\\t",
]
_SUBJECTS = ["python3 -m sglang.launch_server --port 30001", "", "a", "ab.b", "x{2}", "aab", "py thon 3000",
             "a\\b.py", "(a)|b*"]


@needs_glibc
def test_translator_agrees_with_glibc_on_random_patterns() -> None:
    rng = random.Random(20240521)
    disagreements = []
    for _ in range(1500):
        pattern = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(1, 6)))
        for icase in (False, True):
            for subject in _SUBJECTS:
                want = ere_span(pattern, subject, icase=icase)
                got = translated_search(pattern, subject, icase=icase)
                if (want is None, want is False) != (got is None, got is False):
                    disagreements.append((pattern, icase, subject, want, got))
    assert disagreements == []
