"""Signal names and numbers as kill, pkill and killall read them, on Linux and the BSDs."""

from __future__ import annotations

import pytest

from analyzer.shell.kill.signals import is_fatal, parse_signal


@pytest.mark.parametrize(("spec", "bsd", "want"), [
    ("9", False, (9, "KILL")), ("KILL", False, (9, "KILL")), ("SIGKILL", False, (9, "KILL")),
    ("kill", False, (9, "KILL")), ("0", False, (0, "0")), ("10", False, (10, "USR1")),
    ("10", True, (10, "BUS")), ("USR1", True, (30, "USR1")), ("INFO", False, None), ("bogus", False, None),
])
def test_parse_signal_by_name_or_number(spec: str, bsd: bool, want: tuple[int, str] | None) -> None:
    assert parse_signal(spec, bsd) == want


def test_only_signals_that_kill_by_default_are_fatal() -> None:
    assert is_fatal("TERM") and is_fatal("KILL") and is_fatal("HUP")
    assert not is_fatal("0") and not is_fatal("CONT") and not is_fatal("STOP") and not is_fatal("WINCH")
