"""Transparent wrappers: programs that run another program given on their command line
(shell-semantics §4 step 7). ``strip(argv)`` finds the program that really runs.

A wrapper with nothing after its options is the program itself (``env`` alone prints the
environment, ``command -v x`` only looks ``x`` up, ``screen -ls`` lists sessions).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_DURATION = re.compile(r"\d+(\.\d*)?[smhd]?|\.\d+[smhd]?|\$\S*")


@dataclass(slots=True)
class Stripped:
    start: int
    """Index in argv of the program that runs (argv[start:] is what it sees, argv0 aside)."""
    wrappers: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    """Variables set by ``env VAR=…`` / ``sudo VAR=…``."""
    clear_env: bool = False
    """``env -i``: the program gets only ``env``."""
    detach: bool = False
    """A wrapper that detaches the program from the caller (setsid, screen -dm, sudo -b)."""
    argv0: str | None = None
    """``exec -a NAME``: the argv[0] the program sees."""


def basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] or word


def scan_options(argv: list[str], i: int, with_arg: str, long_with_arg: frozenset[str] = frozenset(),
                 on_flag: Callable[[str, str | None], None] | None = None, *,
                 permute: bool = False) -> tuple[int, list[str]]:
    """Read getopt-style options from ``argv[i]`` by table, tolerating options it does not know.

    ``with_arg``: short options taking an argument (``-u root``, ``-uroot``); ``long_with_arg``:
    long options taking one when not written ``--opt=value``. ``on_flag(opt, value)`` sees each.
    Without ``permute`` it stops at the first operand (POSIX) and returns its index and no
    operands; with it, operands may come anywhere (GNU) and are returned, ``--`` ending options.
    """
    n = len(argv)
    operands: list[str] = []
    while i < n:
        a = argv[i]
        if a == "--":
            i += 1
            if permute:
                operands.extend(argv[i:])
                i = n
            break
        if not a.startswith("-") or a == "-":
            if not permute:
                break
            operands.append(a)
            i += 1
            continue
        if a.startswith("--"):
            name, eq, value = a.partition("=")
            if not eq and name in long_with_arg:
                value = argv[i + 1] if i + 1 < n else ""
                i += 1
            if on_flag:
                on_flag(name, value if (eq or name in long_with_arg) else None)
            i += 1
            continue
        j = 1
        consumed_next = False
        while j < len(a):
            ch = a[j]
            if ch in with_arg:
                if j + 1 < len(a):
                    value = a[j + 1 :]
                else:
                    value = argv[i + 1] if i + 1 < n else ""
                    consumed_next = True
                if on_flag:
                    on_flag("-" + ch, value)
                break
            if on_flag:
                on_flag("-" + ch, None)
            j += 1
        i += 2 if consumed_next else 1
    return i, operands


def _getopt(argv: list[str], i: int, with_arg: str, long_with_arg: frozenset[str] = frozenset(),
            on_flag: Callable[[str, str | None], None] | None = None) -> int:
    """Skip options from ``argv[i]`` (POSIX: up to the first operand); return that operand's index."""
    return scan_options(argv, i, with_arg, long_with_arg, on_flag)[0]


WRAPPERS = frozenset({"nohup", "setsid", "time", "command", "exec", "nice", "ionice", "taskset", "numactl",
                      "stdbuf", "timeout", "env", "sudo", "xargs", "screen"})


def strip(argv: list[str]) -> Stripped:
    """Peel wrappers off ``argv`` (already unquoted), outermost first."""
    out = Stripped(start=0)
    n = len(argv)
    i = 0
    while i < n:
        name = basename(argv[i])
        if name not in WRAPPERS:
            break
        saved = (dict(out.env), out.clear_env, out.detach, out.argv0)
        j = _unwrap(name, argv, i, out)
        if j is None or j >= n or j <= i:
            out.env, out.clear_env, out.detach, out.argv0 = saved
            break
        out.wrappers.append(name)
        i = j
    out.start = i
    return out


