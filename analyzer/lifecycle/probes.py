"""Reading probes and failures out of commands and their output (no world state here)."""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass

from analyzer.lifecycle.catalog import Catalog, ServerKind, flag_value, required_words
from analyzer.shell.model import SimpleCommand

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]", "::", "*", ""})

_URL = re.compile(
    r"(?:(?P<scheme>https?)://)?(?P<host>\[::1\]|localhost|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z][\w.-]*)"
    r":(?P<port>\d{2,5})(?P<path>/[^\s'\"]*)?"
)
_REFUSED = re.compile(
    r"Connection refused|Failed to connect|Couldn't connect|curl: \((?:7|52|56|28)\)|Empty reply from server"
    r"|No route to host|Connection reset|timed out|ECONNREFUSED|^000$",
    re.I | re.M,
)
_REFUSED_WORDS = ("connection refused", "failed to connect", "couldn't connect", "curl: (7)", "curl: (52)",
                  "curl: (56)", "curl: (28)", "empty reply from server", "no route to host", "connection reset",
                  "timed out", "econnrefused")
"""``_REFUSED``'s alternatives as lowercase text, but for ``^000$``."""
_REFUSED_HINTS = ("refused", "connect", "curl: (", "reply", "route", "timed out")
"""A word of every one of ``_REFUSED_WORDS``: text with none of them has none of those."""
_HTTP_TOOLS = frozenset({"curl", "wget", "http", "https", "xh"})
_PORT_CHECKERS = frozenset({"nc", "ncat"})
_PORT_LISTERS = frozenset({"ss", "netstat", "lsof"})
_REDIS_CLIS = frozenset({"redis-cli", "valkey-cli"})
PORTLESS_PROBES: frozenset[str] = _PORT_CHECKERS | _PORT_LISTERS | _REDIS_CLIS
"""Programs ``probe_of`` reads whose command may name no ``:port`` (``redis-cli ping``, ``ss -ltn``;
an HTTP probe always has one in its URL): a pre-filter that looks for ports must know these names."""
_REDIS_URL = re.compile(r"rediss?://(?:[^@/\s]*@)?(?P<host>[^:/\s]+)?(?::(?P<port>\d+))?")
_PID = re.compile(r"(?:\bPID[:= ]\s*|^\[\d+\]\s+)(\d{2,8})\b", re.M)
_JOB_DIED = re.compile(
    r"^(?:\S+: )?(?:line \d+: )?(\d+)\s+(Killed|Terminated|Segmentation fault|Aborted)\s+"
    r"(?:\(core dumped\)\s+)?(.+)$",
    re.M,
)


def norm_host(host: str | None, where: str) -> str:
    """Normalise a host name: local aliases mean the machine the command runs on (``where``)."""
    if host is None or host.strip("[]") in LOCAL_NAMES:
        return where
    h = host.rsplit("@", 1)[-1]
    return "local" if h in LOCAL_NAMES else h


@dataclass(frozen=True)
class ProbeRead:
    method: str
    host: str
    port: int | None
    target: str
    answered: bool | None


