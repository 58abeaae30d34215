"""Syntax tree → the flat ``SimpleCommand`` list of a ``ShellScript``, following nested scripts.

Conventions (the model's docstrings say what each field is; these say how it is decided):

- order: substitutions run before the command holding them; a nested script's commands come
  right after the command that runs it; ``position`` is the index in ``commands``;
- ``contexts``: ``loop`` inside a for/while/until body (a while test is ``loop``+``condition``),
  ``condition`` inside if/elif/else or case, ``function`` inside a function body, ``subshell``
  inside ``( … )``, ``pipeline`` for a member of a pipeline of two or more, ``substitution``
  inside ``$( … )``, backticks or ``<( … )``; a nested script's commands keep the contexts of
  the command running it;
- ``background``: ``&`` ends the and-or list (all of its commands) or a group/subshell around
  it; ``background_by`` says whether that came from ``&`` in its own script, a detaching launcher
  or the calling command (see the model);
- ``env``: exports in scope (a subshell, pipeline member, background list or substitution sees
  the caller's exports but does not leak its own), then ``VAR=`` prefixes, then ``env``/``sudo``
  assignments; ssh, containers and tmux start from an empty environment;
- redirects of a compound (``{ …; } > log``) apply to every command inside, before its own;
- ``cat <<EOF | X`` (and ``cat <<<`` …): X's stdin is the heredoc (shim d);
- ``shells``: the frames of the caller plus the new shell of each nesting level; inside a
  container the chain restarts (the host's shells are not its ancestors).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from analyzer.shell import nested as nested_mod
from analyzer.shell._ast import AndOr, Cmd, Compound, Node, Pipeline, Redir, Seq, Word
from analyzer.shell._levels import parse_level, parse_level_uncached
from analyzer.shell._unquote import unescape_heredoc
from analyzer.shell.model import Context, ParseStatus, Redirect, ShellFrame, ShellScript, SimpleCommand, Via
from analyzer.shell.wrappers import basename, strip

MAX_DEPTH = 4
"""Nesting levels followed (ssh → bash -c → heredoc → …); deeper scripts are left unparsed."""

BUILTINS = frozenset({
    "kill", "echo", "printf", "cd", "export", "source", ".", "eval", "wait", "read", "set", "unset",
    "true", "false", "test", "[", "[[", "trap", "shift", "exit", "return", "jobs", "disown", "type",
    "command", "builtin", "let", "local", "declare", "typeset", "readonly", "ulimit", "umask", "hash",
    "pwd", "alias", "unalias", "getopts", "times", "fg", "bg", "suspend", "logout", "mapfile",
    "readarray", "caller", "compgen", "complete", "dirs", "popd", "pushd", "shopt", "enable", "help",
    "bind", "fc", "history", ":", "time",
})
"""Run by the shell itself: a ``bash -c`` holding only one of these is not exec'd away."""

_STDOUT_OPS = {">", ">|", ">>", "&>", "&>>"}

BackgroundBy = Literal["&", "detach", "caller"]

FileLookup = Callable[[str | None, str], str | None]
"""(host, path) → content of a file written earlier in the session, or None."""


@dataclass(slots=True)
class _Scope:
    """What a nesting level inherits from the command that runs it."""

    depth: int = 0
    host: str | None = None
    via: Via | None = None
    shells: tuple[ShellFrame, ...] = ()
    contexts: tuple[Context, ...] = ()
    background: bool = False
    background_by: BackgroundBy | None = None
    container: str | None = None
    span: tuple[int, int] | None = None
    parent: int | None = None
    stdin: str | None = None
    """Stdin handed to the level (``ssh h bash -s <<EOF``): its first top-level reader gets it."""
    stdin_via: Via = "heredoc"
    outer_substs: frozenset[str] = frozenset()
    """Substitutions the calling shell already expanded in the text of this level (``bash -c
    "kill $(pgrep x)"``): their commands ran one level up and must not run again here."""


@dataclass(slots=True)
class _Walk:
    """Syntactic state while walking one level."""

    scope: _Scope
    env: dict[str, str]
    vars: dict[str, str]
    contexts: tuple[Context, ...] = ()
    background: bool = False
    redirs: tuple[Redir, ...] = ()
    top: bool = True
    """Not inside a substitution, pipeline tail or compound (may take the level's stdin)."""
    cwd: list[str | None] = field(default_factory=lambda: [None])


