"""Measure the confidence sequences of ``claimcheck.decide.sequential``: coverage at every n, and the units
a decision takes.

Prints the markdown tables of docs/decisions.md: for each construction, over many simulated runs,
how often the truth left the one-sided bounds at some n up to the horizon (time-uniform
miscoverage, which must stay below alpha per side), and for the pass rate how many units a part
takes to be decided when its true rate is 0.1 above or below its bar. A measurement, not a test:
run it by hand (about a minute on one core).

    python benchmarks/sequential_coverage.py --runs 4000 --seed 0
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy import stats as sps

from claimcheck.decide import sequential as sq
from claimcheck.decide.stats import clopper_pearson

ALPHA = 0.05
Bools = NDArray[np.bool_]
Draw = Callable[[tuple[int, int]], NDArray[np.float64]]  # (runs, units) -> values


def _rate(hits: Bools) -> str:
    """Return ``k/n = rate [low, high]`` with the exact 90% interval of the measured rate."""
    k, n = int(hits.sum()), int(hits.size)
    cp = clopper_pearson(k, n, 0.90)
    return f"{k / n:.4f} [{cp.low:.4f}, {cp.high:.4f}]"


def _ever(log_m: NDArray[np.float64]) -> Bools:
    """Return, per run, whether the test martingale reached 1/alpha at some n (the bound excluded the truth)."""
    return np.asarray((log_m >= math.log(1 / ALPHA)).any(axis=-1))


def pass_rate_rows(runs: int, horizon: int, rng: np.random.Generator) -> list[str]:
    """Return rows: bar, true p, P(lower bound ever above p), P(upper ever below p), P(REPRODUCED), P(NOT REPR.)."""
    rows = []
    for bar in (0.8, 0.9):
        for p in (round(bar - 0.1, 2), bar, round(bar + 0.1, 2)):
            x = rng.random((runs, horizon)) < p
            k = np.cumsum(x, axis=1, dtype=np.float64)
            n = np.broadcast_to(np.arange(1, horizon + 1, dtype=np.float64), k.shape)
            if p < 1:
                low_out = _ever(sq.beta_binomial_log_m(k, n, p, "greater"))
                high_out = _ever(sq.beta_binomial_log_m(k, n, p, "less"))
                cover = f"{_rate(low_out)} | {_rate(high_out)}"
            else:
                cover = "0 (no bound can exclude 1) | 0 (every unit passes)"
            above = _ever(sq.beta_binomial_log_m(k, n, bar, "greater"))
            below = _ever(sq.beta_binomial_log_m(k, n, bar, "less"))
            rows.append(f"| {bar:g} | {p:g} | {cover} | {_rate(above)} | {_rate(below)} |")
    return rows


def bounded_rows(runs: int, horizon: int, rng: np.random.Generator) -> list[str]:
    """Return rows for the betting CS on [-1, 1]: a spread-out, a tight and a two-point (largest variance) law."""
    laws: dict[str, tuple[Draw, float]] = {
        "2 Beta(6, 4) - 1 (mean 0.2)": (lambda size: 2 * rng.beta(6, 4, size) - 1, 0.2),
        "clip(N(0.6, 0.15), -1, 1) (mean ~0.6)": (
            lambda size: np.clip(rng.normal(0.6, 0.15, size), -1, 1),
            float(np.clip(rng.normal(0.6, 0.15, 2_000_000), -1, 1).mean()),
        ),
        "+-1 with P(+1) = 0.6 (mean 0.2)": (lambda size: np.where(rng.random(size) < 0.6, 1.0, -1.0), 0.2),
    }
    rows = []
    for name, (draw, mean) in laws.items():
        x = (draw((runs, horizon)) + 1) / 2  # onto [0, 1]
        m = (mean + 1) / 2
        low_out = _ever(sq.betting_log_k(x, m, "greater", ALPHA))
        high_out = _ever(sq.betting_log_k(x, m, "less", ALPHA))
        widths = [sq.betting_bounds(2 * x[i] - 1, ALPHA, (-1, 1)) for i in range(20)]
        width = float(np.median([b.high - b.low for b in widths]))
        rows.append(f"| {name} | {_rate(low_out)} | {_rate(high_out)} | {width:.3f} |")
    return rows


def normal_rows(runs: int, horizon: int, rng: np.random.Generator) -> list[str]:
    """Return rows for the normal mixture with the bound sigma = 1: true, loose, violated, and heavy-tailed."""
    tau = sq.normal_mixture_tau(1.0, horizon, ALPHA)
    laws: dict[str, Draw] = {
        "N(0, 1): bound holds": lambda size: rng.normal(0, 1, size),
        "N(0, 0.5^2): bound loose": lambda size: rng.normal(0, 0.5, size),
        "N(0, 1.5^2): bound violated (sd 1.5)": lambda size: rng.normal(0, 1.5, size),
        "N(0, 2^2): bound violated (sd 2)": lambda size: rng.normal(0, 2, size),
        "t(3) scaled to sd 1: variance holds, tails do not": lambda size: rng.standard_t(3, size) / math.sqrt(3),
    }
    rows = []
    n = np.arange(1, horizon + 1, dtype=np.float64)
    radius = sq.normal_mixture_radius(horizon, ALPHA, 1.0, tau)
    for name, draw in laws.items():
        s = np.cumsum(draw((runs, horizon)), axis=1)
        low_out = _ever(sq.normal_mixture_log_m(s, n, 1.0, tau))
        high_out = _ever(sq.normal_mixture_log_m(-s, n, 1.0, tau))
        rows.append(f"| {name} | {_rate(low_out)} | {_rate(high_out)} | {radius:.3f} |")
    return rows


def units_to_decide(
    p: float, bar: float, runs: int, horizon: int, rng: np.random.Generator, level: float, prior: tuple[float, float]
) -> NDArray[np.float64]:
    """Return, per run, the first n at which the part is decided (horizon + 1 when it is not)."""
    side: sq.Side = "greater" if p > bar else "less"
    x = rng.random((runs, horizon)) < p
    k = np.cumsum(x, axis=1, dtype=np.float64)
    n = np.broadcast_to(np.arange(1, horizon + 1, dtype=np.float64), k.shape)
    hit = sq.beta_binomial_log_m(k, n, bar, side, prior) >= math.log(1 / level)
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, horizon + 1).astype(np.float64)


def one_look_units(p: float, bar: float, level: float, power: float = 0.9) -> int:
    """Return the fewest units at which one look (the exact binomial test) decides with chance ``power``."""
    for n in range(1, 2000):
        k = np.arange(n + 1)
        if p > bar:
            crit = k[sps.binom.sf(k - 1, n, bar) <= level]
            if crit.size and sps.binom.sf(crit[0] - 1, n, p) >= power:
                return n
        else:
            crit = k[sps.binom.cdf(k, n, bar) <= level]
            if crit.size and sps.binom.cdf(crit[-1], n, p) >= power:
                return n
    return -1


CASES = ((0.8, 0.7), (0.8, 0.9), (0.8, 0.95), (0.8, 1.0), (0.9, 0.8), (0.9, 1.0))  # (bar, true rate)


def sizing_rows(runs: int, horizon: int, rng: np.random.Generator) -> list[str]:
    """Return rows: bar, true p, the level the decision needs, prior, median and 90th percentile units, P(> cap).

    The last column is what one look at a fixed n needs for the same decision with chance 0.9.
    """
    rows = []
    priors = {"uniform Beta(1, 1)": (1.0, 1.0), "centred Beta(10 bar, 10 (1 - bar))": None}
    for bar, p in CASES:
        for level in [ALPHA] if p > bar else [ALPHA, ALPHA / 4]:
            fixed = one_look_units(p, bar, level) if p < 1 else math.ceil(math.log(level) / math.log(bar))
            for pname, prior in priors.items():
                chosen = prior or (10 * bar, 10 * (1 - bar))
                first = units_to_decide(p, bar, runs, horizon, rng, level, chosen)
                med, p90 = np.percentile(first, [50, 90])
                caps = " | ".join(f"{(first > cap).mean():.3f}" for cap in (30, 60, 100, 150))
                what = "holds" if p > bar else "fails"
                rows.append(
                    f"| {bar:g} | {p:g} | {what} at {level:g} | {pname} | {med:.0f} | {p90:.0f} | {caps} | {fixed} |"
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--horizon", type=int, default=100, help="units per run for the coverage tables")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"runs {args.runs}, seed {args.seed}, alpha {ALPHA} per side; [exact 90% interval of the measured rate]\n")
    print(f"Pass rate (beta-binomial mixture, uniform prior), {args.horizon} units:\n")
    print(
        "| bar | true p | P(lower ever above p) | P(upper ever below p) | P(ever REPRODUCED) | P(ever NOT REPRODUCED) |"
    )
    print("|---|---|---|---|---|---|")
    print("\n".join(pass_rate_rows(args.runs, args.horizon, rng)))
    print(f"\nBounded mean on [-1, 1] (betting), {args.horizon} units:\n")
    print("| law | P(lower ever above mean) | P(upper ever below mean) | median width after all units |")
    print("|---|---|---|---|")
    print("\n".join(bounded_rows(args.runs, args.horizon, rng)))
    print(f"\nMean under the variance bound sigma = 1 (normal mixture, tau tuned to {args.horizon}):\n")
    print("| law | P(lower ever above mean) | P(upper ever below mean) | radius after all units |")
    print("|---|---|---|---|")
    print("\n".join(normal_rows(args.runs, args.horizon, rng)))
    print("\nUnits to decide a pass-rate part (a look after every unit; round up to the batch):\n")
    print(
        "| bar | true p | decided when it | prior | median | 90th pct | P(> 30) | P(> 60) | P(> 100) | P(> 150) "
        "| one look: n for 90% |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(sizing_rows(args.runs, 600, rng)))


if __name__ == "__main__":
    main()
