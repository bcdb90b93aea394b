"""Calibration families of C7's decisions: rate tables in worlds where the rate follows the conditioning of Z, or not.

A case is a whole sample (20 seeds at ci) of C7's 16 configurations: d_QK in {4, 512} x input
scale in {0.5, 2} (the strata) x beta in {0, 0.3, 1, 3}. Each seed's sigma_min/sigma_max of Z
(kinv) and lambda_max scatter (lognormal, sd 0.3 and 0.2) around the medians of the real runs
(ci confirmatory block), kinv kept rising with beta inside each stratum as it does in every real
stratum (medians 5e-4, 0.13, 0.32, 0.37). Only the rate differs between worlds, with lognormal
noise of sd 0.02..0.15:

Must pass: the rate follows the conditioning, rate ~ kinv^g, g 0.1..0.4. Must fail: it follows
lambda_max alone (rate ~ lambda_max^g, g of either sign, |g| 0.1..0.4), or beta alone
(rate ~ (1 + beta)^g, g 0.2..1), while the conditioning moves as it does; or nothing (sanity).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import log_uniform

BETAS = (0.0, 0.3, 1.0, 3.0)
CONFIGS = list(itertools.product((4, 512), (0.5, 2.0), BETAS))  # (d_qk, x_scale, beta), C7's order
STRATA = [f"d_qk={q} x*{x:g}" for q, x, _ in CONFIGS]
KINV = np.asarray(
    [4.75e-4, 0.133, 0.316, 0.37, 3.67e-5, 0.093, 0.232, 0.356, 1.6e-4, 0.15, 0.338, 0.37, 2.48e-3, 0.154, 0.327, 0.368]
)  # real medians over the ci seeds, C7 v2
LAMBDA = np.asarray([43.7, 47.5, 112, 747, 4050, 4020, 4780, 14500, 42.3, 46.2, 108, 658, 953, 982, 1920, 10900])

Rate = Callable[[np.random.Generator, np.ndarray, np.ndarray], tuple[np.ndarray, dict[str, float]]]


def _seed(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    kinv = KINV * np.exp(rng.normal(0.0, 0.3, KINV.size))
    for k in range(0, kinv.size, len(BETAS)):  # rising with beta inside each stratum, as in every real one
        kinv[k : k + len(BETAS)] = np.sort(kinv[k : k + len(BETAS)])
    return kinv, LAMBDA * np.exp(rng.normal(0.0, 0.2, LAMBDA.size))


def sample(
    rng: np.random.Generator,
    law: Callable[[np.ndarray, np.ndarray, float], np.ndarray],
    seeds: int,
    exponent: tuple[float, float],
    signed: bool,
) -> Case:
    """A sample of ``seeds`` seeds whose rates follow ``law(kinv, lambda_max, g)`` times lognormal noise."""
    g = float(rng.uniform(*exponent)) * (float(rng.choice([-1.0, 1.0])) if signed else 1.0)
    noise = log_uniform(rng, 0.02, 0.15)
    rates, kinvs, lams = [], [], []
    for _ in range(seeds):
        kinv, lam = _seed(rng)
        rates.append((0.04 * law(kinv, lam, g) * np.exp(rng.normal(0.0, noise, kinv.size))).tolist())
        kinvs.append(kinv.tolist())
        lams.append(lam.tolist())
    admissible = [[True] * len(CONFIGS) for _ in range(seeds)]
    return Case(
        {"exponent": g, "noise": noise},
        {"rate": rates, "kinv": kinvs, "lam": lams, "admissible": admissible, "strata": STRATA},
    )


BETA = np.asarray([b for _, _, b in CONFIGS])
LAWS: tuple[
    tuple[str, Expect, Callable[[np.ndarray, np.ndarray, float], np.ndarray], tuple[float, float], bool, str, str], ...
] = (
    (
        "rate follows the conditioning",
        "pass",
        lambda k, m, g: (k / 0.3) ** g,
        (0.1, 0.4),
        False,
        "rate ~ kinv^g, g 0.1..0.4",
        "the conditioning of Z sets the rate",
    ),
    (
        "rate follows lambda_max alone",
        "fail",
        lambda k, m, g: (m / 100) ** g,
        (0.1, 0.4),
        True,
        "rate ~ lambda_max^g, |g| 0.1..0.4, either sign",
        "the curvature sets the rate; the conditioning only moves with it",
    ),
    (
        "rate follows beta alone",
        "fail",
        lambda k, m, g: (1 + BETA) ** g,
        (0.2, 1.0),
        False,
        "rate ~ (1 + beta)^g, g 0.2..1",
        "beta sets the rate (C5's evidence); the conditioning only moves with beta",
    ),
    (
        "no relation (sanity)",
        "fail",
        lambda k, m, g: np.ones_like(k),
        (0.0, 0.0),
        False,
        "rate independent of everything",
        "nothing sets the rate",
    ),
)


def conditioning_families(seeds: int, cases: int = 50) -> tuple[Family, ...]:
    """Return the families of C7's parts (both take the same samples); each case is ``seeds`` seeds."""
    grid = f"{seeds} seeds x 16 configurations; kinv, lambda_max scattered about the real medians; noise sd 0.02..0.15"
    return tuple(
        Family(
            name,
            expect,
            partial(sample, law=law, seeds=seeds, exponent=exp, signed=signed),
            cases,
            f"{text}; {grid}",
            why,
        )
        for name, expect, law, exp, signed, text, why in LAWS
    )
