"""Challenge families: cases whose answer is known from the claims' words alone, kept apart from the design families.

Each module (``c1``, ``c8``, ``c4``, ``c5``, ``c2``, ``c3``, ``c6``, ``c7``) is a *world* that makes raw data
the way a run would (loss curves with per-run scatter, rate tables, singular-value ratios, error
curves) and a thin ``adapt`` that turns it into the keyword arguments of the part's current
decision, so a changed signature changes one function. Every family is a ``Family(origin=
"challenge")`` whose ``why`` says why its answer is known; ``expect="zone"`` marks a family the
claim's horizon or range cannot resolve (the module says with which arithmetic), whose right answer
is "undecided".

``families(claim_id, role)`` returns a part's families by the claim and a role named here
(``ROLES``: role -> the protocol part it challenges), e.g. ``families("C4", "stops")``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import Family


def _of(claim: int, name: str, *args: int, module: str = "challenge") -> Callable[[], tuple[Family, ...]]:
    """Return a maker of claim ``claim``'s families ``name(*args)``, imported when called (its module imports ours)."""

    def make() -> tuple[Family, ...]:
        made: tuple[Family, ...] = getattr(importlib.import_module(f"qin2025.c{claim}.{module}"), name)(*args)
        return made

    return make


# (claim id, role) -> (the protocol part it challenges, its families)
ROLES: dict[tuple[str, str], tuple[str, Callable[[], tuple[Family, ...]]]] = {
    ("C1", "rate"): ("", _of(1, "c1_families")),
    ("C8", "L2"): ("L2", _of(8, "c8_families", 2)),
    ("C8", "L3"): ("L3", _of(8, "c8_families", 3)),
    ("C8", "L4"): ("L4", _of(8, "c8_families", 4)),
    ("C4", "stops"): ("stops", _of(4, "stops_families")),
    ("C4", "slows"): ("slows", _of(4, "slows_families")),
    ("C4", "collapse"): ("collapse", _of(4, "collapse_families")),
    ("C5", "order"): ("lower: order", _of(5, "order_families")),
    ("C5", "faster"): ("lower: beta>0 vs beta=0", _of(5, "faster_families")),
    ("C5", "steeper-order"): ("steeper: order", _of(5, "steeper_order_families")),
    ("C5", "steeper-faster"): ("steeper: beta>0 vs beta=0", _of(5, "steeper_faster_families")),
    ("C2", "monotone"): ("", _of(2, "monotone_families")),
    ("C3", "floor"): ("floor", _of(3, "floor_families")),
    ("C6", "L=1"): ("L=1", _of(6, "advantage_families", 1)),
    ("C6", "L=6"): ("L=6", _of(6, "advantage_families", 6)),
    ("C6", "trend"): ("trend", _of(6, "trend_families")),
    ("C7", "association-input"): ("association (input)", _of(7, "association_input_families")),
    ("C7", "association-rotation"): ("association (rotation)", _of(7, "association_rotation_families")),
    ("C7", "governs"): ("governs (rotation)", _of(7, "governs_families")),
}


# Outside families (``origin="outside"``): a later referee's, written from the claims' words while C1 v6, C4 v6,
# C8 v6 and C5 v5 were designed, by someone who read none of the designs (records/outside_c1_c4/README.md).
OUTSIDE: dict[tuple[str, str], Callable[[], tuple[Family, ...]]] = {
    ("C1", "rate"): _of(1, "linear_rate_outside", 1000, module="outside"),
    ("C8", "L2"): _of(1, "linear_rate_outside", 3500, module="outside"),
    ("C8", "L3"): _of(1, "linear_rate_outside", 4500, module="outside"),
    ("C8", "L4"): _of(1, "linear_rate_outside", 17500, module="outside"),
    ("C4", "stops"): _of(4, "stops_outside", 30, module="outside"),
    # C5 v5's, written from the claim's words and the two readings while v5 was designed (records/outside_c5/README.md)
    ("C5", "lower: order"): _of(5, "lower_order_outside", 400, module="outside"),
    ("C5", "lower: beta>0 vs beta=0"): _of(5, "lower_faster_outside", 400, 24, module="outside"),
    ("C5", "steeper: order"): _of(5, "steeper_order_outside", 400, module="outside"),
    ("C5", "steeper: beta>0 vs beta=0"): _of(5, "steeper_faster_outside", 400, 24, module="outside"),
    # C7 v8's governs, written from the claim's words and the decision's inputs (records/outside_c7/README.md):
    # at ci's and at standard's sample sizes
    ("C7", "governs (rotation)"): _of(7, "governs_outside", 16, 49, module="outside"),
}


def outside(claim_id: str, role: str) -> tuple[Family, ...]:
    """Return the outside families of ``role`` of ``claim_id``; ConfigError naming the known roles otherwise."""
    try:
        return OUTSIDE[(claim_id, role)]()
    except KeyError:
        known = ", ".join(f"{c}:{r}" for c, r in OUTSIDE)
        raise ConfigError(f"no outside families for {claim_id}:{role}; known: {known}") from None


def families(claim_id: str, role: str) -> tuple[Family, ...]:
    """Return the challenge families of ``role`` of ``claim_id``; ConfigError naming the known roles otherwise."""
    try:
        return ROLES[(claim_id, role)][1]()
    except KeyError:
        known = ", ".join(f"{c}:{r}" for c, r in ROLES)
        raise ConfigError(f"no challenge families for {claim_id}:{role}; known: {known}") from None


def part_of(claim_id: str, role: str) -> str:
    """Return the name of the protocol part that ``role`` of ``claim_id`` challenges."""
    families(claim_id, role)  # the error for an unknown role
    return ROLES[(claim_id, role)][0]
