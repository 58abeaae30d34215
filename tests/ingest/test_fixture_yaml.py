"""The fixture reader parses with libyaml where that reads a file exactly as the pure loader does
(the same data, the same lines of events and cases, the same errors), and with the pure loader
everywhere else: a fixture means the same whichever PyYAML build runs it."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from analyzer.ingest import IngestError, fixture, load

pytestmark = pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")

ROOT = Path(__file__).resolve().parents[2]
REPO_YAML = sorted([*ROOT.glob("fixtures/**/*.yaml"), *ROOT.glob("rules/*.cases.yaml")])


def _item_lines(node: yaml.Node | None) -> list[tuple[int, ...]]:
    """The line of every sequence item (what readers take from a tree besides its data)."""
    lines: list[tuple[int, ...]] = []
    stack, seen = [node] if node is not None else [], set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.SequenceNode):
            lines.append(tuple(c.start_mark.line for c in n.value))
            stack.extend(n.value)
        elif isinstance(n, yaml.MappingNode):
            stack.extend(c for pair in n.value for c in pair)
    return lines


def _read(path: Path, c: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setattr(fixture, "_CLOADER", yaml.CSafeLoader if c else None)
    try:
        node, doc = fixture.read_yaml(path)
    except IngestError as exc:
        return ("error", str(exc), exc.line)
    return ("ok", repr(doc), _item_lines(node))


@pytest.mark.parametrize("path", REPO_YAML, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_fixture_and_case_file_reads_the_same_with_libyaml(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)


def test_the_seed_fixture_is_composed_by_libyaml() -> None:
    # the start-up benchmark's input: none of the pure-only cases apply to it
    text = (ROOT / "fixtures/seeds/004-restart-sglang-systemd.session.yaml").read_text()
    assert fixture._PURE_ONLY.search(text) is None
    node = yaml.compose(text, Loader=yaml.CSafeLoader)
    assert node is not None and fixture._same_as_pure(node, fixture.C_DEPTH)


@pytest.mark.parametrize("text", [
    "events:\n  - user: hi\t\n",  # libyaml takes this tab; the pure scanner refuses it
    "events:\n  - user: !\n",  # a bare tag: libyaml reads '', the pure loader None
    "events:\n  - bash: ls\n    output: >#\n",  # a block scalar header run into a comment
    "events:\n  - tool: X\n    input: {a: b?}\n",  # '?' inside a flow scalar: the pure scanner fails
    "events:\n  - bash: ls\n    ? output\n  - user: hi\n",  # an empty value: lines differ, not the items'
    "events:\n  - user: \x01\n",  # a control character the pure reader refuses
    "events:\n  - user: " + "[" * 700 + "]" * 700 + "\n",  # deeper than the pure composer goes
    "events:\n  - user: " + "[" * 2000 + "]" * 2000 + "\n",  # deeper than libyaml goes
], ids=["tab", "tag", "header", "flow-question", "empty-value", "control", "deep", "deeper"])
def test_where_libyaml_reads_otherwise_the_pure_loader_decides(text: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "case.session.yaml"
    path.write_text(text)
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)


def test_deep_nesting_is_still_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.session.yaml"
    path.write_text("events:\n  - user: " + "[" * 2000 + "]" * 2000 + "\n")
    with pytest.raises(IngestError, match="nested too deep"):
        load(path)


_CHARS = [*" \n:-[]{}?,'\"#&*!|>%@`\\abc01.\t", "\n  ", "\n- ", ": ", "? ", "\r\n", "é", "\x85", "\u2028"]
_PREFIXES = ["", "events:\n  - user: ", "events:\n  - bash: x\n    output: ", "a: ", "- ", "events: [",
             "cases:\n  - events:\n    - "]


def test_fuzzed_documents_read_the_same_with_libyaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(18)
    path = tmp_path / "fuzz.session.yaml"
    seeds = [p.read_text() for p in REPO_YAML]
    differ = []
    for i in range(1500):
        if i % 10:
            text = rng.choice(_PREFIXES) + "".join(rng.choice(_CHARS) for _ in range(rng.randint(1, 25)))
        else:  # a real file with a few characters inserted, deleted or replaced
            chars = list(rng.choice(seeds))
            for _ in range(rng.randint(1, 4)):
                at = rng.randrange(len(chars))
                chars[at:at + rng.randint(0, 1)] = [rng.choice(_CHARS)] * rng.randint(0, 1)
            text = "".join(chars)
        path.write_text(text)
        if _read(path, True, monkeypatch) != _read(path, False, monkeypatch):
            differ.append(text)
    assert differ == []
