from __future__ import annotations

from pathlib import Path

import click

from analyzer.cli._common import fail
from analyzer.ingest import IngestError, detect


@click.command("detect")
@click.argument("path", type=click.Path())
def command(path: str) -> None:
    """Say which format PATH is in and why (exit 2 if none).

    For a folder of sessions, one line per session found in it (a file no format reads, but
    named like a session log, says why); exit 2 if it holds none."""
    if Path(path).is_dir():
        _folder(path)
        return
    try:
        fmt, reason = detect(path)
    except IngestError as exc:
        fail(str(exc))
    click.echo(f"{path}: {fmt.NAME} ({reason})")


def _folder(path: str) -> None:
    """Each session ``check`` and ``batch`` would read under ``path``, as they find them."""
    from analyzer.ingest.discover import discover_sessions

    read = 0
    for found in discover_sessions([path]):
        name = f"{found.path}#{found.member}" if found.member else str(found.path)
        try:
            fmt, reason = detect(found.path)
        except IngestError as exc:
            click.echo(f"{name}: not read: {exc.reason}")
            continue
        read += 1
        click.echo(f"{name}: {fmt.NAME} ({reason})")
    if not read:
        fail(f"{path}: no session in a known format under this folder")
