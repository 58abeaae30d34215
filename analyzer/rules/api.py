"""The rule API: what a rule author writes against.

```python
from analyzer.rules import Rule, Severity

class KillAfterReady(Rule):
    '''Flags a kill of a server the user has in hand.

    What it does: …
    Why is this bad: …
    Known false positives: …
    '''
    name = "kill-after-ready"
    severity = Severity.high
    groups = ("lifecycle",)
    summary = "A kill hits a server the user said was ready."

    def check(self, world):
        for kill in world.kills():
            ...
            yield self.finding(world, anchor=kill.event, message="…", related=[("ready-signal", 12)])
```
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from analyzer.events import Event, ToolEvent, UserEvent

if TYPE_CHECKING:
    from analyzer.lifecycle.world import World

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
REQUIRED_SECTIONS = ("What it does", "Why is this bad", "Known false positives")
OPTIONAL_SECTIONS = ("How to avoid it", "Example")


_RANKS = {"low": 1, "medium": 2, "high": 3}


def severity_rank(severity: str) -> int:
    """1 (low) to 3 (high) for a severity or its name; 0 for anything else."""
    return _RANKS.get(severity, 0)


class Severity(StrEnum):
    low = "low"
    medium = "medium"
    high = "high"

    @property
    def rank(self) -> int:
        return severity_rank(self.value)


class Status(StrEnum):
    experimental = "experimental"
    stable = "stable"


# Findings, their anchors and related events are built on first use (``defer_build``): a check
# with no finding (most sessions) does not pay for their validators (~1.5 ms of every call).
class EventRef(BaseModel):
    """Where a finding points in the log."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    index: int
    """Event index in the timeline."""
    ref: str | None = None
    """The log's own id of the record."""
    line: int | None = None
    """1-based line (or record number) in ``source`` or the session file."""
    source: str | None = None
    """The file, when not the session's main file (sub-agent files)."""


class Related(EventRef):
    role: str
    """What the event is to the finding: ``ready-signal``, ``prior-launch``, ``matched-process``…"""


class Finding(BaseModel):
    """One thing that went wrong, with the evidence to check it."""

    model_config = ConfigDict(defer_build=True)

    rule: str
    severity: Severity
    message: str
    """What happened and what to do, in a sentence or two a person can act on."""
    anchor: EventRef
    """The event that went wrong."""
    related: list[Related] = Field(default_factory=list)
    """Evidence events, each with its role."""
    instance: str | None = None
    """The server instance (``World.instances`` key), when it is about one."""
    fingerprint: str = ""
    """Stable id: the same problem in the same session gets the same fingerprint across runs."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Rule-specific structured data (victims, matched spans) for reports."""


class RuleMetadataError(ValueError):
    """A rule's metadata is invalid; the message names the rule's file."""


