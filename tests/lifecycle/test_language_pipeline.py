"""analyzer.lifecycle.language.pipeline: a blank English pipeline, built once per process."""

from __future__ import annotations

from pathlib import Path

import pytest
import spacy

from analyzer.lifecycle import language
from analyzer.lifecycle.language import Intent, read_message
from analyzer.lifecycle.language import pipeline as pipeline_module


def test_only_a_blank_pipeline_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_models(*_: object, **__: object) -> None:
        raise AssertionError("spacy.load must never be called: no model download")

    monkeypatch.setattr(spacy, "load", no_models)
    monkeypatch.setattr(pipeline_module, "_PIPELINE", None)
    language.clear_cache()
    assert read_message("restart sglang").intents == {Intent.restart}
    pipe = pipeline_module.pipeline()
    assert pipe.nlp.pipe_names == []
    assert pipe.nlp.lang == "en"
    assert pipe.nlp.vocab.vectors.size == 0
    assert pipeline_module.pipeline() is pipe, "built once per process"
    assert language._pipeline is pipeline_module.pipeline, "bench/scale.py times the build through it"


def test_the_package_has_no_import_cycle_and_no_oversized_module() -> None:
    """Each stage of the reader in its own module, importing only the stages before it."""
    import grimp

    graph = grimp.build_graph("analyzer")
    package = "analyzer.lifecycle.language"
    modules = sorted(m for m in graph.find_descendants(package))
    assert len(modules) >= 10
    for module in modules:
        for other in modules:
            if other != module and graph.direct_import_exists(importer=module, imported=other):
                assert not graph.chain_exists(importer=other, imported=module), f"{module} <-> {other}"
    root = Path(language.__file__).parent
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in root.glob("*.py")}
    assert {name for name, size in sizes.items() if size > 500} <= {"patterns.py"}, sizes
