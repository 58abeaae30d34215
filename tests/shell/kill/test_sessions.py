"""tmux kill-session/kill-server: the processes of the session."""

from __future__ import annotations

from analyzer.shell.kill import Process
from tests.shell.kill.helpers import labels, run


def test_tmux_kill_session_and_server() -> None:
    a = Process(argv=("python", "-m", "sglang.launch_server"), tmux_session="server", label="in server")
    b = Process(argv=("vllm", "serve"), tmux_session="vllm", label="in vllm")
    (v,) = run("tmux kill-session -t server", [a, b])
    assert v.mechanism == "tmux" and labels(v) == ["in server"] and v.signal_name == "HUP"
    (s,) = run("tmux kill-server", [a, b])
    assert labels(s) == ["in server", "in vllm"]


def test_a_target_without_a_session_names_the_current_one_which_is_unknown() -> None:
    a = Process(argv=("uvicorn", "app:api"), tmux_session="api", label="in api")
    (v,) = run("tmux send-keys -t :1 C-c", [a])
    assert labels(v) == []
    (w,) = run("tmux kill-window -t :", [a])
    assert labels(w) == []
    (named,) = run("tmux send-keys -t api:1 C-c", [a])
    assert labels(named) == ["in api"]


def test_c_c_to_a_pane_id_names_no_known_pane() -> None:
    a = Process(argv=("uvicorn", "app:api"), tmux_session="api", label="in api")
    (v,) = run("tmux send-keys -t %3 C-c", [a])
    assert labels(v) == [] and v.unresolved == ["%3"] and any("pane id" in n for n in v.notes)


def test_ctrl_c_by_any_of_its_tmux_names_and_not_as_literal_text() -> None:
    a = Process(argv=("uvicorn", "app:api"), tmux_session="api", label="in api")
    for keys in ("C-c", "^C", "C-C"):
        (v,) = run(f"tmux send-keys -t api {keys}", [a])
        assert labels(v) == ["in api"] and v.signal_name == "INT"
    assert run("tmux send-keys -t api -l C-c", [a]) == []


def test_screen_stuff_ctrl_c_interrupts_the_session_and_other_stuff_kills_nothing() -> None:
    a = Process(argv=("uvicorn", "app:api"), tmux_session="api", label="in api")
    b = Process(argv=("npx", "vite"), tmux_session="web", label="in web")
    for keys in ("'^C'", '"^c"', "'\\003'"):
        (v,) = run(f"screen -S api -X stuff {keys}", [a, b])
        assert v.mechanism == "screen" and labels(v) == ["in api"] and v.signal_name == "INT"
        assert "interrupts what runs in the foreground of session api" in v.victims[0].reason
    assert run("screen -S api -X stuff 'npm run dev\\n'", [a, b]) == []
    (q,) = run("screen -S api -X quit", [a, b])
    assert labels(q) == ["in api"] and q.signal_name == "HUP"
