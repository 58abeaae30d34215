"""The lifecycle world on the seed incidents and on small sessions: instances, state histories,
evidence, kills and their victims, instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.events import ToolEvent, UserEvent
from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.catalog import Catalog
from analyzer.lifecycle.facts import (
    Correction,
    Failure,
    Instruction,
    Kill,
    Launch,
    ModelDisagreement,
    Probe,
    Ready,
)
from analyzer.lifecycle.world import World

SEEDS = Path(__file__).resolve().parents[2] / "fixtures" / "seeds"


def seed(name: str, twin: str = "session.yaml") -> World:
    return build_world(load(SEEDS / f"{name}.{twin}"))


def world_of(tmp_path: Path, yaml_text: str, catalog: Catalog | None = None) -> World:
    p = tmp_path / "s.session.yaml"
    p.write_text(yaml_text)
    return build_world(load(p), catalog)


def states(w: World, inst: str) -> list[tuple[int, str]]:
    return [(c.event, c.state) for c in w.instances[inst].history]


def user_index(w: World, text: str) -> int:
    return next(e.index for e in w.session.events if isinstance(e, UserEvent) and e.text == text)


# -- the seed incidents ------------------------------------------------------------------------


@pytest.mark.parametrize("twin", ["session.yaml", "jsonl"])
def test_001_relaunch_targets_the_ready_instance_and_dies(twin: str) -> None:
    w = seed("001-relaunch-after-ready", twin)
    assert list(w.instances) == ["10.1.230.174:30000"]
    inst = "10.1.230.174:30000"
    ready_at = user_index(w, "Ready")
    assert w.state_at(inst, ready_at, inclusive=True) == "ready"
    assert any(r.source == "user" and r.event == ready_at for r in w.ready_signals(inst, ready_at + 1))
    relaunch = [f for f in w.launches(inst) if f.event > ready_at]
    assert len(relaunch) == 1 and relaunch[0].duplicate_of is not None
    dup = relaunch[0]
    died = [f for f in w.facts_of(Failure) if f.launch_event == dup.event]
    assert died and died[0].reason == "killed" and "54525 Killed" in died[0].quote
    # the live server is untouched by its duplicate's death: still ready
    assert w.state_at(inst, dup.event, inclusive=True) == "ready"
    corr = w.facts_of(Correction)
    assert corr and corr[0].corrects == dup.event


@pytest.mark.parametrize("twin", ["session.yaml", "jsonl"])
def test_000_kill_hits_a_ready_instance_with_no_stop_instruction(twin: str) -> None:
    w = seed("000-kill-after-ready", twin)
    inst = "10.1.230.174:30000"
    (kill,) = [k for k in w.kills() if k.victims]
    assert [v.instance for v in kill.victims] == [inst]
    assert w.state_at(inst, kill.event) == "ready"
    assert not [i for i in w.instructions_in_force(kill.event) if i.action in ("stop", "restart")]
    assert w.state_at(inst, kill.event, inclusive=True) == "stopped"
    assert w.evidence(inst, kill.event).reason == "the user said it is ready"  # type: ignore[union-attr]


@pytest.mark.parametrize("twin", ["session.yaml", "jsonl"])
def test_002_pkill_chain_victims_relaunch_killed_and_instruction_scope(twin: str) -> None:
    w = seed("002-restart-30001-teardown", twin)
    host = "10.1.230.181"
    router, prefill, decode = f"{host}:8000", f"{host}:30000", f"{host}:30001"
    assert set(w.instances) == {router, prefill, decode}
    chain = [k for k in w.kills() if k.event == 9]
    assert [k.pattern for k in sorted(chain, key=lambda k: k.command_position)] == [
        "launch_router", "launch_server.*disaggregation", "launch_server.*3000[01]"]
    victims = {v.instance for k in chain for v in k.victims if v.instance}
    assert victims == {router, prefill, decode}
    shells = [v for k in chain for v in k.victims if v.role == "shell"]
    assert shells and all("remote shell on 10.1.230.181" in v.label for v in shells)
    assert any(k.self_kill for k in chain)
    # the pattern 3000[01] also matches the relaunch's --port 30001 in the same command
    assert any(k.also_matches_relaunch for k in chain if k.pattern == "launch_server.*3000[01]")
    # the relaunch's own output shows its process Killed
    (relaunch,) = [f for f in w.launches(decode) if f.event == 9]
    died = [f for f in w.facts_of(Failure) if f.launch_event == 9]
    assert died and died[0].reason == "killed" and "148137 Killed" in died[0].quote
    # the model predicted the remote shell died at the first pkill; the output shows it went on
    assert any(isinstance(f, ModelDisagreement) and f.event == 9 for f in w.facts)
    assert relaunch.ran
    # the user's instruction named only the server on 30001
    (ask,) = [i for i in w.facts_of(Instruction) if i.action == "restart"]
    assert ask.targets == [decode]
    assert ask in w.instructions_in_force(9)


@pytest.mark.parametrize("twin", ["session.yaml", "jsonl"])
def test_004_systemd_start_after_instruction_then_healthy_probe(twin: str) -> None:
    w = seed("004-restart-sglang-systemd", twin)
    (inst,) = w.instances.values()
    assert inst.unit == "sglang-k26-ddtree" and inst.host == "ct200"
    (ask,) = w.facts_of(Instruction)
    (launch,) = w.facts_of(Launch)
    assert ask.action == "restart" and ask.event < launch.event and launch.server == "systemd"
    probes = [p for p in w.facts_of(Probe) if p.instance == inst.id and p.event > launch.event]
    assert probes and probes[0].answered is True
    assert [s for _, s in states(w, inst.id)] == ["starting", "ready"]
    assert not w.kills()


# -- small sessions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "server", "port"),
    [
        ("nohup python -m sglang.launch_server --model-path /m --port 30005 > s.log 2>&1 &", "sglang", 30005),
        ("nohup python3 -m sglang_router.launch_router --port 8080 > r.log 2>&1 &", "sglang-router", 8080),
        ("CUDA_VISIBLE_DEVICES=0,1 vllm serve meta-llama/Llama-3.1-8B --port 8001 &> v.log &", "vllm", 8001),
        ("text-generation-launcher --model-id x --port 8080 &", "tgi", 8080),
        ("nohup llama-server -m m.gguf --port 8081 &", "llama-cpp", 8081),
        ("ollama serve &", "ollama", 11434),
        ("tritonserver --model-repository /r &", "triton", 8000),
        ("trtllm-serve /m --port 8003 &", "trtllm", 8003),
        ("uvicorn app:api --port 8000 &", "uvicorn", 8000),
        ("gunicorn -b 0.0.0.0:9000 app:app &", "gunicorn", 9000),
        ("flask run -p 5001 &", "flask", 5001),
        ("streamlit run app.py --server.port 8765 &", "streamlit", 8765),
        ("python3 -m http.server 8000 &", "http-server", 8000),
        ("npx next dev --port 3000 &", "next", 3000),
        ("pnpm dev --port 3001 &", "npm-script", 3001),
        ("docker run -d --gpus all --name sgl -p 30000:30000 lmsysorg/sglang python3 -m sglang.launch_server",
         "docker", 30000),
        ("docker compose -f /srv/sgl/docker-compose.yml up -d", "compose", None),
        ("sudo systemctl start vllm.service", "systemd", None),
        ("redis-server --port 6380 --daemonize yes", "redis", 6380),
        ("nohup redis-server > redis.log 2>&1 &", "redis", 6379),
    ],
)
def test_catalog_kinds_become_instances(tmp_path: Path, command: str, server: str, port: int | None) -> None:
    w = world_of(tmp_path, f"events:\n  - bash: {command!r}\n")
    (launch,) = w.facts_of(Launch)
    assert launch.server == server and launch.port == port
    assert [s for _, s in states(w, launch.instance or "")] == ["starting"]


def test_script_written_by_heredoc_then_run_is_a_launch(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: |-
      cat > /root/serve.sh <<'EOF'
      #!/bin/bash
      exec python3 -m sglang.launch_server --model-path /m --port 30002
      EOF
  - bash: nohup bash /root/serve.sh > /root/serve.log 2>&1 &
""")
    (launch,) = w.facts_of(Launch)
    assert launch.event == 1 and launch.server == "sglang" and launch.port == 30002


