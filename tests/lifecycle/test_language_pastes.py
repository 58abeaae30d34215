"""analyzer.lifecycle.language.pastes: what the user pasted is not read, and offsets survive it."""

from __future__ import annotations

import pytest

from analyzer.lifecycle.language import MAX_ANALYSED_CHARS, Intent, MessageReading, read_message


def test_pasted_server_log_in_a_fence_is_not_the_user_saying_ready() -> None:
    text = ("what does this mean?\n```\nINFO:     Application startup complete.\n"
            "INFO:     Uvicorn running on http://0.0.0.0:8000\n```")
    r = read_message(text)
    assert r.intents == frozenset()
    assert r.ports == ()
    assert [s.reason for s in r.skipped] == ["code-fence"]


def test_unfenced_log_lines_are_skipped_but_the_prose_after_is_read() -> None:
    log = "\n".join(f"INFO:     127.0.0.1:5{i:04d} - \"GET /health HTTP/1.1\" 200 OK" for i in range(30))
    text = f"here you go\n{log}\nit's up now, leave vllm running"
    r = read_message(text)
    assert r.intents == {Intent.ready, Intent.hold}
    assert any(s.reason == "paste" for s in r.skipped)
    (ready,) = r.evidence(Intent.ready)
    assert ready.text == "up" and text[ready.start : ready.end] == "up", "offsets survive the skipped paste"
    (kind,) = r.entities
    assert text[kind.start : kind.end] == "vllm"


def test_traceback_without_fence_is_skipped() -> None:
    text = ("the server crashed with this:\nTraceback (most recent call last):\n"
            "  File \"app.py\", line 3, in <module>\n"
            "    app.run(port=5000)\nOSError: [Errno 98] Address already in use")
    r = read_message(text)
    assert r.intents == {Intent.not_ready}
    assert r.ports == ()


def test_single_pasted_ready_line_and_harness_blocks_are_not_read() -> None:
    sglang_ready_line = "[2025-11-02 10:11:12] The server is fired up and ready to roll!"
    assert read_message(sglang_ready_line).intents == frozenset()
    assert read_message(" \u2713 Ready in 2.3s").intents == frozenset()
    assert read_message("<bash-input>systemctl restart sglang</bash-input>").intents == frozenset()
    r = read_message("<system-reminder>the server is ready</system-reminder>\nis it up?")
    assert r.intents == {Intent.question}


def test_inline_log_tail_is_cut_off_the_prose_line() -> None:
    r = read_message("i still get this error when i run the server: ERROR:    Application startup complete")
    assert r.intents == {Intent.not_ready}
    assert [s.reason for s in r.skipped] == ["log"]


def test_quoted_words_are_not_the_users_assertion() -> None:
    r = read_message('you keep saying "it is ready" but it is not responding')
    assert r.intents == {Intent.not_ready}
    assert [s.reason for s in r.skipped] == ["quote"]


def test_long_message_is_read_at_head_and_tail_and_says_so() -> None:
    middle = "We discussed the tokenizer design at length. " * 400
    text = f"Thanks for the summary.\n{middle}\nrestart sglang on :30001 please"
    r = read_message(text)
    assert len(text) > MAX_ANALYSED_CHARS and r.truncated
    assert r.intents == {Intent.restart} and r.ports == (30001,)
    assert any(s.reason == "length-cap" for s in r.skipped)
    hidden = read_message(f"{middle[:5000]} kill the server now {middle[:5000]}")
    assert hidden.truncated and Intent.stop not in hidden.intents, "the unread middle is a documented limit"


def test_huge_paste_does_not_blow_up() -> None:
    log = "\n".join(f"INFO 11-02 10:11:{i % 60:02d} engine.py:{i}] Avg prompt throughput: {i} tokens/s"
                    for i in range(5000))
    r = read_message(f"{log}\nok it's ready")
    assert r.intents == {Intent.ready}
    assert r.entities == ()


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "?!?", "\x00\x01 restart", "a" * 20000, "``` unclosed",
                                  "</task-notification> <task-notification>", "\u200b" * 50])
def test_odd_input_never_raises(text: str) -> None:
    r = read_message(text)
    assert isinstance(r, MessageReading)
    assert r.intents <= {Intent.restart}


def _spec(middle: str) -> str:
    sections = "\n".join(
        f"## Part {n}\n\n- the portal must stay responsive and the api healthy under load\n"
        f"- the dashboard is ready when every widget loads\n- how the export flow now works\n"
        for n in range(1, 8))
    return f"Work through this spec:\n\n# Delivery Spec\n\nGoal Of This Phase\n\n{sections}\n{middle}\n" \
           "- keep the docs aligned\n\nStop Condition / Hand-off Rule\n\n- stop when the review passes\n"


def test_a_pasted_document_states_nothing_but_its_instructions_count() -> None:
    text = _spec("- Do not start services and do not restart the database.")
    r = read_message(text)
    assert len(text) > 1000
    assert r.intents == {Intent.hold}, "the spec's ready/healthy/works are the spec's, its orders the user's"
    headings = [text[s.start : s.end] for s in r.skipped if s.reason == "heading"]
    assert "Stop Condition / Hand-off Rule" in headings and "## Part 1" in headings


def test_prose_after_a_pasted_document_is_the_users_own() -> None:
    r = read_message(_spec("- fix the exporter") + "\nthe server is down again since the last deploy")
    assert r.intents == {Intent.not_ready}


def test_a_short_list_is_no_document() -> None:
    r = read_message("- the server is down\n- the api returns 502\n- restart it please")
    assert r.intents == {Intent.not_ready, Intent.restart}


def test_an_agents_write_up_is_read_whole_with_documents_off() -> None:
    text = _spec("- the api is up on :8000 and healthy")
    assert Intent.ready not in read_message(text).intents
    plain = read_message(text, documents=False)
    assert Intent.ready in plain.intents and not any(s.reason == "heading" for s in plain.skipped)
    assert read_message(text) is not plain, "each way of reading has its own memo"
