"""Scoring findings against hand labels: precision and recall of a rule pack on labelled sessions.

A labels file (``labels.yaml``, the schema of ``../shared/corpus/labels.yaml``) says, per session
file, which findings a careful SRE expects (``expect``: rule + anchor), which are debatable
(``tolerate``: neither right nor wrong) and which rules were checked across the whole file
(``forbid``: a finding of such a rule that matches no expect/tolerate anchor is a false positive).
Rules a file does not forbid, expect or tolerate are unscored there: the log does not allow a
judgement.

A finding matches a label when the rule is the same and its anchor is the labelled one: the same
log id (``ref`` or one of ``alt_refs``), or, for a finding in the session's main file, the same
line (``line`` or an ``alt_refs`` entry ``line:N``) unless both sides name different ids (two
calls of one chat message share a line).

Used by ``bench/realworld.py`` and the corpus baseline test; rule authors can score their own pack
on their own labelled sessions the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class LabelError(Exception):
    """The labels file cannot be read or does not follow the schema."""


class Label(BaseModel):
    """One expected or tolerated finding."""

    model_config = ConfigDict(extra="ignore")

    rule: str
    """The rule id, e.g. ``duplicate-launch``."""
    ref: str | None = None
    """The log's id of the anchor (``toolu_…``, ``call_…``, a record ``ts``); None when it has none."""
    ref_kind: Literal["tool_call", "user_message", "line"] = "tool_call"
    """What the anchor is: a tool call, a user turn, or only a line."""
    line: int | None = None
    """1-based line (JSONL, markdown, cast) or record number (JSON documents) of the anchor."""
    alt_refs: list[str] = Field(default_factory=list)
    """Other anchors that count as the same finding: ids, or ``line:N``."""
    note: str = ""
    """The evidence, in the labeller's words."""

    def _alt_lines(self) -> set[int]:
        return {int(a[5:]) for a in self.alt_refs if a.startswith("line:") and a[5:].isdigit()}

    def _ids(self) -> set[str]:
        return {r for r in [self.ref, *self.alt_refs] if r and not r.startswith("line:")}

    def matches(self, finding: Observed) -> bool:
        """Whether ``finding`` is this label's finding (same rule, same anchor)."""
        if finding.rule != self.rule:
            return False
        ids = self._ids()
        if finding.ref is not None and finding.ref in ids:
            return True
        if finding.source is not None or finding.line is None:
            return False
        if finding.line not in {self.line, *self._alt_lines()}:
            return False
        # the same line, but a different call named by id on both sides: another call of that line
        return not (ids and finding.ref is not None and self.ref_kind == "tool_call")


class FileLabels(BaseModel):
    """The labels of one session file."""

    model_config = ConfigDict(extra="ignore")

    file: str
    """Path relative to the corpus folder."""
    format: str = ""
    """The format the labeller saw (not the analyzer's guess)."""
    lifecycle: bool = False
    """The file really launches, probes or stops servers."""
    expect: list[Label] = Field(default_factory=list)
    """Failures that truly happened."""
    tolerate: list[Label] = Field(default_factory=list)
    """Debatable anchors: a finding there is neither right nor wrong."""
    forbid: list[str] = Field(default_factory=list)
    """Rules checked across the whole file: any other finding of them is a false positive."""
    notes: str = ""

    @property
    def negative(self) -> bool:
        """A session in which nothing went wrong: any finding at all is wrong."""
        return not self.expect and not self.tolerate


def load_labels(path: str | Path) -> list[FileLabels]:
    """Read a labels file. Raises ``LabelError`` naming the entry that does not fit the schema."""
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise LabelError(f"{p}: {exc}") from exc
    if not isinstance(doc, list):
        raise LabelError(f"{p}: expected a list of file entries, got {type(doc).__name__}")
    out = []
    for i, entry in enumerate(doc, 1):
        try:
            out.append(FileLabels.model_validate(entry))
        except ValidationError as exc:
            raise LabelError(f"{p}: entry {i}: {exc}") from exc
    return out


@dataclass(frozen=True)
class Observed:
    """A finding as ``analyzer check --format json`` reports it, reduced to what scoring reads."""

    file: str
    rule: str
    message: str
    index: int | None = None
    ref: str | None = None
    line: int | None = None
    source: str | None = None
    """The file the anchor is in when it is not the session's main file (a sub-agent file)."""

    @property
    def where(self) -> str:
        """The anchor in a few characters: ``L942 toolu_01RV…``."""
        parts = [f"L{self.line}" if self.line is not None else "", self.ref or ""]
        return " ".join(p for p in parts if p) or f"#{self.index}"

    @classmethod
    def from_json(cls, file: str, finding: Mapping[str, Any]) -> Observed:
        anchor = finding.get("anchor") or {}
        return cls(file=file, rule=str(finding.get("rule")), message=str(finding.get("message", "")),
                   index=anchor.get("index"), ref=anchor.get("ref"), line=anchor.get("line"),
                   source=anchor.get("source"))


