"""The lifecycle world of two real Claude Code sessions, checked against a careful reading of them.

Each assertion is what a person reading the log event by event sees (the reading is written out
above each group of tests).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import main
from analyzer.ingest import IngestError, detect
from analyzer.lifecycle.facts import Kill, Launch, Probe, Ready
from analyzer.lifecycle.world import World
from tests.lifecycle.corpus import world_of

TODO = "claude-code/todo-app-nextjs-dev-server.jsonl"
POSTHOG = "claude-code/posthog-dashboard-pkill-v2.1.112.jsonl"


def history(world: World, inst: str) -> list[tuple[str, int]]:
    return [(c.state, c.event) for c in world.instances[inst].history]


def final_state(world: World, inst: str) -> str:
    return world.instances[inst].state_at(len(world.session.events))


def launch_at(world: World, event: int) -> Launch:
    (launch,) = [f for f in world.facts_of(Launch) if f.event == event]
    return launch


def kills_at(world: World, event: int) -> list[Kill]:
    return [k for k in world.kills() if k.event == event]


def server_victims(kill: Kill) -> list[tuple[str | None, int | None]]:
    return [(v.instance, v.launch_event) for v in kill.victims if v.role == "server"]


# -- todo-app-nextjs-dev-server.jsonl ----------------------------------------------------------
# Claude Code 1.0.98; the servers are started by two sub-agents (task-9xM…, task-iKj…).
#   #72  `pnpm dev --port 3001` run_in_background → bash_1: npm-script (runs `next dev --port 3001`)
#        on local:3001.
#   #73  BashOutput bash_1: the Next.js banner ("- Local: http://localhost:3001") and "✓ Starting..."
#        only. Next.js prints the Local: line before it starts compiling; its ready line is
#        "✓ Ready in …ms", which never appears for bash_1. The task is running: no readiness.
#   #74  agent: "The development server is running successfully": the only (weak) ready signal.
#   #75  KillBash bash_1 ("Successfully killed shell: bash_1 (pnpm dev --port 3001)"): stops it.
#   #240 `npm run dev` run_in_background → bash_2: npm-script → `next dev`, default port 3000.
#   #241 BashOutput bash_2: "✓ Ready in 1098ms" on localhost:3000: ready by its log.
#   #243 BashOutput bash_2: <status>running</status> (a poll, nothing new).
#   #245 KillBash bash_2: stops it.
#   #246-#252 `npm run build` x4: a build (fails with "generate is not a function"), not a server.
#   #256 `npx next dev --port 3000` run_in_background → bash_3: Next.js on local:3000 (port free again).
#   #257 BashOutput bash_3: "✓ Ready in 1048ms": ready by its log.  #259 poll: running.
#   #261 KillBash bash_3: stops it.  Final: nothing runs. No curl/wget probe anywhere in the log.


def test_todo_instances_are_the_two_dev_server_ports(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    assert sorted(w.instances) == ["local:3000", "local:3001"]
    a, b = w.instances["local:3001"], w.instances["local:3000"]
    assert (a.host, a.port, a.task_ids, a.launches) == ("local", 3001, ["bash_1"], [72])
    assert (b.host, b.port, b.task_ids, b.launches) == ("local", 3000, ["bash_2", "bash_3"], [240, 256])


def test_todo_launches_kinds_ports_and_tasks(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    got = [(f.event, f.instance, f.server, f.port, f.task_id, f.argv, f.ran, f.duplicate_of)
           for f in w.facts_of(Launch)]
    assert got == [
        (72, "local:3001", "npm-script", 3001, "bash_1", ["pnpm", "dev", "--port", "3001"], True, None),
        (240, "local:3000", "npm-script", 3000, "bash_2", ["npm", "run", "dev"], True, None),
        (256, "local:3000", "next", 3000, "bash_3", ["npx", "next", "dev", "--port", "3000"], True, None),
    ]


def test_todo_each_killbash_stops_exactly_its_own_task(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    got = [(k.event, k.mechanism, k.text, server_victims(k)) for k in w.kills()]
    assert got == [
        (75, "task-stop", "KillBash bash_1", [("local:3001", 72)]),
        (245, "task-stop", "KillBash bash_2", [("local:3000", 240)]),
        (261, "task-stop", "KillBash bash_3", [("local:3000", 256)]),
    ]


def test_todo_local_3000_runs_twice_ready_by_log_and_stopped(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    assert history(w, "local:3000") == [
        ("starting", 240), ("ready", 241), ("stopped", 245),
        ("starting", 256), ("ready", 257), ("stopped", 261),
    ]
    assert final_state(w, "local:3000") == "stopped"
    assert w.state_at("local:3000", 256) == "stopped"  # the port was free when bash_3 started
    # the KillBash is the evidence of each stop
    stops = [w.facts[c.fact] for c in w.instances["local:3000"].history if c.state == "stopped"]
    assert [(k.event, k.kind) for k in stops] == [(245, "kill"), (261, "kill")]


def test_todo_stopped_local_3001_and_no_failures(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    assert final_state(w, "local:3001") == "stopped"
    assert w.state_at("local:3001", 75, inclusive=True) == "stopped"
    # the failing `npm run build` calls are builds, not server failures
    assert w.failures() == []
    # the summaries written after each KillBash ("runs successfully on localhost:3001") revive nothing
    assert [r.event for r in w.facts_of(Ready) if r.instance == "local:3001" and r.event > 75] == []
    assert [r.event for r in w.facts_of(Ready) if r.instance == "local:3000" and r.event > 261] == []


def test_todo_polls_are_task_polls_of_the_right_instance(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    got = [(p.event, p.instance, p.method, p.answered) for p in w.facts_of(Probe)]
    assert got == [
        (73, "local:3001", "task-poll", True),
        (241, "local:3000", "task-poll", True),
        (243, "local:3000", "task-poll", True),
        (257, "local:3000", "task-poll", True),
        (259, "local:3000", "task-poll", True),
    ]


def test_todo_a_running_task_poll_is_not_readiness(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    assert [r.event for r in w.facts_of(Ready) if r.source == "probe"] == []


def test_todo_next_ready_line_is_ready_in_not_the_banner(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    logs = [(r.event, r.instance, r.quote) for r in w.facts_of(Ready) if r.source == "log"]
    assert logs == [(241, "local:3000", "✓ Ready in 1098ms"), (257, "local:3000", "✓ Ready in 1048ms")]


def test_todo_local_3001_ready_only_by_the_agent_claim(corpus: Path) -> None:
    w = world_of(corpus, TODO)
    assert history(w, "local:3001") == [("starting", 72), ("ready", 74), ("stopped", 75)]
    ready = [(r.event, r.source, r.strength) for r in w.facts_of(Ready) if r.instance == "local:3001"]
    assert ready == [(74, "agent", "weak")]


# -- posthog-dashboard-pkill-v2.1.112.jsonl ----------------------------------------------------
# Claude Code 2.1.112 on macOS (/Users/…, /opt/homebrew, zsh; BSD pgrep/pkill spare their ancestors,
# and `pgrep -a` there means "include ancestors").
# Not servers (batch jobs, must not become instances):
#   #39 bkzv7ang6, #41 bnyxbxdis: `python src/fetch.py | tail -60` in the background; both "completed
#       (exit code 0)" (#40, #42: tail's status; #43 shows fetch.py died with a RuntimeError).
#   #45 bomjc7gus: the same; #50 `ps -p $(pgrep …)` shows it as 66012 (zsh wrapper) + 66015 (python).
#   #61 `kill 66012 66015; pkill -f 'fetch.py'` kills that job (#62: bomjc7gus failed, exit 144).
#   #64 Monitor byo17lgri: `python -u src/fetch.py | grep …`; #116 TaskStop byo17lgri stops it.
#   #118 `pkill -f 'fetch.py'`, #119 `pkill -9 -f 'fetch.py'; pkill -9 -f 'gh api graphql'`: nothing of
#       fetch.py is left; the PIDs the following `pgrep -fa` prints (66371, 66377) are the agent's own
#       zsh, listed because -a includes ancestors. The shell survives (pgrep ran).
#   #120 `pkill -9 zsh`: over-broad (every zsh of the user but its own ancestors); spares its shell.
#   #124 Monitor btkze6lgq: the rewritten fetch.py; stream ended at #447.
# The one server: streamlit on local:8765.
#   #173 `timeout 8 streamlit run app.py … --server.port 8765 | head -30` → "(eval):1: command not
#        found: timeout": macOS has no `timeout`, streamlit never started.
#   #175 `(streamlit run … | head -20) & PID=$!; sleep 6; kill $PID; …; curl -s http://localhost:8765`
#        launches it for real; `kill $PID` hits only the background subshell, not streamlit; curl gets
#        Streamlit's HTML: ready by probe, and it keeps running after the call.
#   #248 `(streamlit run … &) && sleep 4 && curl … && pkill -f 'streamlit run'; echo done`: the new
#        streamlit prints "Port 8765 is not available" and exits (the #175 one holds the port); curl is
#        answered by the #175 server; pkill kills the #175 server; "done" shows the shell survived.
#   Final: local:8765 stopped at #248. #463/#466 curl the Streamlit Cloud deployment (a remote URL)
#   and #464 is about that deployment being private: nothing about local:8765.


def test_posthog_the_only_server_is_streamlit_on_8765(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    assert list(w.instances) == ["local:8765"]
    inst = w.instances["local:8765"]
    assert (inst.server, inst.host, inst.port, inst.task_ids) == ("streamlit", "local", 8765, [])
    assert inst.launches == [173, 175, 248]
    # the background fetch.py batch jobs (#39, #41, #45, #64, #124) are not servers
    assert [f.event for f in w.facts_of(Launch)] == [173, 175, 248]
    assert all(f.argv[:2] == ["streamlit", "run"] and f.port == 8765 for f in w.facts_of(Launch))


def test_posthog_batch_job_exits_are_not_server_failures(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    assert [f.event for f in w.failures() if f.event in (40, 42, 62, 447)] == []


def test_posthog_kills_of_the_batch_jobs_hit_no_server(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    got = [(k.event, k.mechanism, k.text) for k in w.kills()]
    assert got == [
        (61, "kill", "kill 66012 66015"),
        (61, "pkill", "pkill -f fetch.py"),
        (116, "task-stop", "TaskStop byo17lgri"),
        (118, "pkill", "pkill -f fetch.py"),
        (119, "pkill", "pkill -9 -f fetch.py"),
        (119, "pkill", "pkill -9 -f gh api graphql"),
        (120, "pkill", "pkill -9 zsh"),
        (175, "kill", "kill $PID"),
        (248, "pkill", "pkill -f streamlit run"),
    ]
    for k in w.kills():
        if k.event < 173:
            assert server_victims(k) == [], k.text
        assert not k.self_kill, k.text  # BSD pkill spares its ancestors; every later command ran
    shell_kills = [k for k in w.kills() if k.mechanism != "task-stop"]
    assert {k.platform for k in shell_kills} == {"macos"}
    generic = [k.text for k in w.kills() if k.generic]
    assert generic == ["pkill -9 zsh"]


def test_posthog_175_ready_by_curl_and_kill_pid_spares_the_server(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    probes = [(p.event, p.method, p.target, p.answered) for p in w.facts_of(Probe) if p.event == 175]
    assert probes == [(175, "http", "http://localhost:8765", True)]
    ready = [(r.source, r.strength) for r in w.facts_of(Ready) if r.event == 175]
    assert ready == [("probe", "strong")]
    (kill_pid,) = kills_at(w, 175)
    assert server_victims(kill_pid) == []  # $! is the `( … | head -20 )` subshell, not streamlit
    assert w.state_at("local:8765", 175, inclusive=True) == "ready"
    assert w.state_at("local:8765", 248) == "ready"  # still up: #248's launch finds the port taken


def test_posthog_248_relaunch_duplicates_the_live_175_server(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    assert launch_at(w, 248).duplicate_of == 175
    probes = [(p.event, p.instance, p.answered) for p in w.facts_of(Probe) if p.event == 248]
    assert probes == [(248, "local:8765", True)]


def test_posthog_173_streamlit_never_started(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    launch = launch_at(w, 173)
    died = [f for f in w.failures() if f.event == 173 and f.launch_event == 173]
    assert not launch.ran or died
    assert w.state_at("local:8765", 173, inclusive=True) in ("failed", "unknown")


def test_posthog_175_is_a_fresh_launch(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    assert launch_at(w, 175).duplicate_of is None
    assert [(c.state, c.event) for c in w.instances["local:8765"].history if c.event == 175] == [
        ("starting", 175), ("ready", 175)]


def test_posthog_248_relaunch_dies_port_in_use(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    died = [(f.reason, f.launch_event) for f in w.failures() if f.event == 248]
    assert died == [("address-in-use", 248)]
    assert any("Port 8765 is not available" in f.quote for f in w.failures() if f.event == 248)


def test_posthog_248_pkill_hits_only_the_175_server(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    (pkill,) = kills_at(w, 248)
    assert pkill.pattern == "streamlit run"
    assert server_victims(pkill) == [("local:8765", 175)]


def test_posthog_streamlit_is_stopped_by_the_pkill_at_248(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    inst = w.instances["local:8765"]
    assert inst.history[-1].state == "stopped" and inst.history[-1].event == 248
    evidence = w.facts[inst.history[-1].fact]
    assert isinstance(evidence, Kill) and evidence.text == "pkill -f streamlit run"
    assert final_state(w, "local:8765") == "stopped"


def test_posthog_nothing_says_8765_is_up_after_the_kill(corpus: Path) -> None:
    w = world_of(corpus, POSTHOG)
    assert [r.event for r in w.facts_of(Ready) if r.instance == "local:8765" and r.event > 248] == []


# -- `analyzer graph` on every corpus file -----------------------------------------------------

# Files that are not sessions the analyzer can read: a clear one-line refusal (exit 2), no traceback.
NOT_SESSIONS = {
    "claude-code/trade-arena-sanitized.jsonl": "not a session log in any known format",
    "opencode/poem-write-session.json": "opencode session info without messages",
}


def corpus_files(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*") if p.is_file() and p.name != "MANIFEST.md")


def _detected(path: Path) -> bool:
    try:
        detect(path)
    except IngestError:
        return False
    return True


@pytest.mark.parametrize("fmt", ["text", "json", "dot"])
def test_graph_renders_every_corpus_file(corpus: Path, fmt: str) -> None:
    """Every file a format claims renders; every other one is refused in one clear line, never a traceback."""
    files = corpus_files(corpus)
    assert len(files) >= 25
    runner = CliRunner()
    for path in files:
        rel = path.relative_to(corpus).as_posix()
        result = runner.invoke(main, ["graph", "--format", fmt, str(path)])
        if rel in NOT_SESSIONS or not _detected(path):
            assert result.exit_code == 2, rel
            assert isinstance(result.exception, SystemExit), rel
            assert result.stderr.startswith(f"analyzer: {path}") and result.stderr.count("\n") == 1, rel
            assert NOT_SESSIONS.get(rel, "not a session log in any known format") in result.stderr, rel
            continue
        assert result.exit_code == 0, (rel, result.output[-500:])
        assert result.exception is None, rel
        if fmt == "text":
            assert result.stdout.startswith(f"{path}: ") and "server instance(s)" in result.stdout, rel
        elif fmt == "json":
            doc = json.loads(result.stdout)
            assert doc["path"] == str(path) and isinstance(doc["instances"], list), rel
            assert doc["graph"]["directed"] is True, rel
        else:
            assert result.stdout.startswith("digraph world {") and result.stdout.rstrip().endswith("}"), rel


def test_graph_shows_the_lifecycle_logs_instances(corpus: Path) -> None:
    runner = CliRunner()
    todo = runner.invoke(main, ["graph", str(corpus / TODO)])
    assert todo.exit_code == 0
    assert "2 server instance(s)" in todo.stdout
    assert "local:3001  npm dev server on local:3001  [stopped]" in todo.stdout
    doc = json.loads(runner.invoke(main, ["graph", "--format", "json", str(corpus / POSTHOG)]).stdout)
    assert [i["id"] for i in doc["instances"]] == ["local:8765"]
    dot = runner.invoke(main, ["graph", "--format", "dot", str(corpus / TODO)]).stdout
    assert '"event:75" -> "instance:local:3001" [label="kills"];' in dot
