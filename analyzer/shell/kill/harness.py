"""The shell an agent wraps each tool command in, and the agent's own process.

A ``pkill -f P`` run by an agent is the child of a shell whose argv holds the command text, so
the agent's wrapper is the outermost frame a kill can hit (shell-semantics §5, §10 step 2). What
each agent really runs, with sources:

* claude-code: ``/bin/bash -c "source <snapshot> 2>/dev/null || true && shopt -u extglob
  2>/dev/null || true && eval '<command>' < /dev/null && pwd -P >| /tmp/claude-<id>-cwd"``
  (``zsh`` with ``setopt NO_EXTENDED_GLOB`` for zsh users). The command is quoted by the npm
  ``shell-quote`` rules: single quotes, or double quotes when it holds a ``'``. Sources:
  anthropics/claude-code#93607 (Linux, 2.1.x, "pkill -f / pgrep -f match the tool's own bash -c …
  eval wrapper"), #57450 (macOS zsh form), #2851 (strace of 1.0.x: ``bash -c -l "source
  /tmp/claude-shell-snapshot-… && eval '…' \\< /dev/null && pwd -P >| /tmp/claude-…-cwd"``),
  chipturner/pxhist#41 (double quotes when the command has a single quote). The wrapper never
  ``exec``s the command (``eval`` is followed by ``&& pwd``), so it is always alive to be hit.
* codex: the model's argv ``["bash", "-lc", "<command>"]`` is spawned as is (the user's shell
  in newer versions): bash's own rules decide whether the last command is exec'd.
* gemini-cli: ``bash -c "{ <command>; }; __code=$?; pgrep -g 0 ><tmp> 2>&1; exit $__code;"``
  (packages/core/src/tools/shell.ts; ``;`` is not added when the command ends with ``&``).
* opencode: Node/Bun ``spawn(command, {shell})``: ``<$SHELL or /bin/sh> -c <command>``.
* openhands, swe-agent: an interactive ``bash`` in tmux that receives the command with
  send-keys: its argv holds no command text, and as an interactive shell it ignores SIGTERM.
* aider ``/run``: ``subprocess(shell=True)``: ``/bin/sh -c <command>``.
"""

from __future__ import annotations

import re

from analyzer.shell.kill.model import Process
from analyzer.shell.model import ShellFrame

__all__ = ["agent_process", "harness_frame", "harness_process", "harness_wraps_command", "js_shell_quote"]

_CLAUDE_CWD = "/tmp/claude-a1b2-cwd"
_GEMINI_TMP = "/tmp/shell_pgrep_0123456789ab.tmp"


def js_shell_quote(s: str) -> str:
    """One argument quoted as the npm ``shell-quote`` package (1.8) quotes it."""
    if s == "":
        return "''"
    if re.search(r"[\"\s\\]", s) and "'" not in s:
        return "'" + s.replace("'", "\\'") + "'"
    if re.search(r"[\"'\s]", s):
        return '"' + re.sub(r'(["\\$`!])', r"\\\1", s) + '"'
    return re.sub(r"([A-Za-z]:)?([#!\"$&'()*,:;<=>?@\[\\\]^`{|}])", r"\1\\\2", s)


def _claude(command: str, shell: str) -> ShellFrame:
    name = shell.rsplit("/", 1)[-1]
    home = "/Users/user" if name == "zsh" else "/home/user"
    glob = "setopt NO_EXTENDED_GLOB 2>/dev/null || true" if name == "zsh" else "shopt -u extglob 2>/dev/null || true"
    text = (
        f"source {home}/.claude/shell-snapshots/snapshot-{name}-1700000000000-abcdef.sh 2>/dev/null || true"
        f" && {glob} && eval {js_shell_quote(command)} < /dev/null && pwd -P >| {_CLAUDE_CWD}"
    )
    return ShellFrame(argv=(shell, "-c", text), via="harness")


def _gemini(command: str) -> ShellFrame:
    body = command.strip()
    if not body.endswith("&"):
        body += ";"
    text = f"{{ {body} }}; __code=$?; pgrep -g 0 >{_GEMINI_TMP} 2>&1; exit $__code;"
    return ShellFrame(argv=("bash", "-c", text), via="harness")


