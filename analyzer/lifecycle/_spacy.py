"""Import spaCy without its command line.

``spacy/__init__`` imports ``spacy.cli.info`` for the ``spacy.info`` shortcut, and with it the
whole command line: weasel, typer, httpx, requests. That is ~0.15 s of the ~0.5 s the import costs,
paid by every process that reads a message, for code the analyzer never runs. ``import_spacy``
lets that one import find a placeholder, then takes the placeholder away again, so ``spacy.cli``
imports for real when anyone asks for it, and ``spacy.info`` still works (it imports on first call).
If spaCy's ``__init__`` changes so that the placeholder does not do, spaCy is imported the normal
way: only the saving is lost.
"""

from __future__ import annotations

import sys
import types
from typing import Any

_CLI, _INFO = "spacy.cli", "spacy.cli.info"


def _info(*args: Any, **kwargs: Any) -> Any:
    """``spacy.info``, imported when first called."""
    from spacy.cli.info import info

    return info(*args, **kwargs)


def import_spacy() -> types.ModuleType:
    """``import spacy``, without importing ``spacy.cli`` when it is not imported yet."""
    if "spacy" in sys.modules:
        return sys.modules["spacy"]
    cli, info = types.ModuleType(_CLI), types.ModuleType(_INFO)
    info.info = _info  # type: ignore[attr-defined]
    cli.__path__ = []  # a package, so that ``from .cli.info import …`` resolves
    cli.info = info  # type: ignore[attr-defined]
    sys.modules[_CLI], sys.modules[_INFO] = cli, info
    try:
        import spacy
    except Exception:  # spaCy's __init__ wants more of its CLI: import it plainly
        for name in [m for m in sys.modules if m == "spacy" or m.startswith("spacy.")]:
            del sys.modules[name]
        import spacy
    finally:
        for name, stub in ((_INFO, info), (_CLI, cli)):
            if sys.modules.get(name) is stub:
                del sys.modules[name]
    if spacy.__dict__.get("cli") is cli:
        del spacy.__dict__["cli"]  # the next ``import spacy.cli`` (or attribute access after it) gets the real one
    return spacy
