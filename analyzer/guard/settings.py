"""``[tool.analyzer.guard]``: how strongly each rule blocks, where decisions are logged, how long the
warm server waits for the next call.

```toml
[tool.analyzer.guard]
log = "~/.local/state/analyzer/guard.jsonl"   # the decision log (JSONL); default shown
idle = 900                                    # seconds the warm server stays up without a call

[tool.analyzer.guard.mode]                    # per rule: deny, ask, warn, or auto (the default)
kill-after-ready = "deny"
duplicate-launch = "warn"
```

``auto`` denies only deterministic verdicts (a kill whose pattern matches its own shell, the
relaunch in the same command or the agent: that follows from the command text alone) and asks for
the rest (whether a server is ready and in the user's hands is the world model's reading).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from analyzer.config import Config, ConfigError

Mode = Literal["deny", "ask", "warn", "auto"]
GUARD_RULES = ("over-broad-kill", "kill-after-ready", "duplicate-launch")
"""The rules that judge a command before it runs (the others need its output)."""


class GuardSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: dict[str, Mode] = Field(default_factory=dict)
    """Per rule name; a rule not named is ``auto``."""
    log: str | None = None
    """The decision log; default ``$ANALYZER_GUARD_LOG`` or ``~/.local/state/analyzer/guard.jsonl``."""
    idle: float = 900.0
    """Seconds without a call after which the warm server exits."""

    def mode_of(self, rule: str) -> Mode:
        return self.mode.get(rule, "auto")


def guard_settings(config: Config) -> GuardSettings:
    """The guard's table of ``config``; raises ``ConfigError`` naming the key."""
    try:
        settings = GuardSettings(**config.guard)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{config.source or 'config'}: [tool.analyzer.guard] {where}: {err['msg']}") from exc
    unknown = sorted(set(settings.mode) - set(GUARD_RULES))
    if unknown:
        raise ConfigError(f"{config.source or 'config'}: [tool.analyzer.guard.mode] {unknown[0]!r} is not a "
                          f"guard rule (guard rules: {', '.join(GUARD_RULES)})")
    if settings.log and config.source:
        settings.log = str((Path(config.source).parent / os.path.expanduser(settings.log)).resolve())
    return settings
