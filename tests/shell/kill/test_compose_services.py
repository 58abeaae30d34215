"""docker compose stop|kill|rm -sf|restart SERVICE…: the services named, by compose's own name for
them (``manager="compose"``, ``PROJECT/SERVICE``) or by their ``<project>-<service>-<n>`` container;
option values are no services."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


def service(project: str, name: str, container: str | None = None) -> Process:
    return Process(kind="server", label=name, container=container or f"{project}-{name}-1", manager="compose",
                   manager_name=f"{project}/{name}")


STACK = [service("shop", "api"), service("shop", "web"), service("shop", "db", container="shop-postgres")]


def test_a_service_verb_hits_the_services_it_names_and_no_option_value() -> None:
    for cmd in ("docker compose stop -t 5 api", "docker compose kill -s SIGINT api", "docker compose rm -sf api",
                "docker compose restart --timeout 3 api", "docker-compose stop api"):
        (v,) = run(cmd, STACK)
        assert labels(v) == ["api"] and v.targets == ["api"], cmd
    (k,) = run("docker compose kill -s SIGINT api", STACK)
    assert k.signal_name == "INT"


def test_a_whole_stack_verb_hits_every_service_even_with_its_own_container_name() -> None:
    (v,) = run("docker compose down --rmi all -v", STACK)
    assert labels(v) == ["api", "web", "db"] and v.targets == ["(all services)"]


def test_rm_without_stop_removes_only_stopped_containers() -> None:
    assert run("docker compose rm -f api", STACK) == []


def test_a_named_project_leaves_another_projects_services() -> None:
    (v,) = run("docker compose -p billing stop api", [*STACK, service("billing", "api")])
    assert [h.process.manager_name for h in v.victims] == ["billing/api"]
