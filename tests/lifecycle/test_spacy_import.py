"""``import_spacy``: spaCy without its command line, and nothing lost for code that wants the CLI.

Each case runs in a fresh interpreter: what is imported is the point."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


def _run(code: str, path: Path | None = None) -> dict[str, object]:
    prefix = f"import sys; sys.path.insert(0, {str(path)!r})\n" if path else ""
    out = subprocess.run([sys.executable, "-c", prefix + textwrap.dedent(code)], capture_output=True,
                         text=True, check=True)
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_reading_a_message_does_not_import_spacys_command_line() -> None:
    got = _run("""
        import json, sys
        from analyzer.lifecycle.language import Intent, read_message
        reading = read_message("the server is ready, leave it alone")
        print(json.dumps({"ready": Intent.ready in reading.intents,
                          "cli": [m for m in ("spacy.cli", "weasel", "httpx", "typer") if m in sys.modules]}))
    """)
    assert got == {"ready": True, "cli": []}


def test_spacy_cli_and_info_still_work_after_the_fast_import() -> None:
    got = _run("""
        import json, sys
        from analyzer.lifecycle._spacy import import_spacy
        spacy = import_spacy()
        import spacy.cli
        from spacy.cli.info import info as real_info
        print(json.dumps({"real_cli": spacy.cli.__file__.endswith("__init__.py"),
                          "same_module": spacy is sys.modules["spacy"],
                          "info": sorted(spacy.info())[:1] != []}))
    """)
    assert got == {"real_cli": True, "same_module": True, "info": True}


@pytest.fixture
def fake_spacy(tmp_path: Path) -> Path:
    """A ``spacy`` package whose __init__ wants more of its CLI than the placeholder has."""
    pkg = tmp_path / "spacy"
    (pkg / "cli").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .cli.info import info, other\nfrom .cli import app\n")
    (pkg / "cli" / "__init__.py").write_text("app = 'the real cli'\n")
    (pkg / "cli" / "info.py").write_text("def info():\n    return 'real'\nother = 1\n")
    return tmp_path


def test_a_spacy_that_needs_its_cli_is_imported_the_normal_way(fake_spacy: Path) -> None:
    got = _run("""
        import json, sys
        from analyzer.lifecycle._spacy import import_spacy
        spacy = import_spacy()
        print(json.dumps({"app": spacy.app, "info": spacy.info(), "other": spacy.other,
                          "cli": sys.modules["spacy.cli"].__file__ is not None}))
    """, fake_spacy)
    assert got == {"app": "the real cli", "info": "real", "other": 1, "cli": True}
