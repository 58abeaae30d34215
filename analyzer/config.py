"""Project configuration: ``[tool.analyzer]`` in ``pyproject.toml`` or the top level of
``analyzer.toml``, found from the current folder upwards (``analyzer.toml`` wins).

```toml
[tool.analyzer]
select = ["kill-after-ready", "lifecycle"]    # rule names or groups; default: all
ignore = ["user-correction"]
rules_dir = ["my_rules"]                      # extra rule folders, relative to this file
fail_on = "medium"
exclude = ["**/scratch/**"]                    # session paths to skip (globs)

[tool.analyzer.severity]
duplicate-launch = "low"

[tool.analyzer.options.over-broad-kill]
generic_names = ["node", "python", "bash", "zsh"]

[tool.analyzer.catalog.my-server]             # a server kind, same keys as catalog.yaml
programs = ["my-server"]
port_flags = ["--listen-port"]
default_port = 9000
ready = ["listening"]
```
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ConfigError(ValueError):
    """The config file is malformed; the message names the file and the key."""


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid")

    select: list[str] = Field(default_factory=list)
    """Rule names or groups to run; empty means all."""
    ignore: list[str] = Field(default_factory=list)
    """Rule names or groups not to run."""
    severity: dict[str, str] = Field(default_factory=dict)
    """Per-rule severity overrides."""
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-rule options."""
    catalog: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Server kinds added to or overriding the built-in catalog."""
    rules_dir: list[str] = Field(default_factory=list)
    """Extra folders of rules."""
    exclude: list[str] = Field(default_factory=list)
    """Glob patterns of session paths to skip."""
    fail_on: str | None = None
    """Default for ``check --fail-on``."""
    baseline: str | None = None
    """Baseline file of accepted findings."""
    source: str | None = None
    """The file this config was read from (set by the loader)."""


def find_config(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in ("analyzer.toml", "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file():
                if name == "analyzer.toml":
                    return candidate
                try:
                    if "analyzer" in tomllib.loads(candidate.read_text("utf-8")).get("tool", {}):
                        return candidate
                except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                    return candidate  # report it when loading
    return None


def load_config(path: Path | None = None) -> Config:
    """The config at ``path`` (or found from the current folder); defaults when there is none."""
    path = path or find_config()
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    section = data if path.name == "analyzer.toml" else data.get("tool", {}).get("analyzer", {})
    if "rules-dir" in section:
        section["rules_dir"] = section.pop("rules-dir")
    if isinstance(section.get("rules_dir"), str):
        section["rules_dir"] = [section["rules_dir"]]
    try:
        cfg = Config(**section)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: [tool.analyzer] {where}: {err['msg']}") from exc
    cfg.rules_dir = [str((path.parent / d).resolve()) for d in cfg.rules_dir]
    cfg.source = str(path)
    return cfg
