"""A user's role word ("the api", "the backend", "the db") names the one live server called so
(``MessageSteps.role_named``): by its container, unit or session name, a module or path component
of its command, its log file, or, for the generic roles, its kind's family. Two candidates name
none (commands written from the tools' documented usage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.ingest import load
from analyzer.lifecycle import Instruction, Ready, World
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.build._util import _kind_matches
from analyzer.lifecycle.world import Instance


def _world(tmp_path: Path, *events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + "".join(f"  - {e}\n" for e in events))
    return build_world(load(f))


def _targets(w: World) -> list[list[str]]:
    return [i.targets for i in w.facts_of(Instruction)]


@pytest.mark.parametrize(("launch", "said"), [
    ("tmux new-session -d -s api 'uvicorn main:app --port 8000'", "restart the api"),
    ("nohup python server.py --port 8000 > logs/api.log 2>&1 &", "restart the api please"),
    ("nohup node backend/server.js --port 8000 > /tmp/b.log 2>&1 &", "can you restart the backend server?"),
    ("docker run -d --name worker -p 8000:8000 myorg/worker:2", "stop the worker container"),
    ("nohup python -m api.main --port 8000 > /tmp/out.log 2>&1 &", "kill the old api process"),
])
def test_a_role_word_names_the_server_called_so(tmp_path: Path, launch: str, said: str) -> None:
    w = _world(tmp_path, f"bash: {launch!r}", "bash: 'nohup npm run dev -- --port 3000 > /tmp/web.log 2>&1 &'",
               f"user: {said}")
    [targets] = _targets(w)
    assert [w.instances[t].port for t in targets] == [8000]


def test_the_frontend_is_the_one_dev_server(tmp_path: Path) -> None:
    w = _world(tmp_path, "bash: 'nohup uvicorn main:app --port 8000 > /tmp/u.log 2>&1 &'",
               "bash: 'nohup npx vite --port 5173 > /tmp/v.log 2>&1 &'", "user: restart the frontend")
    [targets] = _targets(w)
    assert [w.instances[t].server for t in targets] == ["vite"]


def test_a_name_wins_over_the_family(tmp_path: Path) -> None:
    """Two dev servers are frontends by kind, but only one runs from the folder called frontend."""
    w = _world(tmp_path, "bash: 'nohup npm --prefix frontend run dev -- --port 3000 > /tmp/f.log 2>&1 &'",
               "bash: 'nohup npx vite --port 5173 > /tmp/docs.log 2>&1 &'", "user: restart the frontend")
    [targets] = _targets(w)
    assert [w.instances[t].port for t in targets] == [3000]


def test_two_frontends_by_kind_name_neither(tmp_path: Path) -> None:
    w = _world(tmp_path, "bash: 'nohup npm run dev -- --port 3000 > /tmp/a.log 2>&1 &'",
               "bash: 'nohup npx vite --port 5173 > /tmp/b.log 2>&1 &'", "user: restart the frontend")
    assert _targets(w) == [[]]


def test_a_stopped_server_is_not_a_candidate(tmp_path: Path) -> None:
    """The api that was stopped is not "the api" any more: the live one is."""
    w = _world(tmp_path, "bash: docker run -d --name api -p 8000:8000 myorg/api:1",
               "bash: docker stop api",
               "bash: docker run -d --name api-v2 -p 8001:8000 myorg/api:2",
               "user: restart the api container")
    [targets] = _targets(w)
    assert [w.instances[t].port for t in targets] == [8001]


def test_words_that_name_no_role_keep_the_old_reading(tmp_path: Path) -> None:
    """"the server" is no role word: with nothing named, the instruction names nothing."""
    w = _world(tmp_path, "bash: docker run -d --name api -p 8000:8000 myorg/api:1", "user: restart the server")
    assert _targets(w) == [[]]


def test_the_user_saying_the_api_is_up_is_evidence_for_the_api(tmp_path: Path) -> None:
    """Readiness in the user's words goes to the server the role names, not to the one last touched."""
    w = _world(tmp_path, "bash: 'nohup uvicorn api.main:app --port 8000 > /tmp/api.log 2>&1 &'",
               "bash: 'nohup npm run dev -- --port 3000 > /tmp/web.log 2>&1 &'", "user: the api is up now")
    said = [r for r in w.facts_of(Ready) if r.source == "user"]
    assert [w.instances[r.instance].port for r in said if r.instance] == [8000]


def test_joined_roles_name_each_server(tmp_path: Path) -> None:
    """"the backend and the frontend" names both: a kill of both is what was asked."""
    w = _world(tmp_path, "bash: 'nohup uvicorn main:app --port 8000 > /tmp/u.log 2>&1 &'",
               "bash: 'nohup npm run dev -- --port 3000 > /tmp/n.log 2>&1 &'",
               "user: restart the backend and the frontend")
    [targets] = _targets(w)
    assert sorted(w.instances[t].port or 0 for t in targets) == [3000, 8000]


def test_a_joined_role_that_names_nothing_leaves_the_whole_target_unresolved(tmp_path: Path) -> None:
    """Only one of "the api and the worker" exists: the instruction is not read as naming the api alone."""
    w = _world(tmp_path, "bash: 'nohup uvicorn api.main:app --port 8000 > /tmp/api.log 2>&1 &'",
               "bash: 'nohup npm run dev -- --port 3000 > /tmp/web.log 2>&1 &'",
               "user: restart the api and the worker")
    assert _targets(w) == [[]]


def test_a_hyphenated_name_is_matched_whole(tmp_path: Path) -> None:
    w = _world(tmp_path, "bash: docker run -d --name api-gateway -p 8080:8080 myorg/gw:1",
               "bash: docker run -d --name api -p 8000:8000 myorg/api:1",
               "user: restart the api-gateway container")
    [targets] = _targets(w)
    assert [w.instances[t].port for t in targets] == [8080]


def test_a_whole_name_wins_over_a_part_of_another(tmp_path: Path) -> None:
    """The container called api is "the api", though api-gateway's name also holds the word."""
    w = _world(tmp_path, "bash: docker run -d --name api-gateway -p 8080:8080 myorg/gw:1",
               "bash: docker run -d --name api -p 8000:8000 myorg/api:1",
               "user: restart the api container")
    [targets] = _targets(w)
    assert [w.instances[t].port for t in targets] == [8000]


def test_a_kind_the_user_names_is_a_word_of_a_label_not_a_piece_of_a_name_in_it() -> None:
    def box(label: str, members: list[str] | None = None) -> Instance:
        return Instance(id=label, server="docker", label=label, host="local", members=members or [])

    assert _kind_matches("tgi", box("container tgi"))
    assert not _kind_matches("tgi", box("container tgi-old from before the log"))
    # a compose stack still answers to its members' service names
    assert _kind_matches("nginx", box("docker compose (repo)", ["repo-nginx-1"]))