def probe_of(cmd: SimpleCommand, output: str | None, exit_code: int | None, where: str,
             masked: str | None = None) -> ProbeRead | None:
    """The probe a command makes, with its answer judged from the output. ``masked`` says the
    exit status is not the probe's own (``curl … || true``, ``curl … | jq``): ``""`` when nothing
    else shows, else the literal text its ``||`` fallback prints (``|| echo down``), whose
    presence in the output means the probe failed."""
    if masked is not None:
        if masked and masked in (output or ""):
            exit_code = 1  # the fallback ran: the probe itself failed
        else:
            exit_code = None  # a pipe's or a fallback's status says nothing of the probe
            if masked:
                output = (output or "").replace(masked, "")
    name = cmd.name
    argv = cmd.effective_argv
    text = " ".join(argv)
    out = output or ""
    port: int | None = None
    answered: bool | None = None
    if name in _HTTP_TOOLS or ((name.startswith("python") and "requests" in text) or "urllib" in text):
        m = _URL.search(text)
        if not m:
            return None
        host = norm_host(m.group("host"), where)
        port = int(m.group("port"))
        if exit_code not in (None, 0) or refused(out):  # the status first: it spares a scan of the output
            answered = False
        elif out.strip():
            answered = True
        else:
            answered = None if exit_code is None else True
        return ProbeRead("http", host, port, m.group(0), answered)
    if name in _REDIS_CLIS and any(w.lower() == "ping" for w in argv[1:]):
        # redis-cli [-h HOST] [-p PORT] ping: PONG, or an error the server sent (NOAUTH, LOADING),
        # means it answered; "Could not connect … Connection refused" means nothing listens
        server = flag_value(argv[1:], ["-h"], glued=True)
        raw_port = flag_value(argv[1:], ["-p"], glued=True)
        url = _REDIS_URL.match(flag_value(argv[1:], ["-u"]) or "")
        if url:  # -u redis://[user:pass@]host:port/db
            server, raw_port = url.group("host") or server, url.group("port") or raw_port
        port = int(raw_port) if raw_port and raw_port.isdigit() else 6379
        low = out.lower()
        if refused(out) or "could not connect" in low:
            answered = False
        elif any(w in low for w in ("pong", "noauth", "loading", "err ", "wrongpass")):
            answered = True  # the server replied, even if with an error (-e makes that exit 1)
        elif exit_code not in (None, 0):
            answered = False
        elif out.strip():
            answered = True
        return ProbeRead("redis-ping", norm_host(server, where), port, text, answered)
    if name in _PORT_CHECKERS and "-z" in " ".join(argv):
        ports = [w for w in argv[1:] if w.isdigit()]
        if not ports:
            return None
        answered = None if exit_code is None else exit_code == 0
        hosts = [w for w in argv[1:] if not w.startswith("-") and not w.isdigit()]
        return ProbeRead("port-check", norm_host(hosts[0] if hosts else None, where), int(ports[-1]),
                         " ".join(argv), answered)
    if name in _PORT_LISTERS:
        m = re.search(r":(\d{2,5})\b", text)
        if m:
            port = int(m.group(1))
        if port is None:
            return ProbeRead("port-list", where, None, text, None)
        terse = terse_pids(name, argv, out)
        if terse is not None:
            answered = bool(terse)
        else:
            answered = bool(re.search(rf"[:.]{port}\b.*LISTEN|LISTEN.*[:.]{port}\b|[:.]{port}\s", out))
        return ProbeRead("port-list", where, port, text, answered)
    return None


def _lister_rows(windows: str, linux: str, ss: str) -> tuple[re.Pattern[str], ...]:
    """The rows of Windows ``netstat -ano`` (``TCP 0.0.0.0:8080 0.0.0.0:0 LISTENING 18708``), Linux
    ``netstat -tnp`` (``… LISTEN 1234/java``) and ``ss -tnp`` (``users:(("node",pid=1234,fd=23))``)
    in one socket state, each word as that tool prints it; groups ``port`` and ``pid`` (and the
    local ``addr`` of a Windows row)."""
    return (
        re.compile(rf"^\s*TCP\s+(?P<addr>\S*)[:.](?P<port>\d{{1,5}})\s+\S+\s+{windows}\s+(?P<pid>\d+)\s*$", re.M),
        re.compile(rf"^\s*tcp6?\s+\d+\s+\d+\s+\S*[:.](?P<port>\d{{1,5}})\s+\S+\s+{linux}\s+(?P<pid>\d+)/", re.M),
        re.compile(rf"^\s*(?:tcp\s+)?{ss}\s+\d+\s+\d+\s+\S*[:.](?P<port>\d{{1,5}})\s+\S+\s+"
                   r"users:\(\(\"[^\"]*\",pid=(?P<pid>\d+)", re.M),
    )


