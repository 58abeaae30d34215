"""Whatever the text, ``parse`` returns a ShellScript and never raises."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analyzer.shell.parse import parse

# shell punctuation, quotes, heredoc and control characters, so the parser meets its own syntax
_SHELLISH = st.sampled_from([
    "'", '"', "`", "$(", ")", "(", "{", "}", "[[", "]]", "|", "||", "&&", "&", ";", ";;", "\n", "\\",
    "<<EOF\n", "<<'EOF'\n", "\nEOF\n", "<<<", ">", "2>&1", "$'", "${", "#", " ", "\t", "\x00", "\x1b",
    "ssh h ", "bash -c ", "sudo ", "nohup ", "pkill -f ", "kill $(pgrep x)", "cat > f ", "tmux send-keys ",
    "docker exec c ", "for i in 1; do ", "done", "if x; then ", "fi", "case a in ", "esac", "\ud800",
])
_TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.one_of(_SHELLISH, st.text(max_size=8)), max_size=40).map("".join),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_any_text_gives_a_script(text: str) -> None:
    script = parse(text)
    assert script.status in ("ok", "recovered", "failed")
    assert script.source == text
    for i, c in enumerate(script.commands):
        assert c.position == i
        assert c.parent is None or 0 <= c.parent < i
        assert 0 <= c.depth <= 4
        if c.span is not None:
            assert 0 <= c.span[0] <= c.span[1] <= len(text)
    if script.status == "failed":
        assert script.notes