@dataclass
class FileScore:
    """How the findings of one labelled file compare with its labels."""

    labels: FileLabels
    findings: list[Observed]
    error: str | None = None
    """Why the file could not be analyzed (every expected finding is then missed)."""
    true: list[tuple[Label, list[Observed]]] = field(default_factory=list)
    """Expected labels found, with the findings that matched each."""
    false: list[Observed] = field(default_factory=list)
    """Findings of a forbidden rule matching no label."""
    missed: list[Label] = field(default_factory=list)
    tolerated: list[Observed] = field(default_factory=list)
    unscored: list[Observed] = field(default_factory=list)
    """Findings of rules the file does not judge."""


def score_file(labels: FileLabels, findings: Iterable[Observed], error: str | None = None) -> FileScore:
    """Compare one file's findings with its labels."""
    fs = FileScore(labels, list(findings), error)
    used: set[int] = set()
    for label in labels.expect:
        hits = [f for f in fs.findings if label.matches(f)]
        if hits:
            fs.true.append((label, hits))
            used.update(id(f) for f in hits)
        else:
            fs.missed.append(label)
    for f in fs.findings:
        if id(f) in used:
            continue
        if any(t.matches(f) for t in labels.tolerate):
            fs.tolerated.append(f)
        elif f.rule in labels.forbid:
            fs.false.append(f)
        else:
            fs.unscored.append(f)
    return fs


@dataclass
class Tally:
    """Counts for one rule, or all rules."""

    tp: int = 0
    fp: int = 0
    missed: int = 0
    tolerated: int = 0
    unscored: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.missed) if self.tp + self.missed else None


@dataclass
class Score:
    """The scores of every labelled file."""

    files: list[FileScore]

    def tally(self, rule: str | None = None) -> Tally:
        """Counts over every file, for one rule or (None) all of them."""
        t = Tally()

        def keep(r: str) -> bool:
            return rule is None or r == rule

        for fs in self.files:
            t.tp += sum(keep(label.rule) for label, _ in fs.true)
            t.fp += sum(keep(f.rule) for f in fs.false)
            t.missed += sum(keep(label.rule) for label in fs.missed)
            t.tolerated += sum(keep(f.rule) for f in fs.tolerated)
            t.unscored += sum(keep(f.rule) for f in fs.unscored)
        return t

    def rules(self) -> list[str]:
        """Every rule that a label names or a finding carries, sorted."""
        names = {label.rule for fs in self.files for label in [*fs.labels.expect, *fs.labels.tolerate]}
        names |= {r for fs in self.files for r in fs.labels.forbid}
        names |= {f.rule for fs in self.files for f in fs.findings}
        return sorted(names)

    def noisy_negatives(self) -> list[FileScore]:
        """Negative sessions (nothing expected or tolerated) that got a finding anyway."""
        return [fs for fs in self.files if fs.labels.negative and fs.findings]


def score(labels: Iterable[FileLabels], findings_by_file: Mapping[str, list[Observed]],
          errors: Mapping[str, str] | None = None) -> Score:
    """Score every labelled file; ``findings_by_file`` and ``errors`` are keyed by ``FileLabels.file``."""
    errors = errors or {}
    return Score([score_file(fl, findings_by_file.get(fl.file, []), errors.get(fl.file)) for fl in labels])


def score_check_document(labels: list[FileLabels], doc: Mapping[str, Any], root: str | Path) -> Score:
    """Score an ``analyzer check --format json`` document whose session paths lie under ``root``
    (the folder the labels' ``file`` paths are relative to). A labelled file with an error
    diagnostic, or refused whole, is scored with its error noted."""
    base = Path(root).resolve()

    def key(path: Any) -> str | None:
        try:
            return Path(str(path)).resolve().relative_to(base).as_posix()
        except ValueError:
            return None

    wanted = {fl.file for fl in labels}
    findings: dict[str, list[Observed]] = {k: [] for k in wanted}
    errors: dict[str, str] = {}
    for s in doc.get("sessions") or []:
        k = key(s.get("path"))
        if k not in wanted:
            continue
        findings[k] += [Observed.from_json(k, f) for f in s.get("findings") or []]
        lost = [d for d in s.get("diagnostics") or [] if d.get("level") == "error"]
        if lost:
            errors.setdefault(k, f"{len(lost)} error diagnostic(s), first: {lost[0].get('message')}")
    for e in doc.get("errors") or []:
        k = key(e.get("path"))
        if k in wanted:
            errors[k] = str(e.get("message"))
    return score(labels, findings, errors)


__all__ = ["FileLabels", "FileScore", "Label", "LabelError", "Observed", "Score", "Tally", "load_labels",
           "score", "score_check_document", "score_file"]
