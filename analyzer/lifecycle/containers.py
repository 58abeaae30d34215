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
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["ContainerLedger", "ContainerRow", "PsFormat", "container_rows", "made_containers", "progress_lines", "ps_format",
           "stopped_containers"]


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


def container_rows(output: str, formats: Sequence[PsFormat] = ()) -> list[ContainerRow]:
    """The rows of every ``docker ps`` / ``docker compose ps`` table in ``output`` (a call may
    print several, between other output). Columns are cut where the header puts them: cells
    hold spaces (``Up 2 minutes (healthy)``), and an empty PORTS cell is blank. With no header
    (``docker ps | grep db``) a line is a row only when its quoted command and "… ago" show it.
    ``formats``: the ``--format`` templates of the call's listings (``ps_format``), whose own
    headers (``table …``) or bare rows are read too."""
    rows: list[ContainerRow] = []
    lines = output.splitlines()
    custom = [f for f in formats if f.fields]
    i = 0
    while i < len(lines):
        header = lines[i]
        cols = _columns(header) or next((c for f in custom if f.table and (c := f.header_columns(header))), None)
        i += 1
        if cols is None:
            if (bare := next((r for f in custom if not f.table and (r := f.bare_row(header))), None)) is not None:
                rows.append(bare)
                continue
            m = _BARE_DOCKER_PS.match(header) or _BARE_COMPOSE_PS.match(header)
            if m:
                g = m.groupdict()
                rows.append(ContainerRow(name=g["name"], image=g["image"], id=g.get("id"), service=g.get("service"),
                                         created=g["created"], status=g["status"].strip()))
            continue
        running = next((f.running for f in custom if f.table and f.header_columns(header)), False)
        while i < len(lines) and lines[i].strip() and _columns(lines[i]) is None:
            row = _row(lines[i], cols, running)
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


def _row(line: str, cols: dict[str, int], running: bool = False) -> ContainerRow | None:
    """One row cut by its header's columns. ``running``: a custom table of ``docker ps`` without
    ``-a`` and without a STATUS column, whose rows are running containers all the same."""
    # a cell runs from its column's start to the next column's (the last to the line's end)
    order = sorted(cols, key=cols.__getitem__)
    ends = dict(zip(order, [cols[n] for n in order[1:]] + [len(line)], strict=True))

    def cell(name: str) -> str:
        return line[cols[name]:ends[name]].strip() if name in cols else ""

    return _made_row({k: cell(k) for k in cols}, running)


def _made_row(cells: dict[str, str], running: bool) -> ContainerRow | None:
    name = cells.get("NAMES") or cells.get("NAME") or ""
    image = cells.get("IMAGE", "")
    if not _NAME.match(name) or ("IMAGE" in cells and not _IMAGE.match(image)):
        return None  # a wrapped or cut line, or not a table row at all
    status = cells.get("STATUS") or cells.get("STATE", "")
    if not status and running:
        status = "Up"
    elif status in ("running", "exited", "created", "restarting", "paused", "dead"):
        status = {"running": "Up"}.get(status, status.capitalize())  # {{.State}}: the status's first word
    return ContainerRow(name=name, image=image, id=cells.get("CONTAINER ID") or None,
                        service=cells.get("SERVICE") or None, created=cells.get("CREATED", ""), status=status,
                        ports=cells.get("PORTS", ""))


# the header docker prints for each ``--format`` placeholder (docker/cli's container formatter;
# compose ps adds Name and Service)
_HEADERS = {"ID": "CONTAINER ID", "Image": "IMAGE", "Command": "COMMAND", "CreatedAt": "CREATED AT",
            "RunningFor": "CREATED", "Ports": "PORTS", "State": "STATE", "Status": "STATUS", "Size": "SIZE",
            "Names": "NAMES", "Name": "NAME", "Service": "SERVICE", "Labels": "LABELS", "Mounts": "MOUNTS",
            "Networks": "NETWORKS"}
_PLACEHOLDER = re.compile(r"\{\{\s*\.(\w+)\s*\}\}")
# a cell's text in a bare row: names, ids and images are one word; the others may hold spaces
_ONE_WORD = frozenset({"ID", "Image", "Names", "Name", "Service"})


