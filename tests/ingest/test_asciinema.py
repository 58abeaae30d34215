from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from analyzer.events import Level, SystemEvent, ToolEvent
from analyzer.ingest import detect, load

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "asciinema"


def tools(s: object) -> list[ToolEvent]:
    return [e for e in getattr(s, "events", []) if isinstance(e, ToolEvent)]


def test_v2_commands_split_at_bracketed_paste_prompts() -> None:
    path = FIXTURES / "operator-uvicorn-restart-v2.cast"
    assert detect(path)[0].NAME == "asciinema"
    s = load(path)
    assert (s.format, s.agent) == ("asciinema", "asciinema") and not s.diagnostics
    fg, bg, curl, kill = tools(s)  # the empty Enter at the end is not a command
    assert [t.command for t in tools(s)] == [
        "uvicorn app:api --port 8000",
        "nohup uvicorn app:api --port 8000 > api.log 2>&1 &",  # typed `apj`, backspace, `i.log`
        "curl -s localhost:8000/health",
        "kill %1",
    ]
    assert all(t.by_user and t.category == "shell" and t.name == "terminal" for t in tools(s))
    assert fg.interrupted and fg.output is not None and fg.output.startswith("INFO:     Started server process [5088]")
    assert "Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)" in fg.output  # colours stripped
    assert (bg.output, bg.interrupted) == ("[1] 5120", False)
    assert curl.output == '{"ok":true}' and kill.output == ""
    # lines: where Enter was pressed and where the next prompt came; times from the header timestamp
    assert (fg.line, fg.result_line) == (30, 36)
    assert fg.ts == datetime(2025, 6, 3, 7, 20, 4, 480000, tzinfo=UTC)
    assert fg.result_ts is not None and (fg.result_ts - fg.ts).total_seconds() > 14
    assert s.counts.records == 135 and s.counts.skipped == 1


def test_v3_relative_times_markers_exit_and_prompt_shape_fallback() -> None:
    s = load(FIXTURES / "deploy-restart-no-markers-v3.cast")
    assert [e.kind for e in s.events] == ["tool", "system", "tool", "tool", "system"]
    restart, marker, active, leave, exit_ = s.events
    assert isinstance(restart, ToolEvent) and restart.command == "systemctl restart app.service"
    assert restart.ts == datetime(2025, 6, 3, 8, 23, 22, 150000, tzinfo=UTC)  # 1748939000 + 0.05 + 2.10
    assert isinstance(marker, SystemEvent) and (marker.subtype, marker.text, marker.line) == ("marker", "restarted", 6)
    assert isinstance(active, ToolEvent) and active.output == "active"
    assert isinstance(leave, ToolEvent) and leave.command == "exit"
    assert isinstance(exit_, SystemEvent) and exit_.subtype == "exit" and exit_.exit_code == 0
    # the `#` comment line is not a record; one info diagnostic says how commands were found
    assert s.counts.records == 11
    assert [d.level for d in s.diagnostics] == [Level.info] and "prompt shape" in s.diagnostics[0].message


def test_bad_event_lines_are_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    lines = [
        json.dumps({"version": 2, "width": 80, "height": 24}),
        json.dumps([0.1, "o", "\u001b[?2004hme@box:~$ "]),
        '[0.5, "o", "broken',
        json.dumps({"not": "an event"}),
        json.dumps([1.2, "o", "ls\r\n\u001b[?2004l\r"]),
        json.dumps([1.3, "o", "a.txt\r\n\u001b[?2004hme@box:~$ "]),
    ]
    p = tmp_path / "x.cast"
    p.write_text("\n".join(lines) + "\n")
    s = load(p)
    (ls,) = tools(s)
    assert (ls.command, ls.output, ls.ts) == ("ls", "a.txt", None)  # no header timestamp: no times
    assert [(d.level, d.line) for d in s.diagnostics] == [(Level.error, 3), (Level.error, 4)]


def _cast(tmp_path: Path, *outputs: str, width: int = 80) -> Path:
    """A v2 cast of the given output chunks, 0.5 s apart."""
    lines = [json.dumps({"version": 2, "width": width, "height": 24})]
    lines += [json.dumps([0.5 * (i + 1), "o", data]) for i, data in enumerate(outputs)]
    p = tmp_path / "t.cast"
    p.write_text("\n".join(lines) + "\n")
    return p


PROMPT = "\u001b[?2004hme@box:~$ "
ACCEPT = "\r\n\u001b[?2004l\r"


def test_a_completion_menu_and_a_redrawn_line_do_not_merge_into_the_command(tmp_path: Path) -> None:
    p = _cast(
        tmp_path, PROMPT, "docker p",
        # Tab: the shell lists the candidates below the line, then moves back up and redraws it
        "\r\npause  port   ps     pull   push\u001b[1A\r\u001b[Kme@box:~$ docker p",
        "s -a", "\u001b[J",  # the menu is erased before Enter
        ACCEPT, "CONTAINER ID   IMAGE   STATUS\r\n3f2a   nginx   Up 2 minutes\r\n", PROMPT,
    )
    (ps,) = tools(load(p))
    assert ps.command == "docker ps -a"
    assert ps.output == "CONTAINER ID   IMAGE   STATUS\n3f2a   nginx   Up 2 minutes"


def test_a_full_screen_program_gives_its_command_and_nothing_of_its_screen(tmp_path: Path) -> None:
    p = _cast(
        tmp_path, PROMPT, "htop", ACCEPT,
        "\u001b[?1049h\u001b[H\u001b[2J  PID USER  COMMAND\r\n 4100 me    uvicorn app:api\r\n",
        "\u001b[?1049l", PROMPT, "ls", ACCEPT, "a.txt\r\n", PROMPT,
    )
    htop, ls = tools(load(p))
    assert (htop.command, htop.output) == ("htop", "")
    assert (ls.command, ls.output) == ("ls", "a.txt")


def test_a_long_wrapped_command_is_one_line_and_a_huge_output_keeps_its_ends(tmp_path: Path) -> None:
    long_cmd = "curl -s http://localhost:8000/health?" + "x" * 60  # wraps on a 40-column screen
    rows = 50_000
    p = _cast(tmp_path, PROMPT, long_cmd, ACCEPT, "".join(f"line {i}\r\n" for i in range(rows)), PROMPT, width=40)
    (curl,) = tools(load(p))
    assert curl.command == long_cmd
    out = (curl.output or "").split("\n")
    assert out[0] == "line 0" and out[-1] == f"line {rows - 1}"
    assert len(out) < 25_000 and any("lines elided" in ln for ln in out)  # the middle is not held
