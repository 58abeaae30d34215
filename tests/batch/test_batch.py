"""``analyzer batch`` end to end: outputs, agreement with ``check``, cache, parallelism, failures,
names, ``--since``, exit codes."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from analyzer.batch import core, job
from analyzer.batch.core import BatchOptions, run_batch
from analyzer.ingest import IngestError, detect, load_all
from analyzer.ingest.discover import discover_sessions
from tests.conftest import FIXTURES

from .conftest import SGLANG, SGLANG_AGENT, SGLANG_SID, Run, batch, cli, copy, session_yaml


@pytest.fixture(scope="module")
def fixtures_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``analyzer batch fixtures/ -o OUT --jobs 2``, run once for the tests that only read it."""
    out = tmp_path_factory.mktemp("batch") / "out"
    run = batch(FIXTURES, out=out, jobs=2)
    assert run.code == 0, run.stderr
    return run


@pytest.fixture(scope="module")
def check_doc() -> dict[str, Any]:
    run = cli("check", str(FIXTURES), "--format", "json")
    assert run.code == 1  # the seeds have findings
    doc: dict[str, Any] = orjson.loads(run.stdout)
    return doc


def without_session(f: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in f.items() if k != "session"}


def by_anchor(fs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(fs, key=lambda f: (f["anchor"]["index"], f["rule"], f["fingerprint"]))


# ------------------------------------------------------------------------------------------ outputs

TWO_RUNS = FIXTURES / "gemini-cli" / "stream-json-two-runs.jsonl"
"""A fixture file that holds two sessions: listed as the file and ``file#2``."""


def listed_sessions(root: Path) -> list[str]:
    """What batch lists for ``root``: each file found, and ``file#N`` for its N-th session."""
    out = []
    for found in discover_sessions([root]):
        parts = len(load_all(found.path)) if found.member is None else 1
        out += [str(found.path), *(f"{found.path}#{n}" for n in range(2, parts + 1))]
    return sorted(out)


def test_every_fixture_session_is_listed_once(fixtures_run: Run) -> None:
    s = fixtures_run.summary()
    expected = listed_sessions(FIXTURES)
    assert f"{TWO_RUNS}#2" in expected
    assert sorted(fixtures_run.status()) == expected
    assert len(expected) >= 30
    assert (s["sessions"], s["analyzed"], s["cached"], s["failed"]) == (len(expected), len(expected), 0, 0)
    assert s["errors"] == [] and s["version"] == "0.1.0"
    assert f"analyzer batch: {len(expected)} session(s)" in fixtures_run.stdout
    # the sub-agent file of the sglang session is not a session of its own
    assert not any("/subagents/" in name for name in fixtures_run.status())


def test_findings_equal_check_json_per_session(fixtures_run: Run, check_doc: dict[str, Any]) -> None:
    from_check: dict[str, list[dict[str, Any]]] = {}
    parts: dict[str, int] = {}
    for s in check_doc["sessions"]:  # a file's N-th session comes right after its first
        parts[s["path"]] = n = parts.get(s["path"], 0) + 1
        from_check[s["path"] + (f"#{n}" if n > 1 else "")] = by_anchor(s["findings"])
    from_batch: dict[str, list[dict[str, Any]]] = {}
    for f in fixtures_run.findings():
        from_batch.setdefault(f["session"], []).append(without_session(f))
    assert set(from_check) == set(fixtures_run.status())
    assert {p: fs for p, fs in from_check.items() if fs} == {p: by_anchor(fs) for p, fs in from_batch.items()}
    assert sum(map(len, from_check.values())) == sum(map(len, from_batch.values())) > 0
    # a session read from two files (a seed and its JSONL twin) counts once in the totals
    s = fixtures_run.summary()
    assert 0 < s["findings"] == sum(s["by_severity"].values()) < sum(map(len, from_check.values()))


def test_findings_jsonl_order_is_session_then_anchor_then_rule(fixtures_run: Run) -> None:
    keys = [(f["session"], f["anchor"]["index"], f["rule"]) for f in fixtures_run.findings()]
    assert keys == sorted(keys)
    first = fixtures_run.findings()[0]
    assert list(first)[:3] == ["session", "rule", "severity"]


def test_summary_totals_per_rule_and_severity(fixtures_run: Run) -> None:
    s = fixtures_run.summary()
    twins = {r["session"] for r in s["session_status"] if "twin_of" in r}
    assert twins  # the seed fixtures and their JSONL twins
    findings = [f for f in fixtures_run.findings() if f["session"] not in twins]  # each session counted once
    per_rule: dict[str, int] = {}
    for f in findings:
        per_rule[f["rule"]] = per_rule.get(f["rule"], 0) + 1
    assert {r: t["findings"] for r, t in s["rules"].items()} == per_rule
    assert s["by_severity"] == {sev: sum(f["severity"] == sev for f in findings) for sev in ("high", "medium", "low")}
    seed002 = fixtures_run.status()[str(FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml")]
    assert seed002["findings"] >= 1 and seed002["format"] == "fixture" and seed002["status"] == "ok"


def test_one_report_per_session_linked_from_the_index(fixtures_run: Run) -> None:
    pytest.importorskip("analyzer.report.html")
    assert fixtures_run.out is not None
    index = (fixtures_run.out / "index.html").read_text()
    reports = sorted((fixtures_run.out / "sessions").iterdir())
    assert len(reports) == fixtures_run.summary()["sessions"]
    for name, st in fixtures_run.status().items():
        assert st["report"] and (fixtures_run.out / st["report"]).is_file(), name
        assert f'href="{st["report"]}"' in index
    assert all(p.read_text().lstrip().lower().startswith("<!doctype html") for p in reports)


def test_index_is_self_contained_with_csp_hashes(fixtures_run: Run) -> None:
    assert fixtures_run.out is not None
    html = (fixtures_run.out / "index.html").read_text()
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp and "default-src 'none'" in csp.group(1)
    for tag in ("style", "script"):
        body = re.search(rf"<{tag}>(.*?)</{tag}>", html, re.S)
        assert body is not None
        digest = base64.b64encode(hashlib.sha256(body.group(1).encode()).digest()).decode()
        assert f"{tag}-src 'sha256-{digest}'" in csp.group(1)
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)  # nothing fetched from the network
    rows = re.findall(r"<tr(?: class=\"failed\")? id=\"s-\d+\"", html)
    # a seed and its JSONL twin are one row: the twin is listed in it
    assert len(rows) + html.count("also read as ") == fixtures_run.summary()["sessions"]
    assert "<svg" in html and "Findings over time" in html
    assert html.count('id="rule-over-broad-kill"') == 1  # one group per rule


def test_plain_progress_when_not_a_terminal(fixtures_run: Run) -> None:
    n = len(list(discover_sessions([FIXTURES])))  # progress counts files: a two-run file is one
    lines = [ln for ln in fixtures_run.stderr.splitlines() if ln.startswith("batch: ")]
    assert lines and lines[-1].startswith(f"batch: {n}/{n} files analyzed, 0 failed")
    assert len(lines) <= 11


# ---------------------------------------------------------------------------------- cache, jobs

def test_second_run_analyzes_nothing_and_gives_the_same_bytes(fixtures_run: Run, tmp_path: Path) -> None:
    assert fixtures_run.out is not None
    out = tmp_path / "out"
    shutil.copytree(fixtures_run.out, out)
    again = batch(FIXTURES, out=out, jobs=2)
    s = again.summary()
    assert (s["analyzed"], s["cached"], s["sessions"]) == (0, s["sessions"], fixtures_run.summary()["sessions"])
    assert (out / "findings.jsonl").read_bytes() == (fixtures_run.out / "findings.jsonl").read_bytes()
    assert [st["report"] for st in s["session_status"]] == \
        [st["report"] for st in fixtures_run.summary()["session_status"]]
    assert "(0 analyzed, " in again.stdout


def test_jobs_1_and_2_give_identical_findings(fixtures_run: Run, tmp_path: Path) -> None:
    two = batch(FIXTURES, out=tmp_path / "two", jobs=2, extra=("--format-reports", "none"))
    one = batch(FIXTURES, out=tmp_path / "one", jobs=1, extra=("--format-reports", "none"))
    assert one.code == two.code == 0
    assert (tmp_path / "one" / "findings.jsonl").read_bytes() == (tmp_path / "two" / "findings.jsonl").read_bytes()
    assert one.summary()["workers"] == 1 and two.summary()["workers"] == 2
    # rules and catalog load at most once per worker process, never per session
    assert fixtures_run.summary()["engine_loads"] <= fixtures_run.summary()["workers"] == 2


def small_tree(root: Path) -> dict[str, Path]:
    return {
        "claude": copy(SGLANG, root / "proj" / f"{SGLANG_SID}.jsonl"),
        "agent": copy(SGLANG_AGENT, root / "proj" / SGLANG_SID / "subagents" / "agent-a3f9c21.jsonl"),
        "seed": copy(FIXTURES / "seeds" / "001-relaunch-after-ready.session.yaml", root / "seeds" / "001.session.yaml"),
        "codex": copy(FIXTURES / "codex" / "rollout-flat-legacy-sglang.jsonl", root / "codex" / "rollout-1.jsonl"),
    }


def analyzed(run: Run) -> list[str]:
    return sorted(Path(name).name for name, st in run.status().items() if not st["cached"])


def test_a_changed_file_or_sub_agent_file_is_analyzed_again(tmp_path: Path) -> None:
    files = small_tree(tmp_path / "in")
    out = tmp_path / "out"
    assert analyzed(batch(tmp_path / "in", out=out)) == ["001.session.yaml", f"{SGLANG_SID}.jsonl", "rollout-1.jsonl"]
    assert analyzed(batch(tmp_path / "in", out=out)) == []
    with files["seed"].open("a") as fh:
        fh.write("  - user: Ready\n")
    run = batch(tmp_path / "in", out=out)
    assert analyzed(run) == ["001.session.yaml"]
    assert run.status()[str(files["seed"])]["events"] == 20
    os.utime(files["agent"], ns=(1, 1))  # only the sub-agent file changed: its parent session is read again
    assert analyzed(batch(tmp_path / "in", out=out)) == [f"{SGLANG_SID}.jsonl"]
    copy(SGLANG_AGENT, tmp_path / "in" / "proj" / SGLANG_SID / "subagents" / "agent-b000001.jsonl")
    assert analyzed(batch(tmp_path / "in", out=out)) == [f"{SGLANG_SID}.jsonl"]


def test_a_re_run_detects_only_files_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.ingest import discover

    files = small_tree(tmp_path / "in")
    (tmp_path / "in" / "notes.txt").write_text("not a session\n")
    # failed last time: looked at again (an opencode.db's new sessions can sit in its -wal file)
    (tmp_path / "in" / "broken.jsonl").write_text("{not json\n")
    out = tmp_path / "out"
    first = batch(tmp_path / "in", out=out, extra=("--format-reports", "none"))
    detected: list[str] = []
    real_detect = discover.detect

    def counting_detect(path: Path) -> Any:
        detected.append(path.name)
        return real_detect(path)

    monkeypatch.setattr(discover, "detect", counting_detect)
    again = batch(tmp_path / "in", out=out, extra=("--format-reports", "none"))
    assert sorted(detected) == ["broken.jsonl", "notes.txt"]  # not found as readable sessions: every time
    assert again.findings() == first.findings() and again.summary()["cached"] == 4
    with files["codex"].open("a") as fh:
        fh.write("\n")
    detected.clear()
    run = batch(tmp_path / "in", out=out, extra=("--format-reports", "none"))
    assert sorted(detected) == ["broken.jsonl", "notes.txt", "rollout-1.jsonl"]
    assert analyzed(run) == ["rollout-1.jsonl"]


def test_a_report_left_half_written_by_a_killed_worker_is_removed(tmp_path: Path) -> None:
    small_tree(tmp_path / "in")
    partial = tmp_path / "out" / "sessions" / ".seeds_001.session.yaml-0123456789.html.4242.tmp"
    partial.parent.mkdir(parents=True)
    partial.write_text("<html><body>half", encoding="utf-8")
    assert batch(tmp_path / "in", out=tmp_path / "out").code == 0
    assert not partial.exists()


def test_another_rule_set_or_version_analyzes_everything_again(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    small_tree(tmp_path / "in")
    out = tmp_path / "out"
    batch(tmp_path / "in", out=out, extra=("--format-reports", "none"))
    run = batch(tmp_path / "in", out=out, extra=("--format-reports", "none", "--select", "duplicate-launch"))
    assert run.summary()["analyzed"] == 3 and run.summary()["rules_run"] == ["duplicate-launch"]
    assert {f["rule"] for f in run.findings()} == {"duplicate-launch"}  # seed 001's relaunch after "Ready"
    monkeypatch.setattr("analyzer.__version__", "99.0")
    run = batch(tmp_path / "in", out=out, extra=("--format-reports", "none", "--select", "duplicate-launch"))
    assert run.summary()["analyzed"] == 3


def test_removed_sessions_lose_their_reports(tmp_path: Path) -> None:
    pytest.importorskip("analyzer.report.html")
    files = small_tree(tmp_path / "in")
    out = tmp_path / "out"
    first = batch(tmp_path / "in", out=out)
    gone = first.status()[str(files["codex"])]["report"]
    assert (out / gone).is_file()
    files["codex"].unlink()
    second = batch(tmp_path / "in", out=out)
    assert not (out / gone).exists() and len(list((out / "sessions").iterdir())) == 2
    assert second.summary()["sessions"] == 2


# ------------------------------------------------------------------------------------- failures

def test_broken_sessions_are_listed_with_their_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "in"
    good = session_yaml(root / "good.session.yaml")
    garbled = root / "rollout-2026-01-01T00-00-00-x.jsonl"
    garbled.write_bytes(b"\x00\x01\x02 not json at all \xff\xfe" * 40)
    truncated = root / "cut.traj"
    truncated.write_bytes((FIXTURES / "swe-agent" / "flask-health-503.traj").read_bytes()[:300])
    info_only = copy(FIXTURES / "opencode" / "storage" / "session" / "4f7e2a9b1c3d5e6f708192a3b4c5d6e7f8091a2b"
                     / "ses_3c0a1b2c3ffeZy9Xw8Vu7Ts6Rq.json", root / "info.json")
    raises = session_yaml(root / "raises.session.yaml")
    real_load = job.load_sessions

    def load_or_raise(path: str, member: str | None) -> Any:
        if path.endswith("raises.session.yaml"):
            raise RuntimeError("boom <b>in</b> the world builder")
        return real_load(path, member)

    monkeypatch.setattr(job, "load_sessions", load_or_raise)
    run = batch(root, out=tmp_path / "out", extra=("--format-reports", "none"))
    assert run.code == 0
    st = run.status()
    assert st[str(good)]["status"] == "ok"
    assert st[str(garbled)]["status"] == "error" and "binary file, not a session log" in st[str(garbled)]["error"]
    assert st[str(truncated)]["status"] == "error" and str(truncated) in st[str(truncated)]["error"]
    assert "opencode session info without messages" in st[str(info_only)]["error"]
    assert st[str(raises)]["error"].startswith("RuntimeError: boom <b>in</b> the world builder (at ")
    s = run.summary()
    assert s["failed"] == 4 == len(s["errors"]) and s["sessions"] == 5
    index = (tmp_path / "out" / "index.html").read_text()
    assert "boom &lt;b&gt;in&lt;/b&gt; the world builder" in index and "<b>in</b>" not in index
    assert index.count('class="failed"') == 4
    assert "failed:" in run.stdout and f"  {raises}: RuntimeError: boom" in run.stdout


@pytest.mark.parametrize("sessions", [6, 60])  # 60: several jobs per task, the dead one among them
def test_a_worker_that_dies_fails_only_its_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   sessions: int) -> None:
    for i in range(sessions):
        session_yaml(tmp_path / "in" / f"s{i}.session.yaml")
    real_load = job.load_sessions

    def load_or_die(path: str, member: str | None) -> Any:
        if path.endswith("s3.session.yaml"):
            os._exit(3)  # a segfault or the OOM killer: the process is gone, no exception
        return real_load(path, member)

    monkeypatch.setattr(job, "load_sessions", load_or_die)  # forked workers inherit it
    run = run_batch(BatchOptions(paths=[str(tmp_path / "in")], out=tmp_path / "out", jobs=2, reports=False))
    by_name = {Path(r.path).name: r for r in run.results}
    assert len(by_name) == sessions
    assert by_name["s3.session.yaml"].status == "error"
    assert "worker process died" in str(by_name["s3.session.yaml"].error)
    assert all(r.status == "ok" for n, r in by_name.items() if n != "s3.session.yaml")


@pytest.mark.parametrize(("sessions", "jobs"), [(6, 1), (6, 2), (60, 2)])  # 60: several jobs per task
def test_a_session_over_the_timeout_is_stopped_and_tried_again_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sessions: int, jobs: int) -> None:
    for i in range(sessions):
        session_yaml(tmp_path / "in" / f"s{i}.session.yaml")
    real_load = job.load_sessions

    def load_or_hang(path: str, member: str | None) -> Any:
        if path.endswith("s3.session.yaml"):
            time.sleep(60)  # a parser stuck on one hostile session
        return real_load(path, member)

    monkeypatch.setattr(job, "load_sessions", load_or_hang)  # forked workers inherit it
    options = BatchOptions(paths=[str(tmp_path / "in")], out=tmp_path / "out", jobs=jobs, reports=False,
                           timeout=3.0)  # the others take milliseconds: room for a loaded CI machine
    run = run_batch(options)
    by_name = {Path(r.path).name: r for r in run.results}
    assert len(by_name) == sessions
    assert by_name["s3.session.yaml"].status == "error"
    assert "timed out after 3 s" in str(by_name["s3.session.yaml"].error)
    assert all(r.status == "ok" for n, r in by_name.items() if n != "s3.session.yaml")

    monkeypatch.setattr(job, "load_sessions", real_load)
    again = run_batch(options)
    assert again.analyzed == 1  # only the one that timed out; the rest come from the cache
    assert all(r.status == "ok" for r in again.results)


def test_a_session_stuck_where_the_alarm_cannot_reach_has_its_worker_killed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import signal

    from analyzer.batch import runner

    for i in range(4):
        session_yaml(tmp_path / "in" / f"s{i}.session.yaml")
    real_load = job.load_sessions

    def load_or_hang_in_native_code(path: str, member: str | None) -> Any:
        if path.endswith("s1.session.yaml"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})  # as C code that never returns
            time.sleep(60)
        return real_load(path, member)

    monkeypatch.setattr(job, "load_sessions", load_or_hang_in_native_code)
    monkeypatch.setattr(runner, "grace", lambda timeout: 1.0)
    run = run_batch(BatchOptions(paths=[str(tmp_path / "in")], out=tmp_path / "out", jobs=2, reports=False,
                                 timeout=2.0))
    by_name = {Path(r.path).name: r for r in run.results}
    assert "timed out after 2 s" in str(by_name["s1.session.yaml"].error)
    assert all(r.status == "ok" for n, r in by_name.items() if n != "s1.session.yaml")


