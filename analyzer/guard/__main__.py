"""``python -m analyzer.guard --agent NAME``: the hook command without the click front end."""

from __future__ import annotations

import argparse
import sys

from analyzer.guard.agents import AGENTS
from analyzer.guard.client import DEFAULT_TIMEOUT, run


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m analyzer.guard")
    parser.add_argument("--agent", required=True, choices=sorted(AGENTS))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT)
    parser.add_argument("--mode", choices=("deny", "ask", "warn"), default=None)
    args = parser.parse_args()
    reply = run(args.agent, sys.stdin.buffer.read(), args.timeout, args.mode)
    sys.stdout.write(reply.stdout)
    sys.stderr.write(reply.stderr)
    return reply.exit_code


if __name__ == "__main__":
    sys.exit(main())
