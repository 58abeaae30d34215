"""Run one native call where a deadline and a memory cap can stop it: a forked child.

A C call (tree-sitter's error recovery on a long ``a|a|…|`` chain, glibc ``regexec`` with
back-references) holds the interpreter: no alarm, no thread, no exception can interrupt it, and a
memory limit set on the process would kill the whole batch. A forked child inherits the loaded
parser and regex cache, gets its own ``RLIMIT_AS`` and the parent waits at most ``timeout``
seconds, then kills it. Only inputs that may explode go here (a fork costs a few milliseconds).

Where there is no ``fork`` (Windows) ``call`` says so and the caller picks its own bound.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

MEMORY_LIMIT = 512 << 20
"""Address space a child may add to what the parent had mapped at the fork."""
TIMEOUT_S = 5.0
"""Wall-clock seconds a child may take."""


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    status: Literal["done", "stopped", "unavailable"]
    """``done``: ``value`` is the call's result; ``stopped``: the child ran out of time or memory,
    or raised (``why``); ``unavailable``: no fork on this platform."""
    value: T | None = None
    why: str = ""


def available() -> bool:
    return hasattr(os, "fork")


def call(fn: Callable[..., T], *args: object, memory: int = MEMORY_LIMIT, timeout: float = TIMEOUT_S) -> Outcome[T]:
    """``fn(*args)`` in a forked child under ``memory`` more bytes and ``timeout`` seconds; the
    result comes back pickled."""
    if not available():
        return Outcome("unavailable")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; its coverage is not collected
        code = 0
        try:
            os.close(read_fd)
            _cap_memory(memory)
            payload = pickle.dumps(("ok", fn(*args)), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # anything: the parent only needs to know it failed
            payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"[:300]))
            code = 1
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(write_fd, view):]
        finally:
            os._exit(code)
    os.close(write_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if timed_out:
            _kill(pid)
        _reap(pid)
    if timed_out:
        return Outcome("stopped", why=f"stopped after {timeout:g} s")
    try:
        tag, value = pickle.loads(b"".join(chunks))
    except Exception:  # the child died (out of memory, a native crash) before it finished writing
        return Outcome("stopped", why=f"ran out of its {memory >> 20} MB memory budget or crashed")
    if tag != "ok":
        return Outcome("stopped", why=str(value))
    return Outcome("done", value)


def _cap_memory(extra: int) -> None:
    try:
        import resource
    except ImportError:
        return
    try:
        with open("/proc/self/statm", "rb") as f:
            mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = mapped + extra
    if soft != resource.RLIM_INFINITY:
        want = min(want, soft)
    resource.setrlimit(resource.RLIMIT_AS, (want, hard))


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
