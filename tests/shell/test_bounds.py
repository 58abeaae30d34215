"""The shell stage's hard bounds (issue 17): parser and regex bombs, nesting evasion.

Each reproducer runs in a child Python under ``resource`` limits (address space, CPU seconds), so
a bomb that comes back fails this test instead of taking the machine: the child is killed and the
test sees its exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from analyzer.shell import ere
from analyzer.shell.kill.pkill import match_pgrep, parse_pgrep
from analyzer.shell.parse import parse

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits and fork are POSIX")

_MEMORY = 3 << 30
"""Address space of the child: the interpreter with pydantic and tree-sitter maps ~0.6 GB; the
bombs took 24 GB (tree-sitter) and all memory (regcomp)."""


def _bounded(code: str, cpu_seconds: int = 60) -> dict[str, object]:
    """Run ``code`` (which prints one JSON line last) in a child under memory and CPU limits."""
    prelude = textwrap.dedent(f"""
        import json, resource
        resource.setrlimit(resource.RLIMIT_AS, ({_MEMORY}, {_MEMORY}))
        resource.setrlimit(resource.RLIMIT_CPU, ({cpu_seconds}, {cpu_seconds}))
    """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=cpu_seconds * 4)
    assert proc.returncode == 0, f"child died with {proc.returncode}: {proc.stderr[-2000:]}"
    got: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return got


_PARSE = """
    from analyzer.shell.parse import parse
    s = parse(TEXT)
    print(json.dumps({"status": s.status, "parser": s.parser, "names": [c.name for c in s.commands],
                      "notes": s.notes}))
