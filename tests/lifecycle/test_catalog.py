from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.lifecycle.catalog import Catalog, CatalogError, default_catalog
from analyzer.shell.model import Redirect, SimpleCommand


def cmd(*argv: str, env: dict[str, str] | None = None, log: str | None = None) -> SimpleCommand:
    redirects = [Redirect(op=">", target=log)] if log else []
    return SimpleCommand(argv=list(argv), name=argv[0].rsplit("/", 1)[-1], effective_argv=list(argv),
                         env=env or {}, redirects=redirects)


@pytest.mark.parametrize(
    ("argv", "kind", "port"),
    [
        (["/root/ml-env/bin/python3", "-m", "sglang.launch_server", "--model-path", "/m"], "sglang", 30000),
        (["sglang", "serve", "--port", "30001"], "sglang", 30001),
        (["python3", "-m", "sglang_router.launch_router", "--port", "8000"], "sglang-router", 8000),
        (["vllm", "serve", "meta-llama/Llama-3.1-8B", "--port", "8001"], "vllm", 8001),
        (["python", "-m", "vllm.entrypoints.openai.api_server", "--port=8002"], "vllm", 8002),
        (["text-generation-launcher", "--model-id", "x", "-p", "8080"], "tgi", 8080),
        (["llama-server", "-m", "m.gguf"], "llama-cpp", 8080),
        (["ollama", "serve"], "ollama", 11434),
        (["tritonserver", "--model-repository", "/r"], "triton", 8000),
        (["trtllm-serve", "/m", "--port", "8003"], "trtllm", 8003),
        (["uvicorn", "app:api", "--port", "8000"], "uvicorn", 8000),
        (["gunicorn", "-b", "0.0.0.0:9000", "app:app"], "gunicorn", 9000),
        (["flask", "run", "-p", "5001"], "flask", 5001),
        (["streamlit", "run", "app.py", "--server.port", "8765"], "streamlit", 8765),
        (["python3", "-m", "http.server", "8000"], "http-server", 8000),
        (["npx", "next", "dev", "--port", "3000"], "next", 3000),
        (["vite"], "vite", 5173),
        (["pnpm", "dev", "--port", "3001"], "npm-script", 3001),
        (["npm", "run", "dev"], "npm-script", 3000),
        (["node", "server.js", "--port", "3000"], "node", 3000),
    ],
)
def test_catalog_recognises_launches_and_ports(argv: list[str], kind: str, port: int) -> None:
    m = default_catalog().match(cmd(*argv))
    assert m is not None and m.kind.name == kind and m.port == port


def test_not_launches() -> None:
    cat = default_catalog()
    for argv in (["python3", "train.py"], ["npm", "install"], ["vllm", "bench"], ["node", "build.js"],
                 ["curl", "localhost:8000"],
                 # inline code, however it reads: `indexOf` and `main` are not a script name
                 ["node", "-e", "const c = fs.readFileSync('./dist/index.d.ts'); c.indexOf('main')"],
                 ["node", "--print", "require('./server.js').port"],
                 ["node", "dist/cli/index.js", "--help"], ["uvicorn", "--version"]):
        assert cat.match(cmd(*argv)) is None, argv
    bare = cat.match(cmd("node", "--inspect", "server.js"))
    assert bare is not None and bare.port is None  # a node script listens where its code says: no guess


def test_gpus_env_and_log_file() -> None:
    m = default_catalog().match(cmd("python", "-m", "sglang.launch_server", "--tp", "4",
                                    env={"CUDA_VISIBLE_DEVICES": "4,5,6,7"}, log="/tmp/s.log"))
    assert m is not None and m.gpus == "4,5,6,7" and m.log_file == "/tmp/s.log"
    m2 = default_catalog().match(cmd("python", "-m", "sglang.launch_server", "--tp", "8"))
    assert m2 is not None and m2.gpus == "tp=8"
    m3 = default_catalog().match(cmd("npm", "run", "dev", env={"PORT": "4321"}))
    assert m3 is not None and (m3.port, m3.port_source) == (4321, "env")
    m4 = default_catalog().match(cmd("uvicorn", "app:api", "--port", "$PORT"))
    assert m4 is not None and m4.port is None  # dynamic: unknown, not the default


