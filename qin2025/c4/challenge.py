"""Challenge families for C4: rate tables and collapse sweeps from worlds that decay to zero, or level off.

Written from the claim's words ("when d_QK is very large the attention output without residual
tends to a rank-one matrix, sigma_min(Attn(X)) -> 0 and convergence stalls"; the parts: "collapse",
"slows": rate(beta=0)/rate(beta=1) at least halves from d to 64 d, "stops": it tends to 0), not from
the decisions. The grid is the claim's: d_QK = d x q, q in (1, 4, 16, 64, 256), d = 16 for the
rate table (training N = 2, n = 8, d = 16) and 32 for the sweep.

The rate-table world: per seed, the relative rate rho(q) = rate(beta=0)/rate(beta=1) follows the
world's curve with per-seed scatter in its exponent, start and floor (10% each, log-normal), and
each run's rate is measured with a log-normal error of sd sigma (5-20%): rate(beta=1) = r_1 e^(e_1)
with r_1 0.005-0.05 per seed, rate(beta=0) = rho(q) r_1 e^(e_0). A "stops" or "slows" case is a
sample of ``UNITS`` seeds (C4's ci budget), decided under the mean rule.

Which answer is right, and where there is none (``qin2025.challenge.trend``): "stops" is a limit,
so a decay rho = rho_1 q^-s (s 0.2-0.6) is "pass" and a level-off at F in 0.02-0.09 is "fail" only
where the far end of the grid the part reads (16 d .. 256 d) tells them apart within the sample's
precision (``precision``: a miss up to eta = 1.22 sqrt(2) sigma / sqrt(n) in log at a point is not
seen); everywhere else the family is "zone". With sigma = 0.1 and 14 seeds eta = 0.046. A decay
with rho_1 = 1 and s = 0.4 (0.33, 0.19, 0.11 at 16, 64, 256 d) is met by a level-off at 0.02
(s' = 0.45) to within 0.011 at every point: in the zone. One with s = 0.6 (0.19, 0.082, 0.036)
is missed by 0.063 at best (floor 0.02, s' = 0.83) and by more at higher floors: resolved. A
level-off is resolved when no decay with s >= 0.1 comes within eta: it has visibly flattened.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.challenge.draw import log_uniform, uniform, until
from qin2025.challenge.trend import decay_matched_by_level_off, level_off, level_off_matched_by_decay

Q = np.array([1.0, 4.0, 16.0, 64.0, 256.0])  # d_QK / d
D_TRAIN = 16  # the rate table's d
D_SWEEP = 32  # the collapse sweep's d (the smaller of its shapes)
UNITS = 14  # seeds per sample (C4's ci budget)
SCATTER = 0.1  # per-seed log-normal scatter of a world's exponent, start and floor
STOPS = slice(2, 5)  # q = 16 .. 256: what "stops" reads
SLOWS = slice(0, 4)  # q = 1 .. 64: what "slows" reads
CASES = 200
SEEN = 2 * math.sqrt(6) / 4  # a Chebyshev miss, in standard errors, that a 2-sd curvature test over 3 points sees


@dataclass(frozen=True)
class World:
    """A relative-rate (or collapse) curve over q: a decay (floor 0) or a level-off at ``floor``."""

    start: float  # y at q = 1
    exponent: float
    floor: float = 0.0

    def curve(self, q: np.ndarray) -> np.ndarray:
        """Return y(q)."""
        return level_off(q, self.start, self.floor, self.exponent)

    def seed(self, rng: np.random.Generator) -> World:
        """Return one seed's world: start, exponent and floor scattered by SCATTER (log-normal)."""
        s = np.exp(SCATTER * rng.standard_normal(3))
        floor = min(self.floor * float(s[2]), 0.95 * self.start * float(s[0]))
        return World(self.start * float(s[0]), self.exponent * float(s[1]), floor)


