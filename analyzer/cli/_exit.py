"""The exit statuses every command shares, and the one table of them that ``--help`` shows.

Kept apart from ``_common`` (which imports ingest) so that ``analyzer --help`` stays light."""

from __future__ import annotations

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_CRASH = 3
"""An internal error (a bug, not the input): distinct from 1 "findings found" and 2 "usage or
unreadable input", so CI never reads a traceback as a verdict."""

EXIT_TABLE = f"""\b
Exit status:
  {EXIT_CLEAN}  clean: no finding at or above --fail-on (or --exit-zero)
  {EXIT_FINDINGS}  findings at or above --fail-on
  {EXIT_USAGE}  usage error, or input that cannot be read (a file named on the command line,
     or every session given)
  {EXIT_CRASH}  internal error (a bug: please report it with the traceback)"""
"""For the ``--help`` of ``analyzer``, ``check`` and ``batch``; ``\\b`` keeps click from rewrapping it."""
