"""Calibration families of C7's decisions: one lever's rate table in worlds whose answer is known.

A case is one unit of one lever, as the claim measures it (``qin2025.conditioning``): its 5 settings
and 4 lambda runs, with kinv(Z), lambda_max, sigma_min(Z) and the step size mu. ``skeleton`` draws
them from the structure measured on exploratory seeds 0-29 at T = 200 (records/claims/c7-v3-design.md,
E9: along each lever the slopes of log kinv(Z) and log lambda_max against the log setting, their
levels, and lambda_max's exponents along the lambda runs, each with its seed-to-seed sd); a world
then sets each run's log rate, with Gaussian noise of sd 0.15..0.4 (real residual sd: median
0.24 on the input lever, 0.15 on the W_V lever, 90th percentile 0.41 and 0.22).

Grid, by what each part's statement says (association: along the lever the better-conditioned
runs are faster; governs: the elasticity b of the rate in kinv(Z), lambda_max held, is >= 0.5):

- must pass, every part: the rate follows kinv(Z), log rate = b log kinv + c log lambda_max,
  b 0.75..2, c -0.3..0; the bound form rate = mu sigma_min(Z)^2 (Theorem 1's shape at a fixed
  fraction of the curvature bound);
- must pass, association only: on the bar, b = 0.5; association (input) also where the rate
  follows X's conditioning alone (along the input lever it does follow kinv(Z));
- must fail, governs: a weak effect, b = 0.25; lambda_max alone, log rate = -g log lambda_max,
  g 0.3..3; a curved function of lambda_max alone; beta alone (fixed within a unit, so no rate
  change); the scale alone (X -> s X); governs (W_V) also where the rate follows X alone;
- must fail, association: beta alone; the scale alone; association (W_V) also X alone.

Not scored, and why: association in the weak (b = 0.25) and lambda-alone worlds (lambda_max
moves with the lever, so a rate that follows it is associated with kinv(Z) along the lever; the
association part states an association, the governs part the mechanism); governs on the bar
(b = 0.5 is the threshold itself) and governs (input) where the rate follows X alone (along the
input lever it follows kinv(Z) too: only the W_V lever tells them apart, which is why it is a part).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.conditioning import INPUT, LAMBDA_RUNS, LEVERS, Lever

# Structure measured on exploratory seeds 0-29 (mean, sd over seeds): d log kinv / d log setting,
# d log lambda / d log setting, log kinv and log lambda at the best-conditioned setting.
STRUCTURE = {
    "input": {"k_slope": (-0.826, 0.057), "l_slope": (0.205, 0.071), "k0": (-0.672, 0.077), "l0": (6.142, 0.256)},
    "W_V": {"k_slope": (0.887, 0.050), "l_slope": (0.044, 0.070), "k0": (-1.177, 0.166), "l0": (6.240, 0.290)},
}
# lambda_max exponents along the lambda runs (s down, s up, ug down, ug up), both levers pooled.
LAM_EXP = {(0.5, 1.0): (2.12, 0.13), (2.0, 1.0): (2.50, 0.29), (1.0, 0.5): (0.71, 0.19), (1.0, 2.0): (1.40, 0.19)}
SMAX_SLOPE_INPUT = 0.13  # d log sigma_max(Z) / d log kx (9.5 at kx = 1 to 17.5 at 100); flat on the W_V lever
NOISE = (0.15, 0.4)  # sd of the log rate


@dataclass(frozen=True)
class Skeleton:
    """One unit of one lever before its rates: what the claim measures at init, and each run's setting."""

    lever: Lever
    kinv: np.ndarray  # (9,)
    lam: np.ndarray
    smin: np.ndarray
    mu: np.ndarray  # 1 / lambda_max: mu = 0.5 * 2 / lambda_max
    s: np.ndarray  # the scale of X of each run
    log_kx: np.ndarray  # log condition number of X (0 on the W_V lever, where X is the Gaussian draw)
    reference: list[bool]


