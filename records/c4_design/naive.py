"""C4 v3 design: what v2's naive checks say of the logit-floor worlds (exploratory seeds only).

python records/c4_design/naive.py /tmp/c4/floor64_d16_s0-9.npz
Collapse: v2's statistics (Spearman rho of the ratio and the floor with d_QK <= -0.9, ratio <= 0.1
at 256 d) on the k = 16 floor's sweeps, seeds 0-13. Slowdown: v2's slope statistic (mean over seeds
of the log-log slope of the mean-rate relative rate, <= -1/6) on the saved k = 64 rate tables.
"""

from __future__ import annotations

import sys

import numpy as np
from claimcheck.stats import spearman
from rates import mean, slope
from scipy import stats as st

from qin2025.c4.collapse import QK, SHAPES, sweep
from qin2025.engine.usermodel import PAPER


def collapse() -> None:
    passed = 0
    tops = []
    for seed in range(14):
        ok = True
        for n, d in SHAPES:
            sw = sweep(PAPER, QK.floored(16), n, d, seed)
            lq = np.log(sw.d_qk)
            rho_r, rho_f = spearman(lq, sw.ratio).rho, spearman(lq, sw.floor).rho
            ok &= rho_r <= -0.9 + 1e-9 and rho_f <= -0.9 + 1e-9 and sw.ratio[-1] <= 0.1
            tops.append(sw.ratio[-1])
        passed += ok
    print(f"k = 16 floor, v2's collapse check: {passed}/14 seeds pass; ratio at 256 d {min(tops):.3f}..{max(tops):.3f}")


def slowdown(path: str) -> None:
    z = np.load(path)
    qs = z["d_qk"]
    for name, k in (("d..64 d", 4), ("d..256 d", 5)):
        s = np.array(
            [
                slope(qs[:k], np.array([mean(z[f"loss_{q}"][i, 0]) / mean(z[f"loss_{q}"][i, 1]) for q in qs[:k]]))
                for i in range(len(z["seeds"]))
            ]
        )
        t = st.t.ppf(0.95, s.size - 1) * s.std(ddof=1) / s.size**0.5
        print(
            f"{path} v2 slope over {name}: mean {s.mean():.3f} [{s.mean() - t:.3f}, {s.mean() + t:.3f}], "
            f"{int((s <= -1 / 6).sum())}/{s.size} seeds <= -1/6"
        )


if __name__ == "__main__":
    for p in sys.argv[1:]:
        slowdown(p)
    collapse()
