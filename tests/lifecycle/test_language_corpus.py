"""The message reader on real prompts: the blind labels of bench/messages.labels.yaml (corpus only)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "bench" / "messages.labels.yaml"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_messages", ROOT / "bench" / "messages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_labels_name_messages_by_reference_only() -> None:
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8"))["messages"]
    assert len(labels) >= 300
    for label in labels:
        assert set(label) <= {"file", "line", "sha", "intents", "target", "ports", "assistant", "note"}
        assert re.fullmatch(r"[0-9a-f]{12}", label["sha"])
        assert len(label["note"]) <= 110, "a paraphrase, never the message"


@pytest.mark.corpus
def test_the_reader_holds_its_blind_scores_on_real_prompts(corpus: Path) -> None:
    bench = _bench()
    labels = [lab for lab in yaml.safe_load(LABELS.read_text(encoding="utf-8"))["messages"]
              if not lab.get("assistant")]
    cases, missing = bench.score(labels, corpus)
    assert not missing, "a labelled message moved: the corpus or its reader changed"
    total = bench.table(cases)["ALL"]
    assert total["precision"] >= 0.5 and total["recall"] >= 0.67, total
    assert sum(c.exact for c in cases) >= 260
