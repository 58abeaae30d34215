"""The CLI's own process skips pydantic's plugin scan (its models are internal): a pydantic plugin
installed beside the analyzer is not imported by ``analyzer check``, unless the user set
``PYDANTIC_DISABLE_PLUGINS`` themselves, whose value is kept."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"


def _site_with_a_plugin(site: Path, marker: Path) -> None:
    (site / "watcher-1.0.dist-info").mkdir(parents=True)
    (site / "watcher-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: watcher\nVersion: 1.0\n")
    (site / "watcher-1.0.dist-info" / "entry_points.txt").write_text("[pydantic]\nwatcher = watcher_plugin\n")
    (site / "watcher_plugin.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "def new_schema_validator(*args, **kwargs):\n    return None, None, None\n")  # watches nothing


@pytest.mark.parametrize(("setting", "imported"), [(None, False), ("", True)])
def test_a_pydantic_plugin_is_imported_only_when_the_user_asks(
        tmp_path: Path, setting: str | None, imported: bool) -> None:
    marker = tmp_path / "plugin-was-imported"
    _site_with_a_plugin(tmp_path / "site", marker)
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env |= {"PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "site")]),
            "SESSION_ANALYZER_CACHE_DIR": str(tmp_path / "cache")}
    if setting is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = setting
    run = subprocess.run([sys.executable, "-m", "analyzer", "check", str(SEED)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, check=False, timeout=300)
    assert run.returncode == 0, run.stderr
    assert marker.exists() is imported