def skeleton(lever: Lever, rng: np.random.Generator) -> Skeleton:
    """Draw one unit's 9 runs of ``lever``: its 5 settings, then the 4 lambda runs at its middle setting."""
    st = {k: rng.normal(*v) for k, v in STRUCTURE[lever.name].items()}
    runs = lever.settings()
    moved = np.array([getattr(run, lever.field) for run in runs])
    pos = np.log(moved / lever.values[0])  # 0 at the best-conditioned setting
    s = np.array([run.s for run in runs])
    log_kinv = st["k0"] + st["k_slope"] * pos
    log_lam = st["l0"] + st["l_slope"] * pos
    for i, (si, ui) in enumerate(LAMBDA_RUNS, start=len(lever.values)):
        log_lam[i] += rng.normal(*LAM_EXP[(si, ui)]) * math.log(si * ui)
    log_smax = math.log(10.0) + (SMAX_SLOPE_INPUT * pos if lever is INPUT else 0.0) + np.log(s)
    lam = np.exp(log_lam)
    log_kx = np.log(moved) if lever is INPUT else np.zeros(moved.size)
    reference = [run.reference for run in runs]
    return Skeleton(lever, np.exp(log_kinv), lam, np.exp(log_kinv + log_smax), 1.0 / lam, s, log_kx, reference)


World = Callable[[Skeleton, np.random.Generator], tuple[np.ndarray, dict[str, float]]]  # log rate, parameters


def _noise(rng: np.random.Generator) -> float:
    return float(rng.uniform(*NOISE))


