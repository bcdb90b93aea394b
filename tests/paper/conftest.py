"""Tests of this paper's suite (``qin2025``): their pytester sessions load its plugin too."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _paper_plugin_in_pytester(request: pytest.FixtureRequest) -> None:
    """Give every pytester session of these tests the paper's plugin, as the repository's conftest.py does."""
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").plugins.append("qin2025.plugin")