@dataclass(frozen=True, slots=True)
class PsFormat:
    """A ``docker ps`` / ``compose ps`` ``--format`` template: ``table`` and its placeholders."""

    template: str
    table: bool
    """``table …``: a header row of the columns' names, then rows aligned under it."""
    fields: tuple[str, ...]
    """The placeholders in order (``Names``, ``Status``…); empty for ``json`` and other templates."""
    running: bool
    """Listed by ``docker ps`` without ``-a``: every row is a running container."""

    def header_columns(self, line: str) -> dict[str, int] | None:
        """Where each column starts when ``line`` is this table's header, else None."""
        names = [_HEADERS.get(f, f.upper()) for f in self.fields]
        if not re.fullmatch(r"\s*" + r"\s+".join(map(re.escape, names)) + r"\s*", line):
            return None
        cols: dict[str, int] = {}
        at = 0
        for n in names:
            at = line.index(n, at)
            cols[n] = at
            at += len(n)
        return cols if any(n in cols for n in ("NAMES", "NAME")) else None

    def bare_row(self, line: str) -> ContainerRow | None:
        """``line`` as one row of this template without a header (``{{.Names}} {{.Status}}``)."""
        if not any(f in ("Names", "Name") for f in self.fields):
            return None
        m = _bare_pattern(self.template).fullmatch(line.strip())
        if m is None:
            return None
        cells = {_HEADERS.get(f, f.upper()): m.group(i + 1).strip() for i, f in enumerate(self.fields)}
        return _made_row(cells, self.running)


def _bare_pattern(template: str) -> re.Pattern[str]:
    """A regex for a bare row of ``template``: the text between placeholders as written (a tab
    or a run of spaces as any whitespace), each placeholder a group."""
    out, at = [], 0
    for m in _PLACEHOLDER.finditer(template):
        out.append(_literal(template[at : m.start()]))
        out.append(r"(\S+)" if m.group(1) in _ONE_WORD else r"(.*?)")
        at = m.end()
    out.append(_literal(template[at:]))
    return re.compile("".join(out).strip())


def _literal(text: str) -> str:
    text = text.replace("\\t", "\t").replace("\\n", "")
    return "".join(r"\s+" if part.isspace() else re.escape(part) for part in re.split(r"(\s+)", text) if part)


def ps_format(argv: Sequence[str]) -> PsFormat | None:
    """The ``--format`` template of a ``docker ps`` / ``docker container ls`` / ``compose ps``
    command line, None when it has none (the default table)."""
    template = None
    for i, a in enumerate(argv):
        if a == "--format" and i + 1 < len(argv):
            template = argv[i + 1]
        elif a.startswith("--format="):
            template = a.split("=", 1)[1]
    if template is None:
        return None
    table = template.lstrip().startswith("table")
    fields = tuple(m.group(1) for m in _PLACEHOLDER.finditer(template))
    running = not any(a in ("-a", "--all") or (a.startswith("-") and not a.startswith("--") and "a" in a[1:])
                      for a in argv if a != template)
    return PsFormat(template, table, () if "json" in template else fields, running)


_PROGRESS = re.compile(r"^\s*(?:✔\s*)?Container\s+(\S+)\s+(\w+)", re.MULTILINE)
_BUILT = re.compile(r"^\s*(?:✔\s*)?Image\s+(\S+)\s+Built\b", re.MULTILINE)
_MADE = frozenset({"Created", "Recreated", "Started"})
_GONE = frozenset({"Stopping", "Stopped", "Removing", "Removed", "Killing", "Killed"})


def stopped_containers(output: str) -> list[str]:
    """Containers a compose command's progress lines show it stopping or removing."""
    return list(dict.fromkeys(name for name, verb in _PROGRESS.findall(output) if verb in _GONE))


def progress_lines(output: str) -> list[tuple[str, str, str]]:
    """(container, verb, the line) of each compose progress line, in order
    (``✔ Container shop-api-1  Started``)."""
    return [(m.group(1), m.group(2), m.group(0)) for m in _PROGRESS.finditer(output)]


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
            if row.name in h.mine and h.mine[row.name] is None and row.name not in found and row.image:
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
        if mine_image and row.image and _image(row.image) != _image(mine_image):  # a --format may list no image
            return (f"{row.name} runs image {row.image}, not the {mine_image} this session's command "
                    f"made it from")
        if row.service and row.name not in h.mine:
            member = h.service_member.get(row.service)
            if member is not None and member.name != row.name and row.image and member.image \
                    and _image(member.image) != _image(row.image):
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
