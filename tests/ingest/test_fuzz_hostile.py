"""Fuzz every ingest format (issue 17): mutate a fixture or a real session (a value of the wrong
type, huge numbers, lone surrogates, deep nesting, a control byte, a line cut in half, a BOM), then
load, analyze and render it: the JSON document, SARIF, the text report and the HTML report.

Runs in a child Python under ``resource`` limits (address space, CPU seconds) so a memory or time
bomb fails this test instead of taking the machine; each input also gets its own budget (CPU
seconds, and a peak RSS at most ``_PER_INPUT_MB`` over what loading the libraries took). What must
hold: nothing but ``IngestError`` escapes ``load_all``; every renderer copes with what was loaded;
and a line damaged in the middle of a file costs only that line: the session is still read, with an
error diagnostic that names a line (or the ``IngestError`` names one).

Examples per run: 60 in CI (fixtures) and 24 over the real corpus; the long campaign is
``pytest -m fuzz tests/ingest/test_fuzz_hostile.py`` (``INGEST_FUZZ_EXAMPLES``, default 3000;
``bench/README.md``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..conftest import CORPUS, FIXTURES, ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")

_MEMORY = 3 << 30
"""Address space of the child (the interpreter with pydantic, spaCy and tree-sitter maps ~0.7 GB)."""
_PER_INPUT_MB = 600
"""Peak RSS one input may add over the warmed-up child."""
_PER_INPUT_CPU = 60
"""CPU seconds one input may take (load, analysis and every renderer; a loaded CI box included)."""
_SUFFIXES = (".json", ".jsonl", ".traj", ".cast", ".yaml", ".md")
_CORPUS_MAX_BYTES = 2 << 20
"""Corpus files up to this size are fuzzed in CI (the big ones are the long run's)."""

_FUZZ = """
    import random, resource, shutil, signal, tempfile
    from pathlib import Path
    import orjson, yaml
    from hypothesis import HealthCheck, given, settings, strategies as st
    from analyzer.ingest import IngestError, load_all
    from analyzer.pipeline import Analyzer
    from analyzer.report import json_doc, sarif, terminal, text
    from analyzer.report.html import render_html
    from tests.ingest.test_opencode import make_db, storage_session, MAIN, SUB

    FILES = [Path(p) for p in FILE_LIST]
    ENGINE = Analyzer()
    RULES = [lr.cls for lr in ENGINE.ruleset.rules.values()]

    def deep(n):
        v = "x"
        for _ in range(n):
            v = [v]
        return v

    HOSTILE = [{}, [], 0, -1, 2**63, -2**63, 1e308, "", "x", "\\ud800", None, True, {"a": [1]}, [["x"]],
               "+1e30", "<user_shell_command>", deep(300), "\\x1b]52;c;eA==\\x07\\x9b2J\\u202e", "a|" * 5000]

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
        import json
        return json.dumps(value).encode()

    def invalid(data):
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError:
            return True
        return False

    def cut_middle_line(path, raw):
        # a JSON file with a line in its middle cut in half so that it is no longer JSON; None when
        # there is no such line (not JSON, too short, or the cut still parses)
        if path.suffix not in (".json", ".jsonl", ".traj", ".cast"):
            return None
        lines = raw.split(b"\\n")
        inner = [i for i in range(len(lines) // 3, max(len(lines) * 2 // 3, 1)) if len(lines[i].strip()) > 8]
        if not inner:
            return None
        k = inner[len(inner) // 2]
        cut = lines[k][: len(lines[k]) // 2]
        if not invalid(cut if path.suffix in (".jsonl", ".cast") else b"\\n".join([*lines[:k], cut, *lines[k + 1:]])):
            return None
        lines[k] = cut
        return b"\\n".join(lines)

    def damage(path, rnd):
        \"\"\"Damage the file; True when the damage is one line cut in the middle of it.\"\"\"
        raw = path.read_bytes()
        how = rnd.randrange(12)
        if how == 0:
            path.write_bytes(b"\\xef\\xbb\\xbf" + raw)
        elif how == 1 and (cut := cut_middle_line(path, raw)) is not None:
            path.write_bytes(cut)
            return True
        elif how == 2:  # a control byte or invalid UTF-8 somewhere
            k = rnd.randrange(len(raw) + 1)
            path.write_bytes(raw[:k] + rnd.choice([b"\\x00", b"\\xff", b"\\x1b", b"\\xc2\\x9b"]) + raw[k:])
        elif how == 3:
            path.write_bytes(raw[: len(raw) // 2])
        elif path.suffix in (".jsonl", ".cast"):
            lines = raw.split(b"\\n")
            ks = [i for i, line in enumerate(lines) if line.strip()[:1] in (b"{", b"[")]
            if ks:
                k = rnd.choice(ks)
                lines[k] = dump(mutate(orjson.loads(lines[k]), rnd))
            path.write_bytes(b"\\n".join(lines))
        elif path.suffix in (".yaml",):
            try:
                path.write_bytes(yaml.safe_dump(mutate(yaml.safe_load(raw), rnd), allow_unicode=True).encode())
            except Exception:
                path.write_bytes(raw[: len(raw) // 2])
        elif path.suffix == ".md":
            lines = raw.split(b"\\n")
            k = rnd.randrange(len(lines))
            lines.insert(k, rnd.choice([b"```", b"## User", b"#### 2026-13-45", b"> " * 300, b"\\x1b[2J"]))
            path.write_bytes(b"\\n".join(lines))
        else:
            path.write_bytes(dump(mutate(orjson.loads(raw), rnd)))
        return False

    def database(case, rnd):
        \"\"\"An opencode.db from the storage fixture with one row's JSON mutated.\"\"\"
        db = make_db(case / "opencode.db", [storage_session(MAIN), storage_session(SUB)])
        import sqlite3
        con = sqlite3.connect(db)
        table = rnd.choice(["message", "part"])
        rows = con.execute(f"SELECT rowid, data FROM {table}").fetchall()
        rowid, data = rnd.choice(rows)
        new = dump(mutate(orjson.loads(data), rnd)).decode() if rnd.random() < 0.8 else data[: len(data) // 2]
        con.execute(f"UPDATE {table} SET data = ? WHERE rowid = ?", (new, rowid))
        con.commit()
        con.close()
        return db

    def render(sessions):
        for s in sessions:
            a = ENGINE.analyze_session(s)
            terminal.json_text(json_doc.document([a]))
            terminal.json_text(sarif.document([a], RULES))
            text.render([a], width=100)
            render_html(a).encode("utf-8")

    def check_one(src, seed, case):
        rnd = random.Random(seed)
        if src.name == "opencode.db":
            paths, middle = [database(case, rnd)], False
        else:
            root = FIXTURES if src.is_relative_to(FIXTURES) else CORPUS
            rel = src.relative_to(root)
            shutil.copytree(root / rel.parts[0], case / rel.parts[0], symlinks=True)
            target = case / rel
            middle = damage(target, rnd)
            # a file of a folder format (opencode storage, OpenHands events) is read through its folder too
            paths = [target, target.parent] if len(rel.parts) > 2 else [target]
        for path in paths:
            try:
                sessions = load_all(path)
            except IngestError as exc:
                assert not middle or path != paths[0] or exc.line is not None, f"{src}: {exc}"
                continue
            if middle and path == paths[0]:
                assert any(d.level == "error" and d.line is not None for s in sessions for d in s.diagnostics), \\
                    f"{src}: a cut middle line left no error diagnostic with a line"
            render(sessions)

    class Budget(Exception):
        pass

    def over_budget(signum, frame):
        raise Budget(f"over {PER_INPUT_CPU} CPU seconds")

    signal.signal(signal.SIGPROF, over_budget)
    tmp = Path(tempfile.mkdtemp())
    render(load_all(FILES[0]) if FILES[0].name != "opencode.db" else [])  # warm up: libraries, models
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(FILES), st.integers(0, 2**32))
    def run(src, seed):
        case = tmp / str(seed)
        shutil.rmtree(case, ignore_errors=True)
        case.mkdir()
        signal.setitimer(signal.ITIMER_PROF, PER_INPUT_CPU)
        try:
            check_one(src, seed, case)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            shutil.rmtree(case, ignore_errors=True)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        assert peak - baseline <= PER_INPUT_MB, f"{src} (seed {seed}): peak RSS {peak} MB, {baseline} MB before"

    run()
    print(json.dumps({"ok": True, "inputs": len(FILES)}))
"""


def _fixtures() -> list[Path]:
    files = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                   and p.name != "README.md")
    return [*files, FIXTURES / "opencode.db"]  # a database built from the storage fixture


