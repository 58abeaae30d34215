"""Helpers shared by the command modules: loading with clear errors, diagnostics, widths."""

from __future__ import annotations

import shutil
import sys
from typing import NoReturn

import click

from analyzer.cli._exit import EXIT_USAGE
from analyzer.events import Session
from analyzer.ingest import IngestError, load


def fail(message: str) -> NoReturn:
    click.echo(f"analyzer: {message}", err=True)
    sys.exit(EXIT_USAGE)


def load_or_fail(path: str, format: str | None = None) -> Session:
    """Load a session; exit 2 with the file and reason when nothing could be read."""
    try:
        session = load(path, format=format)
    except IngestError as exc:
        fail(str(exc))
    if not session.events and any(d.level == "error" for d in session.diagnostics):
        echo_diagnostics(session)
        fail(f"{path}: no readable record")
    return session


def echo_diagnostics(session: Session, limit: int = 20) -> None:
    """Diagnostics to stderr, linter style, at most ``limit`` (then a count of the rest)."""
    for d in session.diagnostics[:limit]:
        where = d.file or session.path
        loc = f"{where}:{d.line}" if d.line is not None else where
        click.echo(f"{loc}: {d.level.value}: {d.message}", err=True)
    rest = len(session.diagnostics) - limit
    if rest > 0:
        click.echo(f"{session.path}: … {rest} more diagnostics (see --format json)", err=True)


def width() -> int:
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def use_colour(stream: object) -> bool:
    """Colour for a terminal: not when piped or redirected, nor when ``NO_COLOR`` is set to
    anything (no-color.org); ``FORCE_COLOR`` set forces it."""
    import os

    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
