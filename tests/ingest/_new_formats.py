"""What the Cline, superopen and SpecStory reader tests share: which files are in which of these formats,
and each detector's claims over every fixture and corpus file."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
FIXTURES = ROOT / "fixtures"

MINE = ("cline-api", "cline-ui", "superopen", "specstory")


def format_of(path: Path) -> str | None:
    """The format of a corpus or fixture file of these readers, from where it is and its name."""
    folder, name = path.parent.name, path.name
    if folder == "cline":
        return "cline-ui" if "ui_messages" in name or "ui-messages" in name else "cline-api"
    if folder == "superopen" or (folder == "cursor" and "superopen" in name):
        return "superopen"
    if folder == "specstory" or (folder == "cursor" and "specstory" in name):
        return "specstory"
    return None


def every_file() -> list[Path]:
    """Every fixture and corpus file (the corpus when present)."""
    roots = [FIXTURES] + ([CORPUS] if CORPUS.is_dir() else [])
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file() and p.name != "MANIFEST.md")


def corpus_files(fmt: str) -> list[Path]:
    return [p for p in every_file() if CORPUS in p.parents and format_of(p) == fmt]
