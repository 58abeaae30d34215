"""Script files written by heredocs, linked to the later commands that run them."""

from __future__ import annotations

from analyzer.shell.model import ShellFrame
from analyzer.shell.parse import parse
from analyzer.shell.resolve import ScriptResolver, split_key

WRITE = (
    "cat > /root/serve.sh <<'EOF'\n"
    "#!/bin/bash\n"
    "export NCCL_DEBUG=INFO\n"
    'exec python3 -m sglang.launch_server --port 30001 "$@"\n'
    "EOF\n"
    "chmod +x /root/serve.sh"
)
RUN = ('pkill -9 -f launch_router; pkill -9 -f "launch_server.*3000[01]"; sleep 4; '
       "nohup bash /root/serve.sh > /root/final.log 2>&1 &")


def test_seed_002_write_then_nohup_bash_run() -> None:
    r = ScriptResolver()
    written = r.feed(parse(WRITE))
    assert written.written_files == {"/root/serve.sh": WRITE.split("'EOF'\n", 1)[1].split("EOF\n")[0]}
    s = r.feed(parse(RUN))
    assert [(c.name, c.depth, c.via, c.background_by) for c in s.commands] == [
        ("pkill", 0, None, None), ("pkill", 0, None, None), ("sleep", 0, None, None),
        ("bash", 0, None, "&"),
        ("export", 1, "script-file", "caller"), ("python3", 1, "script-file", "caller"),
    ]
    py = s.named("python3")[0]
    assert py.wrappers == ["exec"]
    assert py.env == {"NCCL_DEBUG": "INFO"}
    assert py.parent == 3
    # the shell running the file shows `bash /root/serve.sh`, not the file's text
    assert py.shells == [ShellFrame(argv=("bash", "/root/serve.sh"), via="script-file")]


def test_plain_parse_stays_unresolved_and_cached() -> None:
    r = ScriptResolver()
    r.feed(parse(WRITE))
    plain = parse(RUN)
    resolved = r.feed(plain)
    assert resolved is not plain
    assert [c.name for c in plain.commands] == ["pkill", "pkill", "sleep", "bash"]
    assert parse(RUN) is plain


def test_unrelated_commands_come_back_unchanged() -> None:
    r = ScriptResolver()
    r.feed(parse(WRITE))
    s = parse("curl -s localhost:30001/health")
    assert r.feed(s) is s


def test_same_command_writes_then_runs() -> None:
    text = WRITE + " && nohup /root/serve.sh > /root/serve.log 2>&1 &"
    s = ScriptResolver().feed(parse(text))
    py = s.named("python3")[0]
    assert (py.depth, py.via, py.background_by) == (1, "script-file", "caller")
    # run directly: the kernel starts the shebang interpreter with the path
    assert py.shells == [ShellFrame(argv=("/bin/bash", "/root/serve.sh"), via="script-file")]


def test_remote_files_are_per_host() -> None:
    r = ScriptResolver()
    r.feed(parse("ssh gpu1 'cat > /root/serve.sh' <<'EOF'\nexec python3 -m sglang.launch_server\nEOF"))
    assert r.files == {"gpu1:/root/serve.sh": "exec python3 -m sglang.launch_server\n"}
    other = r.feed(parse("ssh gpu2 'nohup bash /root/serve.sh &'"))
    assert [c.name for c in other.commands] == ["ssh", "bash"]
    same = r.feed(parse("ssh gpu1 'nohup bash /root/serve.sh &'"))
    py = same.named("python3")[0]
    assert (py.host, py.depth) == ("gpu1", 2)
    assert [f.argv for f in py.shells] == [("bash", "-c", "nohup bash /root/serve.sh &"),
                                           ("bash", "/root/serve.sh")]
    local = r.feed(parse("bash /root/serve.sh"))
    assert [c.name for c in local.commands] == ["bash"]


def test_relative_runs_match_by_suffix_and_cd() -> None:
    r = ScriptResolver()
    r.feed(parse(WRITE))
    s = r.feed(parse("cd /root && ./serve.sh"))
    assert [c.name for c in s.commands] == ["cd", "serve.sh", "export", "python3"]
    assert r.lookup(None, "serve.sh") is not None
    assert r.lookup(None, "/srv/serve.sh") is None


def test_source_runs_in_the_calling_shell() -> None:
    r = ScriptResolver()
    r.feed(parse("cat > /root/env.sh <<'EOF'\nexport CUDA_HOME=/usr/local/cuda\nEOF"))
    s = r.feed(parse("source /root/env.sh && python -m x"))
    export = s.named("export")[0]
    assert (export.depth, export.via, export.shells) == (1, "script-file", [])


def test_non_shell_files_are_not_parsed() -> None:
    r = ScriptResolver()
    r.feed(parse("cat > /root/run.sh <<'EOF'\n#!/usr/bin/env python3\nimport os\nEOF"))
    assert [c.name for c in r.feed(parse("/root/run.sh")).commands] == ["run.sh"]


def test_split_key() -> None:
    assert split_key("/root/serve.sh") == (None, "/root/serve.sh")
    assert split_key("root@10.1.230.181:/root/serve.sh") == ("root@10.1.230.181", "/root/serve.sh")
    assert split_key("serve.sh") == (None, "serve.sh")
