from __future__ import annotations

import click

from analyzer.cli._common import fail
from analyzer.ingest import IngestError, detect


@click.command("detect")
@click.argument("path", type=click.Path())
def command(path: str) -> None:
    """Say which format PATH is in and why (exit 2 if none)."""
    try:
        fmt, reason = detect(path)
    except IngestError as exc:
        fail(str(exc))
    click.echo(f"{path}: {fmt.NAME} ({reason})")