# ---------------------------------------------------------------------------------------- names

HOSTILE = [
    "a b/ c d.session.yaml",
    "ünïcødé/セッション.session.yaml",
    "<img src=x onerror=alert(1)>.session.yaml",
    "..session.yaml",
    "-rf.session.yaml",
    "x" * 200 + ".session.yaml",
    "one/same.session.yaml",
    "two/same.session.yaml",
]


def test_hostile_names_stay_inside_out_and_are_escaped(tmp_path: Path) -> None:
    root = tmp_path / "in"
    for name in HOSTILE:
        session_yaml(root / name)
    out = tmp_path / "out"
    run = batch(root, out=out)
    assert run.code == 0 and run.summary()["sessions"] == len(HOSTILE)
    jobs = [core._job(f) for f in discover_sessions([root])]
    names = [j.report_to for j in jobs]
    assert len(set(names)) == len(HOSTILE)
    assert all(n and re.fullmatch(r"sessions/[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.html", n) for n in names), names
    written = [p for p in tmp_path.rglob("*") if p.is_file() and out not in p.parents and root not in p.parents]
    assert written == []  # nothing outside OUT
    index = (out / "index.html").read_text()
    assert "<img src=x" not in index and "&lt;img src=x onerror=alert(1)&gt;.session.yaml" in index
    assert "セッション.session.yaml" in index
    if job.html_available():
        assert sorted(p.name for p in (out / "sessions").iterdir()) == sorted(n.split("/")[1] for n in names)


