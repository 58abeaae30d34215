"""The windows and panes of the tmux sessions a log drives, so a key or a kill reaches one pane.

tmux addresses a pane as ``SESSION:WINDOW.PANE`` (tmux(1), "COMMANDS", target-pane): the window
by index or name, the pane by index. A target that names less means the current one: ``-t api``
is session api's current window's active pane, ``-t api:worker`` that window's active pane.
``new-window`` and ``split-window`` make the new window or pane the current one unless ``-d``;
``select-window`` and ``select-pane`` choose them. Windows are numbered from ``base-index``,
0 unless the user's ``.tmux.conf`` says otherwise (not in the log: 0 is taken). Pane ids
(``%3``) are the server's own numbering, which no command line shows: such a target is unknown.

Read from command lines only; sessions the log never created are drawn as they are first named.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from analyzer.shell.wrappers import scan_options

__all__ = ["TmuxLayout", "window_of"]

_WITH_ARG = "cEFSefnNstxy"
"""Short options of the commands read here that take a value (``-s NAME``, ``-n WINDOW``, ``-t
TARGET``, ``-c DIR``, ``-F FORMAT``, capture-pane's ``-S -20``…); not ``-p`` or ``-l``, which
capture-pane and send-keys take as flags."""
_GLOBAL_WITH_ARG = "LSfcT"
"""tmux's own options before the command that take a value (``-L socket``, ``-S path``, ``-f conf``)."""


@dataclass
class _Window:
    index: int
    name: str | None
    panes: list[int] = field(default_factory=lambda: [0])
    active: int = 0


@dataclass
class _Session:
    name: str
    windows: list[_Window] = field(default_factory=list)
    current: int = 0
    """The index of its current window."""

    def window(self, ref: str | None) -> _Window | None:
        """The window ``ref`` names (an index, a name, a unique name prefix), or the current one."""
        if not ref:
            ref = str(self.current)
        by_index = [w for w in self.windows if ref.isdecimal() and w.index == int(ref)]
        by_name = [w for w in self.windows if w.name == ref] or [
            w for w in self.windows if w.name and w.name.startswith(ref)]
        found = by_index or by_name
        return found[0] if len(found) == 1 else None

    def add_window(self, name: str | None, index: int | None = None) -> _Window:
        if index is None:
            index = max((w.index for w in self.windows), default=-1) + 1
        window = _Window(index, name)
        self.windows = [w for w in self.windows if w.index != index] + [window]
        return window


class TmuxLayout:
    """The tmux sessions of each host, their windows and panes, as the log's commands made them."""

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], _Session] = {}

    def apply(self, host: str, argv: list[str]) -> str | None:
        """Read one tmux command line (its effective argv) on ``host``: change the layout as it does,
        and return the pane it acts on or types into, ``SESSION:WINDOW.PANE``; None when that is
        not known (no target, a pane id, a command that names no pane)."""
        args = argv[1:]
        i = scan_options(args, 0, _GLOBAL_WITH_ARG)[0]
        if i >= len(args):
            return None
        verb, rest = args[i], args[i + 1 :]
        opts: dict[str, str] = {}

        def flag(opt: str, value: str | None) -> None:
            opts[opt] = value or ""

        scan_options(rest, 0, _WITH_ARG, frozenset(), flag)
        target = opts.get("-t")
        if verb in ("new-session", "new"):
            name = opts.get("-s")
            if name is None:
                return None  # tmux numbers an unnamed session: which is not shown
            key = (host, name)
            if key not in self._sessions or "-A" not in opts:
                self._sessions[key] = _Session(name)
                self._sessions[key].add_window(opts.get("-n"), 0)
            return f"{name}:0.0"
        if verb in ("new-window", "neww"):
            sess, win, _ = _split(target or "")
            session = self._session(host, sess, create=True)
            if session is None:
                return None  # no target: the current session, which is not known
            window = session.add_window(opts.get("-n"), int(win) if win and win.isdecimal() else None)
            if "-d" not in opts:
                session.current = window.index
            return f"{session.name}:{window.index}.0"
        if verb in ("split-window", "splitw"):
            address = self.resolve(host, target)
            sess, win, _ = _split(address or "")
            session = self._session(host, sess)
            split = session.window(win) if session is not None else None
            if session is None or split is None:
                return None
            split.panes.append(max(split.panes) + 1)
            if "-d" not in opts:
                split.active = split.panes[-1]
            return f"{session.name}:{split.index}.{split.panes[-1]}"
        if verb in ("select-window", "selectw", "select-pane", "selectp"):
            address = self.resolve(host, target)
            sess, win, pane = _split(address or "")
            session = self._session(host, sess)
            if session is not None and win is not None and pane is not None:
                session.current = int(win)
                if verb in ("select-pane", "selectp") and (w := session.window(win)) is not None:
                    w.active = int(pane)
            return address
        if verb in ("kill-session", "kill-server"):
            for key in [k for k in self._sessions if k[0] == host and (verb == "kill-server" or k[1] == _split(
                    target or "")[0])]:
                del self._sessions[key]
            return None
        if verb in ("kill-window", "killw", "kill-pane", "killp", "send-keys", "send", "capture-pane", "capturep"):
            return self.resolve(host, target)
        return None

    def resolve(self, host: str, target: str | None) -> str | None:
        """The pane a target names (``api``, ``api:worker``, ``api:1.2``, ``=api``), as
        ``SESSION:WINDOW.PANE``; a session first named here is drawn with one window, 0 (or the one
        the target names). None for no target or a pane id (``%3``)."""
        if not target or target.startswith("%"):
            return None
        sess, win, pane = _split(target)
        if sess is None:
            return None  # `:1`: a window of the current session, which is not known
        session = self._session(host, sess, create=True)
        assert session is not None
        window = session.window(win)
        if window is None:
            if win and not win.isdecimal() and session.windows:
                return None  # a window name no command of the log gave: which one is not known
            window = session.add_window(None if win and win.isdecimal() else win,
                                        int(win) if win and win.isdecimal() else None)
        index = int(pane) if pane and pane.isdecimal() else window.active
        if index not in window.panes:
            return None
        return f"{session.name}:{window.index}.{index}"

    def _session(self, host: str, name: str | None, create: bool = False) -> _Session | None:
        if name is None:
            return None
        found = self._sessions.get((host, name))
        if found is None:
            # tmux's own lookup: an exact name, else a unique prefix
            prefixed = [s for (h, n), s in self._sessions.items() if h == host and n.startswith(name)]
            found = prefixed[0] if len(prefixed) == 1 else None
        if found is None and create:
            found = self._sessions[(host, name)] = _Session(name)
            found.add_window(None, 0)
        return found


def _split(target: str) -> tuple[str | None, str | None, str | None]:
    """``SESSION:WINDOW.PANE`` in its parts (each None when not written); ``=`` (exact match) dropped."""
    head, colon, rest = target.partition(":")
    sess = head.lstrip("=") or None
    if not colon:
        return sess, None, None
    win, dot, pane = rest.partition(".")
    return sess, win or None, (pane or None) if dot else None


def window_of(address: str) -> str:
    """The window part of a pane address (``api:1.0`` -> ``api:1``)."""
    return address.rpartition(".")[0]