_AGENT_ALIASES = {
    "claude": "claude-code", "claude-code": "claude-code", "claude_code": "claude-code",
    "codex": "codex", "openai-codex": "codex",
    "gemini": "gemini-cli", "gemini-cli": "gemini-cli",
    "opencode": "opencode",
    "openhands": "openhands", "opendevin": "openhands",
    "swe-agent": "swe-agent", "sweagent": "swe-agent",
    "aider": "aider",
}


def harness_frame(agent: str, command: str, *, shell: str | None = None) -> ShellFrame | None:
    """The shell process ``agent`` runs ``command`` in, as the outermost local frame of the chain.

    ``shell`` overrides the agent's shell (``/bin/zsh`` for a macOS Claude Code user). Unknown
    agents get a generic ``bash -c <command>``. None only for an agent that runs no shell at all
    (``none``)."""
    key = _AGENT_ALIASES.get(agent.strip().lower(), agent.strip().lower())
    if key in ("none", ""):
        return None
    if key == "claude-code":
        return _claude(command, shell or "/bin/bash")
    if key == "codex":
        return ShellFrame(argv=(shell or "bash", "-lc", command), via="harness")
    if key == "gemini-cli":
        return _gemini(command)
    if key == "opencode":
        return ShellFrame(argv=(shell or "/bin/bash", "-c", command), via="harness")
    if key in ("openhands", "swe-agent"):
        return ShellFrame(argv=(shell or "/bin/bash",), via="harness", interactive=True)
    if key == "aider":
        return ShellFrame(argv=(shell or "/bin/sh", "-c", command), via="harness")
    return ShellFrame(argv=(shell or "bash", "-c", command), via="harness")


def harness_wraps_command(frame: ShellFrame, command: str) -> bool:
    """True when the harness shell's script is more than the command itself (Claude Code's
    ``eval … && pwd``, Gemini's ``{ …; }; pgrep``): such a shell never execs the command's last
    simple command and is alive during every command."""
    if frame.interactive:
        return True
    return not (len(frame.argv) >= 3 and frame.argv[-1].strip() == command.strip())


def harness_process(agent: str, command: str, *, task_id: str | None = None, shell: str | None = None) -> Process | None:
    """The wrapper shell of a tool call that is still running (a background task): a process a
    later ``pkill -f`` can hit like any other, since its argv holds that call's command text."""
    frame = harness_frame(agent, command, shell=shell)
    if frame is None:
        return None
    short = command if len(command) <= 40 else command[:39] + "…"
    return Process(argv=frame.argv, kind="shell", task_id=task_id,
                   label=f"agent shell running `{short}`" + (f" (task {task_id})" if task_id else ""))


def agent_process(agent: str, *, install: str = "npm") -> Process:
    """The agent's own CLI process, so ``pkill node`` / ``pkill -f claude`` can be shown to hit it.

    ``install="npm"`` (default) is the Node.js form: Claude Code installed with npm runs as
    ``node /usr/local/bin/claude`` with comm ``node`` (anthropics/claude-code#3068: ``pkill node``
    killed it). ``install="native"`` is the native binary (``claude``, comm ``claude``,
    anthropics/claude-code#61856)."""
    key = _AGENT_ALIASES.get(agent.strip().lower(), agent.strip().lower())
    native = install == "native"
    if key == "claude-code":
        argv: tuple[str, ...] = ("claude",) if native else ("node", "/usr/local/bin/claude")
        label = "Claude Code CLI (the agent itself)"
    elif key == "codex":
        argv = ("codex",) if native else ("node", "/usr/local/bin/codex")
        label = "Codex CLI (the agent itself)"
    elif key == "gemini-cli":
        argv = ("node", "/usr/local/bin/gemini")
        label = "Gemini CLI (the agent itself)"
    elif key == "opencode":
        argv = ("opencode",)
        label = "opencode (the agent itself)"
    elif key == "openhands":
        argv = ("python", "-m", "openhands.core.main")
        label = "OpenHands (the agent itself)"
    elif key == "aider":
        argv = ("python3", "/usr/local/bin/aider")
        label = "aider (the agent itself)"
    else:
        argv = (agent,)
        label = f"{agent} (the agent itself)"
    return Process(argv=argv, kind="agent", label=label, ref=f"agent:{key}")