class Lowerer:
    def __init__(self, source: str, lookup: FileLookup | None = None) -> None:
        self.source = source
        self.lookup = lookup
        self.out: list[SimpleCommand] = []
        self.notes: list[str] = []
        self.status: ParseStatus = "ok"
        self.parser = "tree-sitter"
        self.written: dict[str, str] = {}
        self._written_keys: dict[tuple[str | None, str], str] = {}

    # entry -----------------------------------------------------------------------------------

    def run(self) -> ShellScript:
        level = parse_level_uncached(self.source)
        self.status, self.parser = level.status, level.parser
        self.notes.extend(level.notes)
        walk = _Walk(scope=_Scope(), env={}, vars={})
        self.seq(level.seq, walk, None)
        return ShellScript(source=self.source, commands=self.out, status=self.status, parser=self.parser,
                           notes=self.notes, written_files=self.written)

    def _merge(self, status: ParseStatus, notes: tuple[str, ...] | list[str], where: str) -> None:
        """A nested level's parse: broken inside makes the whole ``recovered`` (never ``failed``:
        the outer commands are there); a bound hit inside makes it ``truncated``."""
        if status == "truncated":
            self._truncate()
        elif status != "ok" and self.status == "ok":
            self.status = "recovered"
        self.notes.extend(f"{where}: {n}" for n in notes)

    def _truncate(self) -> None:
        if self.status != "failed":
            self.status = "truncated"

    # walking ---------------------------------------------------------------------------------

    def seq(self, seq: Seq, w: _Walk, conn: str | None) -> None:
        for i, item in enumerate(seq.items):
            c = conn if i == 0 else (seq.seps[i - 1] or "\n")
            if seq.seps[i] == "&":
                # the whole and-or list runs in a background subshell: its exports stay there
                sub = replace(w, env=dict(w.env), vars=dict(w.vars), background=True, cwd=list(w.cwd))
                self.node(item, sub, c)
            else:
                self.node(item, w, c)

    def node(self, n: Node, w: _Walk, conn: str | None) -> None:
        if isinstance(n, Cmd):
            self.command(n, w, conn, None)
        elif isinstance(n, Pipeline):
            self.pipeline(n, w, conn)
        elif isinstance(n, AndOr):
            for i, item in enumerate(n.items):
                self.node(item, w, conn if i == 0 else n.ops[i - 1])
        elif isinstance(n, Compound):
            self.compound(n, w, conn)
        else:
            self.seq(n, w, conn)

    def pipeline(self, p: Pipeline, w: _Walk, conn: str | None) -> None:
        many = len(p.members) > 1
        piped: str | None = None
        for i, m in enumerate(p.members):
            c = conn if i == 0 else p.ops[i - 1]
            sub = w
            if many:
                sub = replace(w, env=dict(w.env), vars=dict(w.vars), contexts=(*w.contexts, "pipeline"),
                              top=w.top and i == 0, cwd=list(w.cwd))
            if isinstance(m, Cmd):
                made = self.command(m, sub, c, piped)
                piped = _passes_stdin(made)
            else:
                self.node(m, sub, c)
                piped = None

    def compound(self, n: Compound, w: _Walk, conn: str | None) -> None:
        self.substitutions(n.words, w)
        base: Context | None = {"loop": "loop", "if": "condition", "case": "condition",
                                "function": "function", "subshell": "subshell"}.get(n.kind)  # type: ignore[assignment]
        if n.kind in ("test", "arith"):
            return
        sub = replace(w, redirs=(*w.redirs, *n.redirs), top=False)
        if base is not None:
            sub.contexts = (*w.contexts, base)
        if n.kind in ("subshell", "function"):
            sub.env, sub.vars, sub.cwd = dict(w.env), dict(w.vars), list(w.cwd)
        first = True
        for extra, body in n.parts:
            part = sub
            if extra is not None and extra != base:
                part = replace(sub, contexts=(*sub.contexts, extra))  # type: ignore[arg-type]
            before = len(self.out)
            self.seq(body, part, conn if first else None)
            if len(self.out) > before:
                first = False

    def substitutions(self, words: list[Word], w: _Walk) -> None:
        skip = w.scope.outer_substs
        for word in words:
            if not word.substs:
                continue
            for s in word.substs:
                if s.raw in skip:
                    continue
                sub = replace(w, env=dict(w.env), vars=dict(w.vars), contexts=(*w.contexts, "substitution"),
                              redirs=(), top=False, cwd=list(w.cwd))
                self.seq(s.body, sub, None)

    # one command -----------------------------------------------------------------------------

    def command(self, c: Cmd, w: _Walk, conn: str | None, piped: str | None) -> SimpleCommand | None:
        scope = w.scope
        if c.assigns:
            self.substitutions([v for _, v in c.assigns], w)
        self.substitutions(c.words, w)
        if c.redirs:
            self.substitutions([r.target for r in c.redirs if r.target is not None], w)
        if not c.words:
            for name, value in c.assigns:
                w.vars[name] = value.text
            return None
        argv = [x.text for x in c.words]
        st = strip(argv)
        eff_words = c.words[st.start :]
        eff = argv[st.start :]
        if st.argv0 is not None and eff:
            eff = [st.argv0, *eff[1:]]

        # stdin: own heredoc / here-string, else the pipe's, else the level's (its first reader)
        stdin: str | None = None
        stdin_via: Via = "heredoc"
        redirects: list[Redirect] = []
        for r in (*w.redirs, *c.redirs) if w.redirs else c.redirs:
            own = r.fd in (None, 0) and any(r is x for x in c.redirs)
            if r.op in ("<<", "<<-"):
                body = r.heredoc or ""
                if not r.heredoc_quoted:
                    body = unescape_heredoc(body)
                redirects.append(Redirect(fd=r.fd, op=r.op, target=body))
                if own:
                    stdin, stdin_via = body, "heredoc"
            elif r.op == "<<<":
                text = r.target.text if r.target is not None else ""
                redirects.append(Redirect(fd=r.fd, op=r.op, target=text))
                if own:
                    stdin, stdin_via = text + "\n", "herestring"
            else:
                redirects.append(Redirect(fd=r.fd, op=r.op, target=r.target.text if r.target else ""))
        if stdin is None and piped is not None:
            stdin = piped
        inherited = scope.stdin if stdin is None and w.top else None
        if inherited is not None:
            stdin_via = scope.stdin_via
        analysis = nested_mod.analyze(eff, eff_words, stdin if stdin is not None else inherited, stdin_via)
        if inherited is not None and (analysis.consumes_stdin or _reads_stdin(eff)):
            stdin = inherited
            scope.stdin = None

        # background: & in this script, else a detaching launcher, else the caller
        background_by: BackgroundBy | None = None
        if w.background or c.background:
            background_by = "&"
        elif st.detach or analysis.detach_self:
            background_by = "detach"
        elif scope.background_by is not None:
            background_by = scope.background_by

        env = {} if st.clear_env else dict(w.env)
        env.update((name, value.text) for name, value in c.assigns)
        env.update(st.env)

        index = len(self.out)
        cmd = SimpleCommand(
            argv=argv,
            name=basename(argv[st.start]) if argv else "",
            effective_argv=eff,
            wrappers=st.wrappers,
            env=env,
            redirects=redirects,
            stdin=stdin,
            background=background_by is not None,
            background_by=background_by,
            host=scope.host,
            depth=scope.depth,
            via=scope.via,
            contexts=[*scope.contexts, *w.contexts],
            position=index,
            connector=conn,
            dynamic=any(x.dynamic for x in c.words),
            span=scope.span if scope.span is not None else self._span(c.start, c.end),
            shells=list(scope.shells),
            script_path=analysis.script_path,
            parent=scope.parent,
            container=scope.container,
        )
        self.out.append(cmd)
        self._builtin_effects(cmd, w)
        self._record_writes(cmd, w)
        if analysis.plans:
            expanded = frozenset(s.raw for x in (*c.words, *(r.target for r in c.redirs if r.target))
                                 for s in x.substs)
            for plan in analysis.plans:
                self.nest(plan, cmd, index, scope, w, expanded)
        if analysis.script_path is not None and self.lookup is not None:
            self.run_file(cmd, index, analysis.script_path, analysis.sourced, scope, w)
        return cmd

    def _span(self, start: int, end: int) -> tuple[int, int]:
        n = len(self.source)
        return min(start, n), min(end, n)

    def _builtin_effects(self, cmd: SimpleCommand, w: _Walk) -> None:
        """export/declare -x/unset/cd change what later commands of the same shell see."""
        argv = cmd.effective_argv
        if not argv:
            return
        name = argv[0]
        if name == "export" or (name in ("declare", "typeset") and any(
                a.startswith("-") and "x" in a for a in argv[1:])):
            for a in argv[1:]:
                if a.startswith("-"):
                    continue
                key, eq, value = a.partition("=")
                if eq:
                    w.env[key] = value
                    w.vars[key] = value
                elif key in w.vars:
                    w.env[key] = w.vars[key]
        elif name == "unset":
            for a in argv[1:]:
                w.env.pop(a, None)
                w.vars.pop(a, None)
        elif name == "cd" and len(argv) > 1 and not cmd.dynamic:
            target = argv[-1]
            if target.startswith("/"):
                w.cwd[0] = posixpath.normpath(target)
            elif w.cwd[0] is not None and not target.startswith(("-", "~")):
                w.cwd[0] = posixpath.normpath(posixpath.join(w.cwd[0], target))
            else:
                w.cwd[0] = None

    def _path(self, path: str, w: _Walk) -> str:
        if not path.startswith("/") and w.cwd[0] is not None and not path.startswith("~"):
            return posixpath.normpath(posixpath.join(w.cwd[0], path))
        return posixpath.normpath(path) if path.startswith("/") else path

    def _record_writes(self, cmd: SimpleCommand, w: _Walk) -> None:
        """Heredocs written to files: ``cat > f <<EOF``, ``cat <<EOF > f``, ``tee [-a] f <<EOF``."""
        if cmd.stdin is None or cmd.container is not None:
            return
        targets: list[tuple[str, bool]] = []
        args = cmd.effective_argv[1:]
        if cmd.name == "cat" and all(a == "-" or a.startswith("-") for a in args):
            pass
        elif cmd.name == "tee":
            append = any(a in ("-a", "--append") for a in args)
            targets.extend((a, append) for a in args if not a.startswith("-"))
        else:
            return
        for r in cmd.redirects:
            if r.op in _STDOUT_OPS and r.fd in (None, 1) and r.target and not r.target.startswith("&"):
                targets.append((r.target, r.op in (">>", "&>>")))
        for path, append in targets:
            if path in ("/dev/null", "/dev/stdout", "/dev/stderr") or "$" in path:
                continue
            norm = self._path(path, w)
            key = f"{cmd.host}:{norm}" if cmd.host else norm
            content = (self.written.get(key, "") + cmd.stdin) if append else cmd.stdin
            self.written[key] = content
            self._written_keys[(cmd.host, norm)] = key

    # nesting ---------------------------------------------------------------------------------

    def _child_scope(self, cmd: SimpleCommand, index: int, scope: _Scope, via: Via, span: tuple[int, int] | None,
                     detach: bool) -> _Scope:
        if cmd.background_by is not None:
            bg_by: BackgroundBy | None = "caller"
        elif detach:
            bg_by = "detach"
        else:
            bg_by = None
        return _Scope(
            depth=scope.depth + 1, host=scope.host, via=via, shells=scope.shells,
            contexts=tuple(cmd.contexts), background=bg_by is not None, background_by=bg_by,
            container=scope.container, parent=index,
            span=scope.span if scope.span is not None else self._span(*span) if span else cmd.span,
        )

    def nest(self, plan: nested_mod.Plan, cmd: SimpleCommand, index: int, scope: _Scope, w: _Walk,
             expanded: frozenset[str] = frozenset()) -> None:
        where = f"{plan.via} script of command {index}"
        if scope.depth >= MAX_DEPTH:
            self.notes.append(f"{where}: nested deeper than {MAX_DEPTH} levels, not followed")
            self._truncate()
            return
        self.notes.extend(f"{where}: {n}" for n in plan.notes)
        child = self._child_scope(cmd, index, scope, plan.via, plan.span, plan.detach)
        if plan.host is not None:
            child.host = plan.host
        if plan.container is not None:
            child.container = plan.container
            child.shells = ()
        env = {} if plan.fresh_env else dict(cmd.env)
        env.update(plan.env)
        if plan.words is not None:
            sub = _Walk(scope=child, env=env, vars={})
            start = plan.words[0].start if plan.words else 0
            end = plan.words[-1].end if plan.words else 0
            self.command(Cmd(words=list(plan.words), start=start, end=end), sub, None, None)
            return
        text = plan.text or ""
        level = parse_level(text)
        self._merge(level.status, level.notes, where)
        if plan.frame is not None:
            frame = ShellFrame(argv=plan.frame, host=child.host, via=plan.via, interactive=plan.interactive,
                               execs_last=plan.frame_may_exec and lone_exec(level.seq))
            child.shells = (*child.shells, frame)
        child.stdin = plan.stdin
        child.outer_substs = expanded
        child.stdin_via = "herestring" if cmd.redirects and cmd.redirects[-1].op == "<<<" else "heredoc"
        self.seq(level.seq, _Walk(scope=child, env=env, vars={}), None)

    def run_file(self, cmd: SimpleCommand, index: int, path: str, sourced: bool, scope: _Scope,
                 w: _Walk) -> None:
        """A script file written earlier (this script or the session): its commands one level down."""
        content = self._file(cmd.host, self._path(path, w), path)
        if content is None:
            return
        if scope.depth >= MAX_DEPTH:
            self.notes.append(f"script file {path}: nested deeper than {MAX_DEPTH} levels, not followed")
            self._truncate()
            return
        interpreter = _shebang(content)
        if interpreter is not None and basename(interpreter[0]) not in nested_mod.SHELLS:
            return  # a Python/Perl file: not shell
        child = self._child_scope(cmd, index, scope, "script-file", cmd.span, False)
        if not sourced:
            if basename(cmd.effective_argv[0]) in nested_mod.SHELLS:
                argv = tuple(cmd.effective_argv)
            else:
                argv = (*(interpreter or ("bash",)), *cmd.effective_argv)
            child.shells = (*child.shells, ShellFrame(argv=argv, host=child.host, via="script-file"))
        level = parse_level(content)
        self._merge(level.status, level.notes, f"script file {path}")
        env = dict(cmd.env)
        self.seq(level.seq, _Walk(scope=child, env=env, vars=dict(w.vars) if sourced else {}), None)

    def _file(self, host: str | None, norm: str, as_written: str) -> str | None:
        key = self._written_keys.get((host, norm))
        if key is not None:
            return self.written[key]
        assert self.lookup is not None
        return self.lookup(host, norm) or (self.lookup(host, as_written) if as_written != norm else None)