# rows of the port listers that name the process: the three above, and ``lsof -i``
# (``java 18708 me 45u IPv6 … TCP *:8080 (LISTEN)``, ``… TCP host:8080->peer:51234 (ESTABLISHED)``)
_LISTENERS = (
    *_lister_rows("LISTENING", "LISTEN", "LISTEN"),
    re.compile(r"^\S+\s+(?P<pid>\d+)\s+\S+\s+\S+\s+IPv[46]\s+.*?TCP\s+\S*:(?P<port>\d{1,5})\s+\(LISTEN\)", re.M),
)
_CONNECTIONS = (
    *_lister_rows("ESTABLISHED", "ESTABLISHED", "ESTAB"),
    re.compile(r"^\S+\s+(?P<pid>\d+)\s+.*?TCP\s+\S*:(?P<port>\d{1,5})->\S+\s+\(ESTABLISHED\)", re.M),
)
"""Rows that show a connection accepted on a local port, with the PID holding it."""


def windows_listeners(output: str) -> list[tuple[str, int, int]]:
    """(local address, port, PID) of each LISTENING row of a Windows ``netstat -ano``."""
    return [(m.group("addr"), int(m.group("port")), int(m.group("pid"))) for m in _LISTENERS[0].finditer(output)]


def connections(output: str, port: int, pid: int) -> int:
    """How many established connections a port lister shows ``pid`` serving on its ``port``."""
    return sum(1 for rx in _CONNECTIONS for m in rx.finditer(output)
               if int(m.group("port")) == port and int(m.group("pid")) == pid)


def terse_pids(name: str, argv: list[str], output: str) -> list[int] | None:
    """What ``lsof -t`` printed: only the PIDs of what holds the files or ports it was asked about
    (empty: nothing does; anything else in the output: not a PID list). None for another command."""
    if name != "lsof" or not any(a.startswith("-") and not a.startswith("--") and "t" in a for a in argv[1:]):
        return None
    words = output.split()
    return [int(w) for w in words] if all(w.isdigit() for w in words) else []


def listeners(output: str | None) -> dict[int, set[int]]:
    """port -> the PIDs a port lister's output shows listening on it."""
    found: dict[int, set[int]] = {}
    text = output or ""
    if "LISTEN" not in text:
        return found
    for rx in _LISTENERS:
        for m in rx.finditer(text):
            found.setdefault(int(m.group("port")), set()).add(int(m.group("pid")))
    return found


_PROCESS_NAMES = (
    re.compile(r"users:\(\(\"(?P<name>[^\"]+)\",pid=(?P<pid>\d+)"),  # ss -p
    re.compile(r"\s(?P<pid>\d+)/(?P<name>[\w.-]+)\s*$", re.M),  # netstat -p
    re.compile(r"^(?P<name>\S+)\s+(?P<pid>\d+)\s", re.M),  # lsof
)


def listener_name(output: str, pid: int) -> str | None:
    """The process name a port lister shows for ``pid`` (``node``, ``postgres``), when it shows one."""
    for rx in _PROCESS_NAMES:
        for m in rx.finditer(output):
            if int(m.group("pid")) == pid:
                return m.group("name")
    return None


def refused(output: str) -> bool:
    """``_REFUSED.search(output)``, without the regex for ASCII text: there, ignoring case is
    lowercasing, so each alternative is a substring of the lowered text (a case-insensitive
    alternation gives the regex engine no literal to skip to: about 8 MB/s over long outputs)."""
    if not output.isascii():
        return _REFUSED.search(output) is not None
    low = output.lower()
    if "000" in low and "\n000\n" in f"\n{low}\n":
        return True
    return any(hint in low for hint in _REFUSED_HINTS) and any(word in low for word in _REFUSED_WORDS)


_PS_ROWS = (
    # ps aux / ps -aux / BSD ps aux: USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND
    re.compile(r"^\s*\S+\s+(?P<pid>\d+)\s+\d+(?:[.,]\d+)?\s+\d+(?:[.,]\d+)?\s+\d+\s+\d+\s+\S+\s+\S+\s+\S+"
               r"\s+\d+:\d\d(?:[.:]\d+)?\s+(?P<cmd>\S.*?)\s*$", re.M),
    # ps -ef: UID PID PPID C STIME TTY TIME CMD
    re.compile(r"^\s*\S+\s+(?P<pid>\d+)\s+\d+\s+\d+\s+\S+\s+\S+\s+(?:\d+-)?\d+:\d\d(?::\d\d)?\s+(?P<cmd>\S.*?)\s*$",
               re.M),
)
_PID_ROW = re.compile(r"^\s*(?P<pid>\d+)\s+(?P<cmd>\S.*?)\s*$", re.M)
"""``pgrep -a``/``-l``, ``ps -o pid,args``, ``ps -p N -o pid=,cmd=``: the PID, then the command."""
_FUSER = re.compile(r"^\s*(?P<port>\d{1,5})/(?:tcp|udp):(?P<pids>(?:\s+\d+[a-zA-Z]*)+)\s*$", re.M)