def test_reports_are_not_written_through_a_symlinked_sessions_folder(tmp_path: Path) -> None:
    session_yaml(tmp_path / "in" / "a.session.yaml")
    (tmp_path / "out").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out" / "sessions").symlink_to(tmp_path / "elsewhere")
    run = batch(tmp_path / "in", out=tmp_path / "out")
    assert run.code == 2 and "symbolic link" in run.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


# ---------------------------------------------------------------------------------------- since

def test_since_keeps_sessions_active_on_or_after_the_date(tmp_path: Path) -> None:
    root = tmp_path / "in"
    session_yaml(root / "january.session.yaml", start="2026-01-10T09:00:00Z")
    session_yaml(root / "march.session.yaml", start="2026-02-28T23:58:00Z")  # its last event: March 1st
    undated_old = session_yaml(root / "undated-old.session.yaml")
    undated_new = session_yaml(root / "undated-new.session.yaml")
    os.utime(undated_old, (datetime(2025, 12, 1, tzinfo=UTC).timestamp(),) * 2)
    os.utime(undated_new, (datetime(2026, 4, 1, tzinfo=UTC).timestamp(),) * 2)
    out = tmp_path / "out"
    run = batch(root, out=out, extra=("--since", "2026-03-01", "--format-reports", "none"))
    assert run.code == 0
    assert sorted(Path(p).name for p in run.status()) == ["march.session.yaml", "undated-new.session.yaml"]
    s = run.summary()
    assert (s["filtered_by_since"], s["since"]) == (2, "2026-03-01T00:00:00+00:00")
    assert s["analyzed"] == 3  # undated-old was last written before the date: not even read
    # march's last event is at 2026-03-01T00:00:00Z: on the date counts, a second later does not
    again = batch(root, out=out, extra=("--since", "2026-03-01T00:00:00Z", "--format-reports", "none"))
    assert sorted(Path(p).name for p in again.status()) == ["march.session.yaml", "undated-new.session.yaml"]
    assert again.summary()["analyzed"] == 0
    later = batch(root, out=out, extra=("--since", "2026-03-01T00:00:01+00:00", "--format-reports", "none"))
    assert sorted(Path(p).name for p in later.status()) == ["undated-new.session.yaml"]
    everything = batch(root, out=out, extra=("--format-reports", "none"))
    assert everything.summary()["sessions"] == 4 and analyzed(everything) == ["undated-old.session.yaml"]


