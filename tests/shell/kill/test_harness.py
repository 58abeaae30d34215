"""Agent wrapper shells and the agent's own process: what each agent runs and how a kill hits it."""

from __future__ import annotations

from analyzer.shell.kill import Process, agent_process, harness_frame
from analyzer.shell.kill.harness import harness_wraps_command, js_shell_quote
from tests.shell.kill.helpers import labels, run


def test_pkill_node_and_pkill_f_claude_kill_the_agent() -> None:
    agent = agent_process("claude-code")
    (v,) = run("pkill node", [agent, Process(argv=("node", "server.js"), label="dev server")],
               harness=harness_frame("claude-code", "pkill node"))
    assert labels(v) == ["Claude Code CLI (the agent itself)", "dev server"] and v.generic
    assert "session itself dies" in v.victims[0].reason
    (w,) = run("pkill -f claude", [agent], harness=harness_frame("claude-code", "pkill -f claude"))
    assert "Claude Code CLI (the agent itself)" in labels(w)
    assert w.harness_killed  # the wrapper's text holds /home/user/.claude/shell-snapshots and the command
    native = agent_process("claude-code", install="native")
    (n,) = run("pkill node", [native])
    assert labels(n) == []


def test_claude_harness_is_hit_by_a_pattern_in_the_command_and_never_execs() -> None:
    text = "pkill -f vite"
    (v,) = run(text, [Process(argv=("node", "node_modules/.bin/vite"), label="vite")],
               harness=harness_frame("claude-code", text))
    assert v.harness_killed and v.self_kill is not None and v.self_kill.via == "harness"
    assert v.expected_exit == 143
    (c,) = run(text, [], harness=harness_frame("codex", text))
    assert not c.harness_killed  # bash -lc 'pkill -f vite' execs pkill


def test_a_background_task_shell_of_an_earlier_call_is_hit_too() -> None:
    from analyzer.shell.kill import harness_process

    bg = harness_process("claude-code", "npm run dev -- --port 5173", task_id="bash_1")
    assert bg is not None and bg.kind == "shell" and bg.task_id == "bash_1"
    dev = Process(argv=("node", "/app/node_modules/.bin/vite", "--port", "5173"), label="vite", task_id="bash_1")
    (v,) = run("pkill -f 'port 5173'", [bg, dev], harness=harness_frame("claude-code", "pkill -f 'port 5173'"))
    assert labels(v)[:2] == [bg.label, "vite"] and v.harness_killed


def test_claude_code_wrapper_holds_the_quoted_command() -> None:
    frame = harness_frame("claude-code", "pkill -f vite")
    assert frame is not None and frame.argv[:2] == ("/bin/bash", "-c")
    assert "eval 'pkill -f vite' < /dev/null && pwd -P >| /tmp/claude-" in frame.argv[2]
    assert "shell-snapshots/snapshot-bash-" in frame.argv[2]
    assert harness_wraps_command(frame, "pkill -f vite")
    zsh = harness_frame("claude", "ls", shell="/bin/zsh")
    assert zsh is not None and "setopt NO_EXTENDED_GLOB" in zsh.argv[2]


def test_shell_quote_rules_of_the_npm_package() -> None:
    assert js_shell_quote("pkill -f vite") == "'pkill -f vite'"
    assert js_shell_quote("echo 'a b'") == '"echo \'a b\'"'
    assert js_shell_quote('say "$HOME"') == "'say \"$HOME\"'"
    assert js_shell_quote("it's $x") == '"it\'s \\$x"'
    assert js_shell_quote("ls") == "ls"
    assert js_shell_quote("a;b") == "a\\;b"


def test_other_agents() -> None:
    codex = harness_frame("codex", "npm test")
    assert codex is not None and codex.argv == ("bash", "-lc", "npm test")
    assert not harness_wraps_command(codex, "npm test")
    gemini = harness_frame("gemini-cli", "npm run dev &")
    assert gemini is not None and gemini.argv[2].startswith("{ npm run dev & }; __code=$?; pgrep -g 0 >")
    assert harness_frame("gemini-cli", "ls") is not None
    oh = harness_frame("openhands", "ls")
    assert oh is not None and oh.interactive and oh.argv == ("/bin/bash",)
    unknown = harness_frame("some-new-agent", "ls -la")
    assert unknown is not None and unknown.argv == ("bash", "-c", "ls -la")
    assert harness_frame("none", "ls") is None


def test_agent_processes() -> None:
    npm = agent_process("claude-code")
    assert npm.argv == ("node", "/usr/local/bin/claude") and npm.comm == "node" and npm.kind == "agent"
    native = agent_process("claude-code", install="native")
    assert native.comm == "claude"
    assert agent_process("codex", install="native").argv == ("codex",)
