"""Progress while sessions are analyzed: a rich bar on a terminal, a plain line every N sessions
otherwise (CI logs, pipes), where a redrawn bar would be noise."""

from __future__ import annotations

import sys
import time
from typing import IO, Protocol

from analyzer.batch.job import SessionResult


class Progress(Protocol):
    def start(self, total: int) -> None: ...

    def advance(self, result: SessionResult) -> None: ...

    def stop(self) -> None: ...


class PlainProgress:
    """``batch: 120/1200 files analyzed, 3 failed, 12.0 s`` every ``every`` files and at the end (a
    file may hold several sessions: the summary counts those)."""

    def __init__(self, stream: IO[str] | None = None, every: int | None = None) -> None:
        self.stream = stream or sys.stderr
        self.every = every
        self.done = self.failed = self.total = 0
        self.t0 = time.monotonic()

    def start(self, total: int) -> None:
        self.total, self.t0 = total, time.monotonic()
        if self.every is None:
            self.every = max(1, min(100, -(-total // 10)))  # about ten lines, at most 100 sessions apart

    def advance(self, result: SessionResult) -> None:
        self.done += 1
        self.failed += result.status != "ok"
        if self.done % (self.every or 1) == 0 or self.done == self.total:
            print(f"batch: {self.done}/{self.total} files analyzed, {self.failed} failed, "
                  f"{time.monotonic() - self.t0:.1f} s", file=self.stream, flush=True)

    def stop(self) -> None:
        pass


class RichProgress:
    """A live bar on stderr: done/total, failures, elapsed and remaining time."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("[bold]analyzing"), BarColumn(bar_width=30), MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"), TimeElapsedColumn(), TextColumn("eta"),
            TimeRemainingColumn(),
            console=Console(stderr=True), transient=False,
            auto_refresh=False,  # no refresh thread: worker processes are forked while the bar runs
        )
        self.task = self.bar.add_task("analyzing", total=0, failed=0)
        self.failed = 0

    def start(self, total: int) -> None:
        self.bar.update(self.task, total=total)
        self.bar.start()
        self.bar.refresh()

    def advance(self, result: SessionResult) -> None:
        self.failed += result.status != "ok"
        self.bar.update(self.task, advance=1, failed=self.failed)
        self.bar.refresh()

    def stop(self) -> None:
        self.bar.stop()


def for_stream(stream: IO[str] | None = None) -> Progress:
    """A rich bar when ``stream`` (stderr) is a terminal, plain lines otherwise."""
    stream = stream or sys.stderr
    isatty = getattr(stream, "isatty", None)
    return RichProgress() if isatty is not None and isatty() else PlainProgress(stream)