class Rule:
    """Base class of every rule. Subclasses set the metadata class attributes and ``check``."""

    name: ClassVar[str] = ""
    """Kebab-case id; tools and people key on it."""
    severity: ClassVar[Severity] = Severity.medium
    status: ClassVar[Status] = Status.experimental
    groups: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""
    """One line for `analyzer rules list`."""

    class Options(BaseModel):
        """Typed options with defaults; set from config ``[tool.analyzer.options.<name>]``."""

        model_config = ConfigDict(extra="forbid")

    def __init__(self, options: dict[str, Any] | None = None, severity: Severity | None = None) -> None:
        self.options = self.Options(**(options or {}))
        self.effective_severity = severity or self.severity

    # -- for rule authors --------------------------------------------------------------------

    def check(self, world: World) -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        world: World,
        *,
        anchor: int,
        message: str,
        related: Sequence[tuple[str, int]] = (),
        instance: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> Finding:
        """A finding anchored at event ``anchor`` with ``related`` ``(role, event index)`` pairs."""
        ev = world.event(anchor)
        rel = []
        for role, idx in related:
            r = world.event(idx)
            rel.append(Related(role=role, index=idx, ref=r.ref, line=r.line, source=r.source))
        return Finding(
            rule=self.name, severity=self.effective_severity, message=message,
            anchor=EventRef(index=anchor, ref=ev.ref, line=ev.line, source=ev.source),
            related=rel, instance=instance, fingerprint=fingerprint(self.name, instance, ev),
            details=details or {},
        )

    # -- metadata ----------------------------------------------------------------------------

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring's sections ("What it does", …) as text."""
        return doc_sections(cls.__doc__ or "")

    @classmethod
    def validate_metadata(cls, where: str) -> None:
        """Check the declarative metadata; raise ``RuleMetadataError`` naming ``where`` (the file)
        and every problem found, so an author fixes them in one go."""
        problems = []
        if not isinstance(cls.name, str) or not _NAME.match(cls.name):
            problems.append(f"name {cls.name!r} must be kebab-case (like 'kill-after-ready')")
        if not isinstance(cls.severity, Severity):
            try:
                cls.severity = Severity(cls.severity)
            except ValueError:
                problems.append(f"severity {cls.severity!r} must be one of low, medium, high")
        if not isinstance(cls.status, Status):
            try:
                cls.status = Status(cls.status)
            except ValueError:
                problems.append(f"status {cls.status!r} must be experimental or stable")
        if not isinstance(cls.summary, str) or not cls.summary.strip():
            problems.append("summary is empty (one line for `analyzer rules list`)")
        if not isinstance(cls.groups, tuple | list) or not all(
                isinstance(g, str) and _NAME.match(g) for g in cls.groups):
            problems.append(f"groups {cls.groups!r} must be a tuple of kebab-case names")
        sections = cls.doc_sections()
        missing = [s for s in REQUIRED_SECTIONS if not sections.get(s)]
        if missing:
            problems.append("docstring lacks section(s): " + ", ".join(repr(s) for s in missing))
        if not (isinstance(cls.Options, type) and issubclass(cls.Options, BaseModel)):
            problems.append("Options must be a pydantic BaseModel subclass")
        else:
            required = [n for n, f in cls.Options.model_fields.items() if f.is_required()]
            if required:
                problems.append(f"option(s) {', '.join(required)} need a default")
        if cls.check is Rule.check:
            problems.append("it does not define check(self, world)")
        if problems:
            raise RuleMetadataError(f"{where}: rule {cls.__name__}: " + "; ".join(problems))


def doc_sections(doc: str) -> dict[str, str]:
    """Split a docstring into its sections: the text before the first title under ``""``, then
    each known title (``What it does:`` alone on its line, or followed by text) with its body,
    dedented."""
    import inspect
    import textwrap

    titles = (*REQUIRED_SECTIONS, *OPTIONAL_SECTIONS)
    head = re.compile(rf"^({'|'.join(re.escape(t) for t in titles)})\s*:\s*(.*)$")
    inline: dict[str, str] = {"": ""}
    body: dict[str, list[str]] = {"": []}
    current = ""
    for line in inspect.cleandoc(doc).splitlines():
        m = head.match(line)
        if m:
            current = m.group(1)
            inline[current], body[current] = m.group(2).strip(), []
        else:
            body[current].append(line)
    return {title: "\n".join(p for p in (inline[title], textwrap.dedent("\n".join(lines)).strip()) if p)
            for title, lines in body.items()}


def _event_text(ev: Event) -> str:
    if isinstance(ev, ToolEvent):
        return ev.command if ev.command is not None else f"{ev.name}:{sorted(ev.input.items())!r}"
    if isinstance(ev, UserEvent):
        return ev.text
    return getattr(ev, "text", "")


def and_list(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: how a finding's message lists the servers it names."""
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def fingerprint(rule: str, instance: str | None, ev: Event) -> str:
    """Stable across runs and unrelated edits to the log: rule, instance and the anchor's own text
    (whitespace folded), not its position."""
    text = " ".join(_event_text(ev).split())
    h = hashlib.sha1(f"{rule}\x00{instance or ''}\x00{ev.agent}\x00{text}".encode()).hexdigest()
    return h[:16]
