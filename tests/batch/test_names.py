from __future__ import annotations

import re

import pytest

from analyzer.batch.names import MAX_STEM, safe_name

SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*-[0-9a-f]{10}$")


@pytest.mark.parametrize(("relative", "stem"), [
    ("claude-code/v2.0-kill-shell.jsonl", "claude-code_v2.0-kill-shell.jsonl"),
    ("../../etc/passwd", "etc_passwd"),
    ("..", "session"),
    (".hidden/.aider.chat.history.md", "hidden_.aider.chat.history.md"),
    ("a b/ c?*:|\"<>.jsonl", "a_b_c_.jsonl"),
    ("ünïcødé/セッション.session.yaml", "unicde_.session.yaml"),
    ("opencode.db#ses_3c0a1b2c", "opencode.db_ses_3c0a1b2c"),
    ("C:\\Users\\me\\s.jsonl", "C_Users_me_s.jsonl"),
])
def test_sanitized_stems(relative: str, stem: str) -> None:
    name = safe_name(relative, "/abs/" + relative)
    assert SAFE.match(name), name
    assert name.rsplit("-", 1)[0] == stem


def test_long_names_are_cut_and_keep_a_unique_suffix() -> None:
    a = safe_name("x" * 300 + "/a.jsonl", "/k/a")
    b = safe_name("x" * 300 + "/b.jsonl", "/k/b")
    assert len(a) == MAX_STEM + 11 and a[:MAX_STEM] == "x" * MAX_STEM
    assert a != b


def test_same_file_name_in_two_folders_differs_and_is_stable() -> None:
    one = safe_name("same.jsonl", "/data/a/same.jsonl")
    two = safe_name("same.jsonl", "/data/b/same.jsonl")
    assert one != two and one.startswith("same.jsonl-") and two.startswith("same.jsonl-")
    assert safe_name("same.jsonl", "/data/a/same.jsonl") == one
