"""The shape of a ``docker`` / ``docker compose`` / ``docker-compose`` command line, read once for
every stage that needs it (the kill evaluation, the world's launches, listings and projects):
global options, ``compose`` and its options, ``container``, then the verb and its arguments."""

from __future__ import annotations

import os
from dataclasses import dataclass

from analyzer.shell.wrappers import scan_options

__all__ = ["ComposeVerb", "DockerCommand", "compose_verb", "docker_command", "run_image"]

PROGRAMS = frozenset({"docker", "podman", "docker-compose", "podman-compose"})
_GLOBAL_WITH_ARG = "Hcl"
_GLOBAL_LONG_WITH_ARG = frozenset({"--host", "--context", "--config", "--log-level"})
_COMPOSE_WITH_ARG = "fp"
_COMPOSE_LONG_WITH_ARG = frozenset({"--file", "--project-name", "--env-file", "--profile", "--project-directory"})
_COMPOSE_KEYS = {"-p": "project", "--project-name": "project", "-f": "file", "--file": "file",
                 "--project-directory": "dir"}
_RUN_WITH_ARG = "pevwulhm"
_RUN_LONG_WITH_ARG = frozenset({
    "--name", "--publish", "--env", "--volume", "--network", "--net", "--workdir", "--env-file", "--entrypoint",
    "--user", "--restart", "--label", "--platform", "--gpus", "--memory", "--cpus", "--mount", "--add-host",
    "--hostname",
})


@dataclass(frozen=True, slots=True)
class DockerCommand:
    """A docker command line split into its parts."""

    compose: bool
    """``docker compose …`` or ``docker-compose …``."""
    verb: str | None
    """``up``, ``ps``, ``run``, ``down``…; None when the line stops before one."""
    args: list[str]
    """The words after the verb."""
    project: str | None = None
    """compose's ``-p`` / ``--project-name`` (the last one given)."""
    files: tuple[str, ...] = ()
    """compose's ``-f`` / ``--file`` values."""
    project_directory: str | None = None
    """compose's ``--project-directory``."""


def docker_command(argv: list[str]) -> DockerCommand | None:
    """The parts of ``argv`` when it runs docker, podman or their compose; None otherwise."""
    if not argv or os.path.basename(argv[0]) not in PROGRAMS:
        return None
    args = argv[1:]
    compose = os.path.basename(argv[0]).endswith("-compose")
    i = 0 if compose else scan_options(args, 0, _GLOBAL_WITH_ARG, _GLOBAL_LONG_WITH_ARG)[0]
    if not compose and i < len(args) and args[i] == "compose":
        compose, i = True, i + 1
    given: dict[str, list[str]] = {"project": [], "file": [], "dir": []}
    if compose:
        def flag(opt: str, value: str | None) -> None:
            if value is not None and (key := _COMPOSE_KEYS.get(opt)):
                given[key].append(value)

        i = scan_options(args, i, _COMPOSE_WITH_ARG, _COMPOSE_LONG_WITH_ARG, flag)[0]
    elif i < len(args) and args[i] in ("container", "containers"):
        i += 1
    verb, rest = (args[i], args[i + 1 :]) if i < len(args) else (None, [])
    return DockerCommand(compose, verb, rest, _last(given["project"]), tuple(given["file"]), _last(given["dir"]))


def _last(values: list[str]) -> str | None:
    return values[-1] if values else None


def run_image(args: list[str]) -> str | None:
    """The image of ``docker run [OPTIONS] IMAGE [COMMAND]`` from the words after ``run``."""
    i = scan_options(args, 0, _RUN_WITH_ARG, _RUN_LONG_WITH_ARG)[0]
    return args[i] if i < len(args) else None


# compose verbs' options that take a value, so their values are not read as services
_VERB_WITH_ARG = {
    "up": ("t", frozenset({"--timeout", "--scale", "--exit-code-from", "--attach", "--no-attach", "--pull",
                           "--wait-timeout", "--attach-dependencies-of"})),
    "stop": ("t", frozenset({"--timeout"})),
    "restart": ("t", frozenset({"--timeout"})),
    "down": ("t", frozenset({"--timeout", "--rmi"})),
    "kill": ("s", frozenset({"--signal"})),
    "rm": ("", frozenset()),
    "start": ("", frozenset()),
    "create": ("", frozenset({"--scale", "--pull"})),
}


@dataclass(frozen=True, slots=True)
class ComposeVerb:
    """What a compose verb's own words say: the services it names and the options it was given."""

    verb: str
    services: tuple[str, ...]
    """The services named (none: the whole stack)."""
    options: dict[str, str | None]
    """Each option as written (``-d``, ``--build``, ``-s``), with its value when it takes one; a
    bundle of short flags (``-sf``) is split into its letters."""

    def has(self, *names: str) -> bool:
        """Whether any of ``names`` (``-d``, ``--detach``) was given."""
        return any(n in self.options for n in names)


def compose_verb(cmd: DockerCommand) -> ComposeVerb | None:
    """The services and options of ``docker compose VERB [OPTIONS] [SERVICE…]`` for the verbs that
    start or stop services; None for another command or verb."""
    if not cmd.compose or cmd.verb not in _VERB_WITH_ARG:
        return None
    short, long = _VERB_WITH_ARG[cmd.verb]
    options: dict[str, str | None] = {}

    def flag(opt: str, value: str | None) -> None:
        options[opt] = value

    _, services = scan_options(cmd.args, 0, short, long, flag, permute=True)
    return ComposeVerb(cmd.verb, tuple(services), options)
