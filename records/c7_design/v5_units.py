"""V3 (C7 v5 design): each lever's unit on exploratory seeds, kinv(Z) over the fitted window against step 0.

Run: nice -n 10 python records/c7_design/v5_units.py FIRST LAST OUT.npz   (the design used 0 16)

Trains every seed's 18 runs with ``qin2025.c7.conditioning.train_units`` (the claim's own code) and
prints per seed and lever: the span of kinv(Z) over the 5 settings read over steps [50, 200] and
at step 0, b (governs_decision's elasticity, lambda_max held), rho, the 5 rates and lambda_max.
The calibration skeleton's structure (qin2025/c7/calibration.py) was fitted on OUT.npz.
"""

from __future__ import annotations

import sys

import numpy as np

from qin2025 import conditioning as c


def main(first: int, last: int, out: str) -> None:
    seeds = list(range(first, last))
    arrays = c.train_units(seeds)
    np.savez(out, **arrays, seeds=np.array(seeds))
    for u in c._units(seeds, arrays):
        for lever in c.LEVERS:
            t = u.tables[lever.name]
            m = t.measurements()
            b = c.elasticity(t.rate, t.kinv, [t.lam])
            rho = c.spearman(t.rate[:5], t.kinv[:5]).rho
            print(
                f"{u.seed} {lever.name} span_win {c.kinv_span(t.kinv, m['reference']):.3g} "
                f"span0 {c.kinv_span(t.kinv0, m['reference']):.3g} b {b:.3f} rho {rho:.2f} ok {t.ok.all()} "
                f"rate {np.round(t.rate[:5], 4)} lam {np.round(t.lam[:5])}"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
