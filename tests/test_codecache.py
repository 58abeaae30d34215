"""The start-up caches: a class made from cached code is the class a compile makes, a regex made
from a cached program is the Pattern ``re`` makes, and a missing, corrupt or foreign cache file is
only a slower start."""

from __future__ import annotations

import dataclasses
import os
import re
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
    _fresh_process_state(monkeypatch)
    _codecache.install()
    yield folder / "bytecode" / _codecache._CODE.name


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
    monkeypatch.setattr(_codecache, "_regex_on", True)
    monkeypatch.setattr(_codecache, "_checked", False)
    for kept in (_codecache._CODE, _codecache._REGEX):
        monkeypatch.setattr(kept, "table", None)
        monkeypatch.setattr(kept, "dirty", False)
        monkeypatch.setattr(kept, "used", {})


def test_a_class_made_from_the_cache_behaves_as_a_compiled_one(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled = _behaviour(_module("analyzer.example_one"))
    _codecache._CODE.write()
    assert cache.is_file() and oct(cache.stat().st_mode & 0o777) == "0o600"

    _fresh_process_state(monkeypatch)  # the next process
    with monkeypatch.context() as patch:
        patch.setattr(_codecache.builtins, "compile", _no_compile)
        module = _module("analyzer.example_two")
    assert _behaviour(module) == compiled
    assert not _codecache._CODE.dirty, "nothing new to keep"


def test_the_cached_code_does_not_take_this_modules_future_flags(cache: Path) -> None:
    # __init__'s annotations are evaluated objects, as dataclasses' own exec makes them
    annotations = _module("analyzer.example_three").Point.__init__.__annotations__
    assert annotations["return"] is None


def test_any_modules_dataclasses_use_it(cache: Path) -> None:
    _behaviour(_module("someone_elses_library"))
    assert _codecache._CODE.dirty and len(_codecache._CODE.table or {}) >= 3  # __init__, __repr__, __eq__…


@pytest.mark.parametrize("content", [b"", b"\x00garbage", b"\xe3" * 100])
def test_a_corrupt_cache_file_is_no_cache(cache: Path, content: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    os.chmod(cache, 0o600)
    assert _behaviour(_module("analyzer.example_four"))[0] == "Point(x=1, y=2, tags=())"
    _codecache._CODE.write()
    _fresh_process_state(monkeypatch)
    assert _codecache._CODE._read(), "replaced by a good file"


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_file_others_could_write_is_not_loaded(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _module("analyzer.example_five")
    _codecache._CODE.write()
    os.chmod(cache, 0o666)
    _fresh_process_state(monkeypatch)
    assert _codecache._CODE._read() == {}


def test_a_command_writes_the_cache_once_and_then_only_reads_it(tmp_path: Path) -> None:
    folder = tmp_path / "session-analyzer"
    env = {**os.environ, _usercache.CACHE_ENV: str(folder)}
    fixture = Path(__file__).parent.parent / "fixtures" / "seeds" / "004-restart-sglang-systemd.session.yaml"
    argv = [sys.executable, "-m", "analyzer", "check", str(fixture)]
    first = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    stored = folder / "bytecode" / _codecache._CODE.name
    assert stored.is_file()
    written = stored.stat().st_mtime_ns
    second = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    assert stored.stat().st_mtime_ns == written, "a run that compiled nothing new writes nothing"


def test_string_annotations_are_served_from_the_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import typing

    assert typing.ForwardRef("dict[str, int] | None")._evaluate(globals(), None, frozenset()) == (dict[str, int] | None)
    _codecache._CODE.write()
    _fresh_process_state(monkeypatch)
    with monkeypatch.context() as patch:
        patch.setattr(_codecache.builtins, "compile", _no_compile)
        ref = typing.ForwardRef("dict[str, int] | None")
    assert ref._evaluate(globals(), None, frozenset()) == (dict[str, int] | None)
    with pytest.raises(SyntaxError):  # an annotation that is no expression fails as it did
        typing.ForwardRef("not an ( expression")


PATTERNS = [
    (r"(?P<port>\d{2,5})/(?:tcp|udp)\b", 0), (r"^\s*(?:Uvicorn|INFO:)\s+running on (?P<url>\S+)", re.M | re.I),
    (r"[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010ffff]", 0),  # PyYAML's
    (rb"\x1b\[[0-?]*[ -/]*[@-~]", 0), (r"(a)(?P<b>b)?(?(2)c|d)", re.S | re.X),
]


def _regex_from_cache(pattern: str | bytes, flags: int) -> re.Pattern[str]:
    return _codecache._regex_compile(pattern, flags)  # what re.compile calls past its own cache


def test_a_regex_from_the_cache_is_the_pattern_re_makes(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = [_regex_from_cache(p, f) for p, f in PATTERNS]
    _codecache._REGEX.write()
    _fresh_process_state(monkeypatch)
    def no_parse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed although the cache holds the program")
    with monkeypatch.context() as patch:
        patch.setattr(_codecache._parser, "parse", no_parse)
        kept = [_regex_from_cache(p, f) for p, f in PATTERNS]
    for (pattern, flags), a, b in zip(PATTERNS, made, kept, strict=True):
        stock = _codecache._stock_regex_compile(pattern, flags)
        assert a == b == stock  # same pattern, flags and program
        assert (b.groupindex, b.groups, b.flags) == (stock.groupindex, stock.groups, stock.flags)
    assert kept[0].search("listening 8080/tcp now")["port"] == "8080"
    assert kept[4].fullmatch("abc") and kept[4].fullmatch("ad") and not kept[4].fullmatch("ac")


def test_a_bad_regex_still_raises_and_is_not_kept(cache: Path) -> None:
    with pytest.raises(re.error, match="missing"):
        _regex_from_cache("(unclosed", 0)
    assert ("(unclosed", 0) not in (_codecache._REGEX.table or {})


def test_re_compile_goes_through_the_cache_once_installed(cache: Path) -> None:
    assert re._compiler.compile is _codecache._regex_compile
    pattern = "a pattern no one compiled before: [0-9]{7}-" + str(os.getpid())
    assert re.compile(pattern).search(f"x {pattern.replace('[0-9]{7}', '1234567')}")
    assert _codecache._REGEX.dirty


def test_a_program_that_differs_from_res_own_is_not_kept_and_turns_the_cache_off(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def other_program(pattern: str, flags: int) -> tuple[object, ...]:
        final, code, groups, groupindex, indexgroup = real(pattern, flags)
        return final, [*code[:-1], 0, code[-1]], groups, groupindex, indexgroup  # not the same code
    real = _codecache._program
    monkeypatch.setattr(_codecache, "_program", other_program)
    made = _regex_from_cache(r"x(\d+)y", 0)
    assert made == _codecache._stock_regex_compile(r"x(\d+)y", 0) and made.search("x12y")[1] == "12"
    assert not _codecache._REGEX.dirty and not _codecache._regex_on
    monkeypatch.setattr(_codecache, "_program", real)
    _regex_from_cache(r"x(\d+)z", 0)
    assert not _codecache._REGEX.dirty, "off for the rest of the process"


def test_a_file_another_python_left_is_removed_when_this_one_writes(cache: Path) -> None:
    cache.parent.mkdir(parents=True)
    old = cache.parent / "generated-code-cpython-310-6f0d0d0a.marshal"
    old.write_bytes(b"")
    keep = cache.parent / "regex-programs-cpython-310-6f0d0d0a-20220615.marshal"  # another table's
    keep.write_bytes(b"")
    _module("analyzer.example_six")
    _codecache._CODE.write()
    assert cache.is_file() and not old.exists() and keep.exists()


def test_a_process_that_compiles_more_than_the_limit_keeps_only_its_latest(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_codecache, "_LIMIT", 5)
    for n in range(12):
        _regex_from_cache(f"pattern number {n}", 0)
    _codecache._REGEX.write()
    _fresh_process_state(monkeypatch)
    assert [pattern for pattern, _ in _codecache._REGEX._read()] == [f"pattern number {n}" for n in range(7, 12)]


def test_a_home_that_cannot_be_found_is_no_cache_and_regexes_still_compile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh_process_state(monkeypatch)
    monkeypatch.delenv("SESSION_ANALYZER_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert _usercache.cache_dir() is None
    assert _regex_from_cache(r"still (\w+)", 0).search("still works")[1] == "works"
    _codecache._REGEX.write()  # nothing to write to: no error either


def test_a_damaged_program_in_the_file_is_compiled_anew(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _regex_from_cache(r"(\d+) ms", 0)
    table = _codecache._REGEX.table or {}
    final, code, groups, groupindex, indexgroup = table[(r"(\d+) ms", 0)]
    table[(r"(\d+) ms", 0)] = (final, [99999, *code], groups, groupindex, indexgroup)  # no valid program
    _codecache._REGEX.write()
    _fresh_process_state(monkeypatch)
    assert _regex_from_cache(r"(\d+) ms", 0).search("took 12 ms")[1] == "12"
