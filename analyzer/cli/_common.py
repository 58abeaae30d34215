"""Helpers shared by the command modules: loading with clear errors, diagnostics, widths."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from analyzer.cli._exit import EXIT_USAGE
from analyzer.events import Session
from analyzer.ingest import IngestError, load

if TYPE_CHECKING:
    from analyzer.lifecycle.catalog import Catalog


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


def open_in_browser(page: Path) -> None:
    """``--open``: a written page in the user's browser (``$BROWSER`` when set, as ``webbrowser``
    reads it); without one, stderr says where the page is."""
    import webbrowser

    if not webbrowser.open(page.resolve().as_uri()):
        click.echo(f"analyzer: could not open a browser; the page is {page}", err=True)


def config_catalog(config_path: str | None) -> Catalog:
    """The server catalog ``check`` would use: the built-in one plus the config's ``catalog`` kinds
    (``--config`` or the config found upwards); a bad config is a usage error."""
    from analyzer.config import ConfigError, load_config
    from analyzer.lifecycle.catalog import Catalog, CatalogError, default_catalog

    try:
        config = load_config(Path(config_path) if config_path else None)
        return Catalog.load(config.catalog) if config.catalog else default_catalog()
    except ConfigError as exc:
        fail(str(exc))
    except CatalogError as exc:
        fail(f"{config.source or 'config'}: [catalog] {exc}")


def rule_names(values: tuple[str, ...]) -> list[str] | None:
    """``--select``/``--ignore`` values, each maybe comma-separated, as one list; None if empty."""
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None
