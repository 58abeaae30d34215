"""Transparent wrappers are peeled off, and the table-driven option scanner reads like getopt."""

from __future__ import annotations

from analyzer.shell.wrappers import scan_options, strip


def test_posix_scanning_stops_at_the_first_operand() -> None:
    seen: list[tuple[str, str | None]] = []
    i, operands = scan_options(["sudo", "-u", "root", "-E", "kill", "-9"], 1, "u", on_flag=lambda o, v: seen.append((o, v)))
    assert (i, operands) == (4, [])
    assert seen == [("-u", "root"), ("-E", None)]


def test_gnu_scanning_takes_operands_anywhere_and_stops_options_at_double_dash() -> None:
    seen: list[str] = []
    _, operands = scan_options(["grep", "pat", "-v", "--regexp", "x", "-m1", "--", "-i"], 1, "em",
                               frozenset({"--regexp"}), lambda o, v: seen.append(f"{o}={v}"), permute=True)
    assert operands == ["pat", "-i"]
    assert seen == ["-v=None", "--regexp=x", "-m=1"]


def test_strip_finds_the_program_under_wrappers() -> None:
    st = strip(["sudo", "-u", "svc", "nohup", "timeout", "5", "python3", "serve.py"])
    assert st.wrappers == ["sudo", "nohup", "timeout"] and st.start == 6
