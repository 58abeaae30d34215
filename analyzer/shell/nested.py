"""Commands that run another script or argv one level deeper (shell-semantics §4 step 6).

``analyze`` looks at one command (wrappers already stripped) and says what it runs:

- ``ssh [opts] host cmd…``: the remote argv joined by single spaces (OpenSSH's ``ssh.c``), run
  by the remote login shell as ``$SHELL -c '<string>'``; with no remote command, stdin (heredoc,
  here-string) is the script;
- ``bash|sh|dash|zsh|ksh [opts] -c STRING`` (``-lc``, ``-xc``…); with ``-s`` or without a
  script file, stdin is the script; ``bash file.sh`` is a script file (``script_path``);
- ``su … -c STRING``; ``watch [opts] STRING…``; ``tmux new-session|new-window|split-window …
  CMD`` and ``tmux send-keys -t T 'cmd' Enter``; ``screen -S S -X stuff 'cmd^M'``;
- ``docker|podman exec [opts] CTR argv…``, ``docker compose exec SVC argv…``,
  ``kubectl exec POD [--] argv…``: an argv one level deeper, in a container.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.shell._ast import Word
from analyzer.shell.model import Via
from analyzer.shell.wrappers import _getopt, basename

SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "ash", "mksh"})
_SSH_WITH_ARG = "bcDEeFIiJLlmOopQRSWwB"
_SCRIPT_SUFFIXES = (".sh", ".bash")


@dataclass(slots=True)
class Plan:
    """One nested level to lower."""

    via: Via
    text: str | None = None
    """A script to parse."""
    words: list[Word] | None = None
    """Or: an argv that runs directly (docker/kubectl exec)."""
    frame: tuple[str, ...] | None = None
    """argv of the shell process that runs ``text``; None when no new shell runs it."""
    frame_may_exec: bool = False
    """The shell is ``-c STRING``: it execs a lone simple command (bash, dash, zsh do)."""
    interactive: bool = False
    """The frame is an interactive shell typed into (tmux send-keys, screen stuff)."""
    host: str | None = None
    """A new host (ssh target); None keeps the caller's."""
    container: str | None = None
    fresh_env: bool = False
    """The level does not inherit the caller's exported variables (ssh, containers, tmux)."""
    env: dict[str, str] = field(default_factory=dict)
    detach: bool = False
    """Its commands are detached from the caller (tmux, ``docker exec -d``)."""
    stdin: str | None = None
    """Stdin handed down to the level's first reader (``ssh h bash -s <<EOF``)."""
    span: tuple[int, int] | None = None
    """Offsets of the outer words holding the script."""
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True)
class NestedCommands:
    plans: list[Plan] = field(default_factory=list)
    script_path: str | None = None
    """For ``bash serve.sh``, ``./serve.sh``, ``source env.sh``: the file it runs."""
    sourced: bool = False
    """``source``/``.``: the file runs in the calling shell, not in a new process."""
    consumes_stdin: bool = False
    """The command reads its stdin as a script (so the heredoc is not data)."""
    detach_self: bool = False
    """The command itself goes to the background (``ssh -f``)."""


def _span(words: list[Word]) -> tuple[int, int] | None:
    return (words[0].start, words[-1].end) if words else None


def analyze(argv: list[str], words: list[Word], stdin: str | None, stdin_via: Via) -> NestedCommands:
    """``argv``: the effective argv (wrappers stripped); ``words``: the same words with offsets;
    ``stdin``: text fed to the command (heredoc, here-string, ``cat <<EOF |``)."""
    out = NestedCommands()
    if not argv:
        return out
    prog = argv[0]
    name = basename(prog)
    if name == "busybox" and len(argv) > 1 and argv[1] in SHELLS:
        argv, words, name = argv[1:], words[1:], argv[1]
    if name in SHELLS:
        _shell(argv, words, stdin, stdin_via, out)
    elif name == "ssh":
        _ssh(argv, words, stdin, out)
    elif name == "su":
        _su(argv, words, out)
    elif name == "watch":
        _watch(argv, words, out)
    elif name == "tmux":
        _tmux(argv, words, out)
    elif name == "screen":
        _screen_stuff(argv, words, out)
    elif name in ("docker", "podman", "docker-compose"):
        _docker(argv, words, out)
    elif name in ("kubectl", "oc"):
        _kubectl(argv, words, out)
    elif name.lower() in _WINDOWS_SHELLS:
        _windows_shell(argv, words, out)
    elif name in ("source", ".") and len(argv) > 1:
        out.script_path, out.sourced = argv[1], True
    elif name.endswith(_SCRIPT_SUFFIXES) or prog.startswith(("./", "../", "~/")):
        out.script_path = prog
    return out