# ----------------------------------------------------------------------------------- exit codes

def test_no_session_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "README.md").write_text("nothing here\n")
    run = batch(tmp_path / "in", out=tmp_path / "out")
    assert run.code == 2 and "no session found under" in run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("given", "timeout"), [((), 600.0), (("--timeout", "30"), 30.0), (("--timeout", "0"), None)])
def test_timeout_option_reaches_the_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          given: tuple[str, ...], timeout: float | None) -> None:
    import analyzer.cli.batch as cli_batch

    seen: list[BatchOptions] = []

    def fake_run(options: BatchOptions, progress: Any = None) -> Any:
        seen.append(options)
        raise KeyboardInterrupt  # stop there: only the options matter

    monkeypatch.setattr(cli_batch, "run_batch", fake_run)
    result = cli("batch", str(FIXTURES / "seeds"), "-o", str(tmp_path / "o"), *given)
    assert result.code == 130 and [o.timeout for o in seen] == [timeout]


@pytest.mark.parametrize(("extra", "message"), [
    (("--since", "last tuesday"), "is not a date"),
    (("--select", "no-such-rule"), "no-such-rule"),
    (("--jobs", "0"), "--jobs"),
    (("--timeout", "-1"), "--timeout"),
])
def test_bad_options_exit_2(tmp_path: Path, extra: tuple[str, ...], message: str) -> None:
    session_yaml(tmp_path / "in" / "a.session.yaml")
    run = batch(tmp_path / "in", out=tmp_path / "out", extra=extra)
    assert run.code == 2 and message in run.stderr


