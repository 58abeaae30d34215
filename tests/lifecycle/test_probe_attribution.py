"""Readiness with attribution: a probe's answer counts for an instance only when it can have come
from it (a response of its kind, not another kind's signature page), and an exit status a pipe or
an ``||`` masks is no success."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analyzer.ingest import load
from analyzer.lifecycle.build import build_world
from analyzer.lifecycle.catalog import Catalog, ServerKind, default_catalog
from analyzer.lifecycle.facts import Probe, Ready
from analyzer.lifecycle.probes import answered_by, own_answer
from analyzer.lifecycle.world import World

DJANGO_404 = ("<!DOCTYPE html><html lang=en><head><title>Page not found at /health</title></head>"
              "<body><h1>Page not found <span>(404)</span></h1><p>You're seeing this error because you have "
              "<code>DEBUG = True</code> in your Django settings file.</p></body></html>")


def world(tmp_path: Path, events: str) -> World:
    f = tmp_path / "s.session.yaml"
    f.write_text("agent: claude-code\nevents:\n" + events)
    return build_world(load(f))


def probes(w: World) -> list[tuple[int, bool | None, str]]:
    return [(p.event, p.answered, p.detail) for p in w.facts_of(Probe)]


def test_a_django_404_page_is_no_health_answer_of_the_uvicorn_app(tmp_path: Path) -> None:
    w = world(tmp_path, f"""\
  - bash: nohup uvicorn app.main:app --port 8000 > api.log 2>&1 &
  - bash: sleep 3; curl -s localhost:8000/health
    output: "{DJANGO_404}"
""")
    (probe,) = w.facts_of(Probe)
    assert probe.detail == ("http probe of localhost:8000/health: answered by a Django dev server, not by the "
                            "uvicorn app launched there")
    assert w.facts_of(Ready) == [] and w.instances["local:8000"].history[-1].state == "starting"


@pytest.mark.parametrize(("kind", "body", "other"), [
    ("uvicorn", '{"detail":"Not Found"}', None),  # FastAPI's own 404: it answered
    ("vllm", '{"detail":"Not Found"}', None),  # vLLM serves FastAPI: its answer too
    ("uvicorn", "<html><h1>Whitelabel Error Page</h1></html>", "spring-boot"),
    ("next", '<script type="module" src="/@vite/client"></script>', "vite"),
    ("vite", "<h2>This page could not be found.</h2>", "next"),
    ("spring-boot", '{"timestamp":"2026-01-01T00:00:00","status":404,"error":"Not Found","path":"/x"}', None),
    ("npm-script", "<h2>This page could not be found.</h2>", None),  # a kind with no answers is neutral
    ("server", DJANGO_404, None),  # a generic server may well be Django
    ("uvicorn", '{"status": "ok"}', None),  # no kind's signature: neutral
])
def test_answers_are_judged_by_the_signatures_the_catalog_knows(kind: str, body: str, other: str | None) -> None:
    found = answered_by(default_catalog(), kind, body)
    assert (found.name if found else None) == other


def _answered_by_one_by_one(catalog: Catalog, kind: str, body: str) -> str | None:
    """``answered_by`` as it reads: every pattern of every kind searched over the answer's head."""
    own = catalog.by_name.get(kind)
    if own is None or not own.answers or not body:
        return None
    head = body[:20_000]
    if any(re.search(p, head, re.M) for p in own.answers):
        return None
    return next((k.name for k in catalog.kinds if k.answers and k.name != kind
                 and any(re.search(p, head, re.M) for p in k.answers)), None)


_SIGNATURES = sorted({p for k in default_catalog().kinds for p in k.answers})
_USER_KIND = ServerKind(name="hello", label="hello server", programs=["hello"], answers=[r"(?i)hi|yo"])
"""A config kind whose answer holds no word every match needs: it is always searched."""


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_SIGNATURES).flatmap(lambda p: st.from_regex(p, fullmatch=True)),
                          st.sampled_from(["<html>", "ok", "\n", "HI", '{"detail":', "/@vite/", "x" * 30]),
                          st.text(max_size=20)), max_size=4).map("".join),
       st.sampled_from(["uvicorn", "vite", "next", "spring-boot", "server", "hello", "nope"]))
def test_answers_found_through_their_words_are_those_every_pattern_finds(body: str, kind: str) -> None:
    catalog = Catalog([_USER_KIND, *default_catalog().kinds], common_failure=[])
    found = answered_by(catalog, kind, body)
    assert (found.name if found else None) == _answered_by_one_by_one(catalog, kind, body)
    mine = catalog.by_name.get(kind)
    assert own_answer(catalog, kind, body) == (mine is not None and any(re.search(p, body[:20_000], re.M)
                                                                           for p in mine.answers))


def test_a_vite_page_on_the_angular_port_is_the_angular_dev_server(tmp_path: Path) -> None:
    # ng serve (17+) runs on Vite: its page carries Vite's client, so it is its own answer
    w = world(tmp_path, """\
  - bash: npx ng serve --port 4200
    background: true
    task: b1
    output: Command running in background with ID b1
  - bash: curl -s http://localhost:4200/
    output: '<script type="module" src="/@vite/client"></script><app-root></app-root>'
""")
    assert w.instances["local:4200"].history[-1].state == "ready"


@pytest.mark.parametrize(("command", "output", "answered"), [
    ("curl -sf localhost:8000/health || true", "", None),  # the status is true's
    ("curl -sf localhost:8000/health | head -1", "", None),  # the status is head's
    ("curl -s localhost:8000/health || echo 'health check failed'", "health check failed", False),
    ("curl -sf localhost:8000/health && echo UP || echo DOWN", "DOWN", False),
    ("curl -sf localhost:8000/health && echo UP || echo DOWN", "ok\\nUP", True),
    ("curl -sf localhost:8000/health", "", True),  # its own status 0, nothing printed
])
def test_a_masked_exit_status_is_no_success(tmp_path: Path, command: str, output: str, answered: bool | None) -> None:
    w = world(tmp_path, f"""\
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: {command!r}
    output: "{output}"
    exit: 0
""")
    assert [a for _, a, _ in probes(w)] == [answered]
    assert (w.instances["local:8000"].history[-1].state == "ready") is bool(answered)
