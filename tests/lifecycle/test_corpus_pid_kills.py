"""Kills by PID in labelled real Windows sessions: what each `taskkill /PID` really hits, checked
against a careful reading of the log (the reading is written above each test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.lifecycle.facts import Kill
from tests.lifecycle.corpus import world_of

pytestmark = pytest.mark.corpus


def kills_at(corpus: Path, name: str, event: int) -> list[Kill]:
    return [k for k in world_of(corpus, name).kills() if k.event == event]


# antigravity/expfrontend-springboot.jsonl: the user asks "start both the frontend and backend
# servers" (#264); the agent runs `java -jar target\expensewise-backend-1.0.0.jar` (#269) and says
# "The **Backend (Spring Boot)** is now running in the background" (#272). `netstat -ano | findstr
# :8080` (#405) shows PID 18708 on :8080; `taskkill /F /PID 18708` (#407, L540) kills that jar.
def test_the_agent_handed_over_the_jar_it_kills_by_pid(corpus: Path) -> None:
    w = world_of(corpus, "antigravity/expfrontend-springboot.jsonl")
    assert [(r.event, r.source) for r in w.ready_signals("local:8080", 273)][-1] == (272, "agent")
    (kill,) = kills_at(corpus, "antigravity/expfrontend-springboot.jsonl", 407)
    (victim,) = kill.victims
    assert (victim.instance, victim.launch_event, victim.matched) == ("local:8080", 269, "pid")


# chat/hale43-bugfix2.json: `docker compose up --build -d` (#451, L750; again #453, L753) fails with "Bind for
# 0.0.0.0:3000 failed: port is already allocated"; Windows `netstat -ano` (#455) shows PID 11384 on
# 0.0.0.0:3000 and [::]:3000, PID 29484 on [::1]:3000. `taskkill //PID 11384 //F; taskkill //PID
# 29484 //F` (#456, L758): 11384 is Docker Desktop's backend (the engine is gone right after), 29484
# is not shown to be Docker's.
def test_the_pid_on_the_address_docker_allocated_is_docker_desktop(corpus: Path) -> None:
    first, second = kills_at(corpus, "chat/hale43-bugfix2.json", 456)
    assert (first.text, first.generic) == ("taskkill //PID 11384 //F", True)
    assert first.selects is not None and "every container" in first.selects
    # the listing (L756) and Docker's latest refusal before it (the retry's, L753) are cited
    assert any("line 756" in n and "line 753" in n for n in first.notes)
    assert not any("not a process known here" in n for n in first.notes)
    assert (second.text, second.generic) == ("taskkill //PID 29484 //F", False)
