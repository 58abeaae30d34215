"""`analyzer rules list / explain / test / new`: rule authoring from the command line, for the
built-in pack, a user's folder and an entry-point pack."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from analyzer.cli import main
from analyzer.rules import loader
from tests.rules.packs import LOGLESS_CASES, write_entry_point_pack, write_user_pack

BUILTIN = ["duplicate-launch", "ignored-failure", "kill-after-ready", "over-broad-kill", "unrequested-teardown",
           "user-correction"]


def rules(*args: str) -> Result:
    return CliRunner().invoke(main, ["rules", *args], env={"COLUMNS": "100"})


@pytest.fixture(autouse=True)
def no_project_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no analyzer.toml / pyproject.toml of the checkout is picked up


@pytest.fixture
def entry_point_pack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    write_entry_point_pack(tmp_path / "site", "cli_acme_rules")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    ep = EntryPoint(name="acme", value="cli_acme_rules", group=loader.ENTRY_POINT_GROUP)
    monkeypatch.setattr(loader, "registered", lambda group=loader.ENTRY_POINT_GROUP: [ep])
    yield
    sys.modules.pop("cli_acme_rules", None)


def test_rules_test_passes_for_the_whole_builtin_pack() -> None:
    result = rules("test")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == f"{len(BUILTIN)} passed, 0 failed"
    heads = [ln for ln in lines if ln.startswith(("PASS ", "FAIL "))]
    assert [h.split(":")[0] for h in heads] == [f"PASS {n}" for n in BUILTIN]
    assert all(", FP 0, FN 0" in h for h in heads)


def test_rules_list_text_and_json() -> None:
    text = rules("list")
    assert text.exit_code == 0
    assert [ln.split()[0] for ln in text.stdout.splitlines()] == BUILTIN
    assert text.stdout.splitlines()[2].split()[:2] == ["kill-after-ready", "high"]
    doc = json.loads(rules("list", "--format", "json").stdout)
    assert [r["name"] for r in doc] == BUILTIN
    kar = doc[2]
    assert set(kar) == {"name", "severity", "status", "groups", "summary", "origin", "file"}
    assert (kar["severity"], kar["status"], kar["groups"], kar["origin"]) == (
        "high", "stable", ["lifecycle", "coordination"], "builtin")


def test_rules_explain_shows_docs_options_examples_and_suppression() -> None:
    result = rules("explain", "over-broad-kill")
    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("over-broad-kill  (high severity, stable; groups: lifecycle, shell)\n")
    for title in ("What it does:", "Why is this bad:", "Known false positives:", "How to avoid it:",
                  "Options (config [tool.analyzer.options.over-broad-kill]):", "Examples (from the rule's cases):",
                  "Suppress:"):
        assert f"\n{title}\n" in out
    assert "  flag_generic = true  Flag kills by a generic name" in out
    assert "  # pkill -f inside the relaunching command kills its own shell\n" in out
    assert "   <-- over-broad-kill\n" in out and "   (quiet)\n" in out
    assert "# analyzer: ignore[over-broad-kill] <reason>" in out
    assert "fuser -k /dev/nvidia*\n" not in out  # only cases marked `example: true` are shown


def test_rules_explain_an_unknown_name_suggests_one() -> None:
    result = rules("explain", "kill-after-raedy")
    assert result.exit_code == 2
    assert result.stderr == ("analyzer: unknown rule 'kill-after-raedy' (did you mean 'kill-after-ready'?); "
                             "see `analyzer rules list`\n")


def test_rules_new_scaffolds_a_rule_whose_cases_pass(tmp_path: Path) -> None:
    made = rules("new", "restart-without-probe", "--dir", str(tmp_path / "my_rules"))
    assert made.exit_code == 0
    assert (tmp_path / "my_rules" / "restart_without_probe.py").is_file()
    assert (tmp_path / "my_rules" / "restart-without-probe.cases.yaml").is_file()
    tested = rules("test", "--rules-dir", str(tmp_path / "my_rules"))
    assert tested.exit_code == 0, tested.output
    assert tested.stdout.splitlines() == ["PASS restart-without-probe: 2 case(s), TP 1, FP 0, FN 0",
                                          "1 passed, 0 failed"]
    listed = json.loads(rules("list", "--format", "json", "--rules-dir", str(tmp_path / "my_rules")).stdout)
    assert [(r["name"], r["origin"]) for r in listed if r["origin"] != "builtin"] == [
        ("restart-without-probe", str(tmp_path / "my_rules"))]


@pytest.mark.parametrize(("name", "message"), [
    ("RestartWithoutProbe", "rule name 'RestartWithoutProbe' must be kebab-case"),
    ("restart_without_probe", "must be kebab-case"),
])
def test_rules_new_refuses_bad_names(tmp_path: Path, name: str, message: str) -> None:
    result = rules("new", name, "--dir", str(tmp_path))
    assert result.exit_code == 2 and message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_rules_new_never_overwrites(tmp_path: Path) -> None:
    rules("new", "restart-without-probe", "--dir", str(tmp_path))
    again = rules("new", "restart-without-probe", "--dir", str(tmp_path))
    assert again.exit_code == 2
    assert again.stderr == f"analyzer: {tmp_path / 'restart_without_probe.py'} already exists\n"


def test_rules_test_reports_every_failure_with_file_and_line_and_exits_1(tmp_path: Path) -> None:
    folder = write_user_pack(tmp_path / "my_rules")
    cases = folder / "launch-without-log.cases.yaml"
    cases.write_text(LOGLESS_CASES.replace("        ok: launch-without-log", "        expect: launch-without-log")
                     .replace("      - bash: nohup uvicorn app:api --port 8000 &\n        expect: launch-without-log",
                              "      - bash: nohup uvicorn app:api --port 8000 &\n        ok: launch-without-log"),
                     "utf-8")
    result = rules("test", "--rules-dir", str(folder))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "FAIL launch-without-log: 2 case(s), TP 0, FP 1, FN 1"
    assert lines[1] == (f"  {cases}:5: nohup without a redirect: launch-without-log fired here (marked ok): "
                        "launches the uvicorn app without a log file")
    assert lines[2] == f"  {cases}:9: output to a log: expected launch-without-log here; it did not fire"
    assert lines[-1] == "0 passed, 1 failed"


def test_rules_test_by_name_and_unknown_names(tmp_path: Path) -> None:
    one = rules("test", "user-correction")
    assert one.exit_code == 0 and one.stdout.splitlines()[-1] == "1 passed, 0 failed"
    bad = rules("test", "user-corection")
    assert bad.exit_code == 2
    assert "did you mean 'user-correction'?" in bad.stderr


def test_an_entry_point_pack_is_listed_explained_and_tested(entry_point_pack: None) -> None:
    listed = json.loads(rules("list", "--format", "json").stdout)
    [ep] = [r for r in listed if r["name"] == "forced-container-removal"]
    assert ep["origin"] == "entry-point:acme"
    assert rules("explain", "forced-container-removal").stdout.startswith(
        "forced-container-removal  (medium severity, experimental; groups: docker)")
    tested = rules("test", "forced-container-removal")
    assert tested.exit_code == 0, tested.output
    assert tested.stdout.splitlines() == ["PASS forced-container-removal: 2 case(s), TP 1, FP 0, FN 0",
                                          "1 passed, 0 failed"]


def test_the_entry_point_rule_runs_in_check(entry_point_pack: None, tmp_path: Path) -> None:
    session = tmp_path / "s.session.yaml"
    session.write_text("events:\n  - bash: docker run -d --name api -p 8000:8000 myorg/api\n"
                       "  - bash: docker rm -f api\n", "utf-8")
    result = CliRunner().invoke(main, ["check", "--select", "docker", "--format", "json", str(session)])
    assert result.exit_code == 1
    [f] = json.loads(result.stdout)["sessions"][0]["findings"]
    assert (f["rule"], f["anchor"]["index"], f["message"]) == (
        "forced-container-removal", 1, "`docker rm -f api` removes the container")
