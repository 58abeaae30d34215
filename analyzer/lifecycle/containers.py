"""Whose containers these are: what ``docker ps`` tables and ``compose up`` output say.

Two projects whose folders share a name share a compose project name (``repo``), so one's
``docker compose down`` removes the other's containers. The command alone cannot show it; the
output around it can. The ledger keeps, per host, the containers this session's agent created
(the ``Container repo-api-1 Created`` lines of its own ``up`` and the images that ``up`` built),
the rows of every ``docker ps`` / ``docker compose ps`` table it printed, and from those the
containers someone else made, each with the evidence a reader can check in the log:

- a container of the agent's name now runs another image than the agent's ``up`` built for it;
- a compose service of the agent's stack is now a container of another name and image;
- a container the agent never made was recreated (a new id under the same name) while the
  agent started no container at all.

A teardown whose output then shows such a container stopped or removed stopped something the
session did not start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ContainerLedger", "ContainerRow", "container_rows", "made_containers", "stopped_containers"]


@dataclass(frozen=True, slots=True)
class ContainerRow:
    """One row of a ``docker ps`` or ``docker compose ps`` table."""

    name: str
    image: str
    id: str | None = None
    """``docker ps`` only: the short container id."""
    service: str | None = None
    """``docker compose ps`` only: the service the container runs."""
    created: str = ""
    """As printed (``12 seconds ago``)."""
    status: str = ""
    ports: str = ""
    """As printed (``0.0.0.0:4200->80/tcp, [::]:4200->80/tcp``)."""

    @property
    def published(self) -> list[int]:
        """Host ports the container publishes (``0.0.0.0:4200->80/tcp`` -> 4200)."""
        return list(dict.fromkeys(int(p) for p in re.findall(r":(\d{1,5})->", self.ports)))


# columns as the two tables name them; NAMES is last in ``docker ps``, first in ``compose ps``
_DOCKER_PS = ("CONTAINER ID", "IMAGE", "COMMAND", "CREATED", "STATUS", "PORTS", "NAMES")
_COMPOSE_PS = ("NAME", "IMAGE", "COMMAND", "SERVICE", "CREATED", "STATUS", "PORTS")
_NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")
_IMAGE = re.compile(r"^[\w./:@-]+$")


# a row whose header a ``| grep`` dropped: the quoted COMMAND cell and the "… ago" CREATED cell
# delimit the others
_BARE_DOCKER_PS = re.compile(r'^(?P<id>[0-9a-f]{12})\s+(?P<image>\S+)\s+"[^"]*"\s+(?P<created>.+? ago)\s+'
                             r'(?P<status>(?:Up|Exited|Created|Restarting|Paused|Dead|Removal)\b.*?)\s{2,}.*?(?P<name>\S+)$')
_BARE_COMPOSE_PS = re.compile(r'^(?P<name>[A-Za-z0-9][\w.-]*)\s+(?P<image>\S+)\s+"[^"]*"\s+(?P<service>[\w.-]+)\s+'
                              r'(?P<created>.+? ago)\s+(?P<status>(?:Up|Exited|Created|Restarting|Paused|Dead)\b.*?)'
                              r'(?:\s{2,}|$)')


def container_rows(output: str) -> list[ContainerRow]:
    """The rows of every ``docker ps`` / ``docker compose ps`` table in ``output`` (a call may
    print several, between other output). Columns are cut where the header puts them: cells
    hold spaces (``Up 2 minutes (healthy)``), and an empty PORTS cell is blank. With no header
    (``docker ps | grep db``) a line is a row only when its quoted command and "… ago" show it."""
    rows: list[ContainerRow] = []
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        header = lines[i]
        cols = _columns(header)
        i += 1
        if cols is None:
            m = _BARE_DOCKER_PS.match(header) or _BARE_COMPOSE_PS.match(header)
            if m:
                g = m.groupdict()
                rows.append(ContainerRow(name=g["name"], image=g["image"], id=g.get("id"), service=g.get("service"),
                                         created=g["created"], status=g["status"].strip()))
            continue
        while i < len(lines) and lines[i].strip() and _columns(lines[i]) is None:
            row = _row(lines[i], cols)
            if row is None:
                break
            rows.append(row)
            i += 1
    return rows


def _columns(header: str) -> dict[str, int] | None:
    names = _DOCKER_PS if header.startswith("CONTAINER ID") else _COMPOSE_PS if header.startswith("NAME ") else None
    if names is None:
        return None
    cols = {n: header.find(n) for n in names}
    if any(v < 0 for k, v in cols.items() if k in ("IMAGE", "STATUS")) or ("NAMES" not in cols and "SERVICE" not in cols):
        return None
    return {k: v for k, v in cols.items() if v >= 0}


def _row(line: str, cols: dict[str, int]) -> ContainerRow | None:
    # a cell runs from its column's start to the next column's (the last to the line's end)
    order = sorted(cols, key=cols.__getitem__)
    ends = dict(zip(order, [cols[n] for n in order[1:]] + [len(line)], strict=True))

    def cell(name: str) -> str:
        return line[cols[name]:ends[name]].strip() if name in cols else ""

    name = cell("NAMES") if "NAMES" in cols else cell("NAME")
    image = cell("IMAGE")
    if not _NAME.match(name) or not _IMAGE.match(image):
        return None  # a wrapped or cut line, or not a table row at all
    return ContainerRow(name=name, image=image, id=cell("CONTAINER ID") or None, service=cell("SERVICE") or None,
                        created=cell("CREATED"), status=cell("STATUS"), ports=cell("PORTS"))


_PROGRESS = re.compile(r"^\s*(?:✔\s*)?Container\s+(\S+)\s+(\w+)", re.MULTILINE)
_BUILT = re.compile(r"^\s*(?:✔\s*)?Image\s+(\S+)\s+Built\b", re.MULTILINE)
_MADE = frozenset({"Created", "Recreated", "Started"})
_GONE = frozenset({"Stopping", "Stopped", "Removing", "Removed", "Killing", "Killed"})


def stopped_containers(output: str) -> list[str]:
    """Containers a compose command's progress lines show it stopping or removing."""
    return list(dict.fromkeys(name for name, verb in _PROGRESS.findall(output) if verb in _GONE))


