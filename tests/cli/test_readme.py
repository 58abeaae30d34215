"""The README shows what the tool really does: every `$ analyzer …` sample in it is the output of
that command today, and the LICENSE is the license pyproject.toml declares."""

from __future__ import annotations

import re
import shlex
import tomllib

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text("utf-8")
SAMPLES = re.findall(r"```\n\$ (analyzer [^\n]+)\n(.*?)```", README, flags=re.S)


def test_the_readme_has_samples() -> None:
    assert [cmd for cmd, _ in SAMPLES] == ["analyzer check fixtures/seeds/002-restart-30001-teardown.session.yaml"]


@pytest.mark.parametrize(("command", "shown"), SAMPLES, ids=[c for c, _ in SAMPLES])
def test_a_readme_sample_is_the_real_output_of_its_command(command: str, shown: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the sample's paths are relative to the checkout
    result = CliRunner().invoke(main, shlex.split(command)[1:], env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stdout == shown, f"update the README's sample of `{command}` (run with COLUMNS=100)"


def test_the_license_file_is_the_license_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["license"]
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert declared == "MIT"
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text


def test_the_quick_start_output_folder_is_ignored_by_git() -> None:
    assert "analyzer batch fixtures/ -o postmortems" in README
    assert "postmortems/" in (ROOT / ".gitignore").read_text("utf-8").splitlines()
