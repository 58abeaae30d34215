"""``harness_cut``: a tool output the harness itself cut is flagged (``ToolEvent.truncated``), so
the rules do not read a missing middle as a missing line; a plain output mentioning the word is not."""

from __future__ import annotations

import pytest

from analyzer.ingest.base import harness_cut


@pytest.mark.parametrize("text", [
    "head\n... [1234 characters truncated] ...\ntail",  # Claude Code's Bash result
    "head\n... [56 lines truncated] ...\ntail",
    "start ...120 bytes truncated... end",  # opencode's Truncate.output
    "start ...7 lines truncated... end",
    "<persisted-output>\nOutput too large (2.1MB). Full output saved to: /tmp/x.txt",
    "  \n <persisted-output> Output too large",  # the preview may open with blank lines
])
def test_harness_markers_are_cut(text: str) -> None:
    assert harness_cut(text)


@pytest.mark.parametrize("text", [
    "",
    "the log was truncated by logrotate",  # the word alone is no marker
    "... [many characters truncated] ...",  # no count
    "note: <persisted-output> Output too large",  # the preview marker only opens an output
    "... [12 characters TRUNCATED] ...",  # the markers are written in lower case
])
def test_other_outputs_are_not_cut(text: str) -> None:
    assert not harness_cut(text)
