"""`analyzer graph` shows what identifies each instance: owner and its evidence, members, PIDs."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from analyzer.cli import main

SESSION = """\
events:
  - user: run the stack and the API
  - bash: cd /home/me/shop && docker compose up -d
    output: " Image shop-api Built\\n Container shop-db-1 Started\\n Container shop-api-1 Started"
  - bash: nohup uvicorn app:api --port 8000 > api.log 2>&1 &
  - bash: lsof -ti :8000
    output: "48213"
  - bash: docker ps -a
    output: |
      CONTAINER ID   IMAGE       COMMAND                  CREATED         STATUS         PORTS   NAMES
      1a2b3c4d5e6f   billing     "docker-entrypoint.s…"   5 seconds ago   Up 4 seconds           shop-api-1
  - bash: docker compose down
    output: " Container shop-api-1 Removed"
"""


def test_graph_text_names_owners_members_and_pids(tmp_path: Path) -> None:
    f = tmp_path / "s.session.yaml"
    f.write_text(SESSION)
    out = CliRunner().invoke(main, ["graph", str(f)], env={"COLUMNS": "200"}).output
    stack = out[out.index("local/container:compose:shop"):]
    assert "members: shop-db-1, shop-api-1" in stack.splitlines()[2]
    api = out[out.index("local:8000"):]
    assert "pid: 48213 (launch #2)" in api
    foreign = out[out.index("shop-api-1 (container)"):]
    assert "owner: someone else during the session (line 8): shop-api-1 runs image billing" in foreign
