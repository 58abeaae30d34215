"""Agent wrapper shells, the agent's own process, TaskStop: what each agent runs and how a kill hits it."""

from __future__ import annotations

from analyzer.shell.kill import KillVerdict, Process, agent_process, harness_frame, task_stop
from analyzer.shell.kill.harness import harness_wraps_command, js_shell_quote
from analyzer.shell.kill.model import comm_of
from analyzer.shell.model import ShellFrame, SimpleCommand
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


def test_process_comm_is_the_15_byte_basename() -> None:
    assert Process(argv=("/root/venv/bin/python3", "-m", "x")).comm == "python3"
    assert Process(argv=("/tmp/zq7731_very_long_server_name",)).comm == "zq7731_very_lon"
    assert Process(argv=("python3",), comm="sglang::schedul").comm == "sglang::schedul"
    assert comm_of("/usr/bin/ééééééééé") == "ééééééé"  # 15 bytes, no half character


def test_task_stop_hits_the_task_processes() -> None:
    a = Process(argv=("python", "src/fetch.py"), task_id="bash_3", label="fetch")
    b = Process(argv=("streamlit", "run", "app.py"), task_id="bash_4", label="streamlit")
    v = task_stop("bash_3", [a, b])
    assert v.mechanism == "task-stop" and [x.process.label for x in v.victims] == ["fetch"]
    assert "bash_3" in v.victims[0].reason
    empty = task_stop("bash_9", [a, b], tool="KillShell")
    assert empty.victims == [] and empty.command.name == "KillShell"


def test_skips_follows_the_deepest_shared_shell() -> None:
    outer = ShellFrame(argv=("bash", "-c", "bash -c 'pkill -f x; a'; b"), via="shell-c")
    inner = ShellFrame(argv=("bash", "-c", "pkill -f x; a"), via="shell-c")
    kill = SimpleCommand(argv=["pkill", "-f", "x"], name="pkill", effective_argv=["pkill", "-f", "x"],
                         position=2, shells=[outer, inner])
    a = SimpleCommand(argv=["a"], name="a", effective_argv=["a"], position=3, shells=[outer, inner])
    b = SimpleCommand(argv=["b"], name="b", effective_argv=["b"], position=4, shells=[outer])
    top = SimpleCommand(argv=["c"], name="c", effective_argv=["c"], position=5)
    only_outer = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM", killed_frames=[outer])
    assert not only_outer.skips(a)  # the inner shell keeps running its script
    assert only_outer.skips(b) and not only_outer.skips(top)
    only_inner = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM", killed_frames=[inner])
    assert only_inner.skips(a) and not only_inner.skips(b)
    harness = KillVerdict(command=kill, mechanism="pkill", signal=15, signal_name="TERM",
                          killed_frames=[ShellFrame(argv=("bash", "-c", "…"))], harness_killed=True)
    assert harness.skips(top) and not harness.skips(b)
