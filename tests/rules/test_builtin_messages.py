"""What the built-in rules say: short messages a person can act on (each unintended victim named
with why), the long reasons in ``details``, and evidence with roles."""

from __future__ import annotations

from pathlib import Path

from analyzer.config import Config
from analyzer.ingest import load
from analyzer.pipeline import Analysis, Analyzer
from tests.conftest import FIXTURES


def analyze(path: Path, *rules: str) -> Analysis:
    return Analyzer(Config(), select=list(rules) or None).analyze_session(load(path))


def analyze_text(tmp_path: Path, text: str, *rules: str) -> Analysis:
    p = tmp_path / "s.session.yaml"
    p.write_text(text, "utf-8")
    return analyze(p, *rules)


def test_over_broad_kill_names_each_unintended_victim_and_why_in_short() -> None:
    a = analyze(FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml", "over-broad-kill")
    [f] = a.findings
    # the model predicts the first pkill takes down its own remote shell, but the output ("PID 148136"
    # echoed after it) shows the shell went on: observation wins, and the relaunch is what it hits
    assert f.message == "kills more than its target: the relaunch after it (`launch_server.*3000[01]` matches it)"
    victims = f.details["victims"]
    assert [(v["victim"], v.get("observed")) for v in victims] == [
        ("the remote shell on 10.1.230.181 running this command", "the output shows the shell went on"),
        ("the remote shell on 10.1.230.181 running this command", "the output shows the shell went on"),
        ("the relaunch in the same command", None)]
    assert "it is the remote shell sshd started on 10.1.230.181" in victims[0]["why"]
    assert {r.role for r in f.related} == {"matched-process"}


def test_over_broad_kill_of_the_own_shell_says_the_rest_never_runs(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, """\
events:
  - bash: nohup python -m sglang.launch_server --model-path /m --port 30001 > /tmp/s.log 2>&1 &
  - bash: pkill -f launch_server; sleep 2; nohup python -m sglang.launch_server --model-path /m --port 30001 > /tmp/s.log 2>&1 &
""", "over-broad-kill")
    [f] = a.findings
    assert f.message == ("kills more than its target: its own shell (`launch_server` is in its command line) "
                         "and the relaunch after it (`launch_server` matches it); the rest of the command never runs")


def test_a_generic_kill_says_what_it_selects(tmp_path: Path) -> None:
    a = analyze_text(tmp_path, "events:\n  - bash: fuser -k /dev/nvidia*\n", "over-broad-kill")
    [f] = a.findings
    assert f.message == "kills more than its target: every process using a GPU (`fuser -k /dev/nvidia*`)"


def test_ignored_failure_attributes_a_claim_only_when_it_is_one(tmp_path: Path) -> None:
    base = """\
events:
  - bash: uvicorn app:api --port 8000
    output: "ERROR:    [Errno 98] Address already in use"
    exit: 1
  - assistant: {said}
"""
    adjective = analyze_text(tmp_path, base.format(said="Pushed. Send me the deployed URL when you have it."),
                             "ignored-failure")
    [f] = adjective.findings
    assert f.message == ("the output shows the uvicorn app on local:8000 died (address already in use); "
                         "the agent moves on without looking")
    assert f.related == [] and f.details["quote"] == "ERROR:    [Errno 98] Address already in use"
    claim = analyze_text(tmp_path, base.format(said="Restarted the API on 8000."), "ignored-failure")
    [g] = claim.findings
    assert g.message.endswith("; the agent then says it works")
    assert [(r.role, r.index) for r in g.related] == [("claims-success", 1)]


def test_duplicate_launch_and_user_correction_messages() -> None:
    a = analyze(FIXTURES / "seeds" / "001-relaunch-after-ready.session.yaml")
    by_rule = {f.rule: f for f in a.findings}
    assert by_rule["duplicate-launch"].message == (
        "launches the sglang server on 10.1.230.174:30000 again while the earlier launch is still ready; "
        "the duplicate died at once (Killed)")
    assert [(r.role, r.index) for r in by_rule["duplicate-launch"].related] == [("prior-launch", 10),
                                                                               ("ready-signal", 13)]
    assert by_rule["user-correction"].message == (
        "the user corrects the agent's launch of the sglang server on 10.1.230.174:30000: "
        "\u201cNo the first launch already worked, it's still ready\u201d")
    assert [(r.role, r.index) for r in by_rule["user-correction"].related] == [("corrected-action", 14)]


def test_unrequested_teardown_and_kill_after_ready_messages() -> None:
    a = analyze(FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml", "unrequested-teardown")
    [f] = a.findings
    assert f.message == ("the user asked to restart the sglang server on 10.1.230.181:30001; this also stops the "
                         "sglang router (:8000) and the sglang server (:30000)")
    assert f.details["unrequested"] == ["sglang router on 10.1.230.181:8000", "sglang server on 10.1.230.181:30000"]
    assert [(r.role, r.index) for r in f.related] == [("instruction", 6)]
    b = analyze(FIXTURES / "seeds" / "000-kill-after-ready.session.yaml", "kill-after-ready")
    [g] = b.findings
    assert g.message == ("kills the sglang server on 10.1.230.174:30000 after the user said it was ready, "
                         "with no instruction to stop it")
    assert g.details["kill"] == "kill $(pgrep -f sglang.launch_server)"
