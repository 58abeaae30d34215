"""Finding rules: the built-in pack (top-level ``rules/``, shipped in the wheel as
``analyzer/_data/rules``), user folders, and packages registered under the ``analyzer.rules``
entry-point group. One loader for all three, so a user's rule is a first-class rule.

A pack that fails to import is reported as a warning naming it; the others still load.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType

from analyzer._usercache import private_dir, read_private_json, write_private
from analyzer.rules.api import Rule, RuleMetadataError

ENTRY_POINT_GROUP = "analyzer.rules"


def builtin_rules_dir() -> Path:
    """The built-in pack: inside the installed package, else the source tree's ``rules/``."""
    here = Path(__file__).resolve().parent.parent
    packaged = here / "_data" / "rules"
    return packaged if packaged.is_dir() else here.parent / "rules"


@dataclass(frozen=True)
class LoadedRule:
    cls: type[Rule]
    origin: str
    """``builtin``, a folder path, or ``entry-point:<name>``."""
    file: str
    """The module file that defines it (rule cases sit beside it)."""

    @property
    def cases_file(self) -> Path:
        return Path(self.file).with_name(f"{self.cls.name}.cases.yaml")


@dataclass
class RuleSet:
    rules: dict[str, LoadedRule] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def add(self, cls: type[Rule], origin: str, file: str) -> None:
        try:
            cls.validate_metadata(file)
        except RuleMetadataError as exc:
            self.warnings.append(str(exc))
            return
        if cls.name in self.rules and self.rules[cls.name].cls is not cls:
            self.warnings.append(f"{file}: rule {cls.name!r} is already defined in "
                                 f"{self.rules[cls.name].file}; keeping the first")
            return
        self.rules[cls.name] = LoadedRule(cls, origin, file)


def _rule_classes(module: ModuleType) -> list[type[Rule]]:
    return [obj for _, obj in inspect.getmembers(module, inspect.isclass)
            if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
            and obj.name]


def _import_file(path: Path, package: str) -> ModuleType:
    name = f"{package}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_folder(folder: Path, ruleset: RuleSet, origin: str) -> None:
    if not folder.is_dir():
        ruleset.warnings.append(f"{folder}: rules folder not found")
        return
    package = "analyzer_rules_" + "".join(c if c.isalnum() else "_" for c in str(folder.resolve()))[-60:]
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            module = _import_file(path, package)
        except Exception as exc:  # a broken user rule must not stop the others
            ruleset.warnings.append(f"{path}: failed to import: {type(exc).__name__}: {exc}")
            continue
        for cls in _rule_classes(module):
            ruleset.add(cls, origin, str(path))


def _path_key(group: str) -> str:
    """What the group's entry points depend on: each folder on ``sys.path`` that holds
    distribution metadata, and when it last changed (installing, upgrading or removing a
    distribution adds or removes a ``*.dist-info`` folder there, which changes the folder's time).
    A folder without metadata is left out, so the working directory of ``python -m``, whose time
    changes with every file made in it, does not make the key change."""
    stamps: list[tuple[str, int | None]] = []
    for entry in sys.path:
        try:
            folder = entry or "."
            if os.path.isdir(folder) and not any(
                    n.endswith((".dist-info", ".egg-info")) for n in os.listdir(folder)):
                continue
            stamps.append((entry, os.stat(folder).st_mtime_ns))
        except OSError:
            stamps.append((entry, None))
    return hashlib.sha256(json.dumps([group, sys.version, stamps]).encode()).hexdigest()


def registered(group: str = ENTRY_POINT_GROUP) -> list[EntryPoint]:
    """The entry points of ``group``. Finding them reads the metadata of every installed
    distribution (~5 ms of every command), so the answer is kept in the cache folder under
    ``_path_key`` and read again while nothing on ``sys.path`` changed."""
    folder = private_dir()
    path = None if folder is None else folder / "entry-points.json"
    key = _path_key(group)
    kept = read_private_json(path)
    try:
        if isinstance(kept, dict) and kept.get("key") == key:
            return [EntryPoint(name, value, group) for name, value in kept["entries"]]
    except (ValueError, TypeError, KeyError):  # entries of another shape: scan again
        pass
    found = list(entry_points(group=group))
    if path is not None:
        text = json.dumps({"key": key, "entries": [[ep.name, ep.value] for ep in found]})
        write_private(path, lambda fh: fh.write(text.encode()))
    return found


def load_entry_points(ruleset: RuleSet) -> None:
    for ep in registered():
        try:
            obj = ep.load()
        except Exception as exc:
            ruleset.warnings.append(f"entry point {ep.name!r} ({ep.value}): failed to import: "
                                    f"{type(exc).__name__}: {exc}")
            continue
        classes: Iterable[type[Rule]]
        if isinstance(obj, ModuleType):
            classes = _rule_classes(obj)
        elif inspect.isclass(obj) and issubclass(obj, Rule):
            classes = [obj]
        elif isinstance(obj, list | tuple):
            classes = [c for c in obj if inspect.isclass(c) and issubclass(c, Rule)]
        else:
            ruleset.warnings.append(f"entry point {ep.name!r}: {ep.value} is not a rule, rule list or module")
            continue
        for cls in classes:
            file = inspect.getsourcefile(cls) or ep.value
            ruleset.add(cls, f"entry-point:{ep.name}", file)


def load_rules(rules_dirs: Iterable[str | Path] = (), builtin: bool = True,
               entry_point_packs: bool = True) -> RuleSet:
    """Every rule: built-in first, then user folders, then entry-point packs. A folder given
    twice (or the built-in one given again) is loaded once."""
    ruleset = RuleSet()
    seen: set[Path] = set()
    if builtin:
        load_folder(builtin_rules_dir(), ruleset, "builtin")
        seen.add(builtin_rules_dir().resolve())
    for d in rules_dirs:
        if Path(d).resolve() in seen:
            continue
        seen.add(Path(d).resolve())
        load_folder(Path(d), ruleset, str(d))
    if entry_point_packs:
        load_entry_points(ruleset)
    return ruleset
