from __future__ import annotations

import click

from analyzer.ingest import FORMATS


@click.command("formats")
def command() -> None:
    """List the supported log formats and what each reads, in detection order."""
    pad = max(len(n) for n in FORMATS)
    for name, fmt in FORMATS.items():
        click.echo(f"{name.ljust(pad)}  {fmt.DESCRIPTION}")
