"""Lazy re-exports for a package's ``__init__`` and lazy registries: a name resolves (and its module
loads) on first use, so importing the package, one of its submodules or a registry does not pay for
the rest."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

S = TypeVar("S")
T = TypeVar("T")


def lazy_exports(package: str, exports: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``exports`` (public name -> the module defining it)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__



class LazyRegistry(Mapping[str, T], Generic[S, T]):
    """A read-only registry, name -> object, that lists and tests names (``in``, iteration,
    ``len``, :meth:`spec`) from its specs alone and loads an object (``_load``) on its first
    lookup, so a registry can be asked what it holds without importing the modules behind it."""

    def __init__(self, specs: dict[str, S]) -> None:
        self._specs = specs
        self._loaded: dict[str, T] = {}

    def _load(self, spec: S) -> T:
        raise NotImplementedError

    def __getitem__(self, name: str) -> T:
        found = self._loaded.get(name)
        if found is None:
            found = self._loaded[name] = self._load(self._specs[name])
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def spec(self, name: str) -> S:
        """The entry of ``name`` (``KeyError`` for an unknown one)."""
        return self._specs[name]


class LazyTable(LazyRegistry[str, T]):
    """A lazy registry of ``"module:attribute"`` specs (a module starting with ``.`` is relative to
    ``package``): a lookup imports the one module it needs."""

    def __init__(self, package: str, specs: dict[str, str]) -> None:
        super().__init__(specs)
        self._package = package

    def _load(self, spec: str) -> T:
        module, _, attribute = spec.partition(":")
        found: T = getattr(importlib.import_module(module, self._package), attribute)
        return found
