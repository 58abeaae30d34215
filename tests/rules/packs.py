"""Small third-party rule packs for the loader and CLI tests, written into tmp folders."""

from __future__ import annotations

from pathlib import Path

LOGLESS_RULE = '''"""A user rule: launches whose output goes nowhere."""

from __future__ import annotations

from analyzer.lifecycle.facts import Launch
from analyzer.rules import Rule, Severity


class LaunchWithoutLog(Rule):
    """Flags a background server launch whose output is not written to a log file.

    What it does:
        Finds launches with no ``> file`` redirect.

    Why is this bad:
        When the server dies, nobody can read why.

    Known false positives:
        Servers that log to journald or a file of their own.
    """

    name = "launch-without-log"
    severity = Severity.low
    groups = ("hygiene",)
    summary = "A server is launched with its output going nowhere."

    def check(self, world):
        for launch in world.facts_of(Launch):
            if launch.log_file is None and launch.server not in ("systemd", "docker"):
                yield self.finding(world, anchor=launch.event, instance=launch.instance,
                                   message=f"launches the {launch.label} without a log file")
'''

LOGLESS_CASES = """\
cases:
  - name: nohup without a redirect
    example: true
    events:
      - bash: nohup uvicorn app:api --port 8000 &
        expect: launch-without-log
  - name: output to a log
    events:
      - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
        ok: launch-without-log
"""

DOCKER_RULE = '''"""An entry-point rule: docker rm -f."""

from __future__ import annotations

from analyzer.lifecycle.facts import Kill
from analyzer.rules import Rule, Severity


class ForcedContainerRemoval(Rule):
    """Flags ``docker rm -f`` of a container.

    What it does:
        Finds kills written as ``docker rm -f``.

    Why is this bad:
        The container's state and logs are gone with it.

    Known false positives:
        Throwaway containers.
    """

    name = "forced-container-removal"
    severity = Severity.medium
    groups = ("docker",)
    summary = "A container is force-removed."

    def check(self, world):
        for kill in world.kills():
            if kill.text.startswith("docker rm -f"):
                yield self.finding(world, anchor=kill.event, message=f"`{kill.text}` removes the container")
'''

DOCKER_CASES = """\
cases:
  - name: force removal
    events:
      - bash: docker run -d --name api -p 8000:8000 myorg/api
        output: 4c1d2e3f
      - bash: docker rm -f api
        expect: forced-container-removal
  - name: a stop keeps the container
    events:
      - bash: docker run -d --name api -p 8000:8000 myorg/api
        output: 4c1d2e3f
      - bash: docker stop api
        ok: forced-container-removal
"""


def write_user_pack(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "launch_without_log.py").write_text(LOGLESS_RULE, "utf-8")
    (folder / "launch-without-log.cases.yaml").write_text(LOGLESS_CASES, "utf-8")
    return folder


def write_entry_point_pack(root: Path, module: str = "acme_rules") -> Path:
    """A module ``module`` under ``root`` (to put on sys.path) with its cases file beside it."""
    pkg = root / module
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(DOCKER_RULE, "utf-8")
    (pkg / "forced-container-removal.cases.yaml").write_text(DOCKER_CASES, "utf-8")
    return pkg