def test_pid_from_output_lets_kill_pid_find_its_victim(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: 'nohup uvicorn app:api --port 8000 > api.log 2>&1 & echo "PID: $!"'
    output: 'PID: 4242'
  - bash: kill 4242
  - bash: kill 9999
""")
    (launch,) = w.facts_of(Launch)
    assert launch.pid == 4242
    k1, k2 = w.kills()
    assert [v.instance for v in k1.victims] == ["local:8000"]
    assert not [v for v in k2.victims if v.instance]
    assert states(w, "local:8000")[-1] == (1, "stopped")


def test_failing_probe_does_not_make_a_starting_server_ready_and_fails_a_ready_one(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup vllm serve /m --port 8000 > v.log 2>&1 &
  - bash: curl -sf localhost:8000/health
    output: 'curl: (7) Failed to connect to localhost port 8000: Connection refused'
    exit: 7
  - bash: curl -sf localhost:8000/health
    output: 'OK'
  - bash: curl -sf localhost:8000/health
    output: 'curl: (7) Failed to connect to localhost port 8000: Connection refused'
    exit: 7
""")
    probes = w.facts_of(Probe)
    assert [p.answered for p in probes] == [False, True, False]
    assert states(w, "local:8000") == [(0, "starting"), (2, "ready"), (3, "failed")]


