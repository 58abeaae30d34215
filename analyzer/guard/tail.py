"""Reading the transcript a hook points at, as it grows.

Claude Code's JSONL and Codex's rollouts are read incrementally: only the bytes added since the
last call, through the format reader's own per-record code, so a 50 MB transcript costs its size
once and then only what each turn adds. Gemini CLI's chat file is one JSON document the CLI
rewrites whole: it is read again when its size or mtime changed.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import orjson

from analyzer.events import Event, ToolEvent
from analyzer.ingest import codex, load
from analyzer.ingest.base import IngestError, SessionBuilder
from analyzer.ingest.claude_code import _File, _Reader


class Tail(Protocol):
    def read(self) -> bool:
        """Take in what the file gained; True when the events before were replaced (start over)."""
        ...

    @property
    def events(self) -> list[Event]:
        ...

    def settled(self, ev: Event) -> bool:
        """Whether ``ev`` is final (a shell call whose result is in)."""
        ...


class _LineTail:
    """A JSONL transcript read from where the last call stopped (whole lines only); the format's
    own reader takes each record (``_reset``, ``_entry``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.line = 0
        self._reset()

    def _reset(self) -> None:
        raise NotImplementedError

    def _entry(self, value: dict[str, Any]) -> None:
        raise NotImplementedError

    def read(self) -> bool:
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return False
        restarted = size < self.offset  # rewritten or truncated: read it again from the start
        if restarted:
            self.offset = self.line = 0
            self._reset()
        if size == self.offset:
            return restarted
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read(size - self.offset)
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        for raw in data[:end].splitlines():
            self.line += 1
            if not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # the batch reader's diagnostics are for `check`; the guard reads on
            if isinstance(value, dict):
                try:
                    self._entry(value)
                except (TypeError, ValueError, AttributeError, KeyError):
                    continue
        self.offset += end
        return restarted


class ClaudeTail(_LineTail):
    """A Claude Code transcript, through the Claude Code reader's own per-entry code."""

    def _reset(self) -> None:
        self.builder = SessionBuilder(path=self.path, format="claude-code")
        self.reader = _Reader(self.builder, set())
        self.file = _File(path=self.path, source=None, agent=None)

    def _entry(self, value: dict[str, Any]) -> None:
        self.reader.entry(value, self.line, self.file)

    @property
    def events(self) -> list[Event]:
        return self.file.events

    def settled(self, ev: Event) -> bool:
        return not (isinstance(ev, ToolEvent) and ev.ref is not None and ev.ref in self.file.pending)


class CodexTail(_LineTail):
    """A Codex rollout, through the Codex reader's own per-record code: a call's output, written
    records later, completes the call already read."""

    WAIT = 16
    """Events after which a call still without output counts as settled (one that never gets it)."""

    def _reset(self) -> None:
        self.reader = codex._Reader(self.path)

    def _entry(self, value: dict[str, Any]) -> None:
        self.reader.line = self.line
        self.reader.record(value)

    @property
    def events(self) -> list[Event]:
        return self.reader.b.events

    def settled(self, ev: Event) -> bool:
        if not (isinstance(ev, ToolEvent) and ev.command is not None and ev.output is None
                and ev.exit_code is None):
            return True
        return not any(e is ev for e in self.reader.b.events[-self.WAIT:])


def _key(ev: Event) -> tuple[object, ...]:
    """What tells two readings of one event apart (cheap: compared for every event on a re-read)."""
    return (ev.kind, getattr(ev, "text", None), getattr(ev, "command", None), getattr(ev, "output", None),
            getattr(ev, "exit_code", None), ev.ref)


class ReloadTail:
    """Any other format (Gemini CLI's chat file, one JSON document the CLI rewrites): read whole
    again when the file changed. A session only grows, so the events read before are kept (and
    the world built on them) unless the new reading differs in them."""

    def __init__(self, path: Path, format: str | None = None) -> None:
        self.path = path
        self.format = format
        self.stamp: tuple[int, int] | None = None
        self._events: list[Event] = []

    @property
    def events(self) -> list[Event]:
        return self._events

    def settled(self, ev: Event) -> bool:
        return self.settled_in(ev, self._events)

    def read(self) -> bool:
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        stamp = (st.st_size, st.st_mtime_ns)
        if stamp == self.stamp:
            return False
        self.stamp = stamp
        before = self._events
        try:
            self._events = list(load(self.path, self.format).events)
        except IngestError:
            self._events = []
        # the world took in all but a last call still waiting for its result
        kept = before[:-1] if before and not self.settled_in(before[-1], before) else before
        return len(kept) > len(self._events) or any(_key(a) != _key(b) for a, b in zip(kept, self._events, strict=False))

    def settled_in(self, ev: Event, events: list[Event]) -> bool:
        return not (isinstance(ev, ToolEvent) and ev.command is not None and ev.output is None
                    and ev.exit_code is None and ev is events[-1])


ASIDE_BYTES = 4 << 20
"""A first read of a transcript this large runs in a forked copy while the server warms up."""


def read_aside(tail: Tail, warm: Callable[[], object]) -> bool:
    """``tail.read()`` in a forked copy of the process while this one runs ``warm`` (spaCy's import
    and pipeline: most of a second either way), then the copy's tail state taken over. A first
    call on a 50 MB session does both at once on two cores instead of one after the other. If the
    copy fails, the tail is read here."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        try:
            gc.disable()  # a collection would touch (and so copy) every page of the parent's heap
            os.close(r)
            restarted = tail.read()
            with os.fdopen(w, "wb") as out:
                out.write(pickle.dumps((restarted, tail.__dict__), protocol=pickle.HIGHEST_PROTOCOL))
        finally:
            os._exit(0)
    os.close(w)
    try:
        with contextlib.suppress(Exception):  # the first judgement loads it anyway
            warm()
        with os.fdopen(r, "rb") as inp:
            data = inp.read()
    finally:
        os.waitpid(pid, 0)
    try:
        restarted, state = pickle.loads(data)  # written by our own fork, just now
    except Exception:
        return tail.read()
    tail.__dict__.update(state)
    return bool(restarted)


def tail_for(agent: str, path: str | None) -> Tail | None:
    """The reader for a hook's ``transcript_path`` (None: the hooks are the only record)."""
    if not path or not Path(path).is_file():
        return None
    if agent == "claude-code":
        return ClaudeTail(Path(path))
    if agent == "codex":
        return CodexTail(Path(path))
    return ReloadTail(Path(path), {"gemini": "gemini-cli"}.get(agent))
