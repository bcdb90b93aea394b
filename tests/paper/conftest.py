"""Tests of this paper's suite (``qin2025``): their pytester sessions load its plugin too."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _paper_plugin_in_pytester(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Give every pytester session of these tests the paper's plugin (``-p qin2025.plugin``), as the
    repository's conftest.py does for sessions rooted there."""
    if "pytester" not in request.fixturenames:
        return
    pytester = request.getfixturevalue("pytester")
    for name in ("runpytest", "runpytest_inprocess", "runpytest_subprocess"):
        original = getattr(pytester, name)

        def run(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            return _original("-p", "qin2025.plugin", *args, **kwargs)

        monkeypatch.setattr(pytester, name, run)
