"""What every mechanism works from: the command, its script, the processes it can see, its chain.

A :class:`KillContext` is made per command by :func:`analyzer.shell.kill.evaluate.evaluate` and
handed to the mechanism the registry names for its program.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from analyzer.shell.kill.chain import ChainLink, build_chain, host_key, script_launches
from analyzer.shell.kill.match import Candidate
from analyzer.shell.kill.model import KillVerdict, Mechanism, Process
from analyzer.shell.kill.signals import parse_signal
from analyzer.shell.model import ShellFrame, ShellScript, SimpleCommand
from analyzer.shell.platform import is_bsd_like

_DYNAMIC = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9!$#?@*-])\}?")


@dataclass(slots=True)
class KillContext:
    """One kill-ish command and what it runs among."""

    cmd: SimpleCommand
    script: ShellScript
    processes: list[Process]
    """The processes known to exist when it runs, on every host."""
    harness: ShellFrame | None
    harness_wraps: bool
    platform: str
    include_launches: bool
    notes: list[str] = field(default_factory=list)
    _chain: list[ChainLink] | None = None
    _cands: list[Candidate] | None = None

    @property
    def bsd(self) -> bool:
        return is_bsd_like(self.platform)

    def chain(self) -> list[ChainLink]:
        """The processes above the command, outermost first (built once)."""
        if self._chain is None:
            self._chain = build_chain(self.cmd, self.script, self.harness, self.harness_wraps, self.platform)
        return self._chain

    def candidates(self) -> list[Candidate]:
        """Everything the kill can see on its host: known processes (oldest first), then its own
        chain and this script's background launches by start position."""
        if self._cands is not None:
            return self._cands
        cmd = self.cmd
        hk = host_key(cmd.host)
        local_top = cmd.host is None and cmd.container is None
        known = [
            p for p in self.processes
            if host_key(p.host) == hk and (cmd.container is None or p.container == cmd.container)
        ]
        if known and all(p.pid is not None for p in known):
            known.sort(key=lambda p: p.pid or 0)
        cands = [Candidate(p, ancestor=p.kind == "agent" and local_top, order=i) for i, p in enumerate(known)]
        chain = self.chain()
        later: list[tuple[int, int, Candidate]] = []
        for idx, link in enumerate(chain):
            if link.alive:
                later.append((link.birth, 0, Candidate(link.process, ancestor=True, link_index=idx)))
        if self.include_launches:
            for launch in script_launches(cmd, self.script, self.processes, chain):
                later.append((launch.birth, 1, Candidate(launch.process)))
        later.sort(key=lambda t: (t[0], t[1]))
        for n, (_, _, cand) in enumerate(later, start=len(cands)):
            cand.order = n
            cands.append(cand)
        self._cands = cands
        return cands

    def link(self, cand: Candidate) -> ChainLink | None:
        """The chain link a candidate is, if it is one."""
        return self.chain()[cand.link_index] if cand.link_index is not None else None

    def verdict(self, mechanism: Mechanism, sig: tuple[int, str], **kw: object) -> KillVerdict:
        """A new verdict for this command."""
        v = KillVerdict(command=self.cmd, mechanism=mechanism, signal=sig[0], signal_name=sig[1], host=self.cmd.host)
        for key, value in kw.items():
            setattr(v, key, value)
        return v

    def default_signal(self, name: str) -> tuple[int, str]:
        """A signal by name on this command's platform."""
        got = parse_signal(name, self.bsd)
        assert got is not None
        return got

    def expand(self, word: str, v: KillVerdict) -> str:
        """Substitute ``$VAR`` from the command's known env; record what stays unknown."""
        env = self.cmd.env

        def sub(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in env and "$" not in env[name]:
                return env[name]
            if m.group(0) not in v.unresolved:
                v.unresolved.append(m.group(0))
            return m.group(0)

        if "$" not in word or word.startswith("$(") or word.startswith("`"):
            return word
        return _DYNAMIC.sub(sub, word)


def as_written(argv: Sequence[str], limit: int = 80) -> str:
    """A command as a person would type it, cut at ``limit``."""
    text = shlex.join(argv)
    return text if len(text) <= limit else text[: limit - 1] + "…"