def made_containers(output: str) -> list[str]:
    """Containers a compose ``up``/``create``/``run`` shows it creating or starting."""
    return list(dict.fromkeys(name for name, verb in _PROGRESS.findall(output) if verb in _MADE))


@dataclass(slots=True)
class _Host:
    mine: dict[str, str | None] = field(default_factory=dict)
    """Containers the agent created -> the image its command built or ran for it (None: unknown)."""
    service_member: dict[str, ContainerRow] = field(default_factory=dict)
    """compose service -> the agent's container for it, as a ``compose ps`` table showed it."""
    last_seen: dict[str, tuple[int, ContainerRow]] = field(default_factory=dict)
    """container name -> the latest listing that showed it (event index, row)."""
    foreign: dict[str, tuple[int, str]] = field(default_factory=dict)
    """container name -> (event index, evidence) that someone else made it."""
    last_made: int = -1
    """Event index of the agent's latest command that may have created a container here."""
    first_made: int = -1
    """Event index of the agent's first such command (-1: none yet)."""
    refused: dict[int, int] = field(default_factory=dict)
    """host port -> event at which Docker refused to publish it for the agent ("port is already
    allocated": another container holds it)."""


class ContainerLedger:
    """Per host, the containers the agent made and the ones someone else made (see module doc)."""

    def __init__(self) -> None:
        self._hosts: dict[str, _Host] = {}

    def _host(self, host: str) -> _Host:
        return self._hosts.setdefault(host, _Host())

    def agent_made(self, host: str, event: int, output: str, ran: dict[str, str] | None = None) -> None:
        """An agent command that creates containers ran: its progress lines (and ``ran``: name ->
        image for ``docker run --name``) are the agent's containers from now on."""
        h = self._host(host)
        h.last_made = event
        if h.first_made < 0:
            h.first_made = event
        built = _BUILT.findall(output)
        for name in [*made_containers(output), *(ran or {})]:
            image = (ran or {}).get(name) or next(
                (b for b in built if re.fullmatch(re.escape(b) + r"[-_]\d+", name)), None)
            h.mine[name] = image  # None: learnt from the next listing (a recreate may change it)
            h.foreign.pop(name, None)

    def refused(self, host: str, event: int, port: int) -> None:
        """Docker refused the agent's container ``port``: a container already publishes it."""
        self._host(host).refused.setdefault(port, event)

    def listed(self, host: str, event: int, rows: list[ContainerRow]) -> None:
        """A ``docker ps`` / ``compose ps`` table was printed: learn and judge its rows."""
        h = self._host(host)
        found: dict[str, str] = {}
        for row in rows:
            why = self._foreign_why(h, event, row)
            if why:
                found[row.name] = why
            elif row.service and (row.name in h.mine or row.service not in h.service_member):
                h.service_member[row.service] = row  # the agent's project as its own folder lists it
            if row.name in h.mine and h.mine[row.name] is None and row.name not in found:
                h.mine[row.name] = row.image
        # rows created in the same moment as a foreign container of the same project are its stack
        by_name = {row.name: row for row in rows}
        for row in rows:
            if row.name in found or row.name in h.foreign or not row.created:
                continue
            mate = next((f for f in found if by_name[f].created == row.created
                         and _project(f) == _project(row.name)), None)
            if mate is not None:
                found[row.name] = f"created together with {mate} ({row.created})"
        for name, why in found.items():
            h.foreign[name] = (event, why)
        for row in rows:
            h.last_seen[row.name] = (event, row)

    def _foreign_why(self, h: _Host, event: int, row: ContainerRow) -> str | None:
        mine_image = h.mine.get(row.name)
        if mine_image and _image(row.image) != _image(mine_image):
            return (f"{row.name} runs image {row.image}, not the {mine_image} this session's command "
                    f"made it from")
        if row.service and row.name not in h.mine:
            member = h.service_member.get(row.service)
            if member is not None and member.name != row.name and _image(member.image) != _image(row.image):
                return (f"service {row.service} is container {row.name} ({row.image}), not this session's "
                        f"{member.name} ({member.image})")
        held = [p for p in row.published if h.refused.get(p, event) < event]
        if row.name not in h.mine and held and row.status.startswith("Up"):
            return (f"{row.name} publishes :{held[0]}, which Docker would not give this session's container "
                    f"(event {h.refused[held[0]]}: port is already allocated)")
        before = h.last_seen.get(row.name)
        if row.name not in h.mine and before is not None and row.id and before[1].id \
                and before[1].id != row.id and h.last_made < before[0]:
            return (f"{row.name} was recreated under a new id ({before[1].id}, then {row.id}) while this "
                    "session started no container")
        return None

    def publisher(self, host: str, port: int) -> tuple[int, ContainerRow, str | None] | None:
        """The container the latest listing showed up and publishing ``port`` on ``host``: (that
        listing's event, its row, whose it is in words when not the agent's: someone else's, with the
        evidence, or one listed before the agent made any container here). None for no such row."""
        h = self._host(host)
        shown = [(at, row) for at, row in h.last_seen.values() if row.status.startswith("Up") and port in row.published]
        if not shown:
            return None
        at, row = max(shown, key=lambda pair: pair[0])
        if row.name in h.mine:
            return at, row, None
        if row.name in h.foreign:
            return at, row, h.foreign[row.name][1]
        first = min((e for e, r in h.last_seen.values() if r.name == row.name), default=at)
        if h.first_made < 0 or first < h.first_made:
            return at, row, f"a listing showed it publishing :{port} before this session made any container here"
        return at, row, None

    def foreign(self, host: str, name: str) -> tuple[int, str] | None:
        """(event, evidence) when someone other than the agent made container ``name``."""
        return self._host(host).foreign.get(name)


def _image(ref: str) -> str:
    """An image reference without the parts that name the same image (``docker.io/library/``,
    ``:latest``)."""
    ref = ref.removeprefix("docker.io/").removeprefix("library/")
    return ref.removesuffix(":latest")


def _project(name: str) -> str:
    """``repo`` of ``repo-api-1``; the name itself when it has no ``-<service>-<n>`` tail."""
    m = re.match(r"^(.+?)[-_][^-_]+[-_]\d+$", name)
    return m.group(1) if m else name
