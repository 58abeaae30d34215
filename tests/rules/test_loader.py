"""One loader for the built-in pack, user folders and entry-point packs; a broken pack is a
warning naming it, and the others still load and run."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.rules import loader
from analyzer.rules.engine import run_rules
from analyzer.rules.loader import ENTRY_POINT_GROUP, builtin_rules_dir, load_rules
from analyzer.rules.testing import assert_rule_cases
from tests.rules.packs import LOGLESS_RULE, write_entry_point_pack, write_user_pack

BUILTIN = {"duplicate-launch", "ignored-failure", "kill-after-ready", "over-broad-kill", "unrequested-teardown",
           "user-correction"}


@pytest.fixture
def entry_point(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[EntryPoint]:
    """A real ``EntryPoint`` in the ``analyzer.rules`` group, pointing at a module on sys.path."""
    write_entry_point_pack(tmp_path / "site")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    ep = EntryPoint(name="acme", value="acme_rules", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(loader, "registered",
                        lambda group=ENTRY_POINT_GROUP: [ep] if group == ENTRY_POINT_GROUP else [])
    yield ep
    sys.modules.pop("acme_rules", None)  # the next test's pack is another folder


def test_the_builtin_pack_is_the_top_level_rules_folder() -> None:
    ruleset = load_rules(entry_point_packs=False)
    assert set(ruleset.rules) == BUILTIN
    assert ruleset.warnings == []
    assert builtin_rules_dir().name == "rules"
    assert all(lr.origin == "builtin" and lr.cases_file.is_file() for lr in ruleset.rules.values())


def test_a_user_folder_rule_loads_runs_and_passes_its_cases(tmp_path: Path) -> None:
    folder = write_user_pack(tmp_path / "my_rules")
    ruleset = load_rules([folder], entry_point_packs=False)
    lr = ruleset.rules["launch-without-log"]
    assert (lr.origin, Path(lr.file).name) == (str(folder), "launch_without_log.py")
    assert set(ruleset.rules) == BUILTIN | {"launch-without-log"}
    report = assert_rule_cases(lr)
    assert (report.cases, report.tp, report.fp, report.fn) == (2, 1, 0, 0)
    session = tmp_path / "s.session.yaml"
    session.write_text("events:\n  - bash: nohup python -m http.server 8000 &\n", "utf-8")
    [f] = run_rules(build_world(load(session)), [lr.cls()]).findings
    assert (f.rule, f.anchor.index, f.message) == ("launch-without-log", 0, "launches the python http.server without a log file")


def test_an_entry_point_rule_loads_runs_and_passes_its_cases(entry_point: EntryPoint, tmp_path: Path) -> None:
    ruleset = load_rules()
    lr = ruleset.rules["forced-container-removal"]
    assert lr.origin == "entry-point:acme"
    assert lr.cases_file == tmp_path / "site" / "acme_rules" / "forced-container-removal.cases.yaml"
    report = assert_rule_cases(lr)
    assert (report.tp, report.fp, report.fn) == (1, 0, 0)


def test_an_entry_point_that_fails_to_import_is_a_warning_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    ep = EntryPoint(name="broken", value="no_such_module_xyz", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(loader, "registered", lambda group=loader.ENTRY_POINT_GROUP: [ep])
    ruleset = load_rules()
    assert set(ruleset.rules) == BUILTIN
    [w] = ruleset.warnings
    assert w.startswith("entry point 'broken' (no_such_module_xyz): failed to import: ModuleNotFoundError")


def test_a_user_file_that_fails_to_import_is_a_warning_and_its_neighbours_load(tmp_path: Path) -> None:
    folder = write_user_pack(tmp_path / "my_rules")
    (folder / "broken.py").write_text("import nonexistent_dependency_zz\n", "utf-8")
    ruleset = load_rules([folder], entry_point_packs=False)
    assert "launch-without-log" in ruleset.rules
    [w] = ruleset.warnings
    assert w.startswith(f"{folder / 'broken.py'}: failed to import: ModuleNotFoundError")


def test_bad_metadata_is_a_warning_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "my_rules"
    folder.mkdir()
    bad = LOGLESS_RULE.replace('name = "launch-without-log"', 'name = "LaunchWithoutLog"')
    (folder / "bad.py").write_text(bad, "utf-8")
    ruleset = load_rules([folder], entry_point_packs=False)
    assert "LaunchWithoutLog" not in ruleset.rules
    [w] = ruleset.warnings
    assert w.startswith(f"{folder / 'bad.py'}: rule LaunchWithoutLog: name 'LaunchWithoutLog' must be kebab-case")


def test_a_rule_name_defined_twice_keeps_the_first(tmp_path: Path) -> None:
    a = write_user_pack(tmp_path / "a")
    b = write_user_pack(tmp_path / "b")
    ruleset = load_rules([a, b], entry_point_packs=False)
    assert ruleset.rules["launch-without-log"].origin == str(a)
    [w] = ruleset.warnings
    assert "rule 'launch-without-log' is already defined in" in w and str(b) in w


def test_the_builtin_folder_given_again_is_loaded_once() -> None:
    ruleset = load_rules([builtin_rules_dir(), str(builtin_rules_dir()) + "/"], entry_point_packs=False)
    assert set(ruleset.rules) == BUILTIN and ruleset.warnings == []


def test_a_missing_folder_is_a_warning(tmp_path: Path) -> None:
    ruleset = load_rules([tmp_path / "nope"], entry_point_packs=False)
    assert ruleset.warnings == [f"{tmp_path / 'nope'}: rules folder not found"]
    assert set(ruleset.rules) == BUILTIN


def test_entry_points_are_scanned_once_while_nothing_on_sys_path_changes(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SESSION_ANALYZER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    (tmp_path / "site").mkdir()
    scans: list[str] = []
    ep = EntryPoint(name="acme", value="acme_rules", group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(loader, "entry_points", lambda group: scans.append(group) or [ep])

    assert loader.registered() == [ep]
    assert loader.registered() == [ep] and len(scans) == 1, "the second answer comes from the cache"
    (tmp_path / "site" / "acme_rules-1.0.dist-info").mkdir()  # an install changes its folder
    assert loader.registered() == [ep] and len(scans) == 2
    (tmp_path / "cache" / "entry-points.json").write_text("{not json", "utf-8")
    assert loader.registered() == [ep] and len(scans) == 3, "a damaged file is scanned again"
    monkeypatch.setenv("SESSION_ANALYZER_CACHE_DIR", "")
    assert loader.registered() == [ep] and len(scans) == 4, "no cache: every call scans"


def test_a_folder_without_distributions_does_not_make_the_entry_points_be_scanned_again(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SESSION_ANALYZER_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "work").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "work"))  # like the working directory of python -m
    scans: list[str] = []
    monkeypatch.setattr(loader, "entry_points", lambda group: scans.append(group) or [])
    loader.registered()
    (tmp_path / "work" / "notes.txt").write_text("a file made where the user works", "utf-8")
    loader.registered()
    assert len(scans) == 1
