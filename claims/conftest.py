"""This suite's run sizes; the model, the engine and their report lines come from ``qin2025.plugin``."""

from __future__ import annotations

import pytest

from claimcheck.protocol.budget import Budget


def pytest_claimcheck_budgets(config: pytest.Config) -> list[Budget]:
    """Return this suite's run sizes (grid scales and GD steps; each claim's protocol sets its units)."""
    return [
        Budget("ci", 3, 400, 0, "CI: the small grids, 400 GD steps; each claim's protocol sets its units"),
        Budget("standard", 10, 1000, 1, "workstation: larger grids, 1,000 GD steps"),
        Budget("paper", 20, 3000, 2, "paper-sized: the largest grids, 3,000 GD steps; meant for a GPU"),
    ]
