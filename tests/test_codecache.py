"""The dataclass code cache: a class made from cached code is the class a compile makes, and a
missing, corrupt or foreign cache file is only a slower start."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyzer import _codecache, _usercache

SOURCE = '''
from __future__ import annotations
import dataclasses

@dataclasses.dataclass(frozen=True)
class Point:
    x: int
    y: int = 2
    tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)
'''


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "session-analyzer"
    monkeypatch.setenv(_usercache.CACHE_ENV, str(folder))
    monkeypatch.setattr(_codecache, "_codes", None)
    monkeypatch.setattr(_codecache, "_dirty", False)
    monkeypatch.setattr(_codecache, "_used", set())
    _codecache.install()
    yield folder / "bytecode" / _codecache._NAME


def _module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses looks the module up by name
    try:
        exec(SOURCE, module.__dict__)
    finally:
        del sys.modules[name]
    return module


def _behaviour(module: types.ModuleType) -> tuple[object, ...]:
    point = module.Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3
    return (repr(point), point == module.Point(1, 2), point == module.Point(2), hash(point) == hash(module.Point(1)),
            point.tags, module.Point.__init__.__annotations__)


def _no_compile(*args: object, **kwargs: object) -> None:
    raise AssertionError("compiled although the cache holds the text")


def _fresh_process_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_codecache, "_codes", None)
    monkeypatch.setattr(_codecache, "_dirty", False)
    monkeypatch.setattr(_codecache, "_used", set())


def test_a_class_made_from_the_cache_behaves_as_a_compiled_one(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _behaviour(_module("analyzer.example_one"))
    _codecache._write()
    assert cache.is_file() and oct(cache.stat().st_mode & 0o777) == "0o600"

    _fresh_process_state(monkeypatch)  # the next process
    with monkeypatch.context() as patch:
        patch.setattr(_codecache.builtins, "compile", _no_compile)
        module = _module("analyzer.example_two")
    assert _behaviour(module) == compiled
    assert not _codecache._dirty, "nothing new to keep"


def test_the_cached_code_does_not_take_this_modules_future_flags(cache: Path) -> None:
    # __init__'s annotations are evaluated objects, as dataclasses' own exec makes them
    annotations = _module("analyzer.example_three").Point.__init__.__annotations__
    assert annotations["return"] is None


def test_any_modules_dataclasses_use_it(cache: Path) -> None:
    _behaviour(_module("someone_elses_library"))
    assert _codecache._dirty and len(_codecache._codes or {}) >= 3  # __init__, __repr__, __eq__…


@pytest.mark.parametrize("content", [b"", b"\x00garbage", b"\xe3" * 100])
def test_a_corrupt_cache_file_is_no_cache(cache: Path, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    os.chmod(cache, 0o600)
    assert _behaviour(_module("analyzer.example_four"))[0] == "Point(x=1, y=2, tags=())"
    _codecache._write()
    _fresh_process_state(monkeypatch)
    assert _codecache._read(), "replaced by a good file"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_file_others_could_write_is_not_loaded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _module("analyzer.example_five")
    _codecache._write()
    os.chmod(cache, 0o666)
    _fresh_process_state(monkeypatch)
    assert _codecache._read() == {}


def test_a_command_writes_the_cache_once_and_then_only_reads_it(tmp_path: Path) -> None:
    folder = tmp_path / "session-analyzer"
    env = {**os.environ, _usercache.CACHE_ENV: str(folder)}
    fixture = Path(__file__).parent.parent / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"
    argv = [sys.executable, "-m", "analyzer", "check", str(fixture)]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    stored = folder / "bytecode" / _codecache._NAME
    assert stored.is_file()
    written = stored.stat().st_mtime_ns
    second = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    assert stored.stat().st_mtime_ns == written, "a run that compiled nothing new writes nothing"


def test_string_annotations_are_served_from_the_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import typing

    assert typing.ForwardRef("dict[str, int] | None")._evaluate(globals(), None, frozenset()) == (dict[str, int] | None)
    _codecache._write()
    _fresh_process_state(monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(_codecache.builtins, "compile", _no_compile)
        ref = typing.ForwardRef("dict[str, int] | None")
    assert ref._evaluate(globals(), None, frozenset()) == (dict[str, int] | None)
    with pytest.raises(SyntaxError):  # an annotation that is no expression fails as it did
        typing.ForwardRef("not an ( expression")
