"""Calibration families of C4's decisions: sweeps and rate tables over d_QK that do, or do not, tend to zero.

The grid is C4's: q = d_QK/d in SPAN = 1, 4, 16, 64, 256 (``qin2025.c4.collapse``); the far 16x is
q = 16 .. 256. A family is the hardest plausible case of one side that we could build; where a
grid is narrower than issue 24's, the family says why.

"collapse" (one sweep per case; medians over 16 draws, modelled with lognormal scatter of 2-15%
per point, as v2's). Must pass: sigma_2/sigma_1 and the floor fall as q^-s, s 0.6 .. 1.2 each (the
theory's exponent is 1: to first order in the Xavier logit sd 2/(1 + q), S - 11^T/n and with it
sigma_2 and sigma_min fall as q^-1; the real sweeps fall about so), or along that logit sd itself,
(2/(1 + q))^s, s 0.7 .. 1.2. A power law slower than q^-0.6 reaches only 1/16 .. 1/28 of its start
by q = 256, where a saturation at 0.05 sits: indistinguishable on this grid, and no Xavier shape.
Must fail: both fall to a level l of their start, l 0.1 .. 0.5 (issue 24's grid); the ratio
levels off at l while the floor still falls (a limit of rank above one); both level off early
(by q = 4) at 0.02 .. 0.1 of their start; no trend (sanity).

"slows" and "stops" (rule mean: each case is a whole sample of ``units`` seeds, decided by the
one-look Student-t test of the mean, ``claimcheck.decide.calibration.decide_case``). Per seed the relative
rate rate(beta=0)/rate(beta=1) is a e^(tau Z) shape(q) e^(sigma(q) Z_q): a start a 0.3 .. 1, a
seed effect tau 0.1 .. 0.5 and a per-point scatter sigma(q) = sigma_0 (1 + log_4(q)/2), sigma_0
0.1 .. 0.3, which grows three-fold to the far end as in the real runs (there the spread over seeds
comes from when a beta = 0 run escapes its plateau: sd of ln rel 0.3-0.4 at q <= 16, 0.8-1.0 at
q = 64 .. 256, seeds 0-13). rate(beta=1) is 0.005 .. 0.05 orders per step.

- slows (q = 1 .. 64): must pass: q^-s, s 0.25 .. 1; a fall that levels off (l + (1 - l) q^-s,
  l 0.1 .. 0.3, s 0.5 .. 1.5: "slows" holds where "stops" does not). Must fail: a fall by less than
  half (l 0.6 .. 0.95); no slowdown (sanity).
- stops (v6, a zone part; q = 16 .. 256): must pass, resolved: a q^-s at a stall by 256 d (a 256^-s
  at most 0.0033, a third of the stall level 1/100), and a literal stall (no progress from q0 = 16, 64
  or 256 d on). In the zone ("not resolved"): a q^-s still 0.03 or more at 256 d, and a fall that
  levels off beyond the grid (l + a q^-s, l under a twentieth of its 256 d value): the three points
  cannot tell a decay to 0 from a level-off below the 256 d value. Must fail: a fall that levels off
  inside the grid, by q = 2..4, at l 0.03..0.5 (3x the stall and up): flat over the far 16x; no
  slowdown (sanity). Levels under the stall (0.01) read as stops: at this horizon a beta = 0 run
  there makes at most one step of the beta = 1 run's progress.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.c4.collapse import FAR, NEAR, SPAN, STALL
from qin2025.calibration.draw import log_uniform

Shape = Callable[[np.ndarray], np.ndarray]
D = 32  # d of the collapse sweeps' cases (the decisions read ratios of d_QK only)
D_TRAIN = 16  # d of the rate tables' cases


def _scatter(rng: np.random.Generator, values: np.ndarray, sigma: float) -> list[float]:
    return [float(v) for v in values * np.exp(rng.normal(0.0, sigma, values.size))]


def _sweep(rng: np.random.Generator, ratio: Shape, floor: Shape, **params: float) -> Case:
    q = np.asarray(SPAN, dtype=np.float64)
    sigma = log_uniform(rng, 0.02, 0.15)
    a, b = float(rng.uniform(0.4, 0.8)), log_uniform(rng, 0.005, 0.5)
    measurements = {"d_qk": (D * q).tolist(), "ratio": _scatter(rng, a * ratio(q), sigma)}
    measurements["floor"] = _scatter(rng, b * floor(q), sigma)
    return Case({**params, "scatter": sigma, "ratio_at_d": a}, measurements)


def _power(s: float) -> Shape:
    return lambda q: q**-s


def _level(level: float, s: float) -> Shape:
    return lambda q: level + (1 - level) * q**-s


def _knee_exponent(level: float, knee: float) -> float:
    """Return s such that level + (1 - level) q^-s is within ``level`` of its limit at q = ``knee``."""
    return math.log((1 - level) / level) / math.log(knee)


def power_collapse(rng: np.random.Generator) -> Case:
    """sigma_2/sigma_1 and the floor fall as q^-s, s 0.6..1.2, each its own exponent."""
    s, t = float(rng.uniform(0.6, 1.2)), float(rng.uniform(0.6, 1.2))
    return _sweep(rng, _power(s), _power(t), exponent=s, floor_exponent=t)


def logit_scale_collapse(rng: np.random.Generator) -> Case:
    """Both fall along Xavier's logit sd, (2/(1 + q))^s, s 0.7..1.2."""
    s = float(rng.uniform(0.7, 1.2))
    shape: Shape = lambda q: (2 / (1 + q)) ** s  # noqa: E731
    return _sweep(rng, shape, shape, exponent=s)