def test_redis_cli_ping_probes_the_redis_it_names(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: redis-server --port 6380 --daemonize yes
  - bash: redis-cli -p 6380 ping
    output: 'Could not connect to Redis at 127.0.0.1:6380: Connection refused'
    exit: 1
  - bash: redis-cli -h 127.0.0.1 -p6380 PING
    output: PONG
  - bash: redis-cli ping
    output: PONG
""")
    # the last ping goes to the default port, 6379, where no launch of the log listens: not this
    # one's, but a redis from before the log
    assert [(p.method, p.instance, p.answered) for p in w.facts_of(Probe)] == [
        ("redis-ping", "local:6380", False), ("redis-ping", "local:6380", True),
        ("redis-ping", "local:6379@before", True)]
    assert states(w, "local:6380") == [(0, "starting"), (2, "ready")]  # daemonized: not ended at 0


def test_a_port_check_with_ncat_is_a_probe(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: ncat -z 127.0.0.1 8000
    exit: 0
""")
    assert [(p.method, p.instance, p.answered) for p in w.facts_of(Probe)] == [("port-check", "local:8000", True)]


def test_redis_cli_url_and_error_replies(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup redis-server --port 6390 > r.log 2>&1 &
  - bash: redis-cli -e -u redis://default:secret@127.0.0.1:6390/0 ping
    output: "NOAUTH Authentication required."
    exit: 1
""")
    (probe,) = w.facts_of(Probe)
    assert (probe.instance, probe.answered) == ("local:6390", True)  # an error reply is still an answer


def test_a_server_on_another_port_is_not_confused_with_the_first(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup python -m sglang.launch_server --model-path /m --port 30000 > a.log 2>&1 &
  - bash: nohup python -m sglang.launch_server --model-path /m --port 30001 > b.log 2>&1 &
  - bash: curl -s localhost:30001/health
    output: 'OK'
  - bash: pkill -f "launch_server.*--port 30001"
""")
    assert set(w.instances) == {"local:30000", "local:30001"}
    assert not any(f.duplicate_of is not None for f in w.facts_of(Launch))
    assert states(w, "local:30000") == [(0, "starting")]
    assert states(w, "local:30001") == [(1, "starting"), (2, "ready"), (3, "stopped")]


def test_remote_and_local_servers_on_the_same_port_are_different_instances(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: ssh root@gpu1 'nohup vllm serve /m --port 8000 > v.log 2>&1 &'
  - bash: nohup vllm serve /m --port 8000 > v.log 2>&1 &
  - bash: pkill -f "vllm serve"
""")
    assert set(w.instances) == {"gpu1:8000", "local:8000"}
    (kill,) = w.kills()
    assert {v.instance for v in kill.victims if v.instance} == {"local:8000"}
    assert states(w, "gpu1:8000") == [(0, "starting")]


def test_background_task_launch_poll_and_stop(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: pnpm dev --port 3001
    background: true
    task: bash_1
    output: 'Command running in background with ID: bash_1'
  - tool: BashOutput
    input: {bash_id: bash_1}
    output: "<status>running</status>\\n<stdout>  ▲ Next.js 15\\n  - Local:        http://localhost:3001\\n ✓ Ready in 1.2s</stdout>"
  - tool: KillBash
    input: {shell_id: bash_1}
""")
    (launch,) = w.facts_of(Launch)
    assert launch.task_id == "bash_1" and launch.instance == "local:3001"
    assert states(w, "local:3001") == [(0, "starting"), (1, "ready"), (2, "stopped")]
    (kill,) = w.kills()
    assert kill.mechanism == "task-stop" and kill.victims[0].instance == "local:3001"


def test_sub_agent_commands_are_part_of_the_world(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - user: start the api and check it
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
    agent: explore-1
  - bash: curl -s localhost:8000/health
    agent: explore-1
    output: '{"ok": true}'
""")
    assert states(w, "local:8000") == [(1, "starting"), (2, "ready")]


def test_task_notification_with_nonzero_exit_fails_the_task_instance(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: npm run dev
    background: true
    task: b7x
  - system: task-notification
    task: b7x
    exit: 1
    status: failed
""")
    assert states(w, "local:3000") == [(0, "starting"), (1, "failed")]


