"""The real commands of the seed incidents (shared/seeds/*.txt) and the seed session fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.events import ToolEvent
from analyzer.ingest import load
from analyzer.shell.model import Redirect, ShellFrame
from analyzer.shell.parse import parse
from analyzer.shell.resolve import ScriptResolver
from tests.conftest import FIXTURES

# 001_5c919f1c2f008742.txt, message 5989, verbatim
SEED_001_LAUNCH = """ssh root@10.1.230.174 'export CUDA_HOME=/usr/local/cuda-13.0 && export PATH="/usr/local/cuda-13.0/bin:/root/ml-env/bin:$PATH" && export LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64 && export OMP_NUM_THREADS=16 && export SGLANG_ENABLE_SPEC_V2=1 && nohup /root/ml-env/bin/python3 -m sglang.launch_server \\
  --model-path /data/models/Qwen3.5-397B-A17B-NVFP4 \\
  --served-model-name qwen3.5-397b \\
  --tp 8 \\
  --trust-remote-code \\
  --quantization modelopt_fp4 \\
  --host 0.0.0.0 \\
  --attention-backend triton \\
  --moe-runner-backend flashinfer_cutlass \\
  --fp4-gemm-backend flashinfer_cudnn \\
  --reasoning-parser qwen3 \\
  --tool-call-parser qwen3_coder \\
  --speculative-algorithm NEXTN \\
  --mamba-scheduler-strategy extra_buffer \\
  > /tmp/sglang_nextn_test.log 2>&1 &
echo "PID: $!"'"""

# 002_4d86ffd22825831e.txt: the tear-down and the launch of message 12683
SEED_002_CHAIN = ('pkill -9 -f launch_router; pkill -9 -f "launch_server.*disaggregation"; '
                  'pkill -9 -f "launch_server.*3000[01]"; sleep 4; '
                  "nohup bash /root/serve_dsv4_final.sh > /root/dsv4_final.log 2>&1 &")
# 000_8ba607c7168affdf.txt
SEED_000_KILL = "kill $(pgrep -f sglang.launch_server)"


def test_seed_001_ssh_launch_with_pid_echo() -> None:
    s = parse(SEED_001_LAUNCH)
    assert s.status == "ok"
    assert [(c.name, c.depth, c.background_by) for c in s.commands] == [
        ("ssh", 0, None), *[("export", 1, "&")] * 5, ("python3", 1, "&"), ("echo", 1, None)]
    py = s.named("python3")[0]
    assert py.host == "root@10.1.230.174"
    assert py.wrappers == ["nohup"]
    assert py.effective_argv[-4:] == ["--speculative-algorithm", "NEXTN", "--mamba-scheduler-strategy",
                                      "extra_buffer"]
    assert py.redirects == [Redirect(op=">", target="/tmp/sglang_nextn_test.log"), Redirect(fd=2, op=">&", target="1")]
    assert py.env["PATH"] == "/usr/local/cuda-13.0/bin:/root/ml-env/bin:$PATH"
    assert py.env["SGLANG_ENABLE_SPEC_V2"] == "1"
    echo = s.named("echo")[0]
    assert (echo.argv, echo.connector, echo.dynamic) == (["echo", "PID: $!"], "&", True)
    remote = SEED_001_LAUNCH.split("'", 1)[1].rsplit("'", 1)[0]
    assert echo.shells == [ShellFrame(argv=("bash", "-c", remote), host="root@10.1.230.174", via="ssh")]


def test_seed_002_pkill_chain() -> None:
    s = parse(SEED_002_CHAIN)
    assert [c.name for c in s.commands] == ["pkill", "pkill", "pkill", "sleep", "bash"]
    assert [c.effective_argv[-1] for c in s.named("pkill")] == [
        "launch_router", "launch_server.*disaggregation", "launch_server.*3000[01]"]
    assert [c.connector for c in s.commands] == [None, ";", ";", ";", ";"]
    bash = s.named("bash")[0]
    assert (bash.background_by, bash.wrappers, bash.script_path) == ("&", ["nohup"], "/root/serve_dsv4_final.sh")


def test_seed_000_kill_of_pgrep() -> None:
    s = parse(SEED_000_KILL)
    assert [(c.name, c.contexts) for c in s.commands] == [("pgrep", ["substitution"]), ("kill", [])]
    assert s.commands[0].effective_argv == ["pgrep", "-f", "sglang.launch_server"]


SEED_SESSIONS = sorted((FIXTURES / "seeds").glob("*.session.yaml"))


@pytest.mark.parametrize("path", SEED_SESSIONS, ids=[p.name for p in SEED_SESSIONS])
def test_every_seed_fixture_command_parses_cleanly(path: Path) -> None:
    commands = [e.command for e in load(str(path)).events if isinstance(e, ToolEvent) and e.command]
    assert commands
    for text in commands:
        s = parse(text)
        assert (s.status, s.parser) == ("ok", "tree-sitter"), (text, s.notes)
        assert s.commands


def test_seed_002_session_links_the_script_to_its_launch() -> None:
    path = FIXTURES / "seeds" / "002-restart-30001-teardown.session.yaml"
    resolver = ScriptResolver()
    launches = []
    for e in load(str(path)).events:
        if isinstance(e, ToolEvent) and e.command:
            s = resolver.feed(parse(e.command))
            launches.extend(c for c in s.commands if c.via == "script-file" and c.name == "python")
    assert "root@10.1.230.181:/root/serve_dsv4_final.sh" in resolver.files
    assert launches
    first = launches[0]
    assert (first.host, first.depth, first.background_by, first.wrappers) == (
        "root@10.1.230.181", 2, "caller", ["exec"])
    assert "--port" in first.effective_argv and first.effective_argv[-1] == "30001"
    assert first.shells[-1] == ShellFrame(argv=("bash", "/root/serve_dsv4_final.sh"), host="root@10.1.230.181",
                                          via="script-file")
