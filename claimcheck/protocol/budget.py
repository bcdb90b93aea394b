"""Name the budgets a run can afford: how many seeds and steps each claim gets."""

from __future__ import annotations

from dataclasses import dataclass

from claimcheck.errors import ConfigError


@dataclass(frozen=True)
class Budget:
    """A named run size; claims scale their sweeps from it."""

    name: str
    seeds: int  # seeds per claim that declares no protocol (a protocol states its own units per budget)
    steps: int  # GD steps per training run (claims may scale this)
    scale: int  # 0 small (CI), 1 workstation, 2 paper-sized; claims pick grid sizes by it
    description: str


BUDGETS: dict[str, Budget] = {
    b.name: b
    for b in (
        Budget("ci", 3, 400, 0, "CI: small sizes; each claim's protocol sets its units (3 without a protocol)"),
        Budget("standard", 10, 1000, 1, "workstation: larger grids; units per protocol (10 without one)"),
        Budget(
            "paper", 20, 3000, 2, "paper-sized: the largest grids, meant for a GPU; units per protocol (20 without)"
        ),
    )
}


def get_budget(name: str, budgets: list[Budget] | None = None) -> Budget:
    """Return the budget called ``name`` (among ``budgets``, else the core's) or raise ConfigError listing them."""
    known = {b.name: b for b in budgets} if budgets else BUDGETS
    try:
        return known[name]
    except KeyError:
        raise ConfigError(f"unknown budget {name!r}; choose one of {', '.join(known)}") from None
