from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fuzz: the long fuzz campaign over every format and the corpus (run with -m fuzz)")