def test_output_inside_the_input_is_not_read_back(tmp_path: Path) -> None:
    session_yaml(tmp_path / "a.session.yaml")
    first = batch(tmp_path, out=tmp_path / "out", extra=("--format-reports", "none"))
    second = batch(tmp_path, out=tmp_path / "out", extra=("--format-reports", "none"))
    assert list(first.status()) == list(second.status()) == [str(tmp_path / "a.session.yaml")]


# --------------------------------------------------------------------------------------- corpus

@pytest.mark.corpus
def test_every_corpus_session_is_listed_and_none_stops_the_batch(corpus: Path, tmp_path: Path) -> None:
    run = batch(corpus, out=tmp_path / "out", jobs=2)
    assert run.code == 0, run.stderr
    st = run.status()
    claimed = set()
    for p in corpus.rglob("*"):
        if p.is_file() and "subagents" not in p.parts:  # sub-agent files are read with their session
            try:
                detect(p)
            except IngestError:
                continue
            claimed.add(str(p))
    assert claimed <= set(st)  # every file a format reads is a session of the batch
    assert not {n for n in st if n.endswith(("labels.yaml", "MANIFEST.md"))}
    failed = {Path(n).name: s["error"] for n, s in st.items() if s["status"] != "ok"}
    # opencode session info without its messages is refused with advice; every other failure is a
    # file no format claims (a JSONL re-shaped by a sanitizer; a format not read yet), said in one line
    assert "opencode session info without messages" in failed.pop("poem-write-session.json")
    assert "trade-arena-sanitized.jsonl" in failed
    for n, error in failed.items():
        assert "not a session log in any known format" in error and "\n" not in error, n
    assert not {n for n in claimed if Path(n).name in failed}
    spotter = next(s for n, s in st.items() if n.endswith("8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"))
    assert spotter["status"] == "ok" and spotter["events"] > 0


