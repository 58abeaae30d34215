"""Session-level linking of script files: a heredoc writes ``/root/serve.sh``, a later command
runs it; the run gets the file's commands as a nested level.

Usage from the lifecycle stage, one call per shell tool event, in session order::

    resolver = ScriptResolver()
    for event in session.events:
        if isinstance(event, ToolEvent) and event.command is not None:
            script = resolver.feed(parse(event.command))
            ...  # use `script` instead of the plain parse

``feed(script)``:

- when no command of ``script`` runs a file written earlier (in an earlier event on the same
  host, or earlier in this same command), returns ``script`` itself, unchanged;
- otherwise returns a new ``ShellScript`` (the plain parse stays cached and untouched) in which
  each such run (``bash /root/serve.sh``, ``sh x.sh``, ``./serve.sh``, ``nohup /root/serve.sh &``,
  ``source env.sh``) is followed by the file's commands one level deeper: ``via="script-file"``,
  the caller's host, ``background_by="caller"`` when the run is in the background, and a
  ``ShellFrame`` whose argv is how the process really looks (``bash /root/serve.sh``, or the
  shebang interpreter and the path): a ``pkill -f`` pattern matching the file's *content* does
  not match that shell (shell-semantics §5, "the script is run from a file"). ``source`` adds no
  frame: the file runs in the calling shell;
- then remembers every file ``script`` writes with a heredoc (``cat > f <<'EOF'``, ``cat <<EOF >
  f``, ``tee f <<EOF``), per host, so later events can run them.

Paths are matched exactly after normalisation (with ``cd`` tracked inside a command), then a
relative path by a unique suffix (``./serve.sh`` ↔ ``/root/serve.sh``). Files whose shebang
names a non-shell interpreter (Python…) are not parsed as shell.
"""

from __future__ import annotations

import posixpath

from analyzer.shell.model import ShellScript
from analyzer.shell.parse import build

__all__ = ["ScriptResolver", "split_key"]


def split_key(key: str) -> tuple[str | None, str]:
    """``ShellScript.written_files`` key → (host, path): ``host:/path`` remote, else local."""
    if key.startswith(("/", ".", "~")) or ":" not in key:
        return None, key
    host, _, path = key.partition(":")
    return host, path


class ScriptResolver:
    """Remembers heredoc-written files of one session and links later runs to them."""

    def __init__(self) -> None:
        self._files: dict[tuple[str | None, str], str] = {}

    @property
    def files(self) -> dict[str, str]:
        """Files written so far, keyed like ``ShellScript.written_files``."""
        return {(f"{h}:{p}" if h else p): c for (h, p), c in self._files.items()}

    def lookup(self, host: str | None, path: str) -> str | None:
        """Content of the file at ``path`` on ``host`` written earlier, or None."""
        norm = posixpath.normpath(path) if path.startswith("/") else path
        found = self._files.get((host, norm))
        if found is not None:
            return found
        rel = norm[2:] if norm.startswith("./") else norm[2:] if norm.startswith("~/") else norm
        matches = [
            c for (h, p), c in self._files.items()
            if h == host and (
                (not norm.startswith("/") and (p == rel or p.endswith("/" + rel)))
                or (not p.startswith("/") and norm.endswith("/" + p.removeprefix("./")))
            )
        ]
        return matches[0] if len(matches) == 1 else None

    def feed(self, script: ShellScript) -> ShellScript:
        """Link ``script``'s runs of known files, then remember the files it writes."""
        if self._runs_known_file(script):
            script = build(script.source, self.lookup)
        for key, content in script.written_files.items():
            self._files[split_key(key)] = content
        return script

    def _runs_known_file(self, script: ShellScript) -> bool:
        own = {split_key(k) for k in script.written_files}
        for c in script.commands:
            if c.script_path is None:
                continue
            if self.lookup(c.host, c.script_path) is not None:
                return True
            base = posixpath.basename(c.script_path)
            if any(h == c.host and posixpath.basename(p) == base for h, p in own):
                return True
        return False
