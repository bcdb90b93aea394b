"""The example suite describes itself to claimcheck: its budgets and its report header."""

from __future__ import annotations

import pytest

from claimcheck.protocol.budget import Budget


def pytest_claimcheck_budgets(config: pytest.Config) -> list[Budget]:
    """Return this suite's run sizes: problem sizes and GD steps grow with the scale."""
    return [
        Budget("ci", 3, 300, 0, "small problems, 300 GD steps"),
        Budget("standard", 10, 1000, 1, "larger problems, 1,000 GD steps"),
        Budget("paper", 20, 3000, 2, "the largest problems, 3,000 GD steps"),
    ]


def pytest_claimcheck_environment(config: pytest.Config) -> dict[str, str]:
    """Return what every claim of this suite computes with."""
    return {"solver": "plain full-batch gradient descent in numpy, float64"}