def test_reports_are_written_again_when_redaction_or_format_changes(tmp_path: Path) -> None:
    pytest.importorskip("analyzer.report.html")
    small_tree(tmp_path / "in")
    out = tmp_path / "out"
    assert batch(tmp_path / "in", out=out, extra=("--format-reports", "none")).summary()["reports"]["written"] == 0
    run = batch(tmp_path / "in", out=out)  # the cached results have no report: analyzed again
    assert run.summary()["analyzed"] == 3 and run.summary()["reports"]["written"] == 3
    assert batch(tmp_path / "in", out=out).summary()["analyzed"] == 0
    assert batch(tmp_path / "in", out=out, extra=("--no-redact",)).summary()["analyzed"] == 3
    assert batch(tmp_path / "in", out=out, extra=("--no-redact",)).summary()["analyzed"] == 0


def test_each_session_of_an_opencode_database(tmp_path: Path) -> None:
    from tests.ingest.test_opencode import MAIN, OLD, SUB, make_db, storage_session

    (tmp_path / "in").mkdir()
    db = make_db(tmp_path / "in" / "opencode.db", [storage_session(OLD), storage_session(SUB), storage_session(MAIN)])
    out = tmp_path / "out"
    run = batch(tmp_path / "in", out=out)
    st = run.status()
    assert list(st) == [f"{db}#{MAIN}", f"{db}#{OLD}"]  # the sub-agent session SUB is part of MAIN
    assert all(s["status"] == "ok" and s["format"] == "opencode" for s in st.values())
    assert st[f"{db}#{MAIN}"]["events"] > st[f"{db}#{OLD}"]["events"] > 0
    assert batch(tmp_path / "in", out=out).summary()["analyzed"] == 0
    con = sqlite3.connect(db)
    con.execute("UPDATE session SET title = 'renamed' WHERE id = ?", (OLD,))
    con.commit()
    con.close()
    assert batch(tmp_path / "in", out=out).summary()["analyzed"] == 2  # one file for both: both again