def precision(sigma: float, units: int) -> float:
    """Return eta, how far another world's curve may miss the sample's mean log rho at a point and still match it.

    se = sqrt(2) sigma / sqrt(n) is the standard error of the mean log rho at a point (two rate
    errors per seed). Over three points the best line misses a curve with second difference c by
    c/4 at its worst point, and a two-sided 2-sd test of c needs |c| >= 2 sqrt(6) se, so a miss
    up to eta = 2 sqrt(6) se / 4 = 1.22 se is not seen. The per-seed scatter of a world's start and
    exponent moves the sample's mean curve along the world's own parameters (its amplitude and
    exponent), which both matches search freely, so it does not blur the curve's shape.
    """
    return SEEN * math.sqrt(2) * sigma / math.sqrt(units)


def decays_told_apart(world: World, eta: float, q: np.ndarray, floors: tuple[float, float]) -> bool:
    """Return whether a decay world is told from every level-off with a floor in ``floors`` at ``q``."""
    return not decay_matched_by_level_off(q, world.curve(q), *floors, eta)


def levels_told_apart(world: World, eta: float, q: np.ndarray) -> bool:
    """Return whether a level-off world is told from every decay with s >= 0.1 at ``q``."""
    return not level_off_matched_by_decay(q, world.curve(q), eta)


# --- the rate table --------------------------------------------------------------------------------


def rate_table(rng: np.random.Generator, world: World, sigma: float, points: slice) -> dict[str, Any]:
    """Return one seed's measurements at the grid points ``points``: d_QK and (rate beta=0, rate beta=1) pairs."""
    mine = world.seed(rng)
    q = Q[points]
    r1 = log_uniform(rng, 0.005, 0.05)
    with_res = r1 * np.exp(sigma * rng.standard_normal(q.size))
    without = mine.curve(q) * r1 * np.exp(sigma * rng.standard_normal(q.size))
    return adapt(q, without, with_res)


def adapt(q: np.ndarray, without: np.ndarray, with_res: np.ndarray) -> dict[str, Any]:
    """Return a decision's keyword arguments (``slows_decision``/``stops_decision(d_qk, rates)``) for one seed."""
    return {
        "d_qk": [float(D_TRAIN * v) for v in q],
        "rates": [(float(a), float(b)) for a, b in zip(without, with_res, strict=True)],
    }


WorldMaker = Callable[[np.random.Generator], World]


def decays(s: tuple[float, float], start: tuple[float, float] = (0.5, 1.0)) -> WorldMaker:
    """Return a maker of decay worlds rho_1 q^-s."""
    return lambda rng: World(uniform(rng, *start), uniform(rng, *s))


def levels(floor: tuple[float, float], s: tuple[float, float], start: tuple[float, float] = (0.5, 1.0)) -> WorldMaker:
    """Return a maker of level-off worlds F + (rho_1 - F) q^-s' (F absolute)."""
    return lambda rng: World(uniform(rng, *start), uniform(rng, *s), uniform(rng, *floor))


def sample_family(
    name: str,
    expect: Expect,
    maker: WorldMaker,
    keep: Callable[[World, float], bool],
    points: slice,
    grid: str,
    why: str,
    units: int = UNITS,
) -> Family:
    """Return a mean-rule family: a world kept by ``keep(world, sigma)``, sampled at ``units`` seeds."""

    def draw(rng: np.random.Generator) -> tuple[World, float]:
        return maker(rng), uniform(rng, 0.05, 0.2)

    def generate(rng: np.random.Generator) -> Case:
        world, sigma = until(rng, draw, lambda ws: keep(*ws))
        params: dict[str, float | str] = {
            "start": world.start,
            "s": world.exponent,
            "floor": world.floor,
            "sigma": sigma,
        }
        return Case(params, {"units": [rate_table(rng, world, sigma, points) for _ in range(units)]})

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def _eta(world: World, sigma: float) -> float:
    return precision(sigma, UNITS)


STOP_FLOORS = (0.02, 0.09)