def test_user_defined_catalog_entry_from_config(tmp_path: Path) -> None:
    from analyzer.config import load_config

    cfg_file = tmp_path / "analyzer.toml"
    cfg_file.write_text('[catalog.my-model-server]\nprograms = ["mms"]\nport_flags = ["--listen"]\n'
                        'default_port = 9100\nready = ["model server listening"]\n')
    cfg = load_config(cfg_file)
    w = world_of(tmp_path, """\
events:
  - bash: nohup mms --listen 9200 > mms.log 2>&1 &
  - bash: tail -2 mms.log
    output: 'model server listening on 0.0.0.0:9200'
""", Catalog.load(cfg.catalog))
    (launch,) = w.facts_of(Launch)
    assert launch.server == "my-model-server" and launch.port == 9200
    assert states(w, "local:9200") == [(0, "starting"), (1, "ready")]
    ready = w.facts_of(Ready)
    assert ready[0].source == "log" and "listening" in ready[0].quote


def test_hold_instruction_stays_in_force(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup vllm serve /m --port 8000 > v.log 2>&1 &
  - user: don't restart the vllm server, I'm benchmarking it
  - user: meanwhile, clean up the temp files
  - bash: rm -rf /tmp/scratch
""")
    holds = [i for i in w.instructions_in_force(3) if i.action == "hold"]
    assert holds and holds[0].targets == ["local:8000"]


def test_graph_relations(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup vllm serve /m --port 8000 > v.log 2>&1 &
  - user: it's up, ready
  - bash: nohup vllm serve /m --port 8000 > v2.log 2>&1 &
  - bash: pkill -f "vllm serve"
""")
    rel = {(s, t, d["relation"]) for s, t, d in w.graph.edges(data=True)}
    assert ("event:0", "instance:local:8000", "launches") in rel
    assert ("event:1", "instance:local:8000", "asserts-ready") in rel
    assert ("event:2", "event:0", "conflicts-with") in rel
    assert ("event:3", "instance:local:8000", "kills") in rel
    assert ("instance:local:8000", "event:3", "matched-by-kill") in rel


def test_commands_after_a_self_kill_do_not_happen(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup python -m sglang.launch_server --model-path /m --port 30001 > /tmp/s.log 2>&1 &
  - bash: pkill -f launch_server; sleep 2; nohup python -m sglang.launch_server --model-path /m --port 30001 > /tmp/s.log 2>&1 &
    output: ''
    exit: 143
""")
    relaunch = [f for f in w.facts_of(Launch) if f.event == 1]
    assert relaunch and not relaunch[0].ran
    (kill,) = w.kills()
    assert kill.self_kill and any(v.role == "shell" for v in kill.victims)
    assert states(w, "local:30001") == [(0, "starting"), (1, "stopped")]
    assert isinstance(w.event(1), ToolEvent)
    assert not [k for k in w.facts_of(Kill) if k.event == 0]


def test_a_foreground_server_ends_when_its_command_returns(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: uvicorn app:api --port 8000
    output: "INFO:     Uvicorn running on http://127.0.0.1:8000\\n^C INFO: Shutting down"
    interrupted: true
  - bash: uvicorn app:api --port 8000
    output: "INFO:     Uvicorn running on http://127.0.0.1:8000"
  - bash: sudo systemctl start vllm sglang
""")
    assert [f.duplicate_of for f in w.facts_of(Launch)][:2] == [None, None]
    assert states(w, "local:8000") == [(0, "starting"), (0, "stopped"), (1, "starting"), (1, "stopped")]
    units = sorted(i.unit for i in w.instances.values() if i.unit)
    assert units == ["sglang", "vllm"]
    assert w.instances["local/unit:vllm"].name == "vllm (systemd) on local"


def test_exit_zero_contradicts_a_predicted_self_kill(tmp_path: Path) -> None:
    w = world_of(tmp_path, """\
events:
  - bash: nohup uvicorn app.main:api --port 8000 > api.log 2>&1 &
  - bash: pkill -f 'uvicorn app.main:api' || true; sleep 1; nohup uvicorn app.main:api --port 8000 > api.log 2>&1 &
    exit: 0
""")
    assert any(isinstance(f, ModelDisagreement) and f.event == 1 for f in w.facts)
    relaunch = [f for f in w.facts_of(Launch) if f.event == 1]
    assert relaunch and relaunch[0].ran
