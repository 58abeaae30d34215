"""Project configuration: ``[tool.analyzer]`` in ``pyproject.toml`` or the top level of
``analyzer.toml``, found from the current folder upwards (``analyzer.toml`` wins).

```toml
[tool.analyzer]
select = ["kill-after-ready", "lifecycle"]    # rule names or groups; default: all
ignore = ["user-correction"]
rules_dir = ["my_rules"]                      # extra rule folders, relative to this file
fail_on = "medium"
exclude = ["**/scratch/**"]                    # session paths to skip (globs, relative to this file)
baseline = "analyzer-baseline.json"           # accepted findings (``check --write-baseline``)

[tool.analyzer.severity]
duplicate-launch = "low"                      # a rule or a group

[tool.analyzer.options.over-broad-kill]
flag_generic = false                           # see `analyzer rules explain over-broad-kill`

[tool.analyzer.catalog.my-server]             # a server kind, same keys as catalog.yaml
programs = ["my-server"]
port_flags = ["--listen-port"]
default_port = 9000
ready = ["listening"]
```
"""

from __future__ import annotations

import contextlib
import re
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ConfigError(ValueError):
    """The config file is malformed; the message names the file and the key."""


class Config(BaseModel):
    # validated when a config file is read; the defaults of a run without one are made with
    # ``model_construct`` (``load_config``), so such a run does not build the validator at all
    model_config = ConfigDict(extra="forbid", defer_build=True)

    select: list[str] = Field(default_factory=list)
    """Rule names or groups to run; empty means all."""
    ignore: list[str] = Field(default_factory=list)
    """Rule names or groups not to run."""
    severity: dict[str, Literal["low", "medium", "high"]] = Field(default_factory=dict)
    """Severity overrides by rule or group name."""
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per-rule options."""
    catalog: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Server kinds added to or overriding the built-in catalog."""
    rules_dir: list[str] = Field(default_factory=list)
    """Extra folders of rules."""
    exclude: list[str] = Field(default_factory=list)
    """Glob patterns of session paths to skip."""
    fail_on: Literal["low", "medium", "high"] | None = None
    """Default for ``check --fail-on``."""
    baseline: str | None = None
    """Baseline file of accepted findings (resolved against the config's folder)."""
    guard: dict[str, Any] = Field(default_factory=dict)
    """``[tool.analyzer.guard]``: the live guard's modes, log and idle time (validated by
    ``analyzer.guard.settings``)."""
    source: str | None = None
    """The file this config was read from (set by the loader)."""

    def excluded(self, path: str | Path) -> bool:
        """Whether a session path matches an ``exclude`` glob. Globs match the path as given, its
        absolute form, and the path relative to the config's folder; ``**`` spans folders."""
        if not self.exclude:
            return False
        p = Path(path)
        forms = {p.as_posix(), p.resolve().as_posix()}
        if self.source:
            with contextlib.suppress(ValueError):  # a session outside the config's folder
                forms.add(p.resolve().relative_to(Path(self.source).parent.resolve()).as_posix())
        return any(_glob(g).match(f) for g in self.exclude for f in forms)

    def excluded_remote(self, url: str, relative: str) -> bool:
        """``excluded`` for a session listed under a URL: the globs match the URL and the path
        relative to the URL given (``relative``)."""
        return any(_glob(g).match(f) for g in self.exclude for f in (url, relative))


@cache
def _glob(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex, gitignore-like: ``**/`` is zero or more folders, ``*`` and ``?``
    stay within one, and a pattern without ``/`` matches a file or folder name anywhere."""
    pattern = pattern.removeprefix("./")
    if "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?$")  # a folder pattern covers what is under it


def find_config(start: Path | None = None) -> Path | None:
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in ("analyzer.toml", "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file():
                if name == "analyzer.toml":
                    return candidate
                import tomllib  # here, not at the top: ~3 ms of every call that has no config file

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
        return Config.model_construct()  # the defaults, as Config() makes them, unvalidated: nothing to check
    import tomllib

    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    section = data if path.name == "analyzer.toml" else data.get("tool", {}).get("analyzer", {})
    if isinstance(section, dict):
        for key in ("rules_dir", "rules-dir", "exclude", "select", "ignore"):
            if isinstance(section.get(key), str):
                section[key] = [section[key]]
    table = "" if path.name == "analyzer.toml" else "[tool.analyzer] "
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: {table or 'analyzer config '}must be a table")
    try:
        cfg = Config(**{k.replace("-", "_") if k in ("rules-dir", "fail-on") else k: v
                        for k, v in section.items()})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: {table}{where}: {err['msg']}") from exc
    cfg.rules_dir = [str((path.parent / d).resolve()) for d in cfg.rules_dir]
    if cfg.baseline:
        cfg.baseline = str((path.parent / cfg.baseline).resolve())
    cfg.source = str(path)
    return cfg
