"""The server catalog: recognising a launch in a parsed command, as data (``catalog.yaml``).

Users extend it without code: ``Catalog.load(extra={...})`` merges kinds from config over the
built-in ones (same keys as ``catalog.yaml``).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer._usercache import private_dir, read_private_json, write_private
from analyzer.shell.model import SimpleCommand

_CATALOG_FILE = Path(__file__).with_name("catalog.yaml")
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_BACKREF = re.compile(r"\\[1-9]|\(\?P=")
_MEMO_LIMIT = 4096
"""Distinct program and module names remembered per catalog (a session repeats a few hundred)."""


@lru_cache(maxsize=_MEMO_LIMIT)
def _basename(word: str) -> str:
    return PurePosixPath(word).name


def required_words(pattern: re.Pattern[str]) -> frozenset[str] | None:
    """Words one of which is in every text ``pattern`` matches (``{"OOM", "Out of memory: Killed
    process"}`` for ``\\bOOM\\b|Out of memory: Killed process``), or None when the pattern does not
    say (case-insensitive, ``.*`` only, anything unexpected). Read from the regex's own parse tree;
    a text that holds none of the words cannot match, so it need not be searched line by line."""
    if pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return None
    try:
        from re import _constants as sre  # type: ignore[attr-defined]
        from re import _parser  # type: ignore[attr-defined]

        return _needs(list(_parser.parse(pattern.pattern, pattern.flags)), sre)
    except Exception:  # a Python whose regex internals differ: no shortcut, same answers
        return None


def _needs(items: list[tuple[Any, Any]], sre: Any) -> frozenset[str] | None:
    """``required_words`` of a sequence: its best run of literal characters or required part."""
    candidates: list[frozenset[str]] = []
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        if run:
            candidates.append(frozenset(["".join(run)]))
            run = []
        found: frozenset[str] | None = None
        if op is sre.SUBPATTERN:
            _, add_flags, _, sub = av
            found = None if add_flags & (re.IGNORECASE | re.VERBOSE) else _needs(list(sub), sre)
        elif op is sre.ATOMIC_GROUP:
            found = _needs(list(av), sre)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            low, _, sub = av
            found = _needs(list(sub), sre) if low >= 1 else None
        elif op is sre.BRANCH:
            branches = [_needs(list(b), sre) for b in av[1]]
            found = None if any(b is None for b in branches) else frozenset().union(*branches)  # type: ignore[arg-type]
        if found:
            candidates.append(found)
    if not candidates:
        return None
    best = max(candidates, key=lambda words: (min(map(len, words)), -len(words)))
    return best if all(best) else None


def _combine(patterns: list[re.Pattern[str]]) -> re.Pattern[str] | None:
    """One regex that matches where any of ``patterns`` does: one search per line instead of one
    per pattern. None when joining could change a pattern's meaning (numbered or named
    back-references, mixed flags, inline global flags)."""
    if not patterns or len({p.flags for p in patterns}) != 1 or any(_BACKREF.search(p.pattern) for p in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), patterns[0].flags)
    except re.error:
        return None


_INFO_FLAGS = frozenset({"--help", "--version"})

class CatalogError(ValueError):
    """A catalog entry from config is malformed; the message names the kind and the key."""


UnitState = Literal["running", "stopped", "failed"]
"""What a process manager's status word says of a unit."""


class ServerKind(BaseModel):
    """One kind of server."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    """Catalog key, e.g. ``sglang``."""
    label: str
    """How reports name it."""
    programs: list[str] = Field(default_factory=list)
    """Program basenames (globs) that launch it."""
    modules: list[str] = Field(default_factory=list)
    """Python modules run with ``python -m``."""
    subcommand: list[list[str]] = Field(default_factory=list)
    """Word sequences one of which must follow the program."""
    script_globs: list[str] = Field(default_factory=list)
    """For interpreters (node): the script's basename must match one of these."""
    code_flags: list[str] = Field(default_factory=list)
    """For interpreters: flags that run code given inline (``node -e``): then it is no server."""
    port_flags: list[str] = Field(default_factory=list)
    """Flags whose value is the port."""
    bind_flags: list[str] = Field(default_factory=list)
    """Flags whose value is ``host``, ``host:port`` or ``:port``."""
    port_arg: bool = False
    """The first positional argument is the port."""
    port_env: list[str] = Field(default_factory=list)
    """Environment variables that set the port."""
    default_port: int | None = None
    """Where it listens when nothing says."""
    ready: list[str] = Field(default_factory=list)
    """Regexes of log lines that mean it is serving."""
    failure: list[str] = Field(default_factory=list)
    """Regexes of log lines that mean it failed (besides the common ones)."""
    health: list[str] = Field(default_factory=list)
    """URL paths that probe it."""
    answers: list[str] = Field(default_factory=list)
    """Regexes of HTTP response bodies only a server of this kind gives (Django's debug 404 page,
    Vite's ``/@vite/client`` page): a probe answered so was answered by this kind. A kind without
    any is neutral: no answer is judged against it."""
    gpu: bool = False
    """It holds GPUs."""
    detach: list[list[str]] = Field(default_factory=list)
    """Argument sequences with which it detaches and the command returns at once while it serves
    on (``[--daemonize, yes]``): run in the foreground, it did not end with the command."""
    manager: bool = False
    """A process manager that runs servers as named units (pm2, supervisord, brew services,
    launchd): the lifecycle's unit step reads its commands; ``Catalog.match`` never takes it."""
    states: dict[str, UnitState] = Field(default_factory=dict)
    """For a manager: the status words its listings print (``online``, ``FATAL``) and what each
    says of the unit."""

    def detaches(self, argv: list[str]) -> bool:
        return any(argv[i:i + len(seq)] == seq for seq in self.detach for i in range(len(argv)))


class LaunchMatch(BaseModel):
    """What the catalog read from a launching command."""

    model_config = ConfigDict(defer_build=True)

    kind: ServerKind
    port: int | None
    """The port it listens on; None when unknown (e.g. a dynamic ``$PORT``)."""
    port_source: str
    """Where the port came from: ``flag``, ``bind``, ``arg``, ``env``, ``default``, ``docker -p``."""
    bind: str | None
    """The bind address, when given (``0.0.0.0``, ``127.0.0.1``)."""
    gpus: str | None
    """``CUDA_VISIBLE_DEVICES`` or the tensor-parallel size (``tp=8``), when given."""
    log_file: str | None
    """Where its stdout goes (the last ``>``/``&>`` redirect)."""


def flag_value(argv: list[str], flags: list[str], glued: bool = False) -> str | None:
    """The value of the first of ``flags`` in ``argv``: ``--port 8000``, ``--port=8000``, and with
    ``glued`` a short flag's value written onto it (``-p6380``, as redis-cli takes it)."""
    for i, word in enumerate(argv):
        for flag in flags:
            if word == flag and i + 1 < len(argv):
                return argv[i + 1]
            if flag.startswith("--") and word.startswith(flag + "="):
                return word[len(flag) + 1 :]
            if glued and not flag.startswith("--") and word.startswith(flag) and len(word) > len(flag):
                return word[len(flag) :]
    return None


def _as_port(text: str | None) -> int | None:
    if text is None:
        return None
    m = re.search(r"(\d{2,5})\s*$", text)
    if not m or "$" in text:
        return None
    port = int(m.group(1))
    return port if 0 < port < 65536 else None


def log_file_of(cmd: SimpleCommand) -> str | None:
    for r in reversed(cmd.redirects):
        if r.op in (">", ">>", "&>", "&>>", ">|") and r.fd in (None, 1) and not r.target.startswith("&"):
            return r.target
    return None


class Catalog:
    """The kinds, in match order (more specific first: the sglang router before sglang)."""

    def __init__(self, kinds: list[ServerKind], common_failure: list[str]) -> None:
        self.kinds = kinds
        self.by_name = {k.name: k for k in kinds}
        self.managers = {k.name: k for k in kinds if k.manager}
        """The process-manager kinds by name (``pm2``, ``supervisor``, ``brew``, ``launchd``)."""
        self.common_failure = common_failure
        # compiled when first asked for: a session meets a few of the ~60 kinds (~175 regexes)
        self._ready: dict[str, list[re.Pattern[str]]] = {}
        self._fail: list[re.Pattern[str]] | None = None
        self._kind_fail: dict[str, list[re.Pattern[str]]] = {}
        self._by_program: dict[str, list[ServerKind]] = {}
        self._by_module: dict[str, list[ServerKind]] = {}
        self._combined: dict[tuple[str, str | None], re.Pattern[str] | None] = {}
        self._literals: dict[tuple[str, str | None], list[str] | None] = {}

    @classmethod
    def load(cls, extra: dict[str, dict[str, Any]] | None = None) -> Catalog:
        """The built-in catalog, with ``extra`` kinds from config merged over it."""
        raw = _builtin()
        kinds_raw: dict[str, dict[str, Any]] = {k: dict(v) for k, v in raw["kinds"].items()}
        order = list(kinds_raw)
        for name, entry in (extra or {}).items():
            if not isinstance(entry, dict):
                raise CatalogError(f"catalog kind {name!r}: expected a table of keys")
            if name in kinds_raw:
                kinds_raw[name].update(entry)
            else:
                kinds_raw[name] = {"label": name, **entry}
                order.insert(0, name)  # user kinds are more specific than the built-ins
        kinds: list[ServerKind] = []
        for name in order:
            try:
                kinds.append(ServerKind(name=name, **kinds_raw[name]))
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(p) for p in err["loc"])
                raise CatalogError(f"catalog kind {name!r}: {where}: {err['msg']}") from exc
            if name not in (extra or {}):
                continue  # the built-in patterns are compiled by the catalog's own tests
            for pattern in kinds[-1].ready + kinds[-1].failure + kinds[-1].answers:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise CatalogError(f"catalog kind {name!r}: bad regex {pattern!r}: {exc}") from exc
        return cls(kinds, list(raw.get("common_failure", [])))

    def match(self, cmd: SimpleCommand) -> LaunchMatch | None:
        """The server a command launches, or None."""
        argv = cmd.effective_argv
        if not argv:
            return None
        prog = _basename(argv[0])
        rest = argv[1:]
        if any(a in _INFO_FLAGS for a in rest):
            return None  # `uvicorn --help`, `node cli/index.js --version`: prints and exits
        module: str | None = None
        if _PYTHON.match(prog) and "-m" in rest:
            i = rest.index("-m")
            if i + 1 < len(rest):
                module, rest = rest[i + 1], rest[i + 2 :]
        elif prog == "npx" and rest:
            prog, rest = _basename(rest[0]), rest[1:]
        for kind in self._kinds_running(module) if module is not None else self._kinds_named(prog):
            if kind.manager:
                continue  # `pm2 start app.js`: a unit of the manager, read by the lifecycle's unit step
            if kind.subcommand and module is None:
                words = [w for w in rest if not w.startswith("-")]
                if not any(words[: len(s)] == s for s in kind.subcommand):
                    continue
            if kind.script_globs:
                if any(w in kind.code_flags for w in rest):
                    continue  # `node -e '…'`: a one-liner, however its code reads
                script = next((w for w in rest if not w.startswith("-")), None)
                if script is None or not any(
                    fnmatch.fnmatchcase(PurePosixPath(script).name, g) for g in kind.script_globs
                ):
                    continue
            return self._launch(kind, cmd, rest)
        return None

    def _kinds_named(self, prog: str) -> list[ServerKind]:
        """The kinds (in match order) one of whose program globs matches ``prog`` (memoised)."""
        found = self._by_program.get(prog)
        if found is None:
            if len(self._by_program) >= _MEMO_LIMIT:
                self._by_program.clear()
            found = self._by_program[prog] = [
                k for k in self.kinds if any(fnmatch.fnmatchcase(prog, g) for g in k.programs)]
        return found

    def _kinds_running(self, module: str) -> list[ServerKind]:
        """The kinds (in match order) run by ``python -m module`` (memoised)."""
        found = self._by_module.get(module)
        if found is None:
            if len(self._by_module) >= _MEMO_LIMIT:
                self._by_module.clear()
            found = self._by_module[module] = [k for k in self.kinds if module in k.modules]
        return found

    def _launch(self, kind: ServerKind, cmd: SimpleCommand, rest: list[str]) -> LaunchMatch:
        port: int | None = None
        source = "default"
        bind: str | None = None
        raw_port = flag_value(rest, kind.port_flags)
        if raw_port is not None:
            port, source = _as_port(raw_port), "flag"
        raw_bind = flag_value(rest, kind.bind_flags)
        if raw_bind is not None:
            host, _, maybe_port = raw_bind.rpartition(":") if ":" in raw_bind else (raw_bind, "", "")
            bind = host or None
            if maybe_port and port is None and raw_port is None:
                port, source = _as_port(maybe_port), "bind"
        if raw_port is None and source == "default" and kind.port_arg:
            positional = [w for w in rest if not w.startswith("-")]
            if positional and positional[0].isdigit():
                port, source = _as_port(positional[0]), "arg"
        if source == "default":
            for var in kind.port_env:
                if var in cmd.env:
                    port, source = _as_port(cmd.env[var]), "env"
                    break
        if source == "default":
            port = kind.default_port
        gpus = cmd.env.get("CUDA_VISIBLE_DEVICES")
        tp = flag_value(rest, ["--tp", "--tp-size", "--tensor-parallel-size", "-tp"])
        if gpus is None and tp is not None:
            gpus = f"tp={tp}"
        return LaunchMatch(kind=kind, port=port, port_source=source, bind=bind, gpus=gpus,
                           log_file=log_file_of(cmd))

    def ready_line(self, kind: str | None, text: str) -> str | None:
        """The first line of ``text`` that says a server of ``kind`` (any kind if None) is ready."""
        names = [kind] if kind else list(self.by_name)
        pats = [p for name in names for p in self._compiled(self._ready, name, "ready", 0)]
        return self._first_line(("ready", kind), pats, text)

    def detaches(self, kind: str | None, cmd: SimpleCommand) -> bool:
        """The command starts ``kind`` so that it detaches (``redis-server --daemonize yes``)."""
        found = self.by_name.get(kind or "")
        return found is not None and found.detaches(cmd.effective_argv)

    def failure_line(self, kind: str | None, text: str) -> str | None:
        """The first line of ``text`` that shows a failure (common or kind-specific)."""
        if self._fail is None:
            self._fail = [re.compile(p, re.M) for p in self.common_failure]
        pats = self._fail + (self._compiled(self._kind_fail, kind, "failure", re.M) if kind else [])
        return self._first_line(("failure", kind), pats, text)

    def _compiled(self, table: dict[str, list[re.Pattern[str]]], kind: str, field: str,
                  flags: int) -> list[re.Pattern[str]]:
        """``kind``'s ``field`` patterns (``ready`` or ``failure``), compiled once; none for an
        unknown kind."""
        found = table.get(kind)
        if found is None:
            entry = self.by_name.get(kind)
            found = table[kind] = [re.compile(p, flags) for p in getattr(entry, field)] if entry else []
        return found

    def _first_line(self, key: tuple[str, str | None], pats: list[re.Pattern[str]], text: str) -> str | None:
        """The first line of ``text`` that one of ``pats`` matches, stripped."""
        if not pats:
            return None
        if key not in self._combined:
            self._combined[key] = _combine(pats)
            words = [required_words(p) for p in pats]
            self._literals[key] = None if None in words else sorted({w for ws in words if ws for w in ws})
        literals = self._literals[key]
        if literals is not None and not any(lit in text for lit in literals):
            return None  # every pattern needs one of these words: no line can match
        combined = self._combined[key]
        if combined is not None:
            search = combined.search
            for line in text.splitlines():
                if search(line):
                    return line.strip()
            return None
        for line in text.splitlines():
            if any(p.search(line) for p in pats):
                return line.strip()
        return None


@cache
def _builtin() -> dict[str, Any]:
    """``catalog.yaml``'s data. Parsing it needs PyYAML, whose import (~10 ms) a JSONL session does
    not otherwise pay, so the data is kept as JSON in the cache folder, keyed by the file's digest."""
    text = _CATALOG_FILE.read_bytes()
    folder = private_dir()
    kept = None if folder is None else folder / f"catalog-{hashlib.sha256(text).hexdigest()[:32]}.json"
    found = read_private_json(kept)
    if isinstance(found, dict):
        return found
    import yaml

    # libyaml when the wheel has it: 5x faster than the pure-Python loader, the same objects
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parsed: dict[str, Any] = yaml.load(text.decode("utf-8"), Loader=loader)
    if kept is not None:
        dump = json.dumps(parsed).encode()
        write_private(kept, lambda fh: fh.write(dump), supersedes="catalog-*.json")  # an earlier catalog.yaml's
    return parsed


@cache
def default_catalog() -> Catalog:
    return Catalog.load()
