"""Configuration: ``[tool.analyzer]`` in pyproject.toml or ``analyzer.toml``, errors naming the
file and key, exclude globs, and catalog additions reaching the world a rule sees."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.config import Config, ConfigError, find_config, load_config
from analyzer.ingest import load
from analyzer.pipeline import Analyzer


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def test_pyproject_tool_analyzer_section(tmp_path: Path) -> None:
    p = write(tmp_path / "pyproject.toml", """\
[project]
name = "x"

[tool.analyzer]
select = ["lifecycle"]
ignore = "user-correction"
rules-dir = "my_rules"
fail-on = "high"
baseline = "ci/baseline.json"

[tool.analyzer.severity]
duplicate-launch = "low"

[tool.analyzer.options.over-broad-kill]
flag_generic = false
""")
    cfg = load_config(p)
    assert cfg.select == ["lifecycle"] and cfg.ignore == ["user-correction"]
    assert cfg.rules_dir == [str((tmp_path / "my_rules").resolve())]
    assert cfg.baseline == str((tmp_path / "ci" / "baseline.json").resolve())
    assert (cfg.fail_on, cfg.severity, cfg.options) == ("high", {"duplicate-launch": "low"},
                                                        {"over-broad-kill": {"flag_generic": False}})
    assert cfg.source == str(p)


def test_analyzer_toml_wins_and_is_found_from_a_subfolder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "pyproject.toml", "[tool.analyzer]\nselect = ['lifecycle']\n")
    write(tmp_path / "analyzer.toml", "select = ['coordination']\n")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    assert find_config() == tmp_path / "analyzer.toml"
    assert load_config().select == ["coordination"]


def test_a_pyproject_without_the_section_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n")
    assert find_config(tmp_path) is None


@pytest.mark.parametrize(("name", "text", "message"), [
    ("analyzer.toml", "fail_on = 'critical'\n", "analyzer.toml: fail_on: Input should be 'low', 'medium' or 'high'"),
    ("analyzer.toml", "selec = ['x']\n", "analyzer.toml: selec: Extra inputs are not permitted"),
    ("pyproject.toml", "[tool.analyzer.severity]\nduplicate-launch = 'urgent'\n",
     "pyproject.toml: [tool.analyzer] severity.duplicate-launch: Input should be 'low', 'medium' or 'high'"),
    ("analyzer.toml", "select = [\n", "analyzer.toml: cannot read config"),
])
def test_config_errors_name_the_file_and_the_key(tmp_path: Path, name: str, text: str, message: str) -> None:
    p = write(tmp_path / name, text)
    with pytest.raises(ConfigError) as err:
        load_config(p)
    assert str(err.value).startswith(f"{tmp_path}/{message}")


@pytest.mark.parametrize(("pattern", "path", "excluded"), [
    ("**/scratch/**", "scratch/a.jsonl", True),
    ("**/scratch/**", "/data/logs/scratch/deep/a.jsonl", True),
    ("**/scratch/**", "scratchpad/a.jsonl", False),
    ("*.cast", "logs/demo.cast", True),
    ("*.cast", "logs/demo.jsonl", False),
    ("logs/old-*.jsonl", "logs/old-1.jsonl", True),
    ("logs/old-*.jsonl", "logs/sub/old-1.jsonl", False),
    ("private", "a/private/b.jsonl", True),
])
def test_exclude_globs(tmp_path: Path, pattern: str, path: str, excluded: bool) -> None:
    assert Config(exclude=[pattern]).excluded(path) is excluded


def test_exclude_globs_are_relative_to_the_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(write(tmp_path / "analyzer.toml", "exclude = ['logs/old-*.jsonl']\n"))
    monkeypatch.chdir(tmp_path / "..")
    assert cfg.excluded(tmp_path / "logs" / "old-3.jsonl")
    assert not cfg.excluded(tmp_path / "logs" / "new-3.jsonl")


CUSTOM_SERVER = """\
events:
  - bash: nohup ./bin/inferd --listen-port 9100 > /tmp/inferd.log 2>&1 &
  - bash: curl -sf localhost:9100/healthz
    output: ok
  - user: Ready
  - bash: pkill -f inferd
"""


def test_catalog_additions_reach_the_world_and_the_rules(tmp_path: Path) -> None:
    session = load(write(tmp_path / "s.session.yaml", CUSTOM_SERVER))
    plain = Analyzer(Config(), select=["kill-after-ready"]).analyze_session(session)
    # unlisted, it is a generic server (its port flag and `&` show it); the entry gives it its kind
    assert [(i.id, i.server) for i in plain.world.instances.values()] == [("local:9100", "server")]

    cfg = Config(catalog={"inferd": {"label": "inferd server", "programs": ["inferd"],
                                     "port_flags": ["--listen-port"], "health": ["/healthz"]}})
    a = Analyzer(cfg, select=["kill-after-ready"]).analyze_session(session)
    assert list(a.world.instances) == ["local:9100"]
    assert (a.world.instances["local:9100"].server, a.world.instances["local:9100"].label) == ("inferd", "inferd server")
    assert [(f.rule, f.anchor.index) for f in a.findings] == [("kill-after-ready", 3)]  # the pkill


def test_a_bad_catalog_entry_is_a_config_error(tmp_path: Path) -> None:
    cfg = Config(catalog={"inferd": {"programs": "inferd", "ready": ["("]}}, source="analyzer.toml")
    with pytest.raises(ConfigError, match=r"^analyzer.toml: \[catalog\] catalog kind 'inferd': "):
        Analyzer(cfg)


def test_the_documented_example_config_loads_and_every_rule_accepts_its_options(tmp_path: Path) -> None:
    import re

    import analyzer.config

    example = re.search(r"```toml\n(.*?)```", analyzer.config.__doc__ or "", re.S)
    assert example is not None
    cfg = load_config(write(tmp_path / "pyproject.toml", "[project]\nname = \"x\"\n\n" + example.group(1)))
    (tmp_path / "my_rules").mkdir()
    engine = Analyzer(cfg)  # a rule that rejects its options makes this a config error
    assert not [w for w in engine.warnings if "option" in w.lower()]
