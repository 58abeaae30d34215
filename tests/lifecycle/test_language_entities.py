"""analyzer.lifecycle.language.entities: ports, hosts, kinds and units, with their spans."""

from __future__ import annotations

import pytest

from analyzer.lifecycle.language import EntityLabel, read_message


def test_entities_carry_spans_into_the_original_text() -> None:
    text = "ssh root@10.1.2.3 and restart sglang-k26-ddtree, then check localhost:8080 and port 9000"
    r = read_message(text)
    for ent in r.entities:
        assert text[ent.start : ent.end] == ent.text
    by_value = {(e.label, e.value): e for e in r.entities}
    assert by_value[(EntityLabel.host, "10.1.2.3")].text == "root@10.1.2.3"
    unit = by_value[(EntityLabel.unit, "sglang-k26-ddtree")]
    assert unit.kind == "sglang"
    assert by_value[(EntityLabel.port, "8080")].text == "localhost:8080"
    assert by_value[(EntityLabel.host, "localhost")].text == "localhost"
    assert by_value[(EntityLabel.port, "9000")].text == "port 9000"
    assert r.kinds == (), "a kind inside a unit name is the unit's, not a separate kind"


@pytest.mark.parametrize(
    ("text", "ports", "hosts"),
    [
        ("serve on *:30001", (30001,), ()),
        ("bind 0.0.0.0:30000", (30000,), ()),
        ("curl :8000/health", (8000,), ()),
        ("--port=8000 and --port 8001", (8000, 8001), ()),
        ("docker run -p 8080:80 nginx", (8080,), ()),
        ("kill the vllm server on gpu2", (), ("gpu2",)),
        ("on the CT200 machine", (), ("ct200",)),
        ("load it on GPU 2", (), ()),
        ("run it on qwen3-8b with fp8 on h100", (), ()),
        ("it happened at 10:30 in 2024", (), ()),
    ],
)
def test_ports_and_hosts(text: str, ports: tuple[int, ...], hosts: tuple[str, ...]) -> None:
    r = read_message(text)
    assert r.ports == ports
    assert r.hosts == hosts


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("text-generation-inference", "tgi"),
        ("llama-server", "llama.cpp"),
        ("the sglang router", "sglang-router"),
        ("python -m http.server", "http.server"),
        ("TensorRT-LLM", "trtllm"),
        ("npm run dev", "node"),
        ("the vite dev server", "vite"),
    ],
)
def test_kinds_are_canonical(text: str, kind: str) -> None:
    assert read_message(text).kinds == (kind,)