def _corpus(max_bytes: int | None) -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                  and p.name not in ("MANIFEST.md", "labels.yaml")
                  and (max_bytes is None or p.stat().st_size <= max_bytes))


def _campaign(files: list[Path], examples: int) -> None:
    cpu = 120 + 4 * examples
    prelude = textwrap.dedent(f"""
        import json, resource
        resource.setrlimit(resource.RLIMIT_AS, ({_MEMORY}, {_MEMORY}))
        resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
        from pathlib import Path
        FIXTURES, CORPUS = Path({str(FIXTURES)!r}), Path({str(CORPUS)!r})
        FILE_LIST = {[str(f) for f in files]!r}
        EXAMPLES, PER_INPUT_MB, PER_INPUT_CPU = {examples}, {_PER_INPUT_MB}, {_PER_INPUT_CPU}
    """)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(_FUZZ)], capture_output=True,
                          text=True, timeout=cpu * 4, cwd=ROOT)
    assert proc.returncode == 0, f"child died with {proc.returncode}: {proc.stderr[-4000:]}"
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == {"ok": True, "inputs": len(files)}


def test_fuzz_every_format_under_resource_limits() -> None:
    """Every fixture of every format, and an opencode.db: 60 examples."""
    _campaign(_fixtures(), int(os.environ.get("INGEST_FUZZ_EXAMPLES", "60")))


@pytest.mark.corpus
def test_fuzz_real_sessions_under_resource_limits(corpus: Path) -> None:
    """The real corpus files up to 2 MB: 24 examples."""
    _campaign(_corpus(_CORPUS_MAX_BYTES), 24)


@pytest.mark.fuzz
@pytest.mark.corpus
def test_fuzz_long_campaign(request: pytest.FixtureRequest, corpus: Path) -> None:
    """Fixtures and every corpus file, ``INGEST_FUZZ_EXAMPLES`` examples (default 3000): only when
    asked for with ``-m fuzz``."""
    if "fuzz" not in (request.config.option.markexpr or ""):
        pytest.skip("the long fuzz campaign runs with -m fuzz")
    _campaign([*_fixtures(), *_corpus(None)], int(os.environ.get("INGEST_FUZZ_EXAMPLES", "3000")))


def test_the_campaigns_cover_every_format() -> None:
    """Every format the registry knows has a fixture in the fuzzed set (a new format is fuzzed too)."""
    from analyzer.ingest import FORMATS, detect

    seen = {"opencode"}  # the database
    for p in _fixtures()[:-1]:
        try:
            seen.add(detect(p)[0].NAME)
        except Exception:  # an OpenHands event file: read through its folder
            continue
    assert seen >= set(FORMATS)
