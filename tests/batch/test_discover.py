"""Discovery of every layout ``analyzer batch`` reads (analyzer/ingest/discover.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main
from analyzer.config import Config, load_config
from analyzer.ingest import load, opencode
from analyzer.ingest.discover import discover, discover_sessions
from tests.conftest import FIXTURES
from tests.ingest.test_opencode import MAIN, OLD, SUB, make_db, storage_session

from .conftest import CLAUDE, SGLANG, SGLANG_AGENT, SGLANG_SID, copy, session_yaml


def rels(root: Path) -> list[str]:
    return [f.relative for f in discover_sessions([root])]


def test_claude_projects_tree_loads_subagent_files_with_their_parent(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    main = copy(SGLANG, projects / "-home-me-infra" / f"{SGLANG_SID}.jsonl")
    copy(SGLANG_AGENT, projects / "-home-me-infra" / SGLANG_SID / "subagents" / "agent-a3f9c21.jsonl")
    (projects / "-home-me-infra" / SGLANG_SID / "tool-results").mkdir()
    (projects / "-home-me-infra" / SGLANG_SID / "tool-results" / "out.txt").write_text("x")
    copy(CLAUDE / "v2.0-kill-shell.jsonl", projects / "-home-me-web" / "9e3d1c7a.jsonl")
    # hidden folders are walked from the home folder down (.claude), tool folders are not (.git)
    assert rels(tmp_path) == [
        f".claude/projects/-home-me-infra/{SGLANG_SID}.jsonl",
        ".claude/projects/-home-me-web/9e3d1c7a.jsonl",
    ]
    (found,) = [f for f in discover_sessions([tmp_path]) if f.path == main]
    session = load(found.path)
    assert session.sources == [str(main), str(main.parent / SGLANG_SID / "subagents" / "agent-a3f9c21.jsonl")]
    assert {e.agent for e in session.events} == {"main", "a3f9c21"}


def test_claude_session_folder_given_by_name_is_one_session(tmp_path: Path) -> None:
    copy(CLAUDE / "v2.1-sglang", tmp_path / "p")
    folder = tmp_path / "p" / SGLANG_SID
    assert [(f.path, f.member) for f in discover_sessions([folder])] == [(folder, None)]
    # walking the project finds the main file once, never the folder beside it
    assert rels(tmp_path / "p") == [f"{SGLANG_SID}.jsonl"]


def test_codex_date_tree_with_an_empty_and_a_garbled_rollout(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "03" / "02"
    copy(FIXTURES / "codex" / "rollout-shell-command-tgi.jsonl", day / "rollout-2026-03-02T09-14-00-a.jsonl")
    copy(FIXTURES / "codex" / "rollout-flat-legacy-sglang.jsonl",
         tmp_path / ".codex" / "sessions" / "2025" / "11" / "30" / "rollout-2025-11-30T10-00-00-b.jsonl")
    (day / "rollout-2026-03-02T10-00-00-empty.jsonl").write_bytes(b"")  # nothing to analyze: skipped
    (day / "rollout-2026-03-02T11-00-00-garbled.jsonl").write_bytes(b"\x00\x01garbage\xff" * 50)
    (tmp_path / ".codex" / "history.jsonl").write_text('{"session_id": "x", "ts": 1, "text": "hi"}\n')
    assert rels(tmp_path / ".codex") == [
        "sessions/2025/11/30/rollout-2025-11-30T10-00-00-b.jsonl",
        "sessions/2026/03/02/rollout-2026-03-02T09-14-00-a.jsonl",
        # named like a session but no format reads it: listed, so that loading it reports why
        "sessions/2026/03/02/rollout-2026-03-02T11-00-00-garbled.jsonl",
    ]


def test_opencode_storage_lists_each_top_level_session(tmp_path: Path) -> None:
    data = tmp_path / ".local" / "share" / "opencode"
    copy(FIXTURES / "opencode" / "storage", data / "storage")
    project = "4f7e2a9b1c3d5e6f708192a3b4c5d6e7f8091a2b"
    expected = [f"storage/session/{project}/{MAIN}.json", f"storage/session/{project}/{OLD}.json"]
    assert rels(data) == expected  # the sub-agent session SUB loads with MAIN
    assert [f.relative for f in discover_sessions([data / "storage"])] == [p.removeprefix("storage/")
                                                                           for p in expected]
    sessions = [load(f.path) for f in discover_sessions([data])]
    assert [s.session_id for s in sessions] == [MAIN, OLD]
    assert SUB in {e.agent for e in sessions[0].events}


def test_opencode_database_lists_each_top_level_session(tmp_path: Path) -> None:
    (tmp_path / "opencode").mkdir()
    db = make_db(tmp_path / "opencode" / "opencode.db",
                 [storage_session(OLD), storage_session(SUB), storage_session(MAIN)])
    found = list(discover_sessions([tmp_path]))
    assert [(f.path, f.member, f.relative) for f in found] == [
        (db, MAIN, f"opencode/opencode.db#{MAIN}"),
        (db, OLD, f"opencode/opencode.db#{OLD}"),
    ]
    assert list(discover([tmp_path])) == [db]  # check loads a database once (its latest session)
    assert opencode.load_session(db, OLD).session_id == OLD


def test_fixture_sessions_but_not_rule_cases(tmp_path: Path) -> None:
    copy(FIXTURES / "seeds" / "000-kill-after-ready.session.yaml", tmp_path / "seeds" / "000.session.yaml")
    copy(Path(__file__).parents[2] / "rules" / "kill-after-ready.cases.yaml", tmp_path / "rules" / "k.cases.yaml")
    assert rels(tmp_path) == ["seeds/000.session.yaml"]


def test_junk_is_skipped_without_reading_past_the_head(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# notes\n")
    (tmp_path / "package.json").write_text('{"name": "app", "version": "1.0.0"}\n')
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "model.bin").write_bytes(b"\x00" * 1000)  # by suffix: never opened
    blob = tmp_path / "blob.dat"
    with blob.open("wb") as fh:  # a large binary: detection reads its first 64 KiB only
        fh.write(os.urandom(1 << 20))
        fh.truncate(600 * 2**20)  # sparse: 600 MB that would take seconds to read whole
    copy(FIXTURES / "seeds" / "001-relaunch-after-ready.jsonl", tmp_path / ".git" / "x.jsonl")
    copy(FIXTURES / "seeds" / "001-relaunch-after-ready.jsonl", tmp_path / "node_modules" / "x.jsonl")
    assert rels(tmp_path) == []
    session_yaml(tmp_path / "real.session.yaml")
    assert rels(tmp_path) == ["real.session.yaml"]


def test_excluded_output_folder_and_globs(tmp_path: Path) -> None:
    session_yaml(tmp_path / "a.session.yaml")
    session_yaml(tmp_path / "out" / "b.session.yaml")
    session_yaml(tmp_path / "scratch" / "c.session.yaml")
    found = discover_sessions([tmp_path], exclude=[tmp_path / "out"], excluded=Config(exclude=["scratch"]).excluded)
    assert [f.relative for f in found] == ["a.session.yaml"]


def test_batch_and_check_skip_the_same_files(tmp_path: Path) -> None:
    """One ``exclude`` meaning for both commands: globs relative to the config's folder, ``**``
    spanning folders, a bare name matching anywhere."""
    for rel in ("logs/old-1.session.yaml", "logs/new-1.session.yaml", "a/private/b.session.yaml",
                "deep/scratch/x/c.session.yaml"):
        session_yaml(tmp_path / rel)
    (tmp_path / "analyzer.toml").write_text("exclude = ['logs/old-*.yaml', 'private', '**/scratch/**']\n")
    config = load_config(tmp_path / "analyzer.toml")
    walked = [f.relative for f in discover_sessions([tmp_path], excluded=config.excluded)]
    assert walked == ["logs/new-1.session.yaml"]
    checked = CliRunner().invoke(main, ["check", "--config", str(tmp_path / "analyzer.toml"), "--format", "json",
                                        str(tmp_path)])
    assert [Path(s["path"]).relative_to(tmp_path).as_posix() for s in json.loads(checked.stdout)["sessions"]] == walked


def test_a_file_given_by_name_is_listed_even_if_unreadable(tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    assert [f.path for f in discover_sessions([junk])] == [junk]
    assert [f.relative for f in discover_sessions([junk])] == ["notes.txt"]


def test_each_session_once_when_paths_overlap(tmp_path: Path) -> None:
    a = session_yaml(tmp_path / "x" / "a.session.yaml")
    assert [f.path for f in discover_sessions([tmp_path, tmp_path / "x", a])] == [a]


def test_unknown_jsonl_is_listed_so_that_loading_says_why(tmp_path: Path) -> None:
    (tmp_path / "export.jsonl").write_text('{"kind": "custom", "text": "hi"}\n')
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "history.jsonl").write_text('{"display": "hi", "project": "/p"}\n')  # prompts
    assert rels(tmp_path) == ["export.jsonl"]


def test_symlinked_folders_are_followed_once(tmp_path: Path) -> None:
    session_yaml(tmp_path / "real" / "a.session.yaml")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "loop").symlink_to(tmp_path)
    assert rels(tmp_path) == ["link/a.session.yaml"]
