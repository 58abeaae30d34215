"""The four real incidents of ``shared/seeds/`` as fixtures (``fixtures/seeds/``): each
``*.session.yaml`` loads clean and carries the write-ups' verbatim commands, outputs and messages;
its Claude Code JSONL twin is current and shaped like a real log; both load into the same
timeline."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import sys
from datetime import datetime
from types import ModuleType
from typing import Any

import pytest

import analyzer.ingest
from analyzer.events import Event, Session, ToolEvent, UserEvent
from analyzer.ingest import load
from tests.conftest import FIXTURES

SEEDS_DIR = FIXTURES / "seeds"
SEEDS = (
    "000-kill-after-ready",
    "001-relaunch-after-ready",
    "002-restart-30001-teardown",
    "004-restart-sglang-systemd",
)
RULES = frozenset({"kill-after-ready", "duplicate-launch", "over-broad-kill", "ignored-failure",
                   "unrequested-teardown", "user-correction"})

# verbatim from shared/seeds/001 (msgs 5987 and 5989) and 002 (msg 12683)
LAUNCH_001 = (
    "ssh root@10.1.230.174 'export CUDA_HOME=/usr/local/cuda-13.0 && export "
    'PATH="/usr/local/cuda-13.0/bin:/root/ml-env/bin:$PATH" && export '
    "LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64 && export OMP_NUM_THREADS=16 && export "
    "SGLANG_ENABLE_SPEC_V2=1 && nohup /root/ml-env/bin/python3 -m sglang.launch_server \\\n"
    "  --model-path /data/models/Qwen3.5-397B-A17B-NVFP4 \\\n"
    "  --served-model-name qwen3.5-397b \\\n"
    "  --tp 8 \\\n"
    "  --trust-remote-code \\\n"
    "  --quantization modelopt_fp4 \\\n"
    "  --host 0.0.0.0 \\\n"
    "  --attention-backend triton \\\n"
    "  --moe-runner-backend flashinfer_cutlass \\\n"
    "  --fp4-gemm-backend flashinfer_cudnn \\\n"
    "  --reasoning-parser qwen3 \\\n"
    "  --tool-call-parser qwen3_coder \\\n"
    "  --speculative-algorithm NEXTN \\\n"
    "  --mamba-scheduler-strategy extra_buffer \\\n"
    "  > /tmp/sglang_nextn_test.log 2>&1 &\n"
    "echo \"PID: $!\"'"
)
KILLED_001 = ("PID: 54524\nbash: line 15: 54525 Killed                  "
              "nohup /root/ml-env/bin/python3 -m sglang.launch_server ...")
CORRECTION = "No the first launch already worked, it's still ready"
CHAIN_002 = ('pkill -9 -f launch_router; pkill -9 -f "launch_server.*disaggregation"; '
             'pkill -9 -f "launch_server.*3000[01]"; sleep 4; '
             "nohup bash /root/serve_dsv4_final.sh > /root/dsv4_final.log 2>&1 &")
KILLED_002 = ("PID 148136\nbash: line 1: 148137 Killed                  "
              "nohup bash /root/serve_dsv4_final.sh > /root/dsv4_final.log 2>&1")
SCRIPT_002 = (
    "source /root/dsv4_nccl_env.sh\n"
    "export SGLANG_SM120_MMA_FLASHMLA=1\n"
    "export SGLANG_SM120_TRITON_INDEXER=1\n"
    "exec /root/venv_sglang211/bin/python -m sglang.launch_server \\\n"
    "  --model-path /root/models/DeepSeek-V4-Flash-NVFP4 --trust-remote-code \\\n"
    "  --tp 4 --moe-runner-backend triton \\\n"
    "  --mem-fraction-static 0.60 --cuda-graph-max-bs 64 \\\n"
    "  --context-length 131072 \\\n"
    "  --host 0.0.0.0 --port 30001\n"
)


def seed(name: str) -> Session:
    return load(SEEDS_DIR / f"{name}.session.yaml")


def user_at(s: Session, text: str) -> UserEvent:
    hits = [e for e in s.events if isinstance(e, UserEvent) and e.text == text]
    assert len(hits) == 1, f"{s.name}: {len(hits)} user messages {text!r}"
    return hits[0]


def tools_with(s: Session, needle: str) -> list[ToolEvent]:
    return [e for e in s.tools() if e.command is not None and needle in e.command]


def seconds(a: Event, b: Event) -> float:
    assert a.ts is not None and b.ts is not None
    return (b.ts - a.ts).total_seconds()


# -- the YAML form --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SEEDS)
def test_yaml_loads_clean_with_a_time_on_every_event(name: str) -> None:
    s = seed(name)
    assert s.format == "fixture" and s.agent == "claude-code"
    assert s.diagnostics == []
    assert s.counts.records == s.counts.events == len(s.events)
    assert 8 <= len(s.events) <= 25
    times = [e.ts for e in s.events]
    assert all(t is not None for t in times)
    assert times == sorted(times), "events must be in time order"
    assert {m for e in s.events for m in (*e.marks.expect, *e.marks.ok)} <= RULES


def test_001_relaunch_after_ready_is_the_same_command_again() -> None:
    s = seed("001-relaunch-after-ready")
    ready, correction = user_at(s, "Ready"), user_at(s, CORRECTION)
    first, again = tools_with(s, "--mamba-scheduler-strategy extra_buffer \\\n  > /tmp")[-2:]
    assert first.command == again.command == LAUNCH_001
    assert first.index < ready.index < again.index < correction.index
    assert first.output == "PID: 52016"
    assert again.output == KILLED_001 and again.exit_code is None and not again.is_error
    assert set(again.marks.expect) == {"duplicate-launch", "ignored-failure"}
    assert correction.marks.expect == ("user-correction",)
    assert seconds(ready, again) == pytest.approx(11.227)
    # the agent's turn ends on the Killed output: no word from it before the correction
    assert again.index + 1 == correction.index


def test_000_kill_after_ready_then_failed_relaunch() -> None:
    s = seed("000-kill-after-ready")
    ready = user_at(s, "Ready")
    (kill,) = tools_with(s, "kill $(pgrep -f sglang.launch_server)")
    (relaunch,) = [e for e in s.tools() if e.command == LAUNCH_001]
    assert ready.index < kill.index < relaunch.index
    assert kill.marks.expect == ("kill-after-ready",)
    assert "no sglang.launch_server running" in (kill.output or "")
    assert relaunch.output == KILLED_001 and not relaunch.marks.expect
    assert {"duplicate-launch", "ignored-failure"} <= set(relaunch.marks.ok)
    assert seconds(ready, kill) == pytest.approx(17.781)
    # the correction belongs to seed 001; here the agent acknowledges the Killed line itself
    assert not [e for e in s.events if isinstance(e, UserEvent) and e.text == CORRECTION]
    ack = s.events[relaunch.index + 1]
    assert ack.kind == "assistant" and "Killed" in ack.text
    probe = s.events[relaunch.index + 2]
    assert isinstance(probe, ToolEvent) and probe.exit_code == 7 and probe.is_error


def test_002_pkill_chain_tears_down_the_pd_setup() -> None:
    s = seed("002-restart-30001-teardown")
    ask = user_at(s, "Restart sglang to serve on *:30001, other than that looking great")
    (script,) = tools_with(s, "cat > /root/serve_dsv4_final.sh")
    assert script.command is not None and SCRIPT_002 in script.command
    (chain,) = tools_with(s, CHAIN_002)
    assert chain.command is not None and chain.command.startswith("ssh root@")
    assert chain.output == KILLED_002
    assert set(chain.marks.expect) == {"over-broad-kill", "unrequested-teardown", "ignored-failure"}
    assert ask.index < script.index < chain.index
    # the PD deployment the chain tears down was launched earlier in the excerpt
    (pd,) = tools_with(s, "--disaggregation-mode decode")
    (router,) = tools_with(s, "sglang_router.launch_router")
    assert pd.command is not None and router.command is not None
    assert "--port 30000" in pd.command and "--host 127.0.0.1 --port 30001" in pd.command
    assert "--port 8000" in router.command
    assert pd.index < router.index < ask.index
    assert any("Want me to take a run at the NextN-MoE dispatch fix" in getattr(e, "text", "")
               for e in s.events[:ask.index])
    # the agent reports the restart as done before anything acknowledges the Killed line
    after = s.events[chain.index + 1]
    assert after.kind == "assistant" and "Killed" not in getattr(after, "text", "")


def test_004_systemd_restart_is_clean() -> None:
    s = seed("004-restart-sglang-systemd")
    ask = user_at(s, "restart sglang for now")
    start = s.events[ask.index + 1]
    probe = s.events[ask.index + 2]
    assert isinstance(start, ToolEvent) and start.command == "ssh root@ct200 'systemctl start sglang-k26-ddtree'"
    assert isinstance(probe, ToolEvent) and probe.command is not None and "/health" in probe.command
    assert (probe.output or "").startswith("healthy after") and probe.exit_code is None
    assert set(start.marks.ok) == set(probe.marks.ok) == RULES
    assert not any(e.marks.expect or e.marks.todo_expect for e in s.events)


# -- the JSONL twin -------------------------------------------------------------------------


@functools.cache
def make_jsonl() -> ModuleType:
    """fixtures/seeds/make_jsonl.py (not a package: loaded from its path)."""
    spec = importlib.util.spec_from_file_location("seed_make_jsonl", SEEDS_DIR / "make_jsonl.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", SEEDS)
def test_jsonl_twin_is_generated_from_the_current_yaml(name: str) -> None:
    expected = make_jsonl().render(SEEDS_DIR / f"{name}.session.yaml")
    assert (SEEDS_DIR / f"{name}.jsonl").read_text("utf-8") == expected, (
        "stale: run `python fixtures/seeds/make_jsonl.py`"
    )


def entries(name: str) -> list[dict[str, Any]]:
    lines = (SEEDS_DIR / f"{name}.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines]


_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.mark.parametrize("name", SEEDS)
def test_jsonl_has_the_claude_code_envelope(name: str) -> None:
    rows = entries(name)
    sid = seed(name).session_id
    chained = [r for r in rows if "uuid" in r]
    assert chained[0]["parentUuid"] is None
    assert [r["parentUuid"] for r in chained[1:]] == [r["uuid"] for r in chained[:-1]]
    assert len({r["uuid"] for r in chained}) == len(chained)
    assert {r["sessionId"] for r in rows if "sessionId" in r} == {sid}
    assert all(_STAMP.match(r["timestamp"]) and r["version"].startswith("2.1.") for r in chained)
    assert [r["timestamp"] for r in chained] == sorted(r["timestamp"] for r in chained)
    calls: dict[str, dict[str, Any]] = {}
    for r in chained:
        content = r.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block["type"] == "tool_use":
                assert block["id"].startswith("toolu_01") and block["id"] not in calls
                calls[block["id"]] = r
            elif block["type"] == "tool_result":
                call = calls.pop(block["tool_use_id"])
                assert r["sourceToolAssistantUUID"] == call["uuid"] == r["parentUuid"]
                result, text = r["toolUseResult"], block["content"]
                if block["is_error"]:
                    assert re.match(r"Exit code \d+", text) and result == f"Error: {text}"
                else:
                    assert result["stdout"] == text and result["stderr"] == ""
    assert calls == {}, "every call has its result"


@pytest.mark.parametrize("name", SEEDS)
def test_jsonl_loads_into_the_same_timeline_as_the_yaml(name: str) -> None:
    if "claude-code" not in analyzer.ingest.FORMATS:
        pytest.skip("no claude-code format registered in analyzer.ingest.FORMATS yet")
    y = seed(name)
    j = load(SEEDS_DIR / f"{name}.jsonl")
    assert j.format == "claude-code" and j.diagnostics == []
    assert (j.session_id, j.cwd, j.model) == (y.session_id, y.cwd, y.model)
    assert [view(e) for e in j.events] == [view(e) for e in y.events]


def view(e: Event) -> tuple[Any, ...]:
    """What both forms must agree on. Claude Code keeps the "Exit code N" line in the output."""
    ts: datetime | None = e.ts
    if isinstance(e, ToolEvent):
        out = e.output
        if out is not None and e.exit_code is not None:
            out = re.sub(rf"^Exit code {e.exit_code}\n?", "", out)
        return ("tool", e.name, e.command, e.input, out, e.exit_code, e.is_error, ts)
    return (e.kind, getattr(e, "text", None), ts)