"""


def _parse_bounded(text: str) -> dict[str, object]:
    return _bounded(f"TEXT = {text!r}\n" + textwrap.dedent(_PARSE))


def test_a_cut_pipe_chain_does_not_blow_tree_sitter_memory() -> None:
    # 100 KB of `a|a|…|` (what a command cut by a log looks like): tree-sitter's error recovery
    # took 24 GB; the kill before it must still be seen
    got = _parse_bounded("kill -9 123; " + "a|" * 50_000)
    assert got["status"] == "truncated"
    assert got["parser"] == "lexical"
    names = got["names"]
    assert isinstance(names, list) and names[0] == "kill"


def test_two_thousand_unclosed_heredocs_stop_the_repair_early() -> None:
    # each closer tried re-parses the whole text: 240 parses of 12 KB took > 60 s on the machine
    got = _bounded("""
        from analyzer.shell.parse import parse
        s = parse("cat " + "<<EOF " * 2000)
        print(json.dumps({"status": s.status, "notes": s.notes}))
    """, cpu_seconds=20)
    assert got["status"] == "recovered"


@pytest.mark.parametrize("shape", [
    "( {} )",
    "{{ {}; }}",
    "echo $( {} )",
    "if true; then {}; fi",
    "for i in 1; do {}; done",
])
def test_a_kill_nested_61_deep_is_kept_and_the_parse_says_truncated(shape: str) -> None:
    text = "kill -9 1"
    for _ in range(61):
        text = shape.format(text)
    s = parse(text)
    assert s.status == "truncated"
    assert "kill" in [c.name for c in s.commands]
    assert any("deeper than" in n for n in s.notes)


def test_nesting_under_the_limit_stays_ok() -> None:
    s = parse("( " * 10 + "kill -9 1" + " )" * 10)
    assert s.status == "ok"
    assert [c.name for c in s.commands] == ["kill"]
    assert s.commands[0].contexts.count("subshell") == 10


def test_nested_scripts_deeper_than_followed_say_truncated() -> None:
    s = parse("ssh a " * 8 + "kill 1")
    assert s.status == "truncated"
    assert any("not followed" in n for n in s.notes)


def test_a_stacked_interval_is_not_compiled() -> None:
    # glibc regcomp of a{32767}{32767} takes all memory; pgrep itself cannot compile it
    assert ere.pattern_cost("a{32767}{32767}")[0] > ere.MAX_EXPANDED
    assert ere.ere_span("a{32767}{32767}", "aaa") is None
    opts = parse_pgrep(["pkill", "-f", "a{32767}{32767}"])
    res = match_pgrep(opts, [], bsd=False)
    assert any("states" in n for n in res.notes)


def test_a_backreference_bomb_matches_under_a_deadline() -> None:
    got = _bounded("""
        from analyzer.shell import ere
        pattern = "(.*)(.*)(.*)(.*)(.*)\\\\5\\\\4\\\\3\\\\2\\\\1x"
        span = ere.ere_span(pattern, "python " + "a" * 450)
        print(json.dumps({"span": span, "bound": ere.pattern_bound(pattern)}))
    """, cpu_seconds=30)
    assert got["span"] is False  # did not finish in its deadline: counted as no match
    assert "back-references" in str(got["bound"])


def test_backreferences_still_match_when_they_finish() -> None:
    assert ere.ere_span("(ab)\\1", "xababy") == (1, 5)
    assert ere.ere_span("\\(a\\)\\1", "xaa", basic=True) == (1, 3)


def test_ordinary_patterns_have_no_bound() -> None:
    assert ere.pattern_bound("launch_server.*3000[01]") is None
    assert ere.pattern_bound("a{32767}") is None  # one interval: glibc compiles it in milliseconds


_FUZZ = """
    from hypothesis import HealthCheck, given, settings, strategies as st
    from analyzer.cli.shell import evaluate_kills
    from analyzer.shell.parse import clear_caches, parse

    NOISE = ["a|", "a |& ", "<<EOF ", "cat <<E\\n", "(", ")", "{ ", "}", "$(", "`", "'", '"', "\\\\",
             "if ", "then ", "fi ", "do ", "done ", "&&", "||", ";", "&", "\\n", "$((", "<(", "ssh h ",
             "bash -c ", "x" * 50, "\\u202e", "\\ud800", "\\x00", "\\x1b]52;c;AAAA\\x07"]
    WRAP = ["( {} )", "{{ {}; }}", "echo $( {} )", "if true; then {}; fi", "while x; do {}; done",
            "bash -c '{}'"]
    PATTERNS = ["x{1000}{1000}", "(.*)(.*)(.*)\\\\3\\\\2\\\\1y", "(a|aa)*b", "[[:alpha:]]*" * 20, "srv.*80[0-9]"]

    noise = st.lists(st.tuples(st.sampled_from(NOISE), st.integers(1, 3000)), max_size=3).map(
        lambda parts: "".join(piece * n for piece, n in parts))

    @st.composite
    def commands(draw):
        kill = "pkill -f '" + draw(st.sampled_from(PATTERNS)) + "'"
        text = kill
        for shape in draw(st.lists(st.sampled_from(WRAP), max_size=70)):
            text = shape.format(text)
        return draw(noise) + "\\n" + text + "\\n" + draw(noise), kill

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(commands())
    def run(case):
        text, kill = case
        clear_caches()
        s = parse(text)
        assert s.status in ("ok", "recovered", "truncated", "failed")
        if s.status == "ok":
            # never "ok" with the kill lost: a bound says truncated
            assert "pkill" in [c.name for c in s.commands], text[:300]
        evaluate_kills(text, s, ("123:python " + "a" * 300, "124:srv --port 8080"), "linux", "generic")

    run()
    print(json.dumps({"ok": True}))
"""


def test_fuzz_the_shell_stage_under_resource_limits() -> None:
    """40 examples in CI; the longer campaign: ``SHELL_FUZZ_EXAMPLES=2000 pytest tests/shell/test_bounds.py``."""
    examples = int(os.environ.get("SHELL_FUZZ_EXAMPLES", "40"))
    got = _bounded(f"EXAMPLES = {examples}\n" + textwrap.dedent(_FUZZ), cpu_seconds=60 + 5 * examples)
    assert got == {"ok": True}