@pytest.mark.parametrize(("extra", "shown"), [((), False), (("--no-redact",), True)])
def test_secrets_in_error_messages_are_redacted_in_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             extra: tuple[str, ...], shown: bool) -> None:
    secret = "sk-ant-api03-" + "A" * 40
    session_yaml(tmp_path / "in" / "a.session.yaml")

    def leak(path: str, member: str | None) -> Any:
        raise ValueError(f"bad header: Authorization: Bearer {secret}")

    monkeypatch.setattr(job, "load_sessions", leak)
    run = batch(tmp_path / "in", out=tmp_path / "out", extra=("--format-reports", "none", *extra))
    index = (tmp_path / "out" / "index.html").read_text()
    assert (secret in index) is shown and ("[REDACTED]" in index) is not shown
    assert secret in run.summary()["errors"][0]["error"]  # summary.json is the raw record


# ------------------------------------------------------------------ several sessions, partial reads

def test_a_file_of_two_sessions_is_listed_as_two_with_a_report_each(tmp_path: Path) -> None:
    src = copy(TWO_RUNS, tmp_path / "in" / "runs.jsonl")
    run = batch(tmp_path / "in", out=tmp_path / "out")
    assert run.code == 0, run.stderr
    st = run.status()
    assert sorted(st) == [str(src), f"{src}#2"]
    # the harness's prompt line before the first `init` goes with the first run
    assert [(v["status"], v["events"]) for _, v in sorted(st.items())] == [("ok", 5), ("ok", 4)]
    # each run has its own world: the second run's launch is not a duplicate of the first's
    assert run.findings() == []
    reports = sorted(p.name for p in (tmp_path / "out" / "sessions").iterdir())
    assert len(reports) == 2 and reports[0].replace("-2.html", ".html") == reports[1]
    again = batch(tmp_path / "in", out=tmp_path / "out")  # from the cache, both parts again
    assert sorted(again.status()) == sorted(st) and again.summary()["cached"] == 2


def test_a_mostly_unreadable_file_is_listed_as_failed_with_the_count(tmp_path: Path) -> None:
    good = (FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl").read_bytes().splitlines()
    cut = tmp_path / "in" / "cut.jsonl"
    cut.parent.mkdir(parents=True)
    kept = 4  # whole lines; the rest cut in half
    cut.write_bytes(b"\n".join([*good[:kept], *(line[: len(line) // 2] for line in good[kept:])]) + b"\n")
    run = batch(tmp_path / "in", out=tmp_path / "out", extra=("--format-reports", "none"))
    (entry,) = run.status().values()
    lost = len(good) - kept
    assert entry["events"] > 0  # what was read is still analyzed
    assert entry["status"] == "error"
    assert entry["error"] == f"{cut}: read {len(good) - lost} of {len(good)} records ({lost} lost)"
    assert run.summary()["failed"] == 1