def saturating_collapse(rng: np.random.Generator) -> Case:
    """Both fall to a level l of their start, l + (1 - l) q^-s, l 0.1..0.5, s 0.5..1.5."""
    level, s = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.5, 1.5))
    return _sweep(rng, _level(level, s), _level(level, s), level=level, exponent=s)


def rank_above_one(rng: np.random.Generator) -> Case:
    """The ratio levels off at l 0.1..0.5 of its start while the floor falls as q^-t, t 0.6..1.2."""
    level, s, t = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.5, 1.5)), float(rng.uniform(0.6, 1.2))
    return _sweep(rng, _level(level, s), _power(t), level=level, exponent=s, floor_exponent=t)


def early_level_collapse(rng: np.random.Generator) -> Case:
    """Both level off by q = 2..4 at l 0.02..0.1 of their start: flat over the far 16x."""
    level, knee = float(rng.uniform(0.02, 0.1)), float(rng.uniform(2.0, 4.0))
    s = _knee_exponent(level, knee)
    return _sweep(rng, _level(level, s), _level(level, s), level=level, knee=knee)


def flat_collapse(rng: np.random.Generator) -> Case:
    """No trend in d_QK (the variance-1/d init)."""
    return _sweep(rng, np.ones_like, np.ones_like)


def _sample(rng: np.random.Generator, units: int, span: tuple[int, ...], shape: Shape, **params: float) -> Case:
    """Return a sample of ``units`` seeds' rate tables over q = ``span`` (one unit's measurements each)."""
    q = np.asarray(span, dtype=np.float64)
    tau, sigma0 = float(rng.uniform(0.1, 0.5)), float(rng.uniform(0.1, 0.3))
    sigma = sigma0 * (1 + np.log(q) / np.log(4) / 2)
    out = []
    for _ in range(units):
        r1 = log_uniform(rng, 0.005, 0.05) * np.exp(rng.normal(0.0, 0.1, q.size))  # beta = 1, orders per step
        rel = shape(q) * math.exp(rng.normal(0.0, tau)) * np.exp(rng.normal(0.0, 1.0, q.size) * sigma)
        pairs = [(float(a * b), float(b)) for a, b in zip(rel, r1, strict=True)]
        out.append({"d_qk": (D_TRAIN * q).tolist(), "rates": pairs})
    return Case({**params, "seed_effect": tau, "scatter": sigma0}, {"units": out})


def _start(rng: np.random.Generator) -> float:
    return float(rng.uniform(0.3, 1.0))


def slows_power(rng: np.random.Generator, units: int) -> Case:
    """The relative rate falls as a q^-s, s 0.25..1."""
    a, s = _start(rng), float(rng.uniform(0.25, 1.0))
    return _sample(rng, units, NEAR, lambda q: a * q**-s, start=a, exponent=s)


def slows_then_levels(rng: np.random.Generator, units: int) -> Case:
    """It falls and levels off, a (l + (1 - l) q^-s), l 0.1..0.3, s 0.5..1.5: it slows without stopping."""
    a, level, s = _start(rng), float(rng.uniform(0.1, 0.3)), float(rng.uniform(0.5, 1.5))
    return _sample(rng, units, NEAR, lambda q: a * _level(level, s)(q), start=a, level=level, exponent=s)


