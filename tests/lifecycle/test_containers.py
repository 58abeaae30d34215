"""The container ledger: docker ps / compose ps tables and whose containers they show."""

from __future__ import annotations

from analyzer.lifecycle.containers import ContainerLedger, container_rows, stopped_containers

DOCKER_PS = """\
CONTAINER ID   IMAGE         COMMAND                  CREATED          STATUS                    PORTS                    NAMES
1a2b3c4d5e6f   billing-api   "docker-entrypoint.s…"   12 seconds ago   Created                                            shop-api-1
6f5e4d3c2b1a   mariadb:11    "docker-entrypoint.s…"   12 seconds ago   Up 11 seconds (healthy)   3306/tcp                 shop-db-1
"""

COMPOSE_PS = """\
NAME        IMAGE         COMMAND     SERVICE   CREATED         STATUS                  PORTS
crm-app-1   crm-app       "php-fpm"   app       3 minutes ago   Up 3 minutes            9000/tcp
crm-db-1    postgres:16   "docker…"   db        3 minutes ago   Up 3 minutes (healthy)  0.0.0.0:5432->5432/tcp
"""


def test_docker_ps_cells_with_spaces_and_an_empty_ports_cell() -> None:
    rows = container_rows("some other output\n" + DOCKER_PS + "\ndone\n")
    assert [(r.name, r.image, r.id, r.status) for r in rows] == [
        ("shop-api-1", "billing-api", "1a2b3c4d5e6f", "Created"),
        ("shop-db-1", "mariadb:11", "6f5e4d3c2b1a", "Up 11 seconds (healthy)"),
    ]


def test_compose_ps_rows_carry_their_service() -> None:
    rows = container_rows(COMPOSE_PS)
    assert [(r.name, r.service, r.image) for r in rows] == [("crm-app-1", "app", "crm-app"),
                                                            ("crm-db-1", "db", "postgres:16")]


def test_a_row_without_its_header_is_read_only_when_it_looks_like_a_row() -> None:
    grepped = 'legacy-db   postgres:13-alpine   "docker-entrypoint.s…"   db   20 seconds ago   Restarting (1) 3 seconds ago'
    assert [(r.name, r.service, r.image) for r in container_rows(grepped)] == [("legacy-db", "db", "postgres:13-alpine")]
    assert container_rows("db connection refused on 5432\nNAME is not set") == []


def test_stopped_containers_from_compose_progress_lines() -> None:
    out = " Container a-1 Stopping\n Container a-1 Removed\n ✔ Container b-1 Removed\n Container c-1 Created\n"
    assert stopped_containers(out) == ["a-1", "b-1"]


def test_an_image_other_than_the_one_the_agent_built_is_someone_elses() -> None:
    ledger = ContainerLedger()
    ledger.agent_made("local", 1, " Image shop-api Built\n Container shop-api-1 Created\n Container shop-db-1 Created\n")
    ledger.listed("local", 2, container_rows(DOCKER_PS))
    api = ledger.foreign("local", "shop-api-1")
    assert api is not None and "billing-api" in api[1] and "shop-api" in api[1]
    db = ledger.foreign("local", "shop-db-1")  # no image known for it, but created in the same moment
    assert db is not None and db[1].startswith("created together with shop-api-1")


def test_the_agents_own_images_and_recreates_are_not_foreign() -> None:
    ledger = ContainerLedger()
    ledger.agent_made("local", 1, " Image crm-app Built\n Container crm-app-1 Created\n")
    ledger.listed("local", 2, container_rows(COMPOSE_PS))
    assert ledger.foreign("local", "crm-app-1") is None
    ledger.agent_made("local", 3, " Container crm-app-1 Recreated\n")  # a new image name after a compose edit
    ledger.listed("local", 4, container_rows(COMPOSE_PS.replace("crm-app       ", "reg/crm:2     ", 1)))
    assert ledger.foreign("local", "crm-app-1") is None


def test_a_recreate_by_someone_else_between_two_listings() -> None:
    ledger = ContainerLedger()
    ledger.listed("local", 1, container_rows(DOCKER_PS))
    assert ledger.foreign("local", "shop-api-1") is None
    ledger.listed("local", 5, container_rows(DOCKER_PS.replace("1a2b3c4d5e6f", "0c0c0c0c0c0c")))
    seen = ledger.foreign("local", "shop-api-1")
    assert seen is not None and "1a2b3c4d5e6f, then 0c0c0c0c0c0c" in seen[1]
    # had the agent started containers in between, the new id would be no evidence
    ledger2 = ContainerLedger()
    ledger2.listed("local", 1, container_rows(DOCKER_PS))
    ledger2.agent_made("local", 3, " Container other-1 Started\n")
    ledger2.listed("local", 5, container_rows(DOCKER_PS.replace("1a2b3c4d5e6f", "0c0c0c0c0c0c")))
    assert ledger2.foreign("local", "shop-api-1") is None


def test_hosts_are_separate() -> None:
    ledger = ContainerLedger()
    ledger.agent_made("gpu1", 1, " Image shop-api Built\n Container shop-api-1 Created\n")
    ledger.listed("local", 2, container_rows(DOCKER_PS))
    assert ledger.foreign("local", "shop-api-1") is None
