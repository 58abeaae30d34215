"""tmux keys and kills reach the pane or window they target, not every server of the session.

Targets and layout follow tmux(1): ``-t api`` is session api's current window's active pane,
``api:worker`` that window's active pane, ``api:0.1`` pane 1 of window 0; ``new-window`` and
``split-window`` make the new window or pane current unless ``-d``. Command lines are written
from the manual, not taken from any log.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from analyzer.lifecycle.panes import TmuxLayout
from tests.lifecycle.test_units import states, world


def pane(layout: TmuxLayout, line: str) -> str | None:
    return layout.apply("local", shlex.split(line))


def test_targets_name_one_pane_of_the_layout_the_commands_made() -> None:
    t = TmuxLayout()
    assert pane(t, "tmux new -d -s api 'uvicorn app:api'") == "api:0.0"
    assert pane(t, "tmux new-window -t api -n worker 'celery worker'") == "api:1.0"
    assert pane(t, "tmux send-keys -t api C-c") == "api:1.0"  # the new window became the current one
    assert pane(t, "tmux send-keys -t api:0 C-c") == "api:0.0"
    assert pane(t, "tmux send-keys -t =api:worker C-c") == "api:1.0"
    assert pane(t, "tmux split-window -d -t api:0 'npm run dev'") == "api:0.1"
    assert pane(t, "tmux send-keys -t api:0 C-c") == "api:0.0"  # split with -d: the active pane stays
    assert pane(t, "tmux select-pane -t api:0.1") == "api:0.1"
    assert pane(t, "tmux send-keys -t api C-c") == "api:0.1"  # selecting a pane selects its window too
    assert pane(t, "tmux new-window -d -t api -n logs") == "api:2.0"
    assert pane(t, "tmux send-keys -t ap C-c") == "api:0.1"  # a unique prefix; -d left the current window
    assert pane(t, "tmux send-keys -t %3 C-c") is None  # a pane id no command line showed
    assert pane(t, "tmux send-keys -t api:nowhere C-c") is None  # a window name nobody gave
    assert pane(t, "tmux capture-pane -p -S -20 -t api:0") == "api:0.1"  # -p is a flag, -S takes a line
    assert pane(t, "tmux send-keys -l -t api:1 'C-c'") == "api:1.0"
    assert pane(t, "tmux -L other send-keys -t web:2 'npm start' Enter") == "web:2.0"  # first named here


def test_c_c_to_a_session_stops_only_the_server_in_its_current_windows_pane(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s api 'uvicorn app:api --port 8000'
  - bash: tmux new-window -d -t api -n worker 'python -m http.server 8080'
  - bash: tmux send-keys -t api C-c
  - bash: tmux send-keys -t api:worker C-c
""")
    first, second = w.kills()
    assert [v.instance for v in first.victims] == ["local:8000"] and "api:0.0" in " ".join(first.notes)
    assert [v.instance for v in second.victims] == ["local:8080"]
    assert states(w, "local:8080") == [("starting", 1), ("stopped", 3)]  # the first C-c did not reach it


def test_a_new_window_without_d_is_where_keys_to_the_session_go(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s api 'uvicorn app:api --port 8000'
  - bash: tmux new-window -t api -n worker 'python -m http.server 8080'
  - bash: tmux send-keys -t api C-c
""")
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == ["local:8080"]
    assert w.state_after("local:8000", 2) == "starting" and w.state_after("local:8080", 2) == "stopped"


def test_c_c_misses_a_server_started_with_an_ampersand_and_a_hangup_misses_nohup(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s web
  - bash: tmux send-keys -t web 'npx vite --port 5173 &' Enter
  - bash: tmux send-keys -t web 'nohup node server.js --port 3000 > s.log 2>&1 &' Enter
  - bash: tmux send-keys -t web C-c
  - bash: tmux kill-window -t web:0
""")
    interrupt, close = w.kills()
    assert interrupt.victims == [] and any("C-c does not reach it" in n for n in interrupt.notes)
    # the window's shell hangs up its jobs: the plain `&` one dies, the nohup one runs on
    assert [v.instance for v in close.victims] == ["local:5173"]
    assert w.state_after("local:3000", 4) == "starting"


