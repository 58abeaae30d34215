"""Sessions behind fsspec URLs, on the ``memory://`` filesystem: listing finds what local discovery
finds, stats for the cache, fetching a session with its sub-agent files."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.config import Config
from analyzer.ingest import IngestError
from analyzer.ingest.discover import discover_sessions
from analyzer.ingest.remote import (
    DATABASE_UNSUPPORTED,
    EVENT_STORE_UNSUPPORTED,
    STORAGE_UNSUPPORTED,
    Listing,
    RemoteError,
    discover_remote,
    fetch,
    is_url,
)
from tests.conftest import FIXTURES, put

fsspec = pytest.importorskip("fsspec")

SGLANG_DIR = FIXTURES / "claude-code" / "v2.1-sglang"
SGLANG = next(SGLANG_DIR.glob("*.jsonl"))
AGENT = next(SGLANG_DIR.glob("*/subagents/agent-*.jsonl"))


@pytest.fixture
def root(memory_root: str) -> str:
    return memory_root


def test_what_is_a_url() -> None:
    assert is_url("s3://bucket/sessions") and is_url("memory://x") and is_url("file:///tmp/x")
    assert not is_url("fixtures/seeds") and not is_url("/abs/path") and not is_url(r"C:\logs")
    assert not is_url(Path("s3://bucket"))  # a Path has lost its second slash: never a URL


def test_listing_finds_what_local_discovery_finds(root: str) -> None:
    for p in sorted(FIXTURES.rglob("*")):
        if p.is_file():
            put(root, p.relative_to(FIXTURES).as_posix(), p.read_bytes())
    found = discover_remote(f"memory://{root}", Listing())
    local = {f.relative for f in discover_sessions([FIXTURES])}
    in_storage = {r for r in local if r.startswith("opencode/storage/")}
    assert in_storage and {f.relative for f in found} == local - in_storage | {"opencode/storage"}
    store = "openhands/file_store/sessions/5f1c2d3e4b5a69788796a5b4c3d2e1f0"
    assert {f.relative: f.unsupported for f in found if f.unsupported} == {
        "opencode/storage": STORAGE_UNSUPPORTED, store: EVENT_STORE_UNSUPPORTED}
    assert all(f.url == f"memory://{root}/{f.relative}" for f in found)
    assert [f.url for f in found] == sorted(f.url for f in found)


def test_layouts_skips_and_unsupported_stores(root: str) -> None:
    put(root, "proj/s1.jsonl", SGLANG.read_bytes())
    put(root, "proj/s1/subagents/agent-a1.jsonl", AGENT.read_bytes())  # read with s1.jsonl
    put(root, "proj/s1/tool-results/out.txt", b"x" * 10)
    put(root, "node_modules/pkg/log.jsonl", SGLANG.read_bytes())
    put(root, "tools/helper.py", b"print('hi')\n")
    put(root, "codex/rollout-garbled.jsonl", b"not json at all\n")  # named like a session: listed
    put(root, "notes.txt", b"hello\n")
    put(root, "empty.jsonl", b"")
    put(root, "oc/opencode.db", b"SQLite format 3\x00" + bytes(100))
    put(root, "oc/storage/session/p1/ses_1.json", b"{}")
    put(root, "oc/storage/message/ses_1/msg_1.json", b"{}")
    put(root, "rules/x.cases.yaml", (FIXTURES / "seeds" / "004-restart-sglang-systemd.session.yaml").read_bytes())
    put(root, "seeds/a.session.yaml", (FIXTURES / "seeds" / "004-restart-sglang-systemd.session.yaml").read_bytes())
    found = {f.relative: f.unsupported for f in discover_remote(f"memory://{root}", Listing())}
    assert found == {"codex/rollout-garbled.jsonl": None, "oc/opencode.db": DATABASE_UNSUPPORTED,
                     "oc/storage": STORAGE_UNSUPPORTED, "proj/s1.jsonl": None, "seeds/a.session.yaml": None}
    kept = discover_remote(f"memory://{root}", Listing(), excluded=Config(exclude=["seeds", "*.db"]).excluded_remote)
    assert {f.relative for f in kept} == {"codex/rollout-garbled.jsonl", "oc/storage", "proj/s1.jsonl"}
    by_name = discover_remote(f"memory://{root}/notes.txt", Listing())  # given by name: loading says why
    assert [(f.url, f.relative, f.unsupported) for f in by_name] == [(f"memory://{root}/notes.txt", "notes.txt",
                                                                      None)]


def test_a_root_that_is_not_there() -> None:
    with pytest.raises(RemoteError, match=r"^memory://nothing-here-at-all: no such file or folder$"):
        discover_remote("memory://nothing-here-at-all", Listing())


def test_stats_and_dependencies_for_the_cache(root: str) -> None:
    main = put(root, "proj/s1.jsonl", SGLANG.read_bytes())
    agent = put(root, "proj/s1/subagents/agent-a1.jsonl", AGENT.read_bytes())
    listing = Listing()
    discover_remote(f"memory://{root}", listing)
    size, mtime_ns, _ = listing.files[main]
    assert listing.stat(main) == listing.files[main] and size == SGLANG.stat().st_size and mtime_ns > 0
    assert listing.mtime_ns(main) == mtime_ns and listing.stat(f"memory://{root}/gone.jsonl") is None
    folder = f"memory://{root}/proj/s1/subagents"
    deps = listing.dependencies(main, "claude-code")
    assert list(deps) == [folder, agent] and deps[agent] == listing.files[agent]
    assert listing.dependencies(main, "codex") == {}

    put(root, "proj/s1/subagents/agent-b2.jsonl", AGENT.read_bytes())  # a new sub-agent file
    later = Listing()
    discover_remote(f"memory://{root}", later)
    assert later.stat(folder) != listing.stat(folder) and later.stat(folder)[0] == 2  # type: ignore[index]
    assert later.stat(main) == listing.stat(main)


def test_fetch_copies_a_session_with_its_sub_agent_files(root: str, tmp_path: Path) -> None:
    url = put(root, "proj/s1.jsonl", SGLANG.read_bytes())
    put(root, "proj/s1/subagents/agent-a1.jsonl", AGENT.read_bytes())
    put(root, "proj/s1/tool-results/big.txt", b"x" * 1000)
    local = fetch(url, tmp_path)
    assert local == tmp_path / "s1.jsonl" and local.read_bytes() == SGLANG.read_bytes()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == \
        ["s1.jsonl", "s1/subagents/agent-a1.jsonl"]


def test_fetch_of_a_missing_file_names_the_url(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match=r"^memory://nowhere/x\.jsonl: no such file$"):
        fetch("memory://nowhere/x.jsonl", tmp_path)


def test_a_url_of_an_event_store_folder_itself_says_it_is_local_only(root: str) -> None:
    store = FIXTURES / "openhands" / "file_store" / "sessions" / "5f1c2d3e4b5a69788796a5b4c3d2e1f0"
    for p in sorted(q for q in store.rglob("*") if q.is_file()):
        put(root, f"sid/{p.relative_to(store).as_posix()}", p.read_bytes())
    found = discover_remote(f"memory://{root}/sid", Listing())
    assert [(f.relative, f.unsupported) for f in found] == [("sid", EVENT_STORE_UNSUPPORTED)]
