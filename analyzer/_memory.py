"""What every stage shares about memory: the cycle collector paused while big object graphs are
built (ingest reads a session, lifecycle builds its world, check runs both). A module of its own,
below every stage, so no stage imports another for it."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cycle collection while a session is read or its world is built. Both steps allocate
    millions of objects that live on and make almost no reference cycles; the collector would
    re-scan the growing heap again and again (measured: a third of ``load`` on a 50 MB session).
    Whatever cycles there are, are collected once it is running again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
