"""The whole pipeline for one session: load → world → rules. What ``check``, ``report`` and
``batch`` share, and the public ``analyze()``.

``check`` and ``batch`` read a file with ``load_all()`` and analyze each session in it on its own
(a file may hold several: concatenated Gemini stream-json runs); ``partial_read()`` says when a
session is too little of its file to count as read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from analyzer.config import Config, ConfigError, load_config
from analyzer.events import Diagnostic, Level, Session
from analyzer.ingest import load
from analyzer.lifecycle.catalog import Catalog, CatalogError, default_catalog
from analyzer.lifecycle.world import World
from analyzer.rules.api import Finding, Rule
from analyzer.rules.engine import RunResult, run_rules, select_rules
from analyzer.rules.loader import RuleSet, load_rules


@dataclass
class Analysis:
    """One analyzed session."""

    session: Session
    world: World
    findings: list[Finding]
    suppressed: list[tuple[Finding, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Rule crashes, bad suppressions, rule packs that failed to load."""


@dataclass
class Analyzer:
    """Rules and catalog loaded once, reused for many sessions (batch)."""

    config: Config = field(default_factory=Config)
    select: list[str] | None = None
    ignore: list[str] | None = None
    extra_rules_dirs: list[str] = field(default_factory=list)
    ruleset: RuleSet = field(init=False)
    rules: list[Rule] = field(init=False)
    catalog: Catalog = field(init=False)

    def __post_init__(self) -> None:
        """Raises ``ConfigError`` (bad catalog kinds) or ``SelectionError`` (unknown rule names)."""
        try:
            # the config's server kinds reach every world this analyzer builds
            self.catalog = Catalog.load(self.config.catalog) if self.config.catalog else default_catalog()
        except CatalogError as exc:
            raise ConfigError(f"{self.config.source or 'config'}: [catalog] {exc}") from exc
        self.ruleset = load_rules([*self.config.rules_dir, *self.extra_rules_dirs])
        self.rules = select_rules(self.ruleset, self.config, self.select, self.ignore)

    @property
    def warnings(self) -> list[str]:
        """Rule packs or files that failed to load (the other rules still run)."""
        return list(self.ruleset.warnings)

    def analyze_session(self, session: Session) -> Analysis:
        from analyzer.lifecycle.build import build_world  # the walk and its parsers load on first use

        world = build_world(session, self.catalog)
        result: RunResult = run_rules(world, self.rules, known=set(self.ruleset.rules))
        return Analysis(session, world, result.findings, result.suppressed,
                        [*self.ruleset.warnings, *result.problems])


def analyze(source: str | Path | Session, config: Config | None = None,
            select: list[str] | None = None, ignore: list[str] | None = None) -> Analysis:
    """Load (if given a path), rebuild the world and run the rules."""
    session = source if isinstance(source, Session) else load(source)
    return Analyzer(config or load_config(), select, ignore).analyze_session(session)


def partial_read(session: Session) -> str | None:
    """When most of the session's records were lost: "read 1 of 87 records (86 lost)", also added to
    its diagnostics as an error (once). None when most were read. No findings in such a session
    means nothing: it is reported as not read, not as clean."""
    c = session.counts
    if not c.records or c.lost * 2 <= c.records:
        return None
    message = f"read {max(c.records - c.lost, 0)} of {c.records} records ({c.lost} lost)"
    if not any(d.message == message for d in session.diagnostics):
        session.diagnostics.append(Diagnostic(level=Level.error, message=message))
        c.diagnostics = len(session.diagnostics)
    return message