def process_rows(name: str, argv: list[str], output: str) -> list[tuple[int, str]]:
    """(PID, command line) of each process row a ``ps`` or ``pgrep -a``/``-l`` output shows (with or
    without its header: ``ps aux | grep x`` drops it); ``pgrep`` without ``-a``/``-l`` prints PIDs
    only, so none."""
    if name == "pgrep":
        listed = any(a in ("--list-full", "--list-name") or (a.startswith("-") and not a.startswith("--")
                     and ("a" in a or "l" in a)) for a in argv[1:])
        return [(int(m.group("pid")), m.group("cmd")) for m in _PID_ROW.finditer(output)] if listed else []
    if name != "ps":
        return []
    for rx in _PS_ROWS:
        rows = [(int(m.group("pid")), m.group("cmd")) for m in rx.finditer(output)]
        if rows:
            return rows
    return [(int(m.group("pid")), m.group("cmd")) for m in _PID_ROW.finditer(output)]


def bare_pids(name: str, argv: list[str], output: str) -> list[int] | None:
    """What a plain ``pgrep PATTERN`` printed: PIDs only, one a line (empty: none matched). None
    for another command, a listing form (``-a``, ``-l``), a count (``-c``) or other text."""
    if name != "pgrep" or any(a in ("--list-full", "--list-name", "--count") or (
            a.startswith("-") and not a.startswith("--") and any(c in a for c in "alc")) for a in argv[1:]):
        return None
    words = output.split()
    return [int(w) for w in words] if all(w.isdigit() for w in words) else None


def fuser_holders(output: str) -> dict[int, set[int]]:
    """port -> the PIDs ``fuser PORT/tcp`` shows using it (``8000/tcp:  4242``)."""
    found: dict[int, set[int]] = {}
    for m in _FUSER.finditer(output):
        found.setdefault(int(m.group("port")), set()).update(
            int(re.match(r"\d+", w).group(0)) for w in m.group("pids").split())  # type: ignore[union-attr]
    return found


def pids_in(output: str | None) -> list[int]:
    return [int(p) for p in _PID.findall(output or "")]


@dataclass(frozen=True)
class DeadJob:
    pid: int
    how: str
    command: str


def dead_jobs(output: str | None) -> list[DeadJob]:
    """Lines where bash reports a job killed (``bash: line 15: 54525 Killed   nohup …``)."""
    found = _JOB_DIED.finditer(output or "")
    return [DeadJob(int(m.group(1)), m.group(2), m.group(3).strip()) for m in found]


_ALREADY_RUNNING = re.compile(r"\b(?:Another|another) [\w .-]{0,40}?(?:server|instance) is (?:already )?running"
                              r"|\bA server is already running \(pid")
"""A server's own refusal to start beside a running copy of itself (``next dev``; a lock or PID file:
"another instance is running", Rails/Puma's "A server is already running (pid: 4242, file: …)")."""


_DOCKER_HELD = re.compile(
    r"^.*?(?:Bind for \S*?:(?P<allocated>\d{1,5}) failed: port is already allocated"
    r"|Ports are not available: exposing port (?:TCP|UDP) \S*?:(?P<host>\d{1,5})\b).*$", re.M)


@dataclass(frozen=True)
class PortRefusal:
    """Docker refusing to publish a port: the line, the port, and who holds it in Docker's words."""

    line: str
    port: int
    by_container: bool
    """"port is already allocated": Docker's own allocator, so another container publishes it;
    else ("Ports are not available … address already in use") a host process listens there."""


def docker_port_refusal(output: str) -> PortRefusal | None:
    """The line where ``docker run``/``compose up`` says the host port it publishes is taken."""
    if "already allocated" not in output and "Ports are not available" not in output:
        return None
    m = _DOCKER_HELD.search(output)
    if m is None:
        return None
    port = m.group("allocated") or m.group("host")
    return PortRefusal(m.group(0).strip()[:300], int(port), m.group("allocated") is not None)


