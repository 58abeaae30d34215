"""Command string → ``ShellScript``: every simple command at every depth, with what runs it.

``parse(text)`` never raises, whatever the text (NUL bytes, lone quotes, invalid surrogates,
megabytes): a broken command comes back ``recovered`` (repaired or error-recovered) or
``failed`` with the reason in ``notes``. Results are memoised per distinct text and shared
between callers: treat them as read-only.

How: tree-sitter-bash with a shim for its known bugs and a self-check; flagged commands are
re-parsed with mvdan/sh (``shfmt``, optional); cut or unbalanced ones are repaired by closing
what is open (``_levels``). Then wrappers are stripped and nested scripts followed (ssh,
``bash -c``, ``su -c``, heredocs fed to shells, tmux, watch, docker/kubectl exec) up to 4 levels
(``_lower``). Script files written by heredocs are linked across a session by ``resolve``.

Hard bounds (hostile commands: a transcript is untrusted input). Each one that is hit makes the
result ``truncated``, keeps every command it can read (flat where the structure was refused) and
says which bound in ``notes``; never ``ok`` with commands missing:

- input size: 1,000,000 characters per text (``_levels.MAX_CHARS``);
- tree-sitter's memory: a text with more than 1,500 ``|`` is parsed in a forked child capped at
  512 MB and 5 s (``_isolate``); stopped, the text is read by the linear ``_lexical`` splitter;
- repair: closers are tried on at most 150,000 re-parsed bytes per text;
- nesting: lists (subshells, groups, ``$( … )``, loop bodies) deeper than 60 are read flat;
  nested scripts (ssh, ``bash -c``…) deeper than 4 are not followed;
- pkill/pgrep/killall/grep patterns (``ere``): an expansion over 100,000 states is not compiled;
  back-references or size × subject over 2·10^7 match in a forked child under a 1 s deadline.

One tree-sitter parser serves the whole process: parse from one thread at a time (the batch
runs sessions in separate processes).
"""

from __future__ import annotations

import functools

from analyzer.shell._levels import parse_level
from analyzer.shell._lower import FileLookup, Lowerer
from analyzer.shell.model import ShellScript

__all__ = ["clear_caches", "parse"]


def parse(text: str) -> ShellScript:
    """Parse one command string (a tool call's ``command``)."""
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text)
    return _parse_cached(text)


@functools.lru_cache(maxsize=2048)
def _parse_cached(text: str) -> ShellScript:
    return build(text, None)


def build(text: str, lookup: FileLookup | None) -> ShellScript:
    """Uncached parse; ``lookup`` resolves script files written earlier (see ``resolve``)."""
    try:
        return Lowerer(text, lookup).run()
    except (RecursionError, MemoryError) as exc:
        return ShellScript(source=text, status="failed", parser="none", notes=[f"too large to parse: {exc!r}"])
    except Exception as exc:  # never let one odd command stop a batch; the note says what broke
        return ShellScript(source=text, status="failed", parser="none",
                           notes=[f"internal parser error: {type(exc).__name__}: {exc}"])


def clear_caches() -> None:
    """Forget memoised parses (tests that swap the fallback parser; benchmarks of distinct texts)."""
    _parse_cached.cache_clear()
    parse_level.cache_clear()
