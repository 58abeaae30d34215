"""Fuzz every ingest format (issue 17): mutate one value of a fixture (wrong types, huge numbers,
lone surrogates, deep nesting), prefix a BOM or cut a line, then load, analyze and render it.

Runs in a child Python under ``resource`` limits (address space, CPU seconds): a memory or time bomb
that comes back fails this test instead of taking the machine. What must hold: nothing but
``IngestError`` escapes ``load_all``, and the analysis, the JSON document and the HTML report of what
was loaded can all be produced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")

_MEMORY = 3 << 30
"""Address space of the child (the interpreter with pydantic, spaCy and tree-sitter maps ~0.7 GB)."""

_FUZZ = """
    import random, shutil, tempfile
    from pathlib import Path
    import orjson
    from hypothesis import HealthCheck, given, settings, strategies as st
    from analyzer.ingest import IngestError, load_all
    from analyzer.pipeline import analyze
    from analyzer.report import json_doc
    from analyzer.report.html import render_html

    FIXTURES = Path(FIXTURES_DIR)
    SUFFIXES = {".json", ".jsonl", ".traj", ".cast"}
    FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in SUFFIXES and "seeds" not in p.parts)

    def deep(n):
        v = "x"
        for _ in range(n):
            v = [v]
        return v

    HOSTILE = [{}, [], 0, -1, 2**63, -2**63, 1e308, "", "x", "\\ud800", None, True, {"a": [1]}, [["x"]],
               "+1e30", "<user_shell_command>", deep(300)]

    def mutate(value, rnd):
        nodes = []
        def walk(x, parent, key):
            nodes.append((parent, key))
            if isinstance(x, dict):
                for k in list(x):
                    walk(x[k], x, k)
            elif isinstance(x, list):
                for i in range(len(x)):
                    walk(x[i], x, i)
        walk(value, None, None)
        parent, key = rnd.choice(nodes)
        new = rnd.choice(HOSTILE)
        if parent is None:
            return new
        parent[key] = new
        return value

    def dump(value):  # json writes lone surrogates as escapes, as stdlib-based tools do
        return json.dumps(value).encode()

    def damage(path, rnd):
        raw = path.read_bytes()
        how = rnd.randrange(10)
        if how == 0:
            path.write_bytes(b"\\xef\\xbb\\xbf" + raw)
            return
        if path.suffix in (".jsonl", ".cast"):
            lines = raw.split(b"\\n")
            k = rnd.choice([i for i, line in enumerate(lines) if line.strip()[:1] in (b"{", b"[")])
            lines[k] = lines[k][: len(lines[k]) // 2] if how == 1 else dump(mutate(orjson.loads(lines[k]), rnd))
            path.write_bytes(b"\\n".join(lines))
        else:
            path.write_bytes(raw[: len(raw) // 2] if how == 1 else dump(mutate(orjson.loads(raw), rnd)))

    tmp = Path(tempfile.mkdtemp())

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(FILES), st.integers(0, 2**32))
    def run(src, seed):
        rel = src.relative_to(FIXTURES)
        case = tmp / str(seed)
        shutil.rmtree(case, ignore_errors=True)
        shutil.copytree(FIXTURES / rel.parts[0], case / rel.parts[0])
        target = case / rel
        damage(target, random.Random(seed))
        # a file of a folder format (opencode storage, OpenHands events) is read through its folder too
        for path in ([target, target.parent] if len(rel.parts) > 2 else [target]):
            try:
                sessions = load_all(path)
            except IngestError:
                continue
            for s in sessions:
                a = analyze(s)
                orjson.dumps(json_doc.document([a]))
                render_html(a).encode("utf-8")

    run()
    print(json.dumps({"ok": True}))
"""


def test_fuzz_every_format_under_resource_limits() -> None:
    """60 examples in CI; the longer campaign: ``INGEST_FUZZ_EXAMPLES=3000 pytest tests/ingest/test_fuzz_hostile.py``."""
    from ..conftest import FIXTURES

    examples = int(os.environ.get("INGEST_FUZZ_EXAMPLES", "60"))
    cpu = 120 + 3 * examples
    prelude = textwrap.dedent(f"""
        import json, resource
        resource.setrlimit(resource.RLIMIT_AS, ({_MEMORY}, {_MEMORY}))
        resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
        FIXTURES_DIR = {str(FIXTURES)!r}
        EXAMPLES = {examples}
    """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(_FUZZ)], capture_output=True,
                          text=True, timeout=cpu * 4)
    assert proc.returncode == 0, f"child died with {proc.returncode}: {proc.stderr[-4000:]}"
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"ok": True}
