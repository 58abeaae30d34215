"""Containers: ``docker stop|kill|rm -f|restart`` (podman alike) and ``docker compose down|stop|kill``.

A container's processes die with it; ``$(docker ps -q)`` selects every running container.
"""

from __future__ import annotations

import re

from analyzer.shell.docker import DockerCommand, compose_verb, docker_command
from analyzer.shell.kill.chain import host_key
from analyzer.shell.kill.context import KillContext
from analyzer.shell.kill.model import Hit, HitReason, KillVerdict
from analyzer.shell.kill.signals import parse_signal
from analyzer.shell.wrappers import scan_options

__all__ = ["judge_docker"]

_DEFAULT_SIGNALS = {"stop": "TERM", "kill": "KILL", "rm": "KILL", "restart": "TERM"}
_COMPOSE_NAME = re.compile(r"^(?P<project>.+?)[-_](?P<service>.+)[-_](?P<n>\d+)$")


def judge_docker(ctx: KillContext, argv: list[str]) -> KillVerdict | None:
    """``docker [global options] [container] stop|kill|rm|restart NAME…``, or a compose kill."""
    cmd = docker_command(argv)
    if cmd is None or cmd.verb is None:
        return None
    if cmd.compose:
        return _compose(ctx, cmd)
    verb, args = cmd.verb, cmd.args
    if verb not in _DEFAULT_SIGNALS:
        return None
    force = False
    sig: tuple[int, str] | None = None

    def flag(opt: str, value: str | None) -> None:
        nonlocal force, sig
        if opt in ("-s", "--signal"):
            sig = parse_signal(value or "")
        elif opt in ("-f", "--force"):
            force = True

    _, names = scan_options(args, 0, "ts", frozenset({"--time", "--timeout", "--signal"}), flag, permute=True)
    v = ctx.verdict("docker", sig or ctx.default_signal(_DEFAULT_SIGNALS[verb]), targets=names)
    if verb == "rm" and not force:
        v.notes.append("docker rm without -f refuses to remove a running container: nothing is killed")
        return v
    wanted: list[str] = []
    for n in names:
        if n.startswith("$(") or n.startswith("`"):
            wanted.extend(_docker_ps_filter(v, n))
        elif "$" in n:
            v.unresolved.append(n)
        else:
            wanted.append(n.lstrip("/"))
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if p.container is None or host_key(p.host) != hk:
            continue
        ctr = p.container.lstrip("/")
        hit = next((w for w in wanted if _container_matches(ctr, w)), None)
        if hit is not None:
            why = HitReason(mechanism="docker", matched="container", verb=verb, target=hit, subject=ctr,
                            signal_name=v.signal_name)
            v.victims.append(Hit(process=p, why=why))
    if verb == "stop":
        v.notes.append("docker stop sends SIGTERM to the container's PID 1, then SIGKILL after 10 s")
    if verb == "restart":
        v.notes.append("docker restart: the container's processes die, then it starts again")
    return v


def _container_matches(container: str, wanted: str) -> bool:
    if wanted == "*":
        return True
    if wanted.startswith("~"):  # a name filter from `docker ps --filter name=X`
        return re.search(wanted[1:], container) is not None
    return container == wanted or (len(wanted) >= 3 and re.fullmatch(r"[0-9a-f]+", wanted) is not None
                                   and container.startswith(wanted))


def _docker_ps_filter(v: KillVerdict, word: str) -> list[str]:
    """``$(docker ps -q --filter name=X)`` -> every container whose name matches X."""
    m = re.search(r"(?:--filter|-f)[ =]name=([^\s)`'\"]+)", word)
    if "docker ps" not in word and "docker container ls" not in word:
        v.unresolved.append(word)
        return []
    if m:
        v.notes.append(f"containers from `{word}`: every container whose name matches {m.group(1)}")
        return ["~" + m.group(1)]
    v.mark_generic("every running container")
    v.notes.append(f"`{word}` lists every running container")
    return ["*"]


def _compose(ctx: KillContext, cmd: DockerCommand) -> KillVerdict | None:
    """``docker compose [-p PROJECT] down|stop|kill|restart|rm -s [SERVICE…]``. A service is a
    process the caller names as compose's (``manager="compose"``, ``manager_name="PROJECT/SERVICE"``)
    or a container named ``<project>-<service>-<n>``."""
    parts = compose_verb(cmd)
    if parts is None or parts.verb not in ("down", "stop", "kill", "restart", "rm"):
        return None
    if parts.verb == "rm" and not parts.has("-s", "--stop"):
        return None
    services = list(parts.services)
    name = cmd.project
    sig = parse_signal(parts.options.get("-s") or parts.options.get("--signal") or "") if parts.verb == "kill" else None
    v = ctx.verdict("docker-compose", sig or ((9, "KILL") if parts.verb == "kill" else (15, "TERM")),
                    targets=services or ["(all services)"])
    hk = host_key(ctx.cmd.host)
    for p in ctx.processes:
        if host_key(p.host) != hk:
            continue
        if p.manager == "compose" and p.manager_name:
            project, _, service = p.manager_name.rpartition("/")
        elif p.container and (m := _COMPOSE_NAME.match(p.container.lstrip("/"))):
            project, service = m.group("project"), m.group("service")
        else:
            continue
        if (name and project != name) or (services and service not in services):
            continue
        why = HitReason(mechanism="docker-compose", matched="compose container", verb=parts.verb,
                        target=service, subject=p.container or f"{project}-{service}", signal_name=v.signal_name)
        v.victims.append(Hit(process=p, why=why))
    if name is None:
        v.notes.append("the compose project is not named (-p): containers are matched by their "
                       "<project>-<service>-<n> names, so other projects' services of the same name are listed too")
    return v
