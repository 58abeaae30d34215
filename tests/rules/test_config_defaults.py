"""A run without a config file gets the defaults unvalidated (``Config.model_construct``, so the
validator is never built): they must be exactly what ``Config()`` makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.config import Config, load_config


def test_no_config_file_gives_the_same_config_as_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found, made = load_config(), Config()
    assert found == made and repr(found) == repr(made)
    assert found.model_dump(mode="json") == made.model_dump(mode="json") and found.model_fields_set == set()
    found.select.append("x")  # the default lists are the config's own, not shared with another
    assert Config().select == [] and load_config().select == []


def test_a_config_file_is_still_validated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "analyzer.toml").write_text('fail_on = "medium"\nselect = "kill-after-ready"\n')
    cfg = load_config()
    assert cfg.fail_on == "medium" and cfg.select == ["kill-after-ready"] and cfg.source == str(tmp_path / "analyzer.toml")
    (tmp_path / "analyzer.toml").write_text('fail_on = "sometimes"\n')
    with pytest.raises(ValueError, match="fail_on"):
        load_config()
