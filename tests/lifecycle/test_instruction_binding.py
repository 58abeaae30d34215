"""A stop or restart that names a port nothing held when it was said ("free port 3000") names what
the log then shows holding it in that turn: a listener a port lister shows, a container a listing
shows publishing it (``MessageSteps.bind_late``). Commands and outputs written from lsof's and
docker's documented formats."""

from __future__ import annotations

from pathlib import Path

from analyzer.ingest import load
from analyzer.lifecycle import Instruction, World
from analyzer.lifecycle.build import build_world

LSOF = """\
  - bash: lsof -i :3000
    output: |
      COMMAND  PID USER   FD   TYPE DEVICE SIZE/OFF NODE NAME
      node    4242 me     23u  IPv4 0x1234      0t0  TCP *:3000 (LISTEN)
"""


def _world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("events:\n" + events)
    return build_world(load(f))


def _stop(w: World) -> Instruction:
    [stop] = [i for i in w.facts_of(Instruction) if i.action == "stop"]
    return stop


def test_the_listener_shown_after_the_words_is_what_they_name(tmp_path: Path) -> None:
    w = _world(tmp_path, "  - user: free port 3000, something old is sitting on it\n" + LSOF)
    stop = _stop(w)
    assert [w.instances[t].port for t in stop.targets] == [3000]
    assert stop.event in w.instances[stop.targets[0]].requested_at


def test_a_new_prompt_ends_the_binding(tmp_path: Path) -> None:
    """What the log shows after the next prompt is no longer what the earlier words named."""
    w = _world(tmp_path, "  - user: free port 3000\n  - user: actually, first show me the open ports\n" + LSOF)
    assert _stop(w).targets == []


def test_the_container_a_listing_shows_on_the_port_is_named(tmp_path: Path) -> None:
    w = _world(tmp_path, """\
  - user: replace the old TGI container on 8080 with one for mistral 7b
  - bash: docker run -d --name tgi -p 8080:80 ghcr.io/huggingface/text-generation-inference:2.4
    output: "docker: Error response from daemon: driver failed programming external connectivity on endpoint tgi: Bind for 0.0.0.0:8080 failed: port is already allocated."
    exit_code: 125
  - bash: docker ps
    output: |
      CONTAINER ID   IMAGE                                             COMMAND                  CREATED       STATUS       PORTS                  NAMES
      4c1d2e3f4a5b   ghcr.io/huggingface/text-generation-inference:2.3   "text-generation-lau…"   3 days ago    Up 3 days    0.0.0.0:8080->80/tcp   tgi-old
  - bash: docker rm -f tgi-old tgi
    output: |
      tgi-old
      tgi
""")
    assert "tgi-old" in [w.instances[t].container for t in _stop(w).targets]