_COMPOSE_FAILED = re.compile(r"^.*\b(?:failed to solve|dependency failed to start)\b.*$", re.M)
"""Compose's own words for an ``up`` that did not start its stack: the build failed (BuildKit's
"failed to solve"), or a service's dependency never became healthy."""


def compose_failure(output: str) -> str | None:
    """The line where ``docker compose up`` says the stack did not start, when it says so."""
    if "failed to solve" not in output and "dependency failed to start" not in output:
        return None
    m = _COMPOSE_FAILED.search(output)
    return m.group(0).strip()[:300] if m else None


class _Answers:
    """A catalog's ``answers`` compiled once, each with the words one of which every text it matches
    holds (``required_words``): most probe answers hold none of any pattern's words, and then no
    regex runs at all (they ran per call, per kind, over 20 KB of every answer: a third of the world
    walk of a large session)."""

    def __init__(self, catalog: Catalog) -> None:
        self.patterns: dict[str, tuple[re.Pattern[str], frozenset[str] | None]] = {}
        for kind in catalog.kinds:
            for p in kind.answers:
                if p not in self.patterns:
                    rx = re.compile(p, re.M)
                    self.patterns[p] = (rx, required_words(rx))
        self._last: tuple[str | None, set[str]] = (None, set())

    def matching(self, body: str) -> set[str]:
        """The patterns that match the head of ``body`` (remembered for the last body: the probe
        step asks ``answered_by`` and then ``own_answer`` of the same answer)."""
        if self._last[0] is not body:
            head = body[:_ANSWER_CHARS]
            self._last = (body, {p for p, (rx, words) in self.patterns.items()
                                 if (words is None or any(w in head for w in words)) and rx.search(head)})
        return self._last[1]


_ANSWERS: weakref.WeakKeyDictionary[Catalog, _Answers] = weakref.WeakKeyDictionary()


def _answers_in(catalog: Catalog, body: str) -> set[str]:
    """The ``answers`` patterns of any kind that the head of ``body`` matches."""
    answers = _ANSWERS.get(catalog)
    if answers is None:
        answers = _ANSWERS[catalog] = _Answers(catalog)
    return answers.matching(body)


def answered_by(catalog: Catalog, kind: str, body: str) -> ServerKind | None:
    """The kind whose signature response (``answers`` in the catalog) ``body`` is, when that is
    not ``kind``: the probe reached another server than the ``kind`` launched on that port. None
    when ``kind`` is neutral (it lists no answers: a generic server, ``npm run dev``), when the
    body is also one of ``kind``'s own answers, or when no kind claims it."""
    own = catalog.by_name.get(kind)
    if own is None or not own.answers or not body:
        return None
    found = _answers_in(catalog, body)
    if not found or any(p in found for p in own.answers):
        return None
    return next((k for k in catalog.kinds if k.answers and k.name != kind and any(p in found for p in k.answers)),
                None)


def own_answer(catalog: Catalog, kind: str, body: str) -> bool:
    """``body`` is one of the signature responses of ``kind`` itself (a Vite client page from a Vite
    or Angular dev server): only a server of that kind gives it."""
    own = catalog.by_name.get(kind)
    if own is None or not own.answers:
        return False
    found = _answers_in(catalog, body)
    return any(p in found for p in own.answers)


_ANSWER_CHARS = 20_000
"""A response's signature is in its first part (its title, its client script)."""


def failure_reason(line: str) -> str:
    low = line.lower()
    if "address already in use" in low or "eaddrinuse" in low or "port is already allocated" in low or re.search(r"port \d+ is (?:not available|already in use)", low) \
            or _ALREADY_RUNNING.search(line):
        return "address-in-use"
    if "out of memory" in low or "oom" in low:
        return "oom"
    if "traceback" in low:
        return "traceback"
    if re.search(r"\bkilled\b", low):
        return "killed"
    if "segmentation fault" in low or "core dumped" in low or "aborted" in low:
        return "crash"
    return "error"
