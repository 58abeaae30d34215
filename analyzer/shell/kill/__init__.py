"""Kill semantics: given a parsed command and the processes known at that moment, which processes
would each kill in it hit, and why, as procps, psmisc, systemd, docker, tmux and bash behave.

This is how the analyzer proves "your pkill also killed the new server and the shell running it"
(shell-semantics §5-§11, decision procedure §10):

* ``pkill``/``pgrep`` match an unanchored glibc ERE against the command line (``-f``) or the
  15-byte process name, and exclude only themselves on Linux: the calling ``bash -c`` shell, the
  agent's wrapper shell, sshd's ``$SHELL -c``, ``sudo`` are hit when the pattern matches their
  text, unless ``-A``, unless bash ``exec``ed the kill (:mod:`.chain`). BSD/macOS pkill spares
  ancestors unless ``-a``.
* ``kill $(pgrep …)``: the builtin kill signals the PIDs in order and stops at its own shell.
* ``killall`` matches the process name exactly (15-char rule, ``-r`` ERE), ``fuser -k`` every
  holder of a port or file (``/dev/nvidia*``: every GPU process), ``systemctl``/``docker``/``tmux``
  by unit, container and session.

One module per mechanism (:mod:`.pkill`, :mod:`.pid` with :mod:`.pid_sources`, :mod:`.killall`,
:mod:`.fuser`, :mod:`.services`, :mod:`.containers`, :mod:`.sessions`, :mod:`.windows`,
:mod:`.task`), registered by program name in :data:`MECHANISMS` (lazy: a judge's module is
imported when a command it judges is met, not with this package); the shared model
(:mod:`.model`, :mod:`.signals`), matching (:mod:`.match`, :mod:`.hits`), the processes above a
kill (:mod:`.chain`, :mod:`.harness`) and the platform (:mod:`.platform`). A hit's why is data
(:class:`HitReason`); :mod:`.reasons` writes every sentence from it.

Entry points: :func:`evaluate`, :func:`task_stop`, :func:`harness_frame`, :func:`agent_process`.
"""

from __future__ import annotations

from analyzer.shell.kill.evaluate import MECHANISMS, evaluate, may_kill
from analyzer.shell.kill.harness import agent_process, harness_frame, harness_process
from analyzer.shell.kill.model import Above, Hit, HitReason, KillVerdict, Matched, Process
from analyzer.shell.kill.reasons import ReasonParts, parts, sentence
from analyzer.shell.kill.task import task_stop

__all__ = [
    "MECHANISMS",
    "Above",
    "Hit",
    "HitReason",
    "KillVerdict",
    "Matched",
    "Process",
    "ReasonParts",
    "agent_process",
    "evaluate",
    "harness_frame",
    "harness_process",
    "may_kill",
    "parts",
    "sentence",
    "task_stop",
]
