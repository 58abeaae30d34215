"""The GitHub Action (action.yml) run as its host would: each `run:` step as a bash script with the
runner's variables and the inputs it passes, in order, in a fresh virtualenv where the install
step really installs this checkout. The `uses:` steps (setup-python, upload-sarif) are GitHub's
own; what they are given is checked instead."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sysconfig
import venv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.network  # the install step builds the package (hatchling from PyPI or the pip cache)

ACTION = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
SEEDS = FIXTURES / "seeds"
_EXPR = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


@pytest.fixture(scope="module")
def python_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv's bin folder, with this checkout's dependencies visible (a .pth to the
    test environment's site-packages) so that the install step needs no download of them."""
    env = tmp_path_factory.mktemp("action-venv")
    venv.create(env, with_pip=True)
    purelib = Path(sysconfig.get_paths()["purelib"])
    site = next(env.glob("lib/python3*/site-packages"))
    (site / "test-deps.pth").write_text(f"{purelib}\n", "utf-8")
    return env / "bin"


@dataclass
class Run:
    steps: list[tuple[str, subprocess.CompletedProcess[str]]]
    outputs: dict[str, str]
    workspace: Path

    def status(self, name: str) -> int:
        return next(p.returncode for n, p in self.steps if n == name)


def _evaluate(value: str, inputs: dict[str, str], outputs: dict[str, str]) -> str:
    """The few expressions the action's `env:` uses: inputs and the check step's outputs."""
    def one(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        if expr.startswith("steps.check.outputs."):
            return outputs.get(expr.removeprefix("steps.check.outputs."), "")
        raise AssertionError(f"unexpected expression in a run step's env: {expr}")
    return _EXPR.sub(one, value)


STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
AFTER_INSTALL = [s for s in STEPS if s.get("name") != "Install session-analyzer"]


def run_action(workspace: Path, bin_dir: Path, steps: list[dict[str, Any]] = AFTER_INSTALL, **given: str) -> Run:
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    inputs.update({k.replace("_", "-"): v for k, v in given.items()})
    out_file = workspace.parent / f"{workspace.name}.github_output"
    out_file.write_text("", "utf-8")
    base = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(workspace), "GITHUB_OUTPUT": str(out_file), "NO_COLOR": "1"}
    base.pop("VIRTUAL_ENV", None)
    ran: list[tuple[str, subprocess.CompletedProcess[str]]] = []
    outputs: dict[str, str] = {}
    for step in steps:
        if "run" not in step:
            continue
        env = {**base, **{k: _evaluate(str(v), inputs, outputs) for k, v in step.get("env", {}).items()}}
        script = _evaluate(step["run"], inputs, outputs)  # no step pastes an expression, but be exact
        # the runner's `shell: bash`: bash --noprofile --norc -eo pipefail {0}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=600)
        ran.append((step["name"], proc))
        if step.get("id") == "check":
            outputs = dict(line.split("=", 1) for line in out_file.read_text("utf-8").splitlines() if "=" in line)
    return Run(ran, outputs, workspace)


@pytest.fixture(scope="module")
def installed(python_env: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The install step run once; the other tests run the steps after it against that install."""
    [install] = [s for s in STEPS if s.get("name") == "Install session-analyzer"]
    env = {**os.environ, "PATH": f"{python_env}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTION_PATH": str(ROOT)}
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", install["run"]],
                          cwd=tmp_path_factory.mktemp("install"), env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    where = subprocess.run([str(python_env / "python"), "-c", "import analyzer; print(analyzer.__file__)"],
                           cwd=python_env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(python_env.parent)), where  # this install, not the test environment's
    yield python_env


def _workspace(tmp_path: Path, *seeds: str) -> Path:
    ws = tmp_path / "workspace"
    (ws / "sessions").mkdir(parents=True)
    for name in seeds:
        shutil.copy(SEEDS / name, ws / "sessions" / name)
    return ws


def _checked_steps(run: Run) -> list[str]:
    return [n for n, _ in run.steps]


def _sarif(run: Run, name: str = "session-analyzer.sarif") -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((run.workspace / name).read_text("utf-8"))
    return doc


def test_the_steps_are_install_check_upload_gate() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert [s.get("name", s.get("uses")) for s in STEPS] == [
        "actions/setup-python@v5", "Install session-analyzer", "analyzer check", "Upload SARIF",
        "Gate on the exit status"]
    assert STEPS[0]["with"]["python-version"] == "${{ inputs.python-version }}"


def test_findings_are_written_as_sarif_for_the_upload_and_fail_the_job(installed: Path, tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "000-kill-after-ready.session.yaml", "004-restart-sglang-systemd.session.yaml")
    run = run_action(ws, installed, paths="sessions/")
    assert _checked_steps(run) == ["analyzer check", "Gate on the exit status"]
    assert run.status("analyzer check") == 0  # the step records the status; the upload still runs
    assert run.outputs == {"exit-code": "1"}
    assert run.status("Gate on the exit status") == 1
    results = _sarif(run)["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results] == [
        ("kill-after-ready", "sessions/000-kill-after-ready.session.yaml")]  # relative: code scanning resolves it
    [upload] = [s for s in STEPS if s.get("uses", "").startswith("github/codeql-action/upload-sarif")]
    assert upload["with"]["sarif_file"] == "${{ inputs.sarif-file }}"
    assert "always()" in upload["if"] and "hashFiles(inputs.sarif-file)" in upload["if"]


def test_a_clean_session_passes_and_fail_on_never_reports_without_failing(installed: Path, tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "004-restart-sglang-systemd.session.yaml", "001-relaunch-after-ready.session.yaml")
    clean = run_action(ws, installed, paths="sessions/004-*.session.yaml", sarif_file="clean.sarif")
    assert clean.outputs == {"exit-code": "0"} and clean.status("Gate on the exit status") == 0
    assert _sarif(clean, "clean.sarif")["runs"][0]["results"] == []
    medium = run_action(ws, installed, paths="sessions/", fail_on="high", sarif_file="medium.sarif")
    assert medium.outputs == {"exit-code": "0"}  # seed 001's findings are medium
    assert len(_sarif(medium, "medium.sarif")["runs"][0]["results"]) == 3
    never = run_action(ws, installed, paths="sessions/", fail_on="never", sarif_file="never.sarif")
    assert never.outputs == {"exit-code": "0"} and never.status("Gate on the exit status") == 0


def test_an_unreadable_session_fails_the_job_with_2(installed: Path, tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "004-restart-sglang-systemd.session.yaml")
    (ws / "sessions" / "broken.jsonl").write_text("not a session\n", "utf-8")
    run = run_action(ws, installed, paths="sessions/broken.jsonl sessions/004-restart-sglang-systemd.session.yaml")
    assert run.outputs == {"exit-code": "2"} and run.status("Gate on the exit status") == 2
    notes = _sarif(run)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "sessions/broken.jsonl"


def test_inputs_reach_the_script_as_variables_not_as_code(installed: Path, tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "004-restart-sglang-systemd.session.yaml")
    run = run_action(ws, installed, paths="sessions/", args="--select kill-after-ready; touch pwned")
    assert not (ws / "pwned").exists()
    assert run.outputs == {"exit-code": "2"}  # `;` reached analyzer as a word, not the shell as a separator
