"""C5 v3 design: does a measure see a speed-up by construction on the real Jena curves?

    python -m records.c5_design.positive /tmp/c5/long_ci_4000_0_8.npz

Reads the long runs of ``long_runs.py`` and emulates the run at c x the step as the same curve at
c x the time, L(c t) (gradient flow: to first order a larger step runs the same path faster). For
each candidate measure and beta, counts the seeds whose five step factors it orders
(Spearman >= 0.9). A measure that cannot order a speed-up by construction cannot decide C5.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
from claimcheck.stats import spearman

from qin2025.c5.residual_speed import steady_rate

Measure = Callable[[np.ndarray], float]


def fast_phase_end(loss: np.ndarray, drop: float = 1.05) -> int:
    """Return the first step whose one-step drop is below ``drop`` (5%): the end of the fast phase, at most T/4."""
    below = np.flatnonzero(loss[:-1] / loss[1:] < drop)
    return min(int(below[0]) if below.size else loss.size - 1, (loss.size - 1) // 4)


def half_descent(loss: np.ndarray) -> float:
    """Return minus the step at which the run has covered half of its descent over [t0, T] (affine-invariant)."""
    t0 = fast_phase_end(loss)
    seg = loss[t0:]
    return -float(np.argmax(seg <= seg[-1] + 0.5 * (seg[0] - seg[-1])) + t0)


MEASURES: dict[str, Measure] = {
    "steady rate on [T/2, T]": steady_rate,
    "half of the descent over [t0, T]": half_descent,
    "log(L(t0)/L_T)": lambda c: math.log(c[fast_phase_end(c)] / c[-1]),
    "-L_T": lambda c: -float(c[-1]),
    "-log(L_T/L_0) (v2)": lambda c: -math.log(c[-1] / c[0]),
}


def ordered(curves: np.lib.npyio.NpzFile, measure: Measure, beta: float, factors: list[float], steps: int) -> int:
    """Return the seeds (of 0-7) whose runs at ``factors`` x the step ``measure`` orders."""
    hits = 0
    for seed in range(8):
        loss = curves[f"{seed}-{beta}"]
        runs = [loss[np.round(np.arange(steps + 1) * c).astype(int)] for c in factors]
        hits += spearman(factors, [measure(r) for r in runs]).rho >= 0.9
    return hits


def main(path: str) -> None:
    """Print, per measure, factors and horizon, the seeds ordered at beta = 0, 0.5 and 1."""
    curves = np.load(path)
    for factors, steps in (
        ([1.0, 1.25, 1.5, 1.75, 2.0], 400),
        ([1.0, 2.0, 3.0, 5.0, 8.0], 400),
        ([1.0, 1.25, 1.5, 1.75, 2.0], 1000),
        ([1.0, 1.25, 1.5, 1.75, 2.0], 2000),
    ):
        for name, measure in MEASURES.items():
            counts = [ordered(curves, measure, b, factors, steps) for b in (0.0, 0.5, 1.0)]
            print(f"c = {factors}, T = {steps}: {name}: {counts} of 8 seeds (beta 0, 0.5, 1)")


if __name__ == "__main__":
    main(sys.argv[1])
