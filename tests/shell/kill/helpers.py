"""Shared helpers for the kill-semantics tests: evaluate a command text, name the victims, make a server."""

from __future__ import annotations

from collections.abc import Sequence

from analyzer.shell.kill import KillVerdict, Process, evaluate
from analyzer.shell.model import ShellFrame
from analyzer.shell.parse import parse

HOST = "root@10.1.230.174"


def run(
    text: str, processes: Sequence[Process] = (), *, harness: ShellFrame | None = None, platform: str = "linux",
) -> list[KillVerdict]:
    """Every verdict of ``text`` among ``processes``."""
    return evaluate(parse(text), processes, harness=harness, platform=platform)


def labels(v: KillVerdict) -> list[str]:
    """The labels of a verdict's victims, in signal order."""
    return [x.process.label for x in v.victims]


def server(port: int, *, host: str | None = None, extra: tuple[str, ...] = (), pid: int | None = None) -> Process:
    """An sglang server on ``port``."""
    return Process(
        pid=pid, argv=("python3", "-m", "sglang.launch_server", "--model-path", "/m", *extra, "--port", str(port)),
        host=host, kind="server", label=f"sglang :{port}" + (f"@{host}" if host else ""), ports=(port,),
    )