def _shell(argv: list[str], words: list[Word], stdin: str | None, stdin_via: Via, out: NestedCommands) -> None:
    n = len(argv)
    i = 1
    c_flag = s_flag = False
    while i < n:
        a = argv[i]
        if a in ("--", "-"):
            i += 1
            break
        if a.startswith("--"):
            i += 2 if a in ("--rcfile", "--init-file") else 1
            continue
        if len(a) > 1 and a[0] in "-+":
            flags = a[1:]
            if a[0] == "-":
                c_flag = c_flag or "c" in flags
                s_flag = s_flag or "s" in flags
            i += 2 if ("o" in flags or "O" in flags) else 1
            continue
        break
    rest = argv[i:]
    if c_flag:
        if rest:
            out.plans.append(Plan(via="shell-c", text=rest[0], frame=tuple(argv), frame_may_exec=True,
                                  span=_span(words[i : i + 1])))
        return
    if rest and not s_flag:
        out.script_path = rest[0]
        return
    if stdin is not None:
        out.consumes_stdin = True
        out.plans.append(Plan(via=stdin_via, text=stdin, frame=tuple(argv)))  # span: the whole command


def _ssh(argv: list[str], words: list[Word], stdin: str | None, out: NestedCommands) -> None:
    n = len(argv)
    i = 1
    no_command = False
    while i < n:
        a = argv[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        takes_next = False
        for j, ch in enumerate(a[1:], start=1):
            if ch in _SSH_WITH_ARG:
                takes_next = j == len(a) - 1
                break
            if ch == "f":
                out.detach_self = True
            elif ch in "Ns":
                no_command = True
        i += 2 if takes_next else 1
    if i >= n:
        return
    host = argv[i]
    remote, remote_words = argv[i + 1 :], words[i + 1 :]
    if no_command:
        return
    if remote:
        text = " ".join(remote)
        out.plans.append(Plan(via="ssh", text=text, frame=("bash", "-c", text), frame_may_exec=True,
                              host=host, fresh_env=True, stdin=stdin, span=_span(remote_words)))
    elif stdin is not None:
        out.consumes_stdin = True
        out.plans.append(Plan(via="ssh", text=stdin, frame=("-bash",), host=host, fresh_env=True))


_WINDOWS_SHELLS = frozenset({"cmd", "cmd.exe", "powershell", "powershell.exe", "pwsh", "pwsh.exe"})


def _windows_shell(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    """``cmd /c npm run dev`` and ``powershell -Command "Stop-Process -Name node"``: the rest of the
    line is a command of its own (read with the same grammar: the simple commands agents pass
    this way parse alike)."""
    cmd = basename(argv[0]).lower().startswith("cmd")
    for i in range(1, len(argv)):
        a = argv[i].lower()
        if (cmd and a in ("/c", "/k", "//c")) or (not cmd and a in ("-command", "-c", "/command")):
            text = " ".join(argv[i + 1:])
            if text:
                out.plans.append(Plan(via="shell-c", text=text, frame=(argv[0], argv[i], text),
                                      span=_span(words[i + 1:])))
            return


def _su(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    n = len(argv)
    for i in range(1, n):
        a = argv[i]
        script: str | None = None
        at = i
        if a in ("-c", "--command") and i + 1 < n:
            script, at = argv[i + 1], i + 1
        elif a.startswith("--command="):
            script = a.partition("=")[2]
        if script is not None:
            login = any(x in ("-", "-l", "--login") for x in argv[1:i])
            out.plans.append(Plan(via="su-c", text=script, frame=("bash", "-c", script), frame_may_exec=True,
                                  fresh_env=login, span=_span(words[at : at + 1])))
            return


def _watch(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    flags: list[str] = []
    j = _getopt(argv, 1, "nq", frozenset({"--interval", "--equexit"}),
                on_flag=lambda o, v: flags.append(o))
    rest = argv[j:]
    if not rest:
        return
    text = " ".join(rest)
    exec_mode = "-x" in flags or "--exec" in flags
    out.plans.append(Plan(via="watch", text=text, frame=None if exec_mode else ("sh", "-c", text),
                          frame_may_exec=True, span=_span(words[j:])))


_TMUX_NEW = {
    # command: (options taking an argument, detached without -d)
    "new-session": ("cefFnstxy", False), "new": ("cefFnstxy", False),
    "new-window": ("ceFnt", True), "neww": ("ceFnt", True),
    "split-window": ("celptF", True), "splitw": ("celptF", True),
    "respawn-pane": ("cet", True), "respawnp": ("cet", True),
    "respawn-window": ("cet", True), "respawnw": ("cet", True),
}
_ENTER = {"Enter", "C-m", "KPEnter", "C-j"}


def _tmux(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    i = _getopt(argv, 1, "LSfTc")
    # several commands may be chained with `;` (written `\;` or ';')
    start = i
    for k in range(i, len(argv) + 1):
        if k == len(argv) or argv[k] == ";":
            if k > start:
                _tmux_command(argv[start:k], words[start:k], out)
            start = k + 1


def _tmux_command(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    cmd = argv[0]
    if cmd in _TMUX_NEW:
        with_arg, detached = _TMUX_NEW[cmd]
        flags: list[str] = []
        j = _getopt(argv, 1, with_arg, on_flag=lambda o, v: flags.append(o))
        if j < len(argv):
            text = " ".join(argv[j:])
            out.plans.append(Plan(via="tmux", text=text, frame=("sh", "-c", text), frame_may_exec=True,
                                  fresh_env=True, detach=detached or "-d" in flags, span=_span(words[j:])))
    elif cmd in ("send-keys", "send"):
        flags = []
        j = _getopt(argv, 1, "Nt", on_flag=lambda o, v: flags.append(o))
        literal = "-l" in flags
        typed, ran = "", []
        for key in argv[j:]:
            if not literal and key in _ENTER:
                ran.append(typed)
                typed = ""
            elif not literal and key == "C-c":
                typed = ""
            elif not literal and key == "Space":
                typed += " "
            elif not literal and key == "Tab":
                typed += "\t"
            elif not literal and len(key) > 2 and key[:2] in ("C-", "M-", "S-"):
                continue
            else:
                typed += key
        plan = Plan(via="tmux", text="\n".join(ran), frame=("-bash",), interactive=True, fresh_env=True,
                    detach=True, span=_span(words[j:]))
        if typed.strip():
            plan.notes.append(f"tmux send-keys: {typed.strip()!r} typed without Enter, not run")
        if ran:
            out.plans.append(plan)


def _screen_stuff(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    for i in range(1, len(argv) - 2):
        if argv[i] == "-X" and argv[i + 1] == "stuff":
            raw = argv[i + 2]
            text = raw.replace("^M", "\n").replace("\\r", "\n").replace("\\n", "\n").replace("\r", "\n")
            lines = text.split("\n")
            ran = "\n".join(lines[:-1])
            if ran.strip():
                out.plans.append(Plan(via="screen", text=ran, frame=("bash",), interactive=True, fresh_env=True,
                                      detach=True, span=_span(words[i + 2 : i + 3])))
            return


_DOCKER_GLOBAL = "Hcl"
_DOCKER_GLOBAL_LONG = frozenset({"--host", "--context", "--config", "--log-level", "--tlscacert",
                                 "--tlscert", "--tlskey"})
_COMPOSE_GLOBAL_LONG = frozenset({"--file", "--project-name", "--project-directory", "--env-file",
                                  "--profile", "--ansi", "--progress", "--parallel"})


def _docker(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    n = len(argv)
    compose = basename(argv[0]) == "docker-compose"
    i = _getopt(argv, 1, _DOCKER_GLOBAL, _DOCKER_GLOBAL_LONG)
    if not compose and i < n and argv[i] == "compose":
        compose = True
        i += 1
    if compose:
        i = _getopt(argv, i, "fp", _COMPOSE_GLOBAL_LONG)
    elif i < n and argv[i] == "container":
        i += 1
    if i >= n or argv[i] != "exec":
        return
    env: dict[str, str] = {}
    detach: list[bool] = []

    def flag(opt: str, value: str | None) -> None:
        if opt in ("-e", "--env") and value:
            key, _, val = value.partition("=")
            env[key] = val
        elif opt in ("-d", "--detach"):
            detach.append(True)

    j = _getopt(argv, i + 1, "euw", frozenset({"--env", "--env-file", "--user", "--workdir",
                                                "--detach-keys", "--index"}), on_flag=flag)
    if j + 1 >= n:
        return
    out.plans.append(Plan(via="docker-exec", words=words[j + 1 :], container=argv[j], fresh_env=True,
                          env=env, detach=bool(detach), span=_span(words[j + 1 :])))


def _kubectl(argv: list[str], words: list[Word], out: NestedCommands) -> None:
    n = len(argv)
    long_with_arg = frozenset({"--namespace", "--context", "--kubeconfig", "--cluster", "--user", "--server",
                               "--token", "--request-timeout", "--container", "--filename",
                               "--pod-running-timeout"})
    i = _getopt(argv, 1, "ns", long_with_arg)
    if i >= n or argv[i] != "exec":
        return
    k = i + 1
    pod: str | None = None
    pod_at = -1
    while k < n:
        a = argv[k]
        if a == "--":
            k += 1
            break
        if a.startswith("-") and a != "-":
            name, eq, _ = a.partition("=")
            takes = (name in ("-c", "-n", "-f") or name in long_with_arg) and not eq
            k += 2 if takes else 1
            continue
        if pod is None:
            pod, pod_at = a, k
            k += 1
            continue
        break  # the deprecated form without `--`
    if pod is None or k >= n or pod_at < 0:
        return
    out.plans.append(Plan(via="kubectl-exec", words=words[k:], container=pod, fresh_env=True,
                          span=_span(words[k:])))
