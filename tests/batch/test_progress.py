from __future__ import annotations

import io

from analyzer.batch.job import SessionResult
from analyzer.batch.progress import PlainProgress, RichProgress, for_stream


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def result(status: str = "ok") -> SessionResult:
    return SessionResult(session="s.jsonl", key="/s.jsonl", path="s.jsonl", status=status)


def test_a_bar_on_a_terminal_plain_lines_elsewhere() -> None:
    assert isinstance(for_stream(Tty()), RichProgress)
    assert isinstance(for_stream(io.StringIO()), PlainProgress)


def test_plain_lines_every_n_sessions_and_at_the_end() -> None:
    out = io.StringIO()
    p = PlainProgress(out)
    p.start(25)
    for i in range(25):
        p.advance(result("error" if i == 4 else "ok"))
    lines = out.getvalue().splitlines()
    assert [ln.split(",")[0] for ln in lines] == [f"batch: {n}/25 files analyzed" for n in (3, 6, 9, 12, 15, 18,
                                                                                          21, 24, 25)]
    assert lines[1].startswith("batch: 6/25 files analyzed, 1 failed, ")
