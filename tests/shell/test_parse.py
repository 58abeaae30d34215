"""What the parser must get right beyond the appendix sets: the tree-sitter bugs it works around,
argv/env/redirect details, background, hosts, frames."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analyzer.shell.model import Redirect, ShellFrame, ShellScript, SimpleCommand
from analyzer.shell.parse import parse


def one(script: ShellScript, name: str) -> SimpleCommand:
    found = script.named(name)
    assert len(found) == 1, [c.name for c in script.commands]
    return found[0]


# --- tree-sitter grammar bugs (shell-semantics §3.1) -------------------------------------------


def test_redirect_binds_to_the_last_command_of_an_and_list() -> None:  # tree-sitter-bash #345
    s = parse("export A=1 && nohup python -m x --port 1 > /tmp/log 2>&1 &")
    assert one(s, "export").redirects == []
    assert one(s, "python").redirects == [
        Redirect(fd=None, op=">", target="/tmp/log"),
        Redirect(fd=2, op=">&", target="1"),
    ]


def test_redirect_binds_to_the_last_member_of_a_pipeline_in_a_list() -> None:
    s = parse("a && b | c > f")
    assert [c.redirects for c in s.commands] == [[], [], [Redirect(op=">", target="f")]]


@pytest.mark.parametrize(("text", "argv"), [
    ("echo >&2 hello world", ["echo", "hello", "world"]),  # tree-sitter-bash #233
    ("pkill 2>/dev/null -f launch_server", ["pkill", "-f", "launch_server"]),
    ("echo a > f b", ["echo", "a", "b"]),
])
def test_words_after_a_mid_command_redirect_stay_in_argv(text: str, argv: list[str]) -> None:
    s = parse(text)
    assert [c.argv for c in s.commands] == [argv]
    assert len(s.commands[0].redirects) == 1


def test_multiline_pipeline_then_kill() -> None:  # tree-sitter-bash #347
    s = parse("ps aux | grep launch_server | grep -v grep\nkill 12345 && echo killed")
    assert s.status == "ok"
    assert [c.name for c in s.commands] == ["ps", "grep", "grep", "kill", "echo"]
    kill = one(s, "kill")
    assert kill.argv == ["kill", "12345"]
    assert kill.connector == "\n"
    assert "pipeline" not in kill.contexts
    assert s.commands[2].argv == ["grep", "-v", "grep"]
    assert one(s, "echo").connector == "&&"
    assert "pipeline" not in one(s, "echo").contexts


def test_three_stage_pipeline_and_list_precedence() -> None:
    s = parse("ps aux | grep x | awk '{print $2}' && echo found")
    assert [("pipeline" in c.contexts) for c in s.commands] == [True, True, True, False]


def test_python_dash_before_heredoc_is_kept() -> None:
    s = parse("python3 - <<'PY'\nimport os\nprint(os.getpid())\nPY")
    py = one(s, "python3")
    assert py.argv == ["python3", "-"]
    assert py.stdin == "import os\nprint(os.getpid())\n"
    assert [c.name for c in s.commands] == ["python3"]  # the body is data, not commands


def test_heredoc_body_is_not_read_as_commands() -> None:
    text = ("cat <<'EOF' > /tmp/restart.sh; bash /tmp/restart.sh\npkill -f launch_server\n"
            "nohup python -m sglang.launch_server --port 30000 > /tmp/s.log 2>&1 &\nEOF")
    s = parse(text)
    assert [c.name for c in s.commands] == ["cat", "bash"]
    assert s.written_files == {
        "/tmp/restart.sh": "pkill -f launch_server\n"
                           "nohup python -m sglang.launch_server --port 30000 > /tmp/s.log 2>&1 &\n",
    }
    assert one(s, "bash").script_path == "/tmp/restart.sh"


def test_heredoc_then_pipe_keeps_the_pipeline() -> None:  # tree-sitter-bash #346
    s = parse("cat <<'EOF' 2>&1 | tail -5\nhello\nEOF")
    assert [c.argv for c in s.commands] == [["cat"], ["tail", "-5"]]


def test_background_heredoc() -> None:
    s = parse("ssh gpu1 <<EOF &\npkill -f vllm\nEOF")
    assert one(s, "ssh").background_by == "&"
    assert one(s, "pkill").host == "gpu1"
    assert one(s, "pkill").background_by == "caller"


# --- words, env, redirects --------------------------------------------------------------------


def test_unquoting() -> None:
    s = parse("""cmd 'a b' "c \\"d\\" \\$e $HOME" $'f\\tg\\n' h\\ i "j"'k'l""")
    assert s.commands[0].argv == ["cmd", "a b", 'c "d" $e $HOME', "f\tg\n", "h i", "jkl"]
    assert s.commands[0].dynamic


def test_line_continuations() -> None:
    s = parse("python -m sglang.launch_server \\\n  --port 30000 \\\n  --tp 8 &")
    assert s.commands[0].argv == ["python", "-m", "sglang.launch_server", "--port", "30000", "--tp", "8"]


def test_glob_and_expansion_make_a_command_dynamic() -> None:
    assert parse("fuser -k /dev/nvidia*").commands[0].dynamic
    assert parse("kill -9 $PID").commands[0].dynamic
    assert not parse("pkill -f 'launch_server.*3000[01]'").commands[0].dynamic


def test_env_prefixes_wrappers_and_exports_in_scope() -> None:
    s = parse("export A=1; export B=2; CUDA_VISIBLE_DEVICES=0 env C=3 nohup python x; (export D=4); python y")
    x, y = s.named("python")
    assert x.env == {"A": "1", "B": "2", "CUDA_VISIBLE_DEVICES": "0", "C": "3"}
    assert x.wrappers == ["env", "nohup"]
    assert x.effective_argv == ["python", "x"]
    assert y.env == {"A": "1", "B": "2"}  # the subshell's export does not leak


def test_exports_of_a_background_list_stay_in_it() -> None:
    s = parse("export A=1 && python x & python y")
    x, y = s.named("python")
    assert x.env == {"A": "1"}
    assert y.env == {}


def test_env_i_clears_and_ssh_does_not_inherit_local_exports() -> None:
    s = parse("export A=1; env -i B=2 python x; ssh h 'python y'")
    x, y = s.named("python")
    assert x.env == {"B": "2"}
    assert y.env == {}


@pytest.mark.parametrize(("text", "name", "wrappers", "eff"), [
    ("sudo -u svc -E timeout -s KILL 600 nice -n 5 python x", "python", ["sudo", "timeout", "nice"], ["python", "x"]),
    ("setsid nohup python3 -m r &", "python3", ["setsid", "nohup"], ["python3", "-m", "r"]),
    ("ionice -c2 -n0 taskset -c 0-3 numactl --cpunodebind=0 --membind 0 stdbuf -oL python t.py",
     "python", ["ionice", "taskset", "numactl", "stdbuf"], ["python", "t.py"]),
    ("time -p command python x", "python", ["time", "command"], ["python", "x"]),
    ("xargs -r -n1 kill -9", "kill", ["xargs"], ["kill", "-9"]),
    ("screen -dmS sgl python3 -m x", "python3", ["screen"], ["python3", "-m", "x"]),
    ("exec -a fake_server sleep 300", "sleep", ["exec"], ["fake_server", "300"]),
    ("command -v python", "command", [], ["command", "-v", "python"]),
    ("env", "env", [], ["env"]),
    ("nohup", "nohup", [], ["nohup"]),
])
def test_wrappers(text: str, name: str, wrappers: list[str], eff: list[str]) -> None:
    c = parse(text).commands[0]
    assert (c.name, c.wrappers, c.effective_argv) == (name, wrappers, eff)


def test_heredoc_and_herestring_stdin() -> None:
    s = parse('grep -c launch_server <<< "$(ps aux)"')
    grep = one(s, "grep")
    assert grep.stdin == "$(ps aux)\n"
    assert grep.redirects == [Redirect(op="<<<", target="$(ps aux)")]
    assert "substitution" in one(s, "ps").contexts


def test_unquoted_heredoc_body_is_unescaped_for_the_nested_script() -> None:
    s = parse('ssh -T root@node <<EOF\nexport PORT=30001\nkill \\$(pgrep -f "launch_server.*\\$PORT")\nEOF')
    pgrep = one(s, "pgrep")
    assert pgrep.argv == ["pgrep", "-f", "launch_server.*$PORT"]
    assert (pgrep.host, pgrep.depth, pgrep.contexts) == ("root@node", 1, ["substitution"])
    assert one(s, "kill").env == {"PORT": "30001"}


def test_compound_redirects_apply_to_every_command_inside() -> None:
    s = parse("{ cd /srv && ./start.sh; } > /tmp/start.log 2>&1")
    for c in s.commands:
        assert Redirect(op=">", target="/tmp/start.log") in c.redirects


# --- background --------------------------------------------------------------------------------


def test_background_covers_the_whole_and_or_list() -> None:
    s = parse("export A=1 && nohup python -m x > /tmp/log 2>&1 &\necho started")
    assert [(c.name, c.background, c.background_by) for c in s.commands] == [
        ("export", True, "&"), ("python", True, "&"), ("echo", False, None)]
    assert one(s, "echo").connector == "&"


def test_background_groups_subshells_and_detaching_launchers() -> None:
    assert all(c.background_by == "&" for c in parse("{ python x | tee log; } &").commands)
    assert [c.background_by for c in parse("(cd /srv && ./run.sh &) ; sleep 1").commands] == ["&", "&", None]
    assert parse("setsid python x").commands[0].background_by == "detach"
    assert parse("sudo -b python x").commands[0].background_by == "detach"
    tmux = parse("tmux new-session -d -s s 'python x'")
    assert [(c.name, c.background_by) for c in tmux.commands] == [("tmux", None), ("python", "detach")]


def test_nested_commands_inherit_the_callers_background() -> None:
    s = parse("nohup sh -c 'python -m x || echo crashed' >/dev/null 2>&1 &")
    assert [(c.name, c.background_by) for c in s.commands] == [
        ("sh", "&"), ("python", "caller"), ("echo", "caller")]


# --- order, contexts, positions ------------------------------------------------------------------


def test_substitutions_run_before_their_command() -> None:
    s = parse("kill -TERM -- -$(ps -o pgid= $(pgrep -f 'port 30001') | tr -d ' ')")
    assert [c.name for c in s.commands] == ["pgrep", "ps", "tr", "kill"]
    assert [c.position for c in s.commands] == [0, 1, 2, 3]
    assert s.commands[0].contexts == ["substitution", "pipeline", "substitution"]


def test_contexts() -> None:
    s = parse("for i in 1 2; do if ! curl -sf x; then systemctl restart s; fi; done; f() { pkill y; }; "
              "while ! curl -s y; do sleep 1; done; (cd /x)")
    ctx = {c.name + str(i): c.contexts for i, c in enumerate(s.commands)}
    assert ctx == {
        "curl0": ["loop", "condition"],
        "systemctl1": ["loop", "condition"],
        "pkill2": ["function"],
        "curl3": ["loop", "condition"],
        "sleep4": ["loop"],
        "cd5": ["subshell"],
    }


def test_span_points_into_the_text() -> None:
    text = "sleep 1; nohup python -m x > /tmp/log 2>&1 &"
    s = parse(text)
    start, end = one(s, "python").span or (0, 0)
    assert text[start:end] == "nohup python -m x > /tmp/log 2>&1"
    s2 = parse("ssh h 'pkill -f x; sleep 2'")
    assert one(s2, "pkill").span == (6, 27)  # nested: the outer word holding the script


# --- nesting, hosts, frames --------------------------------------------------------------------


def test_ssh_host_on_every_nested_command_and_deeper_levels() -> None:
    s = parse("""ssh gpu1 "ssh gpu2 'pkill -f vllm; vllm serve /m --port 8000 &'" """)
    assert [(c.name, c.depth, c.host, c.parent) for c in s.commands] == [
        ("ssh", 0, None, None), ("ssh", 1, "gpu1", 0), ("pkill", 2, "gpu2", 1), ("vllm", 2, "gpu2", 1)]


def test_ssh_options_are_skipped_and_remote_argv_is_joined() -> None:
    s = parse("ssh -o StrictHostKeyChecking=no -p 2222 -i ~/.ssh/k user@host nvidia-smi --query-gpu=memory.used "
              "--format=csv")
    smi = one(s, "nvidia-smi")
    assert smi.host == "user@host"
    assert smi.shells == [ShellFrame(argv=("bash", "-c", "nvidia-smi --query-gpu=memory.used --format=csv"),
                                     host="user@host", via="ssh", execs_last=True)]


def test_frames_for_ssh_remote_scripts() -> None:
    s = parse("ssh h 'pkill -f launch_server; nohup python -m sglang.launch_server &'")
    frame = ShellFrame(argv=("bash", "-c", "pkill -f launch_server; nohup python -m sglang.launch_server &"),
                       host="h", via="ssh", execs_last=False)
    assert one(s, "pkill").shells == [frame]
    assert one(s, "ssh").shells == []  # the local ssh client is a command, not a frame


def test_frame_chain_through_ssh_then_bash_c() -> None:
    s = parse("""ssh node1 "bash -c 'pkill -f \\"launch_server.*30001\\"; sleep 2'" """)
    pkill = one(s, "pkill")
    assert pkill.argv == ["pkill", "-f", "launch_server.*30001"]
    assert pkill.shells == [
        ShellFrame(argv=("bash", "-c", """bash -c 'pkill -f "launch_server.*30001"; sleep 2'"""), host="node1",
                   via="ssh", execs_last=True),
        ShellFrame(argv=("bash", "-c", 'pkill -f "launch_server.*30001"; sleep 2'), host="node1", via="shell-c",
                   execs_last=False),
    ]


@pytest.mark.parametrize(("text", "execs_last"), [
    ("bash -c 'pkill -f x'", True),  # a lone simple command: bash execs it
    ("bash -c 'pkill -f x; echo after'", False),
    ("bash -c 'kill $(pgrep -f x)'", False),  # a builtin: the shell signals itself
    ("bash -c 'pkill -f x > /tmp/out'", False),  # a redirect: bash forks
    ("bash -c 'pkill -f x &'", False),
    ("bash -c 'exec python -m x'", True),
])
def test_execs_last(text: str, execs_last: bool) -> None:
    nested = [c for c in parse(text).commands if c.depth == 1]
    assert nested[-1].shells[-1].execs_last is execs_last


def test_heredoc_to_a_shell_stdin() -> None:
    s = parse("ssh gpu-node-3 bash -s <<'EOF'\npkill -f vllm\nnohup vllm serve /m &\nEOF")
    bash, pkill = one(s, "bash"), one(s, "pkill")
    assert (bash.depth, bash.via, bash.stdin) == (1, "ssh", "pkill -f vllm\nnohup vllm serve /m &\n")
    assert (pkill.depth, pkill.via, pkill.host) == (2, "heredoc", "gpu-node-3")
    assert pkill.shells == [
        ShellFrame(argv=("bash", "-c", "bash -s"), host="gpu-node-3", via="ssh", execs_last=True),
        ShellFrame(argv=("bash", "-s"), host="gpu-node-3", via="heredoc"),
    ]


def test_cat_heredoc_piped_into_ssh() -> None:
    s = parse("cat <<'EOF' | ssh gpu1 bash -s\npkill -f vllm\nEOF")
    assert [(c.name, c.depth, c.host) for c in s.commands] == [
        ("cat", 0, None), ("ssh", 0, None), ("bash", 1, "gpu1"), ("pkill", 2, "gpu1")]


def test_ssh_without_remote_command_runs_its_stdin() -> None:
    s = parse("ssh -T h <<'EOF'\nsystemctl restart sglang\nEOF")
    sc = one(s, "systemctl")
    assert (sc.host, sc.via, sc.shells[0].argv) == ("h", "ssh", ("-bash",))


def test_container_exec_levels() -> None:
    s = parse('docker exec -it -e A=1 sgl bash -c "pkill -f launch_server || true"')
    bash, pkill = one(s, "bash"), one(s, "pkill")
    assert (bash.depth, bash.via, bash.container, bash.env, bash.shells) == (1, "docker-exec", "sgl", {"A": "1"}, [])
    assert (pkill.depth, pkill.container, pkill.parent) == (2, "sgl", bash.position)
    k = parse("kubectl -n ml exec -it pod/sgl-0 -c main -- curl -s localhost:30000/health")
    assert (k.commands[1].name, k.commands[1].container) == ("curl", "pod/sgl-0")


def test_tmux_send_keys_runs_only_what_is_entered() -> None:
    s = parse("tmux send-keys -t s 'cd /srv' Enter 'python -m x' C-m 'rm -rf /'")
    assert [(c.name, c.depth) for c in s.commands] == [("tmux", 0), ("cd", 1), ("python", 1)]
    assert any("typed without Enter" in n for n in s.notes)
    # typed into the pane's interactive login shell
    assert s.commands[2].shells == [ShellFrame(argv=("-bash",), via="tmux", interactive=True)]
    assert s.commands[2].background_by == "detach"


def test_watch_su_and_screen_stuff() -> None:
    w = parse("watch -n 5 'curl -s localhost:30000/health; nvidia-smi'")
    assert [c.name for c in w.commands] == ["watch", "curl", "nvidia-smi"]
    assert w.commands[1].shells[0].argv[:2] == ("sh", "-c")
    su = parse("su - svc -c 'cd /srv && ./run.sh --port 8000'")
    assert [(c.name, c.via) for c in su.commands] == [("su", None), ("cd", "su-c"), ("run.sh", "su-c")]
    sc = parse("screen -S sgl -X stuff 'python -m x --port 1^M'")
    assert [(c.name, c.via) for c in sc.commands] == [("screen", None), ("python", "screen")]


def test_depth_is_capped() -> None:
    text = "bash -c 'bash -c \"bash -c \\\"bash -c \\\\\\\"bash -c \\\\\\\\\\\\\\\"echo deep\\\\\\\\\\\\\\\"\\\\\\\"\\\"\"'"
    s = parse(text)
    assert max(c.depth for c in s.commands) == 4
    assert any("not followed" in n for n in s.notes)


def test_script_paths() -> None:
    assert parse("bash serve.sh --port 1").commands[0].script_path == "serve.sh"
    assert parse("sh -x /tmp/x.sh").commands[0].script_path == "/tmp/x.sh"
    assert parse("./serve.sh").commands[0].script_path == "./serve.sh"
    assert parse("nohup /root/serve.sh > log 2>&1 &").commands[0].script_path == "/root/serve.sh"
    assert parse("source .venv/bin/activate").commands[0].script_path == ".venv/bin/activate"
    assert parse("python3 serve.py").commands[0].script_path is None


@pytest.mark.parametrize(("text", "key"), [
    ("cat > /root/serve.sh <<'EOF'\nexec python -m x\nEOF", "/root/serve.sh"),
    ("cat <<EOF > /root/serve.sh\nexec python -m x\nEOF", "/root/serve.sh"),
    ("tee /root/serve.sh <<'EOF' >/dev/null\nexec python -m x\nEOF", "/root/serve.sh"),
    ("cd /root && cat > serve.sh <<'EOF'\nexec python -m x\nEOF", "/root/serve.sh"),
    ("ssh gpu1 'cat > /root/serve.sh <<\"EOF\"\nexec python -m x\nEOF\n'", "gpu1:/root/serve.sh"),
    ("ssh gpu1 'cat > /root/serve.sh' <<'EOF'\nexec python -m x\nEOF", "gpu1:/root/serve.sh"),
])
def test_written_files(text: str, key: str) -> None:
    assert parse(text).written_files == {key: "exec python -m x\n"}


def test_unquoted_heredoc_written_file_is_what_the_shell_writes() -> None:
    s = parse('cat > /tmp/run.sh <<EOF\nexport P=\\$PORT HOME=$HOME\nEOF')
    assert s.written_files == {"/tmp/run.sh": "export P=$PORT HOME=$HOME\n"}


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   \n", "# just a comment"])
def test_empty_scripts_are_ok_with_no_commands(text: str) -> None:
    s = parse(text)
    assert (s.status, s.commands) == ("ok", [])


@pytest.mark.parametrize("text", ["'", '"', "$(", "`", "<<EOF", "((", "|"])
def test_lone_tokens_never_raise(text: str) -> None:
    assert parse(text).status in ("recovered", "failed")


def test_odd_characters() -> None:
    s = parse("echo a\x00b; pkill -f \ud800x")
    assert [c.name for c in s.commands] == ["echo", "pkill"]
    assert s.source == "echo a\x00b; pkill -f \ud800x"


def test_huge_and_deep_inputs() -> None:
    assert len(parse("echo hi; " * 20000).commands) == 20000
    deep = parse("echo $(" * 300 + "x" + ")" * 300)
    assert deep.status == "truncated"  # deeper than the converters follow: read flat, and said so
    assert [c.name for c in deep.commands].count("echo") == 300


def test_results_are_memoised() -> None:
    assert parse("sleep 1") is parse("sleep 1")


def test_brace_then_astral_character_does_not_crash_tree_sitter() -> None:
    # tree-sitter-bash's scanner calls C isdigit() on the character after `{`; with a large code
    # point that reads past glibc's ctype table and segfaults: run it where a crash is visible
    code = ("from analyzer.shell.parse import parse\n"
            "for cp in (0xEE7A8, 0xFFFFF, 0x10FFFF, 0x9C6CC, 0x2C6F3):\n"
            "    for pre in ('{', 'echo {', 'x {1..', '{12..3'):\n"
            "        s = parse(pre + chr(cp) + ' y')\n"
            "        assert s.status == 'ok', s\n"
            "print('alive')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout.strip()) == (0, "alive"), proc.stderr[-2000:]


def test_substitutions_expanded_by_the_outer_shell_run_once_there() -> None:
    # double quotes: the local shell runs pgrep and bash -c gets its output
    local = parse('bash -c "kill $(pgrep -f x)"')
    assert [(c.name, c.depth) for c in local.commands] == [("pgrep", 0), ("bash", 0), ("kill", 1)]
    # escaped: the remote shell runs it
    remote = parse('ssh h "kill \\$(pgrep -f x)"')
    assert [(c.name, c.depth, c.host) for c in remote.commands] == [("ssh", 0, None), ("pgrep", 1, "h"),
                                                                   ("kill", 1, "h")]
    # an unquoted heredoc: the same split, line by line
    mixed = parse("ssh h <<EOF\nkill $(pgrep y) \\$(pgrep z)\nEOF")
    assert [(c.name, c.depth, c.effective_argv[-1]) for c in mixed.named("pgrep")] == [("pgrep", 0, "y"),
                                                                                      ("pgrep", 1, "z")]


@pytest.mark.parametrize("text", ["time (sleep 1; echo done)", "time { sleep 1; echo done; }"])
def test_time_keyword_with_a_group(text: str, need_shfmt: None) -> None:
    s = parse(text)  # tree-sitter-bash has no `time` keyword: the self-check hands these to mvdan/sh
    assert [c.argv for c in s.commands] == [["sleep", "1"], ["echo", "done"]]


def test_a_broken_nested_script_leaves_the_outer_commands() -> None:
    s = parse("ssh h \"bash -c 'for'\"")
    assert (s.status, [c.name for c in s.commands]) == ("recovered", ["ssh", "bash"])
    assert any(n.startswith("shell-c script of command 1: ") for n in s.notes)


@pytest.mark.parametrize(("text", "argv"), [
    ("[ -f ~/.cfg/x ] && echo yes", ["[", "-f", "~/.cfg/x", "]"]),  # the grammar reads `~` as an operator
    ('v=$([ -d ~/a ] && echo y)', ["[", "-d", "~/a", "]"]),
    ('[ ! -f a.txt ]', ["[", "!", "-f", "a.txt", "]"]),
])
def test_test_command_words_are_the_shells_words(text: str, argv: list[str]) -> None:
    assert parse(text).commands[0].argv == argv


def test_a_word_holding_blanks_goes_to_the_oracle(need_shfmt: None) -> None:
    # PowerShell sent to a bash parser: tree-sitter's recovery makes one word of `} }`
    s = parse('try { Write-Host "a" } catch { Write-Host "b" } }')
    assert s.parser.startswith("shfmt") and s.commands[0].argv[-2:] == ["}", "}"]