def follows_kinv(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows kinv(Z): log rate = b log kinv + c log lambda_max, b 0.75..2, c -0.3..0."""
    b, c, sd = float(rng.uniform(0.75, 2.0)), float(rng.uniform(-0.3, 0.0)), _noise(rng)
    return -3.0 + b * np.log(sk.kinv) + c * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"b": b, "c": c, "sd": sd}


def bound_form(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate is mu sigma_min(Z)^2: Theorem 1's shape at a fixed fraction of the curvature bound."""
    sd = _noise(rng)
    return np.log(sk.mu) + 2 * np.log(sk.smin) + rng.normal(0, sd, sk.kinv.size), {"sd": sd}


def elasticity_world(b: float) -> World:
    """Return the world whose rate follows kinv(Z) with elasticity exactly ``b`` (on the bar, or weak)."""

    def world(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        sd = _noise(rng)
        return -3.0 + b * np.log(sk.kinv) + rng.normal(0, sd, sk.kinv.size), {"b": b, "sd": sd}

    return world


def lambda_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows lambda_max alone (the step size): log rate = -g log lambda_max, g 0.3..3."""
    g, sd = float(rng.uniform(0.3, 3.0)), _noise(rng)
    return -g * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"g": g, "sd": sd}


def curved_lambda(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows a curved function of lambda_max alone: -g (log lambda - 6.2)^2 - log lambda, g 0.1..0.5."""
    g, sd = float(rng.uniform(0.1, 0.5)), _noise(rng)
    log_lam = np.log(sk.lam)
    return -g * (log_lam - 6.2) ** 2 - log_lam + rng.normal(0, sd, sk.kinv.size), {"g": g, "sd": sd}


def beta_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows beta alone: beta is the same in every run of a unit, so the rate does not move."""
    sd = _noise(rng)
    return -3.0 + rng.normal(0, sd, sk.kinv.size), {"sd": sd}


def input_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows X's conditioning alone: log rate = -bx log kx - 0.1 log lambda_max, bx 0.5..0.8."""
    bx, sd = float(rng.uniform(0.5, 0.8)), _noise(rng)
    return -3.0 - bx * sk.log_kx - 0.1 * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"bx": bx, "sd": sd}


def scale_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows the scale of X alone (so does sigma_min(Z)): log rate = -e log s, e 0.2..0.6."""
    e, sd = float(rng.uniform(0.2, 0.6)), _noise(rng)
    return -3.0 - e * np.log(sk.s) + rng.normal(0, sd, sk.kinv.size), {"e": e, "sd": sd}


def unit_case(lever: Lever, world: World) -> Callable[[np.random.Generator], Case]:
    """Return a generator of one unit of ``lever`` in ``world``: the measurements and the world's parameters."""

    def generate(rng: np.random.Generator) -> Case:
        sk = skeleton(lever, rng)
        log_rate, params = world(sk, rng)
        measurements = {
            "rate": np.exp(log_rate).tolist(),
            "kinv": sk.kinv.tolist(),
            "lam": sk.lam.tolist(),
            "reference": sk.reference,
        }
        return Case({"lever": lever.name, **params}, measurements)

    return generate


def sample_case(lever: Lever, world: World, units: int) -> Callable[[np.random.Generator], Case]:
    """Return a generator of a whole sample of ``units`` units of ``lever`` in ``world`` (a mean-rule part's case).

    Each unit draws its own skeleton, world parameters within the world's grid, and noise, so the
    sample's mean elasticity lies within the grid: the answer the part must give is the world's.
    """
    one = unit_case(lever, world)

    def generate(rng: np.random.Generator) -> Case:
        drawn = [one(rng) for _ in range(units)]
        return Case({"lever": lever.name, "units": units}, {"units": [c.measurements for c in drawn]})

    return generate


# name, world, grid in words, why the answer is known, and what each kind of part must say there
# ("pass", "fail", or None: not scored, for the reason the module docstring gives).
Row = tuple[str, World, str, str, dict[str, Expect | None]]


def _rows(lever: Lever) -> list[Row]:
    x_alone: dict[str, Expect | None] = {
        "association": "pass" if lever is INPUT else "fail",
        "governs": None if lever is INPUT else "fail",
    }
    return [
        ("rate follows kinv(Z)", follows_kinv, "b 0.75..2, c -0.3..0", "the conditioning of Z sets the rate",
         {"association": "pass", "governs": "pass"}),
        ("bound form mu sigma_min(Z)^2", bound_form, "", "Theorem 1's rate at a fixed fraction of the bound",
         {"association": "pass", "governs": "pass"}),
        ("on the bar, b = 0.5", elasticity_world(0.5), "b = 0.5", "an association of the claimed size",
         {"association": "pass", "governs": None}),
        ("weak, b = 0.25", elasticity_world(0.25), "b = 0.25", "an elasticity half the bar: not governed",
         {"association": None, "governs": "fail"}),
        ("lambda_max alone", lambda_alone, "-g log lambda_max, g 0.3..3", "the step size sets the rate",
         {"association": None, "governs": "fail"}),
        ("curved lambda_max alone", curved_lambda, "-g (log lambda - 6.2)^2 - log lambda, g 0.1..0.5",
         "a nonlinear function of the step size sets the rate", {"association": None, "governs": "fail"}),
        ("beta alone", beta_alone, "beta fixed in the unit: no rate change", "beta, not Z, sets the rate",
         {"association": "fail", "governs": "fail"}),
        ("X's conditioning alone", input_alone, "-bx log kx - 0.1 log lambda_max, bx 0.5..0.8",
         "the input's conditioning sets the rate; Z's follows it only on the input lever", x_alone),
        ("scale of X alone", scale_alone, "-e log s, e 0.2..0.6", "the scale moves sigma(Z), not kinv(Z)",
         {"association": "fail", "governs": "fail"}),
    ]  # fmt: skip


def conditioning_families(kind: str, lever: Lever, cases: int = 200, units: int = 0) -> tuple[Family, ...]:
    """Return the families of the ``kind`` ("association" or "governs") part of ``lever``: every scored world.

    ``units`` > 0 makes each case a sample of that many units (a mean-rule part decides a sample).
    """
    if kind not in ("association", "governs") or lever not in LEVERS:
        raise ValueError(f"conditioning_families: kind association or governs, lever INPUT or W_V; got {kind!r}")
    what = f"a sample of {units} units" if units else "one unit"
    grid = f"{what} of the {lever.name} lever (9 runs each); noise sd {NOISE[0]:g}..{NOISE[1]:g} in log rate"

    def gen(world: World) -> Callable[[np.random.Generator], Case]:
        return sample_case(lever, world, units) if units else unit_case(lever, world)

    return tuple(
        Family(name, expect, gen(world), cases, f"{text}; {grid}" if text else grid, why)
        for name, world, text, why, expects in _rows(lever)
        if (expect := expects[kind]) is not None
    )
