"""The pipeline cache: a built vocabulary and matchers kept between processes, never an error.

A pipeline loaded from the cache must read every labelled message exactly as a freshly built one;
a stale, corrupt, foreign or unwritable cache must fall back to building."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from analyzer import _usercache
from analyzer.lifecycle import _spacy, language
from analyzer.lifecycle.language import pipeline as pipeline_module
from analyzer.lifecycle.language import reader

MESSAGES = [m["text"] for m in yaml.safe_load(
    (Path(__file__).parent / "messages.yaml").read_text(encoding="utf-8"))["messages"]]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache" / "session-analyzer"
    monkeypatch.setenv(_usercache.CACHE_ENV, str(folder))
    monkeypatch.setattr(pipeline_module, "_PIPELINE", None)
    language.clear_cache()
    yield folder
    language.clear_cache()


def _read_all(pipe: pipeline_module.Pipeline, monkeypatch: pytest.MonkeyPatch) -> list[language.MessageReading]:
    monkeypatch.setattr(pipeline_module, "_PIPELINE", pipe)
    # neither the memo nor the readings store nor the gate: every message through this pipeline
    return [reading for reading, _ in reader.read_fresh(MESSAGES, gate=False)]


def _stored(folder: Path) -> list[Path]:
    return sorted(folder.glob("spacy-pipeline-*.pickle"))


def test_a_cached_pipeline_reads_every_labelled_message_as_a_built_one(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = pipeline_module.cached_pipeline()  # nothing stored yet: builds, then stores
    assert len(_stored(cache)) == 1
    loaded = pipeline_module.cached_pipeline()
    assert loaded.cues is not built.cues, "the second call must come from the cache"
    assert loaded.nlp.vocab is loaded.cues.vocab, "the tokenizer and the matchers share one vocabulary"
    assert _read_all(loaded, monkeypatch) == _read_all(built, monkeypatch)
    assert _read_all(loaded, monkeypatch) == _read_all(pipeline_module.build_pipeline(), monkeypatch)


def test_a_pipeline_stored_under_other_pattern_data_is_stale_and_replaced(cache: Path) -> None:
    key = _spacy.cache_key(b"patterns, version 1")
    assert _spacy.store_cached("spacy-pipeline", key, "old")
    assert _spacy.load_cached("spacy-pipeline", key) == "old"
    assert _spacy.load_cached("spacy-pipeline", _spacy.cache_key(b"patterns, version 2")) is None
    pipeline_module.cached_pipeline()
    assert len(_stored(cache)) == 1 and _spacy.load_cached("spacy-pipeline", key) is None


def test_a_file_under_the_right_name_but_another_key_is_not_used(cache: Path) -> None:
    key, other = _spacy.cache_key(b"a"), _spacy.cache_key(b"b")
    cache.mkdir(parents=True)
    (cache / f"spacy-pipeline-{key[:32]}.pickle").write_bytes(pickle.dumps((other, "not this")))
    (cache / f"spacy-pipeline-{key[:32]}.pickle").chmod(0o600)
    assert _spacy.load_cached("spacy-pipeline", key) is None


@pytest.mark.parametrize("content", [b"", b"\x80\x05truncated", b"not a pickle at all", pickle.dumps(("k",))])
def test_a_corrupt_cache_file_is_rebuilt(cache: Path, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline_module.cached_pipeline()
    [path] = _stored(cache)
    path.write_bytes(content)
    pipe = pipeline_module.cached_pipeline()
    assert _read_all(pipe, monkeypatch)[:3] == _read_all(pipeline_module.build_pipeline(), monkeypatch)[:3]
    assert path.read_bytes() != content, "the rebuilt pipeline is stored again"


def test_a_cache_file_others_could_write_is_not_unpickled(cache: Path) -> None:
    key = _spacy.cache_key(b"x")
    assert _spacy.store_cached("spacy-pipeline", key, "mine")
    [path] = _stored(cache)
    path.chmod(0o666)
    assert _spacy.load_cached("spacy-pipeline", key) is None


def test_an_unwritable_cache_folder_just_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv(_usercache.CACHE_ENV, str(blocker / "session-analyzer"))
    monkeypatch.setattr(pipeline_module, "_PIPELINE", None)
    language.clear_cache()
    assert not _spacy.store_cached("spacy-pipeline", _spacy.cache_key(b"x"), "v")
    assert language.read_message("restart sglang").intents == {language.Intent.restart}
    assert blocker.read_text().startswith("a file")


def test_an_empty_setting_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, "")
    assert _usercache.cache_dir() is None
    assert not _spacy.store_cached("spacy-pipeline", "k", "v")
    assert _spacy.load_cached("spacy-pipeline", "k") is None


def test_the_default_folder_is_the_users_cache_not_the_package(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.delenv(_usercache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = _usercache.cache_dir()
    assert folder is not None
    assert folder == tmp_path / "xdg" / "session-analyzer"
    assert Path(_spacy.__file__).parent.parent not in folder.parents


def test_a_cache_folder_others_could_write_to_is_not_used(cache: Path) -> None:
    cache.mkdir(parents=True)
    cache.chmod(0o777)
    assert not _spacy.store_cached("spacy-pipeline", _spacy.cache_key(b"x"), "v")
    assert _usercache.private_dir() is None