def test_ready_and_failure_lines() -> None:
    cat = default_catalog()
    assert cat.ready_line("sglang", "x\nThe server is fired up and ready to roll!\n") is not None
    assert cat.ready_line("vllm", "INFO: Started server process") is None
    assert cat.failure_line(None, "OSError: [Errno 98] Address already in use") is not None
    assert cat.failure_line(None, "bash: line 15: 54525 Killed                  nohup python3 -m x")


def test_user_catalog_entries_extend_and_override() -> None:
    cat = Catalog.load({"my-server": {"programs": ["my-server"], "port_flags": ["--listen-port"],
                                      "default_port": 9000, "ready": ["listening"]},
                        "vllm": {"default_port": 9999}})
    m = cat.match(cmd("my-server", "--listen-port", "7000"))
    assert m is not None and m.kind.name == "my-server" and m.port == 7000
    vm = cat.match(cmd("vllm", "serve", "x"))
    assert vm is not None and vm.port == 9999


@pytest.mark.parametrize(
    ("extra", "message"),
    [({"bad": {"programs": "x", "nonsense": 1}}, "catalog kind 'bad'"),
     ({"bad": {"ready": ["("]}}, "bad regex")],
)
def test_user_catalog_errors_name_the_kind(extra: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(CatalogError, match=message):
        Catalog.load(extra)


def test_every_built_in_pattern_compiles() -> None:
    # the catalog compiles its own patterns only when a kind is first asked about, and checks only
    # a user's entries when it loads, so a bad built-in regex would surface here, not in a session
    import re

    for kind in default_catalog().kinds:
        for field in ("ready", "failure", "answers"):
            for pattern in getattr(kind, field):
                re.compile(pattern, re.M)


def test_the_catalog_data_kept_as_json_is_the_yaml_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import yaml

    from analyzer.lifecycle import catalog as catalog_module

    monkeypatch.setenv("SESSION_ANALYZER_CACHE_DIR", str(tmp_path))
    catalog_module._builtin.cache_clear()
    try:
        first = catalog_module._builtin()  # parses the YAML, keeps the JSON
        [kept] = tmp_path.glob("catalog-*.json")
        catalog_module._builtin.cache_clear()
        assert catalog_module._builtin() == first == yaml.safe_load(catalog_module._CATALOG_FILE.read_text("utf-8"))
        kept.write_text("{damaged", "utf-8")
        catalog_module._builtin.cache_clear()
        assert catalog_module._builtin() == first, "a damaged file is parsed again"
        (tmp_path / "catalog-0000.json").write_text("{}", "utf-8")  # an earlier catalog.yaml's
        kept.unlink()
        catalog_module._builtin.cache_clear()
        catalog_module._builtin()
        assert [p.name for p in tmp_path.glob("catalog-*.json")] == [kept.name]
    finally:
        catalog_module._builtin.cache_clear()


def test_a_jsonl_session_is_checked_without_importing_pyyaml(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    session = next((root / "fixtures" / "claude-code").glob("*.jsonl"))
    env = {**os.environ, "SESSION_ANALYZER_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-X", "importtime", "-m", "analyzer", "check", str(session)]
    subprocess.run(argv, env=env, cwd=root, capture_output=True, check=False, timeout=300)
    second = subprocess.run(argv, env=env, cwd=root, capture_output=True, text=True, check=False, timeout=300)
    assert second.returncode in (0, 1), second.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in second.stderr.splitlines() if line.startswith("import time:")}
    assert "analyzer.lifecycle.catalog" in imported and "yaml" not in imported
