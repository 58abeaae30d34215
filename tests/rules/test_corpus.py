"""The built-in pack on the shared corpus of real third-party logs (skipped when absent).

On the original 26 files every finding ``analyzer check`` gives was read and judged (the reasons
are next to each below); sessions that only read, edit, build or test code give none. The files
added later are judged by ``labels.yaml``: precision and recall on them may not drop below the
committed baseline (``bench/realworld_baseline.json``, raised with ``bench/realworld.py
--write-baseline`` as work lands)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import load
from analyzer.pipeline import Analyzer
from analyzer.rules.scoring import load_labels, score_check_document

pytestmark = pytest.mark.corpus

POSTHOG = "claude-code/posthog-dashboard-pkill-v2.1.112.jsonl"
AIDER_ROOT = "aider/rfp-platform-root.aider.chat.history.md"
BASELINE = Path(__file__).resolve().parents[2] / "bench" / "realworld_baseline.json"

# Sessions that only read, edit, build or test code: no server is launched, probed or killed.
READ_AND_EDIT_ONLY = {
    "claude-code/coverage-test-fix.jsonl": "fixes a failing test and raises coverage; pytest only",
    "claude-code/python-to-rust-port.jsonl": "ports a Python module to Rust with a Task sub-agent; cargo/pytest",
    "claude-code/todo-app-explore.jsonl": "explores a Next.js app; the dev server is only mentioned in text",
    "claude-code/spotter-v2.1.39/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl":
        "edits Elixir code, runs the test suite in the background and polls it; `mix phx.server` only mentioned",
    "codex/agent-history-exec-redacted.jsonl": "a `codex exec` run without tool calls",
    "codex/v0.153-unified-exec-excerpt.jsonl": "writes a test and runs `python3 -m unittest`",
    "opencode/poem-write-messages.json": "writes one file with the write tool; no shell",
    "swe-agent/pydicom-1458-gpt4.traj": "edits pydicom and runs a reproduction script",
    "swe-agent/marshmallow-1867-function-calling.traj": "edits marshmallow; `nohup` only in the prompt text",
    "swe-agent/ctf-web-i-got-id.traj": "curls a remote CTF web server it neither runs nor stops",
    "openhands/wrong-initial-state-trajectory.json": "renames one file with mv",
    "gemini-cli/figma-dashstack-chat-session.json": "builds a dashboard with `npm run build`; `kill` only in tool docs",
    "gemini-cli/figma-startup-stream-json.jsonl": "builds a page from a Figma design; no server control",
    "asciinema/asciinema-repo-demo.cast": "a fish shell demo recording",
}

# (file, rule, anchor event index): every finding over the original files, judged by reading the log.
JUDGED_TRUE = {
    # `pkill -9 zsh`: every zsh on the Mac goes, the user's terminal sessions included.
    (POSTHOG, "over-broad-kill", 120),
    # `(streamlit run … --server.port 8765 &) && … curl`: the streamlit from event 175 still holds the
    # port ("Port 8765 is not available"); the curl is answered by the old process.
    (POSTHOG, "duplicate-launch", 248),
    # …and the agent never looks at "Port 8765 is not available": it commits and pushes.
    (POSTHOG, "ignored-failure", 248),
}


@cache
def _corpus_check(corpus: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["check", "--format", "json", corpus])
    assert result.exit_code == 1, result.output
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def findings_by_file(corpus: Path) -> set[tuple[str, str, int]]:
    doc = _corpus_check(str(corpus))
    return {(str(Path(s["path"]).relative_to(corpus)), f["rule"], f["anchor"]["index"])
            for s in doc["sessions"] for f in s["findings"]}  # type: ignore[attr-defined, index]


def test_pkill_zsh_in_the_posthog_session_is_an_over_broad_kill(corpus: Path) -> None:
    session = load(corpus / POSTHOG)
    a = Analyzer().analyze_session(session)
    [f] = [f for f in a.findings if f.rule == "over-broad-kill"]
    assert session.events[f.anchor.index].command.startswith("pkill -9 zsh")  # type: ignore[union-attr]
    assert (f.anchor.line, f.severity.value) == (343, "high")
    assert f.message == "kills more than its target: every `zsh` process (`pkill -9 zsh`)"


@pytest.mark.parametrize("name", sorted(READ_AND_EDIT_ONLY))
def test_sessions_that_only_read_and_edit_code_give_no_finding(corpus: Path, name: str) -> None:
    a = Analyzer().analyze_session(load(corpus / name))
    assert len(a.session.events) > 0
    assert a.findings == [], READ_AND_EDIT_ONLY[name]


def labelled(corpus: Path) -> set[str]:
    return {fl.file for fl in load_labels(corpus / "labels.yaml")}


def test_the_original_files_give_exactly_the_judged_findings(corpus: Path) -> None:
    assert {f for f in findings_by_file(corpus) if f[0] not in labelled(corpus)} == JUDGED_TRUE


def test_precision_and_recall_on_the_labelled_sessions_hold_the_baseline(corpus: Path) -> None:
    sc = score_check_document(load_labels(corpus / "labels.yaml"), _corpus_check(str(corpus)), corpus)
    base = json.loads(BASELINE.read_text())
    t = sc.tally()
    got = f"TP {t.tp} FP {t.fp} missed {t.missed}: precision {t.precision}, recall {t.recall}"
    # a drop is a regression on real sessions: `python bench/realworld.py` lists every FP and miss
    assert (t.precision or 0.0) >= base["precision"], f"precision fell below the baseline {base}: {got}"
    assert (t.recall or 0.0) >= base["recall"], f"recall fell below the baseline {base}: {got}"


def test_aider_foreground_runs_are_not_duplicates(corpus: Path) -> None:
    assert not {f for f in findings_by_file(corpus) if f[0] == AIDER_ROOT}
