"""The shells above a kill: which are alive when it runs (bash/zsh/dash exec rules) and die of it."""

from __future__ import annotations

from analyzer.shell.kill import Process, evaluate
from analyzer.shell.parse import parse
from tests.shell.kill.helpers import labels, run


def test_pkill_inside_bash_c_kills_its_own_shell_and_the_relaunch_never_runs() -> None:
    text = ("bash -c 'pkill -f zq_fake_server; sleep 1; "
            "nohup zq_fake_server --port 30001 > /tmp/l 2>&1 & echo RELAUNCHED'")
    script = parse(text)
    (v,) = evaluate(script, [Process(argv=("zq_fake_server", "--port", "30001"), label="old :30001")])
    assert labels(v)[0] == "old :30001"
    assert labels(v)[1].startswith("shell: bash -c pkill -f zq_fake_server; sleep 1;")
    assert [x.process.kind for x in v.victims] == ["other", "shell"]
    shell = v.victims[1]
    assert shell.frame is not None and shell.frame.argv[:2] == ("bash", "-c")
    assert shell.why.subject is not None and shell.why.span is not None
    assert shell.why.subject[shell.why.span[0] : shell.why.span[1]] == "zq_fake_server"
    assert "commands after this pkill in it never run" in shell.reason
    assert v.self_kill == shell.frame and v.skipped_after and v.expected_exit == 143
    later = {c.name: v.skips(c) for c in script.commands if c.position > v.command.position}
    assert later == {"sleep": True, "zq_fake_server": True, "echo": True}


def test_ignore_ancestors_spares_the_calling_shell() -> None:
    (v,) = run("bash -c 'pkill -A -f zq_fake_server; echo AFTER'",
               [Process(argv=("zq_fake_server",), label="target")])
    assert labels(v) == ["target"]
    assert v.self_kill is None and not v.skipped_after
    assert any("-A excludes its ancestors" in n for n in v.notes)


def test_a_lone_simple_command_is_execed_so_no_shell_is_left_to_hit() -> None:
    (v,) = run("bash -c 'pkill -f zq_fake_server'", [Process(argv=("zq_fake_server",), label="target")])
    assert labels(v) == ["target"]
    assert v.self_kill is None
    assert any("gone: bash execs a lone simple command" in n for n in v.notes)


def test_a_regex_that_does_not_match_its_own_text_spares_the_shell() -> None:
    script = parse("bash -c 'pkill -f \"x.*3000[01]\"; echo AFTER'")
    (v,) = evaluate(script, [Process(argv=("x", "--port", "30001"), label="x :30001")])
    assert labels(v) == ["x :30001"]  # 3000[ in its own text is not 3000[01]
    assert v.self_kill is None and not v.skipped_after
    echo = next(c for c in script.commands if c.name == "echo")
    assert not v.skips(echo)


def test_bracket_trick_does_not_help_when_the_relaunch_text_is_in_the_same_argv() -> None:
    (v,) = run("bash -c 'pkill -f \"[z]q_srv.*3000[01]\"; sleep 1; nohup zq_srv --port 30001 &'")
    assert v.self_kill is not None  # '…zq_srv --port 30001' later in the same argv matches


def test_bash_execs_the_last_command_of_a_list_but_not_after_a_mixed_list() -> None:
    spared = run("bash -c 'cd /tmp && pkill -f zq_token'")
    killed = run("bash -c 'true; cd /tmp && pkill -f zq_token'")
    redirected = run("bash -c 'true; pkill -f zq_token >/dev/null'")
    assert spared[0].self_kill is None
    assert killed[0].self_kill is not None
    assert redirected[0].self_kill is not None


def test_dash_never_execs_so_sh_c_is_hit_even_for_a_lone_command() -> None:
    (v,) = run("sh -c 'pkill -f zq_token'")
    assert v.self_kill is not None and v.self_kill.argv[0] == "sh"


def test_zsh_execs_the_last_command_even_with_a_redirect() -> None:
    (v,) = run("zsh -c 'true; pkill -f zq_token >/dev/null'")
    assert v.self_kill is None


def test_a_stdin_fed_remote_shell_holds_no_text_but_has_a_name() -> None:
    text = "ssh node1 bash -s <<'EOF'\npkill -f zq_srv\nsleep 2\nEOF"
    (v,) = run(text, [Process(argv=("zq_srv",), host="node1", label="remote")])
    assert labels(v) == ["remote"] and v.self_kill is None  # its argv is just `bash -s`
    (b,) = run("ssh node1 bash -s <<'EOF'\npkill bash\nEOF")
    assert b.self_kill is not None and b.self_kill.argv == ("bash", "-s")  # no exec for a script on stdin
