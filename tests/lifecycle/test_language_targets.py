"""analyzer.lifecycle.language.targets: each intent gets the servers of its own clause group."""

from __future__ import annotations

import pytest

from analyzer.lifecycle.language import Intent, read_message


def test_seed_restart_names_only_the_server_on_30001() -> None:
    r = read_message("Restart sglang to serve on *:30001, other than that looking great")
    (target,) = r.targets[Intent.restart]
    assert (target.kinds, target.ports, target.hosts) == (("sglang",), (30001,), ())
    assert target.text == "sglang *:30001"


def test_each_instruction_gets_its_own_clause_entities() -> None:
    r = read_message("restart tgi on gpu-node-3 and leave vllm alone")
    (restart,) = r.targets[Intent.restart]
    (hold,) = r.targets[Intent.hold]
    assert (restart.kinds, restart.hosts) == (("tgi",), ("gpu-node-3",))
    assert hold.kinds == ("vllm",)


def test_unspecified_target_keeps_the_words() -> None:
    r = read_message("kill the old one and relaunch on 30001")
    (stop,) = r.targets[Intent.stop]
    (restart,) = r.targets[Intent.restart]
    assert stop.unspecified and stop.mention == "the old one"
    assert restart.ports == (30001,) and not restart.unspecified


def test_states_target_their_subject() -> None:
    r = read_message("vllm on 8000 is down but sglang on 30000 is still up, only restart vllm")
    assert [t.ports for t in r.targets[Intent.not_ready]] == [(8000,)]
    assert [t.ports for t in r.targets[Intent.ready]] == [(30000,)]
    assert [t.kinds for t in r.targets[Intent.restart]] == [("vllm",)]
@pytest.mark.parametrize(("text", "mention"), [
    ("restart the api container", "the api container"),
    ("stop the docs server", "the docs server"),
    ("restart the api", "the api"),
])
def test_the_target_mention_keeps_its_head_noun(text: str, mention: str) -> None:
    (hit,) = read_message(text).hits
    assert hit.target.mention == mention


def test_a_replacement_stops_the_old_server_and_launches_the_new_one() -> None:
    """The old server's words are the stop's; what follows "with" is the launch's."""
    r = read_message("replace the old api container with one built from main")
    (stop,) = r.targets[Intent.stop]
    (launch,) = r.targets[Intent.launch]
    assert stop.unspecified and stop.mention == "api container"
    assert launch.mention == "one"


def test_joined_server_nouns_are_one_mention() -> None:
    """"the backend and the frontend": the restart is about both (the world resolves each)."""
    (restart,) = read_message("restart the backend and the frontend").targets[Intent.restart]
    assert restart.mention == "the backend and the frontend"
    (restart,) = read_message("restart the api and check it works").targets[Intent.restart]
    assert restart.mention == "the api"
