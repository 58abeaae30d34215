"""Servers no catalog kind names: kind ``server`` instances from port flags, ``PORT=``, listening
lines and wrapper scripts; and the one-shot commands that must stay no server at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.facts import Launch
from analyzer.lifecycle.generic import listening_line
from analyzer.lifecycle.world import World


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("agent: claude-code\nevents:\n" + events)
    return build_world(load(f))


def generic(w: World) -> list[tuple[str | None, str, int]]:
    return [(la.instance, la.label, la.event) for la in w.facts_of(Launch) if la.server == "server"]


@pytest.mark.parametrize(("text", "port"), [
    ("INFO Listening on http://0.0.0.0:8123", 8123),
    ("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...", 8000),
    (" * Running on http://127.0.0.1:5000", 5000),
    ("  ➜  Local:   http://localhost:5173/", 5173),
    ("api listening on :3000 (env=production)", 3000),
    ("Server running on port 4000", 4000),
    ("Starting development server at http://127.0.0.1:8000/", 8000),
])
def test_listening_lines_name_their_port(text: str, port: int) -> None:
    heard = listening_line(f"booting\n{text}\nmore")
    assert heard is not None and heard.port == port and heard.line == text.strip()


@pytest.mark.parametrize("text", [
    "running at test_middleware.py:24",  # a code location, not an address
    "server running on stdio",
    "Compiled successfully in 1012ms",
])
def test_text_that_names_no_listening_address(text: str) -> None:
    assert listening_line(text) is None


def test_port_env_and_flags_of_unlisted_servers_in_the_background(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: PORT=8123 nohup ./run.sh > run.log 2>&1 &
  - bash: nohup ./bin/api --listen :9090 > api.log 2>&1 &
  - bash: nohup node --import tsx/esm src/main.ts --port 4100 &
""")
    assert generic(w) == [("local:8123", "run.sh server", 0), ("local:9090", "api server", 1),
                          ("local:4100", "main.ts server", 2)]
    assert all(w.instances[k].state_at(2) == "starting" for k in ("local:8123", "local:9090", "local:4100"))


def test_a_log_read_of_its_listening_line_makes_it_ready(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: PORT=8123 nohup bash serve.sh > serve.log 2>&1 &
  - bash: sleep 2; tail -5 serve.log
    output: "[serve] Listening on http://0.0.0.0:8123"
""")
    ((inst, label, _),) = generic(w)
    assert (inst, label) == ("local:8123", "serve.sh server")
    change = w.instances[inst].history[-1]
    assert (change.state, change.event, change.reason) == ("ready", 1, "log: [serve] Listening on http://0.0.0.0:8123")


def test_a_background_npm_target_becomes_a_server_when_its_task_output_shows_one(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: npm run api
    background: true
    task: bash_1
    output: Command running in background with ID bash_1
  - tool: BashOutput
    input: {bash_id: bash_1}
    output: "<status>running</status>\\n<stdout>> node dist/serve.js\\nserver listening on http://localhost:4100</stdout>"
  - tool: KillBash
    input: {shell_id: bash_1}
    output: "Successfully killed shell: bash_1 (npm run api)"
""")
    assert generic(w) == [("local:4100", "npm run api server", 0)]
    assert [(c.state, c.event) for c in w.instances["local:4100"].history] == [
        ("starting", 0), ("ready", 1), ("stopped", 2)]
    assert w.instances["local:4100"].task_ids == ["bash_1"]


def test_a_background_task_that_never_shows_a_port_is_no_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: npm run worker
    background: true
    task: bash_1
    output: Command running in background with ID bash_1
  - tool: BashOutput
    input: {bash_id: bash_1}
    output: "<status>running</status>\\n<stdout>processed 12 jobs</stdout>"
""")
    assert generic(w) == [] and w.instances == {}


def test_a_foreground_server_the_harness_cut_off_ran_and_ended_with_the_call(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: chimera --path data.json
    output: "[INFO] Port 8080 is available\\n - Local:   http://127.0.0.1:8080\\n| 200 | GET /products"
    interrupted: true
""")
    assert generic(w) == [("local:8080", "chimera server", 0)]
    assert [c.state for c in w.instances["local:8080"].history] == ["starting", "stopped"]


_KARMA = "Karma v6.4.4 server started at http://localhost:9876/\\nTOTAL: 31 SUCCESS"


@pytest.mark.parametrize(("command", "output"), [
    ("psql -h localhost -p 5432 -U app -c 'select 1'", "1"),  # a client's port flag, in the foreground
    ("npx ng test --watch=false --browsers=ChromeHeadless", _KARMA),  # a test run that prints a URL
    ("pkill -f 'npm run start -p 4444'", ""),
    ("nohup npm run build -- --port 3000 > build.log 2>&1 &", ""),  # a build, backgrounded
    ("curl -s http://localhost:8080/health &", "ok"),
    ("ssh -p 2222 deploy@web1 uptime &", "up 3 days"),
])
def test_one_shot_commands_are_no_server(tmp_path: Path, command: str, output: str) -> None:
    w = world(tmp_path, f"""\
  - bash: {command!r}
    output: "{output}"
""")
    assert generic(w) == []


def test_a_catalog_launch_inside_a_wrapper_is_not_a_second_server(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: PORT=8000 nohup bash -c 'uvicorn app:api --port 8000' > api.log 2>&1 &
""")
    assert [(la.server, la.instance) for la in w.facts_of(Launch)] == [("uvicorn", "local:8000")]


def test_a_command_naming_the_port_of_a_live_server_is_its_client(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: nohup python -m sglang.launch_server --model-path /m --port 30000 > s.log 2>&1 &
  - bash: curl -s localhost:30000/health
    output: "ok"
  - bash: nohup python bench/throughput.py --port 30000 --requests 200 > bench.log 2>&1 &
""")
    assert generic(w) == []
    assert w.instances["local:30000"].launches == [0]
