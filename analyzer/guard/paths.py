"""Where the guard keeps its socket and its decision log. Stdlib only (the hook client uses it)."""

from __future__ import annotations

import os
from pathlib import Path

DIR_ENV = "ANALYZER_GUARD_DIR"
"""The folder of the warm server's socket, pid and lock files (tests point it at a temp folder)."""
LOG_ENV = "ANALYZER_GUARD_LOG"
IDLE_ENV = "ANALYZER_GUARD_IDLE"
"""Seconds without a call after which the warm server exits (overrides the config)."""


def runtime_dir() -> Path:
    """Per user, private: ``$ANALYZER_GUARD_DIR``, else ``$XDG_RUNTIME_DIR/analyzer-guard``, else
    ``/tmp/analyzer-guard-<uid>``."""
    if os.environ.get(DIR_ENV):
        d = Path(os.environ[DIR_ENV])
    elif os.environ.get("XDG_RUNTIME_DIR"):
        d = Path(os.environ["XDG_RUNTIME_DIR"]) / "analyzer-guard"
    else:
        d = Path(os.environ.get("TMPDIR") or "/tmp") / f"analyzer-guard-{os.getuid()}"  # not tempfile: slow import
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    return d


def socket_path(d: Path) -> Path:
    return d / "guard.sock"


def pid_path(d: Path) -> Path:
    return d / "guard.pid"


def default_log() -> Path:
    if os.environ.get(LOG_ENV):
        return Path(os.environ[LOG_ENV])
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    return state / "analyzer" / "guard.jsonl"
