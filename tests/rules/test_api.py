"""The rule API: metadata validation with errors naming the file, docstring sections, findings
with anchors and roles, and fingerprints that stay put."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from pydantic import BaseModel

from analyzer.events import Session
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.world import World
from analyzer.rules import Finding, Rule, RuleMetadataError, Severity, Status
from analyzer.rules.api import doc_sections
from analyzer.rules.loader import load_rules

DOC = """Flags a thing.

    What it does:
        Looks at kills.

    Why is this bad:
        It costs time.

    Known false positives:
        None known.
    """


def make_rule(**attrs: object) -> type[Rule]:
    def check(self: Rule, world: World) -> Iterable[Finding]:
        return []

    body: dict[str, object] = {"__doc__": DOC, "name": "my-rule", "severity": Severity.low,
                               "summary": "A thing.", "groups": ("custom",), "check": check}
    body.update(attrs)
    return type("MyRule", (Rule,), body)


def test_valid_metadata_passes_and_strings_become_enums() -> None:
    cls = make_rule(severity="high", status="stable")
    cls.validate_metadata("rules/my_rule.py")
    assert cls.severity is Severity.high and cls.status is Status.stable


@pytest.mark.parametrize(("attrs", "problem"), [
    ({"name": "MyRule"}, "name 'MyRule' must be kebab-case"),
    ({"name": "my_rule"}, "must be kebab-case"),
    ({"severity": "critical"}, "severity 'critical' must be one of low, medium, high"),
    ({"status": "beta"}, "status 'beta' must be experimental or stable"),
    ({"summary": ""}, "summary is empty"),
    ({"groups": "lifecycle"}, "groups 'lifecycle' must be a tuple"),
    ({"groups": ("Life Cycle",)}, "must be a tuple of kebab-case names"),
    ({"__doc__": "Flags a thing.\n\nWhat it does: x\n"}, "'Why is this bad', 'Known false positives'"),
    ({"check": Rule.check}, "does not define check"),
])
def test_bad_metadata_is_reported_with_the_file(attrs: dict[str, object], problem: str) -> None:
    with pytest.raises(RuleMetadataError) as err:
        make_rule(**attrs).validate_metadata("my_rules/thing.py")
    assert str(err.value).startswith("my_rules/thing.py: rule MyRule: ")
    assert problem in str(err.value)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(RuleMetadataError) as err:
        make_rule(name="Bad Name", severity="huge", summary="").validate_metadata("x.py")
    assert str(err.value).count(";") == 2


def test_options_need_defaults() -> None:
    class Options(BaseModel):
        limit: int

    with pytest.raises(RuleMetadataError, match=r"option\(s\) limit need a default"):
        make_rule(Options=Options).validate_metadata("x.py")


def test_options_are_typed_and_checked() -> None:
    class Options(BaseModel):
        limit: int = 3

    cls = make_rule(Options=Options)
    assert cls(options={"limit": "5"}).options.limit == 5  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="limit"):
        cls(options={"limit": "many"})


def test_doc_sections_split_titles_inline_and_on_their_own_line() -> None:
    sections = doc_sections("""Head.

        What it does: inline start
            continues
        Why is this bad:
            Because.

            Second paragraph.
        Known false positives:
        How to avoid it:
            Probe first.
        """)
    assert sections == {"": "Head.", "What it does": "inline start\ncontinues",
                        "Why is this bad": "Because.\n\nSecond paragraph.", "Known false positives": "",
                        "How to avoid it": "Probe first."}


def test_builtin_rules_document_every_section() -> None:
    ruleset = load_rules(entry_point_packs=False)
    assert sorted(ruleset.rules) == ["duplicate-launch", "ignored-failure", "kill-after-ready",
                                     "over-broad-kill", "unrequested-teardown", "user-correction"]
    for lr in ruleset.rules.values():
        sections = lr.cls.doc_sections()
        assert all(sections[s] for s in ("What it does", "Why is this bad", "Known false positives")), lr.cls.name


# -- findings and fingerprints -------------------------------------------------------------------

KILL_AFTER_READY = """\
agent: claude-code
events:
  - user: Start the API on port 8000
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: '{"ok": true}'
  - user: Ready
  - bash: pkill -f "uvicorn app:api"
"""


def findings(session: Session) -> list[Finding]:
    from analyzer.rules.engine import run_rules

    rule = load_rules(entry_point_packs=False).rules["kill-after-ready"].cls()
    return run_rules(build_world(session), [rule]).findings


def session_of(tmp_path: Path, text: str, name: str = "s.session.yaml") -> Session:
    p = tmp_path / name
    p.write_text(text, "utf-8")
    return load(p)


def test_a_finding_points_at_its_anchor_and_evidence_with_roles(tmp_path: Path) -> None:
    [f] = findings(session_of(tmp_path, KILL_AFTER_READY))
    assert (f.rule, f.severity, f.instance) == ("kill-after-ready", Severity.high, "local:8000")
    assert (f.anchor.index, f.anchor.line) == (4, 8)
    assert [(r.role, r.index, r.line) for r in f.related] == [("ready-signal", 3, 7), ("launch", 1, 4)]
    assert f.message == "kills the uvicorn app on local:8000 after the user said it was ready, " \
                        "with no instruction to stop it"


def test_fingerprint_is_stable_across_runs_and_unrelated_edits(tmp_path: Path) -> None:
    base = findings(session_of(tmp_path, KILL_AFTER_READY))[0].fingerprint
    again = findings(session_of(tmp_path, KILL_AFTER_READY, "again.session.yaml"))[0].fingerprint
    edited = KILL_AFTER_READY.replace(
        "  - user: Ready\n",
        "  - user: also fix the typo in the README\n  - tool: Edit\n    input: {file_path: README.md}\n"
        "    output: ok\n  - assistant: Fixed the typo.\n  - user: Ready\n")
    [moved] = findings(session_of(tmp_path, edited, "edited.session.yaml"))
    assert moved.anchor.index == 7  # three events earlier in the log now
    assert base == again == moved.fingerprint
    killed_otherwise = KILL_AFTER_READY.replace('pkill -f "uvicorn app:api"', "fuser -k 8000/tcp")
    assert findings(session_of(tmp_path, killed_otherwise, "other.session.yaml"))[0].fingerprint != base
