"""The message reader on real prompts: blind labels of corpus user messages against read_message.

Reads bench/messages.labels.yaml (300 user messages of ../shared/corpus, labelled blind, named by
file, line and a hash of their text: no corpus text is in the project), finds each message in the
corpus through the analyzer's own readers, reads it with analyzer.lifecycle.language and prints
precision and recall per intent, the exact-set rate and, with -v, every disagreement (by label
note, never by corpus text). Skips when the corpus is absent.

    python bench/messages.py             # table
    python bench/messages.py -v          # and each message the reader gets wrong
    python bench/messages.py --json      # for machines
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "bench" / "messages.labels.yaml"
CORPUS = ROOT.parent / "shared" / "corpus"
INTENTS = ("ready", "not_ready", "launch", "stop", "restart", "correction", "hold", "question")


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled message, found in the corpus, and what the reader made of it."""

    label: dict[str, Any]
    expected: frozenset[str]
    got: frozenset[str]
    ports_ok: bool | None
    """Whether the intents' targets name the labelled ports (None when no port is labelled)."""

    @property
    def exact(self) -> bool:
        return self.expected == self.got


def digest(text: str) -> str:
    """The short hash that names a message in the label file."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def user_texts(path: Path) -> dict[tuple[int | None, str], str]:
    """The user messages of one corpus file, by (line, hash)."""
    from analyzer.events import UserEvent
    from analyzer.ingest import load

    session = load(path)
    return {(ev.line, digest(ev.text)): ev.text for ev in session.events
            if isinstance(ev, UserEvent) and ev.text}


def score(labels: Iterable[dict[str, Any]], corpus: Path) -> tuple[list[Case], list[dict[str, Any]]]:
    """Read every labelled message; returns the scored cases and the labels not found in the corpus."""
    from analyzer.lifecycle.language import read_messages

    wanted = list(labels)
    by_file: dict[str, dict[tuple[int | None, str], str]] = {}
    texts: list[str] = []
    found: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    for label in wanted:
        file = str(label["file"])
        if file not in by_file:
            by_file[file] = user_texts(corpus / file) if (corpus / file).is_file() else {}
        text = by_file[file].get((label["line"], str(label["sha"])))
        if text is None:
            missing.append(label)
        else:
            found.append(label)
            texts.append(text)
    cases = []
    for label, reading in zip(found, read_messages(texts), strict=True):
        ports_ok = None
        if label.get("ports"):
            named = {p for hit in reading.hits if hit.intent.value in label["intents"] for p in hit.target.ports}
            ports_ok = set(label["ports"]) <= named
        cases.append(Case(label, frozenset(label.get("intents") or ()),
                          frozenset(i.value for i in reading.intents), ports_ok))
    return cases, missing


def table(cases: list[Case]) -> dict[str, dict[str, float | int]]:
    """Per intent: support, TP, FP, FN, precision and recall over the scored cases."""
    out: dict[str, dict[str, float | int]] = {}
    for intent in INTENTS:
        tp = sum(intent in c.expected and intent in c.got for c in cases)
        fp = sum(intent in c.got and intent not in c.expected for c in cases)
        fn = sum(intent in c.expected and intent not in c.got for c in cases)
        out[intent] = {"support": tp + fn, "tp": tp, "fp": fp, "fn": fn,
                       "precision": tp / (tp + fp) if tp + fp else 1.0,
                       "recall": tp / (tp + fn) if tp + fn else 1.0}
    tp = sum(int(row["tp"]) for row in out.values())
    fp = sum(int(row["fp"]) for row in out.values())
    fn = sum(int(row["fn"]) for row in out.values())
    out["ALL"] = {"support": tp + fn, "tp": tp, "fp": fp, "fn": fn,
                  "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"skipped: {args.corpus} is absent")
        return 0
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8"))["messages"]
    scored = [lab for lab in labels if not lab.get("assistant")]
    cases, missing = score(scored, args.corpus)
    rows = table(cases)
    exact = sum(c.exact for c in cases)
    ports = [c.ports_ok for c in cases if c.ports_ok is not None]
    if args.json:
        print(json.dumps({"messages": len(cases), "missing": len(missing), "exact": exact, "intents": rows,
                          "ports_ok": sum(ports), "ports_labelled": len(ports)}, indent=2))
        return 0
    print(f"{len(cases)} messages scored ({len(labels) - len(scored)} assistant turns left out, "
          f"{len(missing)} not found in the corpus)")
    print(f"{'intent':<11} {'support':>7} {'tp':>4} {'fp':>4} {'fn':>4} {'precision':>9} {'recall':>7}")
    for intent, row in rows.items():
        print(f"{intent:<11} {row['support']:>7} {row['tp']:>4} {row['fp']:>4} {row['fn']:>4} "
              f"{row['precision']:>9.3f} {row['recall']:>7.3f}")
    print(f"exact intent sets: {exact}/{len(cases)}   labelled ports in the targets: {sum(ports)}/{len(ports)}")
    if args.verbose:
        for case in cases:
            if not case.exact or case.ports_ok is False:
                lab = case.label
                print(f"  {lab['file']}:{lab['line']}  expected {sorted(case.expected)} got {sorted(case.got)}"
                      f"  -- {lab['note']}")
        for lab in missing:
            print(f"  missing: {lab['file']}:{lab['line']} ({lab['sha']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
