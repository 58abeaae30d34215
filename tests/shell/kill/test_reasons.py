"""A hit's why is data; every sentence is written from it (reasons.py), and the parts add up to it."""

from __future__ import annotations

from analyzer.shell.kill import HitReason, agent_process, harness_frame, parts, sentence
from analyzer.shell.kill.model import Above
from analyzer.shell.kill.reasons import excerpt
from tests.shell.kill.helpers import run, server

SEED_002 = 'pkill -9 -f "launch_server.*3000[01]"; python3 -m sglang.launch_server --port 30001 &'


def test_the_calling_shell_and_the_server_carry_why_as_fields() -> None:
    (v,) = run(SEED_002, [server(30001)], harness=harness_frame("claude-code", SEED_002))
    srv, shell = v.victims
    assert (srv.why.mechanism, srv.why.matched, srv.why.calling_shell) == ("pkill", "command line", False)
    assert srv.why.subject is not None and srv.why.span is not None
    assert srv.why.subject[srv.why.span[0] : srv.why.span[1]] == "launch_server --model-path /m --port 30001"
    assert shell.why.calling_shell and shell.why.above == Above(kind="harness")
    assert shell.why.fate == "dies-with-its-commands" and shell.why.signal_name == "KILL"


def test_the_agent_is_a_field_not_a_phrase() -> None:
    (v,) = run("pkill node", [agent_process("claude-code")])
    (hit,) = v.victims
    assert hit.why.agent and hit.why.matched == "process name" and not hit.why.calling_shell
    assert hit.reason.endswith(": it is the agent's own process, so the session itself dies")


def test_the_parts_join_into_the_sentence_and_the_quote_keeps_the_match() -> None:
    long = "python3 " + "x" * 120 + " launch_server --port 30001 " + "y" * 80
    at = long.index("launch_server")
    why = HitReason(mechanism="pkill", matched="command line", written="pkill -f launch_server", subject=long,
                    span=(at, at + len("launch_server")), above=Above(kind="shell", name="bash -c"),
                    fate="dies-with-its-commands", program="pkill", signal_name="TERM")
    p = parts(why)
    assert p.quote is not None and p.quote_span is not None and len(p.quote) < len(long)
    assert p.quote[p.quote_span[0] : p.quote_span[1]] == "launch_server"
    assert sentence(why) == f"{p.lead} '{p.quote}': {p.consequence}"
    assert p.lead == "pkill -f launch_server matches its command line"
    assert p.consequence == ("it is the `bash -c` shell running this command; it dies with SIGTERM, so the "
                             "commands after this pkill in it never run")


def test_a_kill_that_quotes_no_text_is_one_sentence() -> None:
    why = HitReason(mechanism="fuser-port", matched="port", written="fuser -k", target="8000")
    assert parts(why).quote is None
    assert sentence(why) == "fuser -k 8000/tcp: it holds a socket on local port 8000"


def test_a_pid_is_quoted_as_a_pid() -> None:
    (v,) = run("kill 4242", [server(8000, pid=4242)])
    (hit,) = v.victims
    assert hit.why.matched == "pid" and hit.why.span == (0, 4)
    assert hit.reason == "kill 4242 matches its PID '4242'"


def test_excerpt_of_a_short_subject_is_the_subject() -> None:
    assert excerpt("sglang --port 1", (7, 13)) == ("sglang --port 1", (7, 13))