def test_kill_pane_and_kill_window_reach_their_pane_and_window(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s dev 'uvicorn app:api --port 8000'
  - bash: tmux split-window -t dev 'npx vite --port 5173'
  - bash: tmux new-window -t dev 'python -m http.server 8080'
  - bash: tmux kill-pane -t dev:0.1
  - bash: tmux kill-window -t dev:1
  - bash: tmux kill-session -t dev
""")
    pane_kill, window_kill, session_kill = w.kills()
    assert [v.instance for v in pane_kill.victims] == ["local:5173"]
    assert [v.instance for v in window_kill.victims] == ["local:8080"]
    assert [v.instance for v in session_kill.victims] == ["local:8000"]


def test_a_pane_id_reaches_nothing_known_and_a_window_first_named_by_keys_is_drawn(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s api 'uvicorn app:api --port 8000'
  - bash: tmux send-keys -t api:1 'python -m http.server 8080' Enter
  - bash: tmux send-keys -t %1 C-c
  - bash: tmux send-keys -t api:1 C-c
""")
    (kill,) = [k for k in w.kills() if k.victims]
    assert kill.text == "tmux send-keys -t api:1 C-c" and [v.instance for v in kill.victims] == ["local:8080"]
    assert w.state_after("local:8000", 3) == "starting"


def test_capture_pane_is_the_log_of_the_server_in_the_pane_it_shows(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s dev 'uvicorn app:api --port 8000'
  - bash: tmux new-window -t dev 'python -m uvicorn admin:app --port 9000'
  - bash: tmux capture-pane -p -t dev:0
    output: "INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)"
  - bash: tmux capture-pane -p -t dev
    output: |
      Traceback (most recent call last):
      ModuleNotFoundError: No module named 'admin'
""")
    assert states(w, "local:8000") == [("starting", 0), ("ready", 2)]
    assert states(w, "local:9000") == [("starting", 1), ("failed", 3)]  # the current window is the new one


def test_screen_quit_hangs_up_the_session_but_not_a_nohup_server_in_it(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: screen -dmS docs python -m http.server 8080
  - bash: screen -dmS api nohup uvicorn app:api --port 8000
  - bash: screen -S docs -X quit
  - bash: screen -S api -X quit
""")
    docs, api = [k for k in w.kills() if k.mechanism == "screen"]
    assert [v.instance for v in docs.victims] == ["local:8080"]
    assert api.victims == [] and any("nohup" in n for n in api.notes)
    assert w.state_after("local:8000", 3) == "starting"


def test_odd_targets_and_numbers_are_read_without_failing(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -d -s api 'uvicorn app:api --port 8000'
  - bash: "tmux send-keys -t api:\\u00b2.\\u00b3 C-c; tmux new-window -t 'api:\\u00b9' -n; tmux send-keys -t : C-c"
  - bash: pm2 start server.js --name web
  - bash: pm2 pid web
    output: "\\u00b2"
  - bash: pm2 list
    output: "│ id │ name │ pid │ status │\\n│ \\u00b9 │ web │ \\u00b2 │ online │"
""")
    # a window the layout does not know: which pane is not known, so the session's server may be hit
    assert [v.instance for k in w.kills() for v in k.victims] == ["local:8000"]
    assert w.launches("local/pm2:web")[0].pid is None and w.instances["local/pm2:web"].pids == []


def test_a_server_no_catalog_lists_is_hosted_by_its_session_too(tmp_path: Path) -> None:
    w = world(tmp_path, """\
  - bash: tmux new -ds gw './bin/gateway --listen :9090'
  - bash: tmux kill-session -t gw
""")
    assert w.instances["local:9090"].session == "tmux:gw"
    (kill,) = w.kills()
    assert [v.instance for v in kill.victims] == ["local:9090"] and w.state_after("local:9090", 1) == "stopped"