def slows_less_than_half(rng: np.random.Generator, units: int) -> Case:
    """It falls by less than half over q = 1..64: a (l + (1 - l) q^-s), l 0.6..0.95, s 0.5..2."""
    a, level, s = _start(rng), float(rng.uniform(0.6, 0.95)), float(rng.uniform(0.5, 2.0))
    return _sample(rng, units, NEAR, lambda q: a * _level(level, s)(q), start=a, level=level, exponent=s)


def no_slowdown(rng: np.random.Generator, units: int, span: tuple[int, ...]) -> Case:
    """The relative rate does not move with d_QK."""
    a = _start(rng)
    return _sample(rng, units, span, lambda q: a * np.ones_like(q), start=a)


def _stall_power(rng: np.random.Generator) -> tuple[float, float]:
    """Return (a, s) of a q^-s at a stall by 256 d: a 256^-s <= 0.3 x 10^STALL (0.0033), s up to 2.5."""
    a = _start(rng)
    low = math.log(a / (0.3 * 10**STALL)) / math.log(256.0)
    return a, float(rng.uniform(low, max(low, 2.5)))


def stops_power(rng: np.random.Generator, units: int) -> Case:
    """It falls towards 0 as a q^-s and is at a stall by 256 d (a 256^-s <= 0.0033)."""
    a, s = _stall_power(rng)
    return _sample(rng, units, FAR, lambda q: a * q**-s, start=a, exponent=s)


def stops_stall(rng: np.random.Generator, units: int) -> Case:
    """A literal stall: beta = 0 falls as a q^-s (s 0.25..1) and makes no progress from q0 = 16, 64 or 256 on."""
    a, s, q0 = _start(rng), float(rng.uniform(0.25, 1.0)), float(rng.choice(FAR))
    shape: Shape = lambda q: np.where(q < q0, a * q**-s, 0.0)  # noqa: E731
    return _sample(rng, units, FAR, shape, start=a, exponent=s, stall_from=q0)


def stops_still_falling(rng: np.random.Generator, units: int) -> Case:
    """A fall a q^-s still above the stall at 256 d (a 256^-s >= 0.03, s >= 0.3): tends to 0, not resolved."""
    a = _start(rng)
    high = math.log(a / 0.03) / math.log(256.0)
    s = float(rng.uniform(0.3, max(0.3, high)))
    return _sample(rng, units, FAR, lambda q: a * q**-s, start=a, exponent=s)


def stops_levels_beyond(rng: np.random.Generator, units: int) -> Case:
    """A fall a q^-s (s 0.3..) that levels off beyond the grid at 1e-3..0.05 of its 256 d value, itself >= 0.03."""
    a = _start(rng)
    high = math.log(a / 0.03) / math.log(256.0)
    s, frac = float(rng.uniform(0.3, max(0.3, high))), log_uniform(rng, 1e-3, 0.05)
    level = frac * a * 256.0**-s
    shape: Shape = lambda q: level + a * q**-s  # noqa: E731
    return _sample(rng, units, FAR, shape, start=a, exponent=s, level=level)


def stops_levels_inside(rng: np.random.Generator, units: int) -> Case:
    """It levels off by q = 2..4 at an absolute level l 0.03..0.5 (3x the stall and up): flat over the far 16x."""
    a = _start(rng)
    level, knee = log_uniform(rng, 0.03, min(0.5, 0.8 * a)), float(rng.uniform(2.0, 4.0))
    s = math.log((a - level) / level) / math.log(knee)
    shape: Shape = lambda q: level + (a - level) * q**-s  # noqa: E731
    return _sample(rng, units, FAR, shape, start=a, level=level, knee=knee)


def _fam(name: str, expect: Expect, gen: Callable[..., Case], cases: int, grid: str, why: str, **kw: object) -> Family:
    return Family(name, expect, partial(gen, **kw), cases, grid, why)


def _flat(units: int, cases: int, grid: str, span: tuple[int, ...]) -> Family:
    """Return the sanity family of a rate part: no slowdown over ``span``."""
    why = "beta = 0 keeps pace with beta = 1 at every d_QK"
    return _fam("no slowdown (sanity)", "fail", no_slowdown, cases, f"constant; {grid}", why, units=units, span=span)


