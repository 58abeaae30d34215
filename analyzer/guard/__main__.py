"""``python -m analyzer.guard --agent NAME``: the hook command without the click front end (the
installer writes the faster ``python -I -S …/analyzer/guard/client.py --agent NAME``)."""

from __future__ import annotations

import sys

from analyzer.guard.client import main

if __name__ == "__main__":
    sys.exit(main())
