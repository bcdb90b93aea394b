"""Score the v5 linear-rate decision on the curves around its declared zone (records/claims/c1.md, v5).

python records/linrate_design/zone_v5.py [CASES]

Per horizon of C1 and C8, the share of pass / zone / fail answers on curves drawn without the
"resolved" condition of the design families (two-mode and 2-20-mode quadratics, settling rates),
on the sublinear curves the issue quotes (stretched exponentials k 0.7..0.95, power laws with
tau >= 1.8 T), on v4's plunge family and on plateaus between the margin and v4's threshold.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Callable

import numpy as np

from qin2025.c1.calibration import FLOAT_FLOOR, unresolved_settling
from qin2025.c1.linear_rate import LATE_DEPTH, OCTAVE, WORST_RATIO, ZONE, linear_rate_decision, margin_ratio
from qin2025.calibration.draw import log_uniform, mixture, modes

Curve = Callable[[np.random.Generator, int, float], np.ndarray]


def two_modes(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    t = np.arange(steps + 1.0)
    low, ratio, w = log_uniform(rng, slowest, 0.1), log_uniform(rng, 1.5, 50.0), log_uniform(rng, 1e-4, 0.5)
    return np.asarray(w * np.exp(-low * t) + (1 - w) * np.exp(-ratio * low * t) + 1e-30)


def many_modes(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    t = np.arange(steps + 1.0)
    weights, rates = modes(rng, steps, log_uniform(rng, slowest, 0.1), 1.0, int(rng.integers(2, 21)))
    return mixture(t, weights, rates) + 1e-30


def stretched(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    t = np.arange(steps + 1.0)
    k, depth = float(rng.uniform(0.7, 0.95)), log_uniform(rng, 0.5, 60.0)
    return np.asarray(np.exp(-((t / (steps * depth ** (-1 / k))) ** k)) + 1e-30)


def power_law(p_high: float) -> Curve:
    def draw(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
        t = np.arange(steps + 1.0)
        tau, p = log_uniform(rng, 1.8 * steps, 20.0 * steps), log_uniform(rng, 0.25, p_high)
        return np.asarray((1 + t / tau) ** -p)

    return draw


def plunge(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    t = np.arange(steps + 1.0)
    tau, p = log_uniform(rng, 10.0, 2000.0), log_uniform(rng, 0.25, 4.0)
    until = int(rng.integers(steps // 4, steps + 1))
    log_curve = -p * np.log1p(t / tau) - np.maximum(t - until, 0) * math.log(1e3)
    return np.asarray(np.maximum(np.exp(log_curve), log_uniform(rng, *FLOAT_FLOOR)))


def slow_plateau(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    t = np.arange(steps + 1.0)
    eps, until = slowest * log_uniform(rng, 0.06, 0.1), int(rng.integers(steps // 8, steps // 2 + 1))
    r = log_uniform(rng, slowest, 0.3)
    return np.asarray(np.exp(np.where(t <= until, -eps * t, -eps * until - r * (t - until))) + 1e-30)


def settling(rng: np.random.Generator, steps: int, slowest: float) -> np.ndarray:
    return np.asarray(unresolved_settling(rng, steps, slowest).measurements["loss"])


def answer(loss: np.ndarray, slowest: float) -> str:
    v = linear_rate_decision(loss)
    if ZONE in v:
        return "zone"
    ok = v[WORST_RATIO] <= margin_ratio(slowest) and v[LATE_DEPTH] >= 1 and v[OCTAVE] >= 0.9
    return "pass" if ok else "fail"


def main(cases: int) -> None:
    curves: dict[str, Curve] = {
        "two-mode quadratic, unconditioned": two_modes,
        "2-20-mode quadratic, unconditioned": many_modes,
        "a rate that settles too late (E(S/4) > r S/36)": settling,
        "stretched exponential, k 0.7..0.95": stretched,
        "power law, tau 1.8..20 T, p 0.25..4": power_law(4.0),
        "power law, tau 1.8..20 T, p 0.25..16": power_law(16.0),
        "v4's power law then a plunge": plunge,
        "plateau at 0.06..0.1 of slowest, then a drop": slow_plateau,
    }
    for steps, slowest in ((1000, 0.01), (1500, 0.005), (2000, 0.004), (4000, 0.001)):
        print(f"== {steps} steps, slowest {slowest}")
        for name, draw in curves.items():
            rngs = (np.random.default_rng([steps, i]) for i in range(cases))
            got = Counter(answer(draw(rng, steps, slowest), slowest) for rng in rngs)
            print(f"  {name}: pass {got['pass']}, zone {got['zone']}, fail {got['fail']} of {cases}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 400)