def stops_families() -> tuple[Family, ...]:
    """Return the challenge families of C4 "stops": decays to 0 and level-offs at 0.02-0.09, over 16 d .. 256 d."""
    q = Q[STOPS]
    grid_d = "rho_1 0.5-1, s 0.2-0.6; sigma 5-20% per rate; 10% per-seed scatter; 14 seeds"
    grid_l = "rho_1 0.5-1, floor 0.02-0.09, s' 0.2-1.5; sigma 5-20%; 10% scatter; 14 seeds"
    return (
        sample_family(
            "slow decay to 0, told from every floor 0.02-0.09",
            "pass",
            decays((0.2, 0.6)),
            lambda w, sg: decays_told_apart(w, _eta(w, sg), q, STOP_FLOORS),
            STOPS,
            grid_d + "; kept where no level-off at 0.02-0.09 matches it within eta at 16, 64, 256 d",
            "rho = rho_1 q^-s tends to 0 for any s > 0 ('tends to zero', the claim), and at the grid's far end no "
            "level-off at a floor in 0.02-0.09 comes within the sample's precision of it: resolved",
        ),
        sample_family(
            "level-off at 0.02-0.09, visibly flattened",
            "fail",
            levels(STOP_FLOORS, (0.2, 1.5)),
            lambda w, sg: levels_told_apart(w, _eta(w, sg), q),
            STOPS,
            grid_l + "; kept where no decay with s >= 0.1 matches it within eta",
            "rho tends to F > 0 (levels off), not to 0, and over 16-256 d it has flattened beyond what any decay "
            "with s >= 0.1 shows within the sample's precision: resolved",
        ),
        sample_family(
            "slow decay to 0, matched by a floor 0.02-0.09 (zone)",
            "zone",
            decays((0.2, 0.6)),
            lambda w, sg: not decays_told_apart(w, _eta(w, sg), q, STOP_FLOORS),
            STOPS,
            grid_d + "; kept where some level-off at 0.02-0.09 matches it within eta",
            "it tends to 0, but over 16-256 d a level-off at 0.02-0.09 is within the sample's precision at every "
            "point: the grid cannot say whether it stops; a far end beyond 256 d, or more seeds, would",
        ),
        sample_family(
            "level-off at 0.02-0.09 still falling at 256 d (zone)",
            "zone",
            levels(STOP_FLOORS, (0.2, 1.5)),
            lambda w, sg: not levels_told_apart(w, _eta(w, sg), q),
            STOPS,
            grid_l + "; kept where a decay with s >= 0.1 matches it within eta",
            "it levels off at F > 0, but over 16-256 d it still falls like a decay within the sample's precision: "
            "the grid cannot tell it from 'tends to zero'",
        ),
    )


def slows_families() -> tuple[Family, ...]:
    """Return the challenge families of C4 "slows": the relative rate at least halves from d to 64 d, or does not."""
    return (
        sample_family(
            "decay that falls 2.8-16x from d to 64 d",
            "pass",
            decays((0.25, 0.66)),
            lambda w, sg: True,
            SLOWS,
            "rho_1 0.5-1, s 0.25-0.66 (64^-s = 0.35-0.064); sigma 5-20%; 10% scatter; 14 seeds",
            "the relative rate falls by 64^s >= 2.8x over d..64 d: it more than halves ('at least halves')",
        ),
        Family(
            "early level-off: falls by at most 1.4x from d to 64 d",
            "fail",
            _early_level_off,
            CASES,
            "rho_1 0.5-1, floor 0.72-0.95 rho_1, s' 0.3-1.5; sigma 5-20%; 10% scatter; 14 seeds",
            "it levels off at 72-95% of its start, so from d to 64 d it falls by at most 1/0.72 = 1.4x: it does "
            "not halve",
            origin="challenge",
        ),
        sample_family(
            "flat: no slowdown",
            "fail",
            decays((0.0, 0.05)),
            lambda w, sg: True,
            SLOWS,
            "rho_1 0.5-1, s 0-0.05 (64^-s >= 0.81); sigma 5-20%; 10% scatter; 14 seeds",
            "the relative rate falls by at most 1.23x over d..64 d: no halving",
        ),
    )


def _early_level_off(rng: np.random.Generator) -> Case:
    start = uniform(rng, 0.5, 1.0)
    world, sigma = World(start, uniform(rng, 0.3, 1.5), uniform(rng, 0.72, 0.95) * start), uniform(rng, 0.05, 0.2)
    params: dict[str, float | str] = {"start": world.start, "s": world.exponent, "floor": world.floor, "sigma": sigma}
    return Case(params, {"units": [rate_table(rng, world, sigma, SLOWS) for _ in range(UNITS)]})


