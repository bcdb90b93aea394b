"""The v3 families against naive decisions: how often v2's statistic and simpler variants get each family right.

Shows that the families discriminate: a naive check passes what the claim excludes. No training.
Usage: python -m records.c6_design.naive [CASES]
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
from claimcheck.calibration import case_rng

from qin2025.c6.calibration import Grid, advantage_families
from qin2025.c6.residual_depth import window

Stat = Callable[[np.ndarray, np.ndarray], float]
NAIVE: dict[str, tuple[Stat, float]] = {
    "v2: mean over steps 1..T > 0": (lambda b, w: float(np.mean(w[1:]) - np.mean(b[1:])), 0.0),
    "mean over steps 1..T > delta": (lambda b, w: float(np.mean(w[1:]) - np.mean(b[1:])), 0.01),
    "mean over the window > delta": (lambda b, w: float(np.mean(window(w)) - np.mean(window(b))), 0.01),
    "error at T > 0": (lambda b, w: float(w[-1] - b[-1]), 0.0),
    "v3: median over the window > delta": (lambda b, w: float(np.median(window(w)) - np.median(window(b))), 0.01),
}

cases = int(sys.argv[1]) if len(sys.argv) > 1 else 200
grid = Grid((1, 6), 256, 200, 0.01, cases=cases)
print("| family | expect | " + " | ".join(NAIVE) + " |")
print("|---|---|" + "---|" * len(NAIVE))
for fam in advantage_families(1, grid):
    right = dict.fromkeys(NAIVE, 0)
    for i in range(cases):
        m = fam.generate(case_rng(0, "C6", "L=1", fam.name, i)).measurements["units"][0]  # the sample's first seed
        for name, (stat, thr) in NAIVE.items():
            passed = stat(np.asarray(m["better"]), np.asarray(m["worse"])) > thr
            right[name] += passed == (fam.expect == "pass")
    print(f"| {fam.name} | {fam.expect} | " + " | ".join(f"{right[k]}/{cases}" for k in NAIVE) + " |")