_STDIN_READERS = frozenset({"python", "python3", "perl", "ruby", "node", "cat", "tee", "psql", "mysql"})


def _reads_stdin(argv: list[str]) -> bool:
    """Takes a stdin handed down to its level (``ssh h python3 - <<EOF``)."""
    return bool(argv) and ("-" in argv[1:] or basename(argv[0]).rstrip("0123456789.") in _STDIN_READERS)


def _passes_stdin(cmd: SimpleCommand | None) -> str | None:
    """Shim (d): ``cat <<EOF | X`` hands the heredoc to X."""
    if cmd is None or cmd.stdin is None or cmd.name != "cat":
        return None
    if any(not a.startswith("-") for a in cmd.effective_argv[1:]):
        return None
    if any(r.op in _STDOUT_OPS and r.fd in (None, 1) for r in cmd.redirects):
        return None
    return cmd.stdin


def _shebang(content: str) -> tuple[str, ...] | None:
    if not content.startswith("#!"):
        return None
    parts = content[2:].split("\n", 1)[0].split()
    if not parts:
        return None
    if basename(parts[0]) == "env" and len(parts) > 1:
        return tuple(p for p in parts[1:] if not p.startswith("-"))[:1] or None
    return tuple(parts[:2]) if len(parts) > 1 else (parts[0],)


def lone_exec(seq: Seq) -> bool:
    """bash/dash/zsh ``-c`` exec a lone simple external command: no shell process remains.

    bash's ``should_suppress_fork``: one simple command, no redirections, not in the background,
    not ``time``; a builtin runs inside the shell, so the shell is still there (``exec`` replaces it).
    """
    if len(seq.items) != 1 or seq.seps[0] == "&":
        return False
    node = seq.items[0]
    if not isinstance(node, Cmd) or not node.words or node.redirs or node.background:
        return False
    first = node.words[0].text
    return first == "exec" or first not in BUILTINS
