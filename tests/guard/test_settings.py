from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.config import ConfigError, load_config
from analyzer.guard.settings import guard_settings


def test_guard_table_is_read_from_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.analyzer.guard]\nlog = "logs/guard.jsonl"\nidle = 60\n'
        '[tool.analyzer.guard.mode]\nduplicate-launch = "warn"\n')
    s = guard_settings(load_config(tmp_path / "pyproject.toml"))
    assert s.mode_of("duplicate-launch") == "warn" and s.mode_of("kill-after-ready") == "auto"
    assert s.idle == 60 and s.log == str(tmp_path / "logs" / "guard.jsonl")


@pytest.mark.parametrize(("table", "needle"), [
    ('[guard.mode]\nno-such-rule = "deny"\n', "'no-such-rule' is not a guard rule"),
    ('[guard.mode]\nkill-after-ready = "block"\n', "mode.kill-after-ready"),
    ("[guard]\nidel = 3\n", "idel"),
])
def test_bad_guard_config_names_the_key(tmp_path: Path, table: str, needle: str) -> None:
    (tmp_path / "analyzer.toml").write_text(table)
    with pytest.raises(ConfigError, match=needle):
        guard_settings(load_config(tmp_path / "analyzer.toml"))
