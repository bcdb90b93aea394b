"""Name the budgets a run can afford: how many seeds and steps each claim gets."""

from __future__ import annotations

from dataclasses import dataclass

from claimcheck.errors import ConfigError


@dataclass(frozen=True)
class Budget:
    """A named run size; claims scale their sweeps from it."""

    name: str
    seeds: int  # seeds per claim configuration
    steps: int  # GD steps per training run (claims may scale this)
    scale: int  # 0 small (CI), 1 workstation, 2 paper-sized; claims pick grid sizes by it
    description: str


BUDGETS: dict[str, Budget] = {
    b.name: b
    for b in (
        Budget("ci", 3, 400, 0, "CI: 3 seeds, small sizes; whole suite in minutes on 2 CPU cores"),
        Budget("standard", 10, 1000, 1, "workstation: 10 seeds per claim, larger grids"),
        Budget("paper", 20, 3000, 2, "paper-sized: 20 seeds, the largest grids; meant for a GPU"),
    )
}


def get_budget(name: str) -> Budget:
    """Return the budget called ``name`` or raise ConfigError listing the known names."""
    try:
        return BUDGETS[name]
    except KeyError:
        raise ConfigError(f"unknown budget {name!r}; choose one of {', '.join(BUDGETS)}") from None


def seeds_for(base_seed: int, budget: Budget) -> list[int]:
    """Return the seeds a claim runs under ``budget``: base_seed, base_seed + 1, ..."""
    return [base_seed + i for i in range(budget.seeds)]
