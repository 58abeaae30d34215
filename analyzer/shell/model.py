"""What a shell command string means, as data: the contract between the parser, the kill
semantics and the lifecycle stage.

A ``ShellScript`` flattens every simple command at every nesting depth (ssh remote scripts,
``bash -c`` strings, heredocs fed to shells, ``$(…)``) into ``commands``, in source order. Each
command knows the chain of shell processes that run it (``shells``), which is what a ``pkill -f``
can hit besides its targets.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Context = Literal["substitution", "loop", "function", "condition", "pipeline", "subshell"]
Via = Literal[
    "ssh", "shell-c", "su-c", "heredoc", "herestring", "tmux", "screen", "watch", "docker-exec",
    "kubectl-exec", "script-file", "function",
]


class Redirect(BaseModel):
    """One redirection of a simple command."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    fd: int | None = None
    """The file descriptor redirected (``2`` in ``2>&1``); None means the operator's default."""
    op: str
    """The operator: ``>``, ``>>``, ``<``, ``&>``, ``>&``, ``<<``, ``<<<``…"""
    target: str
    """Where it goes (a path, ``&1``, ``/dev/null``), unquoted; the heredoc body for ``<<``."""


class ShellFrame(BaseModel):
    """A shell process that runs a command: the harness's ``bash -c``, sshd's ``$SHELL -c``, a
    ``bash -c`` the agent wrote. pkill/pgrep ``-f`` match its ``argv`` joined by spaces."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    argv: tuple[str, ...]
    """The process's argv, e.g. ``("bash", "-c", "<script text>")``."""
    host: str | None = None
    """Where it runs: None for the local machine, else the ssh target as written."""
    via: Via | Literal["harness"] = "harness"
    """How it was started."""
    execs_last: bool = False
    """The script is a lone simple command, so bash ``exec``s it and no shell process remains to
    be hit (shell-semantics §5, B5)."""
    interactive: bool = False
    """An interactive shell fed commands from a terminal (OpenHands' tmux bash, a user's terminal):
    its argv holds no command text, and it ignores SIGTERM (only SIGKILL/SIGHUP end it)."""


class SimpleCommand(BaseModel):
    """One simple command, after unquoting, at any nesting depth."""

    model_config = ConfigDict(defer_build=True)

    argv: list[str]
    """Words as bash would pass them (quotes removed; expansions kept as source text)."""
    name: str
    """The effective program after stripping wrappers (nohup, sudo, env, timeout…), basename."""
    effective_argv: list[str]
    """``argv`` with wrappers and env prefixes stripped: what the program sees."""
    wrappers: list[str] = Field(default_factory=list)
    """The wrappers stripped, outermost first (``["sudo", "nohup"]``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """``VAR=value`` prefixes and ``env VAR=…`` assignments, plus ``export``s earlier in the same
    script that are in scope."""
    redirects: list[Redirect] = Field(default_factory=list)
    """Redirections, shim-corrected (they bind to the last command of a list)."""
    stdin: str | None = None
    """Heredoc or here-string text fed to this command."""
    background: bool = False
    """Runs in the background: ``&`` on its and-or list, or inside a backgrounded group, or a
    detaching wrapper (``setsid``, ``screen -dm``, ``tmux new -d``, ``nohup … &``)."""
    host: str | None = None
    """None for the local machine, else the ssh target that runs it (``root@10.1.230.174``)."""
    depth: int = 0
    """Nesting depth: 0 top level, 1 inside ``ssh '…'`` or ``bash -c '…'``, …"""
    via: Via | None = None
    """How the innermost nesting level was entered."""
    contexts: list[Context] = Field(default_factory=list)
    """Syntactic contexts it sits in, outermost first."""
    position: int = 0
    """Order of execution among the commands of the script (0-based, depth-first)."""
    connector: str | None = None
    """The operator before it in its list: ``;``, ``&&``, ``||``, ``&``, ``|``, newline as ``\\n``;
    None for the first."""
    dynamic: bool = False
    """A word contains ``$VAR``, ``$(…)``, backticks or a glob: the real argv is unknown here."""
    span: tuple[int, int] | None = None
    """Character offsets of the command in the top-level text, when it comes from that text
    (nested commands point at the span of the outer word holding them)."""
    shells: list[ShellFrame] = Field(default_factory=list)
    """The shell processes that are running this command, outermost first (excluding the harness
    frame, which the caller adds when it knows the harness)."""
    script_path: str | None = None
    """For ``bash serve.sh`` / ``./serve.sh``: the script file it runs (resolved later by the
    session-level resolver)."""
    background_by: Literal["&", "detach", "caller"] | None = None
    """Why ``background`` is set: ``&`` ends its and-or list, group or subshell in its own script;
    ``detach`` a detaching wrapper or launcher (setsid, ``screen -dm``, tmux, ``sudo -b``,
    ``ssh -f``, ``docker exec -d``); ``caller`` the command running its script (``bash -c '…' &``,
    ``ssh h '…' &``) is in the background. None when not in the background."""
    parent: int | None = None
    """Index in ``ShellScript.commands`` of the command whose nested script holds this one (the
    ssh client, the ``bash -c``, the ``docker exec``); None at depth 0."""
    container: str | None = None
    """The container it runs in (``docker exec CTR``, ``kubectl exec POD``), as written; the
    shells outside the container are not its ancestors, so ``shells`` restarts there."""


ParseStatus = Literal["ok", "recovered", "truncated", "failed"]


class ShellScript(BaseModel):
    """A parsed command string."""

    model_config = ConfigDict(defer_build=True)

    source: str
    """The command text as given."""
    commands: list[SimpleCommand] = Field(default_factory=list)
    """Every simple command at every depth, in execution order."""
    status: ParseStatus = "ok"
    """``ok``: parsed cleanly; ``recovered``: repaired (closed quotes, truncated log text) or taken
    from an error-recovering tree; ``truncated``: a bound of the shell stage was hit (nesting
    depth, a parser's memory or time budget, nested scripts deeper than followed): the commands
    that could be read are kept, some flat or not followed, and ``notes`` says which;
    ``failed``: nothing usable."""
    parser: str = "tree-sitter"
    """Which parser produced the result: ``tree-sitter``, ``shfmt``, ``tree-sitter+repair``…"""
    notes: list[str] = Field(default_factory=list)
    """Why a fallback was used, what was repaired."""
    written_files: dict[str, str] = Field(default_factory=dict)
    """Files this script writes with a heredoc (``cat > serve.sh <<'EOF'``): path -> content."""

    def named(self, *names: str) -> list[SimpleCommand]:
        return [c for c in self.commands if c.name in names]