def collapse_families(cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C4's "collapse" part (one sweep d_QK = d .. 256 d per case)."""
    noise = "scatter 2-15% per point"
    return (
        _fam(
            "power-law collapse",
            "pass",
            power_collapse,
            cases,
            f"ratio, floor ~ q^-s, s 0.6..1.2; {noise}",
            "both tend to 0",
        ),
        _fam(
            "collapse along the logit sd",
            "pass",
            logit_scale_collapse,
            cases,
            f"(2/(1 + q))^s, s 0.7..1.2; {noise}",
            "Xavier's first-order shape: both tend to 0",
        ),
        _fam(
            "collapse that saturates",
            "fail",
            saturating_collapse,
            cases,
            f"l + (1 - l) q^-s, l 0.1..0.5, s 0.5..1.5; {noise}",
            "both tend to l > 0: attention keeps a second direction",
        ),
        _fam(
            "rank above one",
            "fail",
            rank_above_one,
            cases,
            f"ratio to l 0.1..0.5 of its start, floor q^-t, t 0.6..1.2; {noise}",
            "sigma_min -> 0 but sigma_2/sigma_1 does not: the limit has rank above one",
        ),
        _fam(
            "collapse that levels off early",
            "fail",
            early_level_collapse,
            cases,
            f"levels off by q = 2..4 at l 0.02..0.1; {noise}",
            "both tend to l > 0 below the saturation grid: only the trend can see it",
        ),
        _fam("no trend in d_QK (sanity)", "fail", flat_collapse, cases, f"constant; {noise}", "nothing collapses"),
    )


def slows_families(units: int, cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C4's "slows" part; each case is a sample of ``units`` seeds over d .. 64 d."""
    grid = f"{units} seeds, q = 1..64, start 0.3..1, seed effect 0.1..0.5, scatter 0.1..0.3 growing x3"
    return (
        _fam(
            "power-law fall",
            "pass",
            slows_power,
            cases,
            f"q^-s, s 0.25..1; {grid}",
            "falls more than half",
            units=units,
        ),
        _fam(
            "fall that levels off",
            "pass",
            slows_then_levels,
            cases,
            f"l + (1 - l) q^-s, l 0.1..0.3, s 0.5..1.5; {grid}",
            "slows (by 3x or more) without stopping",
            units=units,
        ),
        _fam(
            "fall by less than half",
            "fail",
            slows_less_than_half,
            cases,
            f"l + (1 - l) q^-s, l 0.6..0.95, s 0.5..2; {grid}",
            "the relative rate does not halve over 64x of d_QK",
            units=units,
        ),
        _flat(units, cases, grid, NEAR),
    )


def stops_families(units: int, cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C4's "stops" part (v6: a zone part); each case is a sample of ``units`` seeds."""
    grid = f"{units} seeds, q = 16..256, start 0.3..1, seed effect 0.1..0.5, scatter 0.1..0.3 growing x3"
    return (
        _fam(
            "power law to a stall by 256 d",
            "pass",
            stops_power,
            cases,
            f"a q^-s, a 256^-s <= 0.0033; {grid}",
            "tends to 0 and is at a stall (under 1/100 of the residual run's rate) within the grid: resolved",
            units=units,
        ),
        _fam(
            "a literal stall from 16, 64 or 256 d",
            "pass",
            stops_stall,
            cases,
            f"a q^-s (s 0.25..1) to q0, then no progress; {grid}",
            "beta = 0 stops converging: 'convergence stops', seen",
            units=units,
        ),
        _fam(
            "power law still above the stall at 256 d",
            "zone",
            stops_still_falling,
            cases,
            f"a q^-s, s >= 0.3, a 256^-s >= 0.03; {grid}",
            "tends to 0, but at 256 d it is still 3x or more above a stall, and a level-off below its 256 d value "
            "gives the same three points: not resolvable up to 256 d",
            units=units,
        ),
        _fam(
            "falls, levels off beyond the grid",
            "zone",
            stops_levels_beyond,
            cases,
            f"l + a q^-s, s >= 0.3, a 256^-s >= 0.03, l 1e-3..0.05 of it; {grid}",
            "levels off (does not stop), but beyond 256 d: the grid shows the same fall as a decay to 0",
            units=units,
        ),
        _fam(
            "levels off inside the grid",
            "fail",
            stops_levels_inside,
            cases,
            f"levels off by q = 2..4 at l 0.03..0.5; {grid}",
            "tends to l > 0 (3x the stall and up) and is flat over the far 16x: it slows, does not stop",
            units=units,
        ),
        _flat(units, cases, grid, FAR),
    )