def _unwrap(name: str, argv: list[str], i: int, out: Stripped) -> int | None:
    """Index of the wrapped program's argv[0] if ``argv[i]`` is a wrapper with a command, else None."""
    n = len(argv)
    k = i + 1
    if name == "nohup":
        return k + 1 if k < n and argv[k] == "--" else k
    if name == "setsid":
        j = _getopt(argv, k, "")
        if j < n:
            out.detach = True
        return j
    if name in ("time", "command"):
        flags: list[str] = []
        j = _getopt(argv, k, "fo" if name == "time" else "", on_flag=lambda o, v: flags.append(o))
        if name == "command" and ("-v" in flags or "-V" in flags):
            return None
        return j
    if name == "exec":
        argv0: list[str] = []
        j = _getopt(argv, k, "a", on_flag=lambda o, v: argv0.append(v or "") if o == "-a" else None)
        if j < n and argv0:
            out.argv0 = argv0[-1]
        return j
    if name == "nice":
        if k < n and re.fullmatch(r"-\d+", argv[k]):
            return k + 1
        return _getopt(argv, k, "n", frozenset({"--adjustment"}))
    if name == "ionice":
        pid_mode: list[bool] = []
        j = _getopt(argv, k, "cnpPu", frozenset({"--class", "--classdata", "--pid", "--pgid", "--uid"}),
                    on_flag=lambda o, v: pid_mode.append(True) if o in ("-p", "-P", "-u", "--pid") else None)
        return None if pid_mode else j
    if name == "taskset":
        pid_mode = []
        j = _getopt(argv, k, "", on_flag=lambda o, v: pid_mode.append(True) if o in ("-p", "--pid") else None)
        return None if pid_mode else j + 1  # the mask / cpu list operand
    if name == "numactl":
        return _getopt(argv, k, "CNmipPwb", frozenset({
            "--cpunodebind", "--membind", "--physcpubind", "--interleave", "--preferred",
            "--preferred-many", "--weighted-interleave", "--balancing", "--cpubind",
        }))
    if name == "stdbuf":
        return _getopt(argv, k, "ioe", frozenset({"--input", "--output", "--error"}))
    if name == "timeout":
        j = _getopt(argv, k, "sk", frozenset({"--signal", "--kill-after"}))
        return j + 1 if j < n and _DURATION.fullmatch(argv[j]) else None
    if name == "env":
        def env_flag(opt: str, value: str | None) -> None:
            if opt in ("-i", "--ignore-environment"):
                out.clear_env = True
                out.env.clear()
            elif opt in ("-u", "--unset") and value:
                out.env.pop(value, None)

        if k < n and argv[k] == "-":
            out.clear_env = True
            k += 1
        j = _getopt(argv, k, "uCS", frozenset({"--unset", "--chdir", "--split-string"}), on_flag=env_flag)
        while j < n and _ASSIGN.match(argv[j]):
            key, _, value = argv[j].partition("=")
            out.env[key] = value
            j += 1
        return j
    if name == "sudo":
        stop: list[bool] = []

        def sudo_flag(opt: str, value: str | None) -> None:
            if opt in ("-b", "--background"):
                out.detach = True
            elif opt in ("-l", "--list", "-v", "--validate", "-k", "-K", "--reset-timestamp",
                         "--remove-timestamp", "-e", "--edit", "-V", "--version", "-h", "--help"):
                stop.append(True)

        j = _getopt(argv, k, "ugCDhprtUTR", frozenset({
            "--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type",
            "--other-user", "--command-timeout", "--chroot",
        }), on_flag=sudo_flag)
        while j < n and _ASSIGN.match(argv[j]):
            key, _, value = argv[j].partition("=")
            out.env[key] = value
            j += 1
        return None if stop else j
    if name == "xargs":
        return _getopt(argv, k, "adEIiLlnPs", frozenset({
            "--arg-file", "--delimiter", "--max-lines", "--max-args", "--max-procs", "--max-chars",
            "--process-slot-var", "--replace", "--eof",
        }))
    if name == "screen":
        return _screen(argv, k, out)
    return None


_SCREEN_LONE = {"-ls", "-list", "-wipe", "-r", "-R", "-x", "-X", "-Q", "-v", "-version", "-help"}
_SCREEN_WITH_ARG = {"-S", "-c", "-e", "-h", "-p", "-s", "-t", "-T", "-Logfile", "-logfile"}


def _screen(argv: list[str], k: int, out: Stripped) -> int | None:
    n = len(argv)
    detach_d = detach_m = False
    while k < n:
        a = argv[k]
        if a == "--":
            k += 1
            break
        if not a.startswith("-") or a == "-":
            break
        if a in _SCREEN_LONE or a.startswith(("-r", "-x", "-X", "-ls", "-Q")):
            return None
        if a in _SCREEN_WITH_ARG:
            k += 2
            continue
        if a in ("-L", "-A", "-a", "-f", "-fn", "-fa", "-i", "-l", "-ln", "-O", "-q", "-U", "-4", "-6"):
            k += 1
            continue
        # clusters: -dmS NAME, -dm, -DmS NAME, -S name attached (-Sname)
        flags = a[1:]
        takes_next = False
        for idx, ch in enumerate(flags):
            if ch in "dD":
                detach_d = True
            elif ch == "m":
                detach_m = True
            elif ch in "SceEhpstT":
                takes_next = idx == len(flags) - 1
                break
        k += 2 if takes_next else 1
    if detach_d and detach_m and k < n:
        out.detach = True
    return k
