"""pkill/pgrep: usage errors, invalid regexes, signals, -n/-x/-u, substituted patterns."""

from __future__ import annotations

import pytest

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run, server


@pytest.mark.parametrize("pattern", ["(?i)vllm", "x{", "launch_server(", "*launch"])
def test_an_invalid_regex_kills_nothing(pattern: str) -> None:
    (v,) = run(f"bash -c 'pkill -f \"{pattern}\"; echo next'", [Process(argv=("vllm", "serve"), label="vllm")])
    assert v.invalid_pattern and v.victims == [] and v.self_kill is None


def test_a_pattern_starting_with_dash_is_an_option_error() -> None:
    (v,) = run("pkill -f '--port 30001'", [server(30001)])
    assert v.victims == [] and any("unrecognized option" in n for n in v.notes)
    assert any("'--'" in n for n in v.notes)
    (ok,) = run("pkill -f -- '--port 30001'", [server(30001)])
    assert labels(ok) == ["sglang :30001"]


def test_two_patterns_are_a_usage_error_on_linux_but_or_on_bsd() -> None:
    procs = [Process(argv=("zq_a",), label="a"), Process(argv=("zq_b",), label="b")]
    (v,) = run("pkill zq_a zq_b", procs)
    assert v.victims == [] and any("only one pattern" in n for n in v.notes)
    (b,) = run("pkill zq_a zq_b", procs, platform="macos")
    assert labels(b) == ["a", "b"]


def test_signal_zero_and_names() -> None:
    (v,) = run("pkill -0 -f zq", [Process(argv=("zq",), label="z")])
    assert v.victims == [] and v.signal == 0
    (h,) = run("pkill --signal HUP zq", [Process(argv=("zq",), label="z")])
    assert h.signal_name == "HUP" and labels(h) == ["z"]


def test_newest_and_exact_and_name_without_f() -> None:
    procs = [Process(pid=10, argv=("zq_srv", "a"), label="old"), Process(pid=20, argv=("zq_srv", "b"), label="new")]
    (n,) = run("pkill -n zq_srv", procs)
    assert labels(n) == ["new"]
    (x,) = run("pkill -x zq_sr", procs)
    assert labels(x) == []
    (f,) = run("pkill zq_srv.*b", procs)  # without -f the subject is the name, not the argv
    assert labels(f) == []


def test_exported_port_is_substituted_into_the_pattern() -> None:
    (v,) = run('export P=30001; pkill -f "launch_server.*--port $P"', [server(30000), server(30001)])
    assert labels(v) == ["sglang :30001"] and not v.unresolved


def test_user_filter_with_a_variable_is_ignored_not_applied() -> None:
    owned = Process(argv=("zq_srv",), user="alice", label="alice's")
    (v,) = run("pkill -u $USER -f zq_srv", [owned])
    assert labels(v) == ["alice's"] and any("$USER" in n for n in v.notes)
    (w,) = run("pkill -u bob -f zq_srv", [owned])
    assert labels(w) == []


def test_long_options_follow_getopt_long() -> None:
    procs = [Process(argv=("zq_server", "--port", "1"), label="z")]
    (full,) = run("pkill --ful 'zq_server --port'", procs)  # an unambiguous prefix, as getopt_long takes it
    assert labels(full) == ["z"]
    (missing,) = run("pkill -f zq -u", procs)
    assert missing.victims == [] and any("option requires an argument -- 'u'" in n for n in missing.notes)
    (unknown,) = run("pkill --bogus zq", procs)
    assert any("unrecognized option '--bogus'" in n for n in unknown.notes)
    (bsd,) = run("pkill --full zq", procs, platform="macos")
    assert bsd.victims == [] and any("invalid option -- '-'" in n for n in bsd.notes)


def test_operands_may_come_before_options_on_linux_only() -> None:
    procs = [Process(argv=("zq_server", "--port", "1"), label="z")]
    (linux,) = run("pkill 'zq_server --port' -f", procs)
    assert labels(linux) == ["z"]
    (bsd,) = run("pkill 'zq_server --port' -f", procs, platform="macos")
    assert bsd.pattern == "zq_server --port" and bsd.victims == []  # BSD: '-f' is a second pattern
