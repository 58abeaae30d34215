"""`analyzer shell CMD`: the plan as text or JSON, and what kills hit among given processes."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.shell.model import ShellScript

LAUNCH = ("ssh root@10.1.230.174 'export CUDA_HOME=/usr/local/cuda-13.0 && nohup /root/ml-env/bin/python3 "
          "-m sglang.launch_server --model-path /data/models/Qwen3.5-397B-A17B-NVFP4 --tp 8 "
          "> /tmp/sglang_nextn_test.log 2>&1 &\necho \"PID: $!\"'")
CHAIN = ('pkill -9 -f launch_router; pkill -9 -f "launch_server.*3000[01]"; sleep 4; '
         "nohup bash /root/serve.sh > /root/final.log 2>&1 &")


def run(*args: str, columns: int = 80) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["shell", *args], env={"COLUMNS": str(columns)})
    return result.exit_code, result.output


@pytest.mark.parametrize("columns", [60, 80, 140])
def test_text_plan_fits_the_terminal(columns: int) -> None:
    code, out = run(LAUNCH, columns=columns)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("parse: ok · tree-sitter · 4 commands")
    assert all(len(line) <= columns for line in lines)
    assert lines[5].startswith("  2   python3")


def test_text_plan_shows_nesting_wrappers_and_redirects() -> None:
    code, out = run(LAUNCH, columns=200)
    assert code == 0
    # position 2, one level deeper than the ssh client
    assert out.splitlines()[5] == (
        "  2   python3  @root@10.1.230.174  via=ssh  bg=&  wrap=nohup  after &&  >/tmp/sglang_nextn_test.log 2>&1")
    assert out.splitlines()[6].strip().startswith("$ nohup /root/ml-env/bin/python3 -m sglang.launch_server")


def test_json_is_the_model_dump() -> None:
    code, out = run(LAUNCH, "--format", "json")
    assert code == 0
    doc = orjson.loads(out)
    script = ShellScript.model_validate(doc)
    assert [c.name for c in script.commands] == ["ssh", "export", "python3", "echo"]
    assert script.commands[2].host == "root@10.1.230.174"
    assert "kills" not in doc


def test_kills_against_given_processes() -> None:
    code, out = run(CHAIN, "--process", "4242:python3 -m sglang.launch_server --port 30001",
                    "--process", "5151:python3 -m sglang.launch_server --port 30002", columns=200)
    assert code == 0
    assert "kill 1: pkill -9 -f 'launch_server.*3000[01]'  (SIGKILL)" in out
    assert "hits pid 4242 python3 -m sglang.launch_server --port 30001" in out
    assert "pid 5151" not in out


def test_kills_in_json() -> None:
    code, out = run(CHAIN, "--format", "json", "--process", "4242:python3 -m sglang.launch_server --port 30001")
    assert code == 0
    kills = orjson.loads(out)["kills"]
    second = next(k for k in kills if k["command"]["position"] == 1)
    assert [v["process"]["pid"] for v in second["victims"]] == [4242]


def test_kill_commands_without_processes_get_a_hint() -> None:
    code, out = run("pkill -f vllm")
    assert code == 0
    assert "give --process" in out


def test_bad_process_spec_is_a_usage_error() -> None:
    code, out = run("pkill -f vllm", "--process", "python3 server.py")
    assert code == 2
    assert "expected PID:ARGV or HOST:PID:ARGV" in out


def test_broken_command_is_shown_with_its_repair() -> None:
    code, out = run("ssh host 'pkill -f launch_server; nohup python -m x &", columns=200)
    assert code == 0
    assert out.startswith("parse: recovered · tree-sitter+repair · 3 commands")
    assert "note: unbalanced or cut text: appended \"'\" to parse it" in out