# --- the collapse sweep ----------------------------------------------------------------------------

COLLAPSE_FLOORS = (0.02, 0.3)  # saturation levels, as a share of the value at q = 1


def sweep(rng: np.random.Generator, ratio: World, floor: World, sigma: float) -> dict[str, Any]:
    """Return one seed's sweep: medians of sigma_2/sigma_1 and sigma_min(Attn X)/sigma_min(X) at each d_QK."""
    a = ratio.seed(rng).curve(Q) * np.exp(sigma * rng.standard_normal(Q.size))
    b = floor.seed(rng).curve(Q) * np.exp(sigma * rng.standard_normal(Q.size))
    return {"d_qk": [float(D_SWEEP * v) for v in Q], "ratio": [float(v) for v in a], "floor": [float(v) for v in b]}


def _collapse_world(rng: np.random.Generator, level: bool) -> tuple[World, World, float]:
    def one(start: float) -> World:
        s = uniform(rng, 0.2, 1.2) if not level else uniform(rng, 0.3, 2.0)
        return World(start, s, uniform(rng, *COLLAPSE_FLOORS) * start if level else 0.0)

    return one(uniform(rng, 0.3, 0.8)), one(uniform(rng, 0.2, 0.8)), uniform(rng, 0.05, 0.15)


def _collapse_told(worlds: tuple[World, World, float], level: bool) -> list[bool]:
    *pair, sigma = worlds
    out = []
    for w in pair:
        assert isinstance(w, World)
        eta = SEEN * sigma  # one seed: one measured curve, its own noise at each point
        if level:
            out.append(levels_told_apart(w, eta, Q))
        else:
            out.append(decays_told_apart(w, eta, Q, (COLLAPSE_FLOORS[0] * w.start, COLLAPSE_FLOORS[1] * w.start)))
    return out


def collapse_family(name: str, expect: Expect, level: bool, zone: bool, grid: str, why: str) -> Family:
    """Return a collapse family: decays or level-offs of both curves, kept resolved (or, ``zone``, not)."""

    def generate(rng: np.random.Generator) -> Case:
        def keep(w: tuple[World, World, float]) -> bool:
            told = _collapse_told(w, level)
            return not all(told) if zone else all(told)

        ratio, floor, sigma = until(rng, lambda r: _collapse_world(r, level), keep)
        params: dict[str, float | str] = {
            "s_ratio": ratio.exponent,
            "floor_ratio": ratio.floor / ratio.start,
            "s_floor": floor.exponent,
            "floor_floor": floor.floor / floor.start,
            "sigma": sigma,
        }
        return Case(params, sweep(rng, ratio, floor, sigma))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def collapse_families() -> tuple[Family, ...]:
    """Return the challenge families of C4 "collapse": both sweeps decay to 0, or level off at a saturation."""
    grid_d = "sigma_2/sigma_1 from 0.3-0.8, sigma_min ratio from 0.2-0.8 at d, each q^-s, s 0.2-1.2; 5-15% noise"
    grid_l = "as decays, each levelling at 2-30% of its value at d, s' 0.3-2"
    return (
        collapse_family(
            "both decay to 0, told from every saturation",
            "pass",
            False,
            False,
            grid_d + "; kept where no saturation at 2-30% of the start matches either within 1.22 sd",
            "sigma_2/sigma_1 -> 0 and sigma_min -> 0 (rank one, the claim), resolved over d..256 d from a level-off",
        ),
        collapse_family(
            "both level off at 2-30% of their start",
            "fail",
            True,
            False,
            grid_l + "; kept where no decay with s >= 0.1 matches either within 1.22 sd",
            "both saturate above 0: attention does not tend to rank one, and the sweep shows it flattened",
        ),
        collapse_family(
            "decays a saturation also matches (zone)",
            "zone",
            False,
            True,
            grid_d + "; kept where a saturation matches one of them within 1.22 sd",
            "they tend to 0, but over d..256 d a saturation at 2-30% of the start fits one of them within the "
            "sweep's noise: the grid cannot say whether it collapses",
        ),
    )
