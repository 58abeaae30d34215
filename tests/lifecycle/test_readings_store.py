"""Readings kept between processes: a second check of a session needs no spaCy, and a missing,
stale, corrupt, foreign or unwritable store only means reading again."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from analyzer import _usercache
from analyzer.lifecycle import language
from analyzer.lifecycle.language import fresh, reader, store

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [m["text"] for m in yaml.safe_load(
    (Path(__file__).parent / "messages.yaml").read_text(encoding="utf-8"))["messages"]]
FIXTURE = ROOT / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "cache" / "session-analyzer"
    monkeypatch.setenv(_usercache.CACHE_ENV, str(folder))
    language.clear_cache()
    yield folder
    language.clear_cache()


def _fresh() -> list[language.MessageReading]:
    return [r for r, _ in reader.read_fresh(MESSAGES, gate=False)]


def _no_spacy(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise AssertionError("read with spaCy, not from the store")

    monkeypatch.setattr(fresh, "pipeline", refuse)


def _files(folder: Path) -> list[Path]:
    return sorted(folder.glob("readings-*.sqlite"))


def test_kept_readings_are_the_readings_and_need_no_spacy(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = language.read_messages(MESSAGES)
    assert first == _fresh()
    language.clear_cache()  # writes them out, as a process does at exit
    assert len(_files(cache)) == 1
    _no_spacy(monkeypatch)
    assert language.read_messages(MESSAGES) == first
    language.clear_cache()


def test_documents_and_plain_readings_are_kept_apart(cache: Path) -> None:
    text = "## Plan\n" + "\n".join(f"- step {k}: start the api server on :80{k:02d}" for k in range(40))
    assert language.read_message(text) != language.read_message(text, documents=False), "documents matter"
    language.clear_cache()
    assert language.read_message(text, documents=False) == reader.read_fresh([text], documents=False)[0][0]
    assert language.read_message(text) == reader.read_fresh([text])[0][0]


def test_a_second_check_of_a_session_imports_no_spacy(tmp_path: Path) -> None:
    code = """
import sys
from analyzer.cli import main
try:
    main(["check", sys.argv[1], "--format", "json"])
except SystemExit:
    pass
print("SPACY" if "spacy" in sys.modules else "NO-SPACY", file=sys.stderr)
"""
    env = {**os.environ, _usercache.CACHE_ENV: str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code, str(FIXTURE)], capture_output=True, text=True,
                           env=env, cwd=ROOT, check=False) for _ in range(2)]
    assert runs[0].stderr.strip().endswith("SPACY") and not runs[0].stderr.strip().endswith("NO-SPACY")
    assert runs[1].stderr.strip().endswith("NO-SPACY"), runs[1].stderr
    assert runs[0].stdout == runs[1].stdout and '"findings"' in runs[0].stdout


def test_a_store_under_another_key_is_stale_and_replaced(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    language.read_messages(MESSAGES[:5])
    language.clear_cache()
    [path] = _files(cache)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'another reader' WHERE name = 'key'")
    db.close()
    assert store.store() is not None and store.store().db is None  # type: ignore[union-attr]
    assert language.read_messages(MESSAGES[:5]) == _fresh()[:5]
    language.clear_cache()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta").fetchone()[0] == store.reader_key()
    db.close()


@pytest.mark.parametrize("content", [b"", b"SQLite format 3\x00 truncated", b"not a database at all" * 100])
def test_a_corrupt_store_is_read_past_and_rebuilt(cache: Path, content: bytes) -> None:
    language.read_messages(MESSAGES[:5])
    language.clear_cache()
    [path] = _files(cache)
    path.write_bytes(content)
    assert language.read_messages(MESSAGES[:5]) == _fresh()[:5]
    language.clear_cache()
    assert path.read_bytes()[:16] == b"SQLite format 3\x00" and path.stat().st_size > len(content)


def test_a_store_others_could_write_is_not_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    language.read_messages(MESSAGES[:5])
    language.clear_cache()
    [path] = _files(cache)
    path.chmod(0o666)
    s = store.store()
    assert s is not None and s.db is None, "a file another user could write is never unpickled from"
    assert s.get(MESSAGES[0], True) is None


def test_an_unwritable_cache_folder_just_reads(cache: Path) -> None:
    cache.mkdir(parents=True)
    cache.chmod(0o500)
    try:
        if os.access(cache, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        assert language.read_messages(MESSAGES[:5]) == _fresh()[:5]
        language.clear_cache()
        assert not _files(cache)
    finally:
        cache.chmod(0o700)


def test_a_file_where_the_folder_should_be_just_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    monkeypatch.setenv(_usercache.CACHE_ENV, str(blocker / "session-analyzer"))
    language.clear_cache()
    assert language.read_messages(MESSAGES[:5]) == _fresh()[:5]
    language.clear_cache()
    assert blocker.read_text() == "a file"


def test_an_empty_setting_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_usercache.CACHE_ENV, "")
    language.clear_cache()
    assert store.store() is None
    assert language.read_messages(MESSAGES[:3]) == _fresh()[:3]


def _read_in_worker(texts: list[str]) -> int:
    return len(language.read_messages(texts))


def test_a_pool_worker_keeps_what_it_read(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch worker ends through multiprocessing (no atexit): its readings are written anyway,
    through its own connection, not one inherited from the parent."""
    import multiprocessing

    expected = [r for r, _ in reader.read_fresh(MESSAGES[:8])]
    language.read_messages(MESSAGES[:2])
    language.clear_cache()
    language.read_messages(MESSAGES[:2])  # the parent holds an open store when it forks
    pool = multiprocessing.get_context("fork").Pool(1)
    assert pool.apply(_read_in_worker, (MESSAGES[2:8],)) == 6
    pool.close()
    pool.join()  # the worker exits as a batch worker does when the pool is done
    language.clear_cache()
    _no_spacy(monkeypatch)
    assert language.read_messages(MESSAGES[:8]) == expected
