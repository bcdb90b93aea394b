"""W1 (C7 v6 design): W_V's sigma_min over the fitted steps along the rotation lever, seeds 0-39, summarised.

Run: python records/c7_design/v6_w1_analyse.py [results/v6_w1_wv_window_seeds0-39.txt]

Reads the output of ``v5_wv_window.py`` (one row per seed and setting: sigma_min(W_V) at init and
its geometric mean over steps 50-200, the same for W_V's sigma_min/sigma_max, kinv(Z) at init and
over the window, and the loss's largest relative difference from the engine's) and prints what the
calibration skeleton draws from (``qin2025.c7.calibration``: ``WV_SLOPES``,
``WV_WANDER``, ``LOG_SMIN_WV``): per seed the slope of log sigma_min(W_V, window) on log kinv(Z,
window) over the 5 settings, the wander about that line, and W_V's span over the settings.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main(path: Path) -> None:
    rows = []
    for line in path.read_text().splitlines():
        p = line.replace("|", " ").split()
        if len(p) >= 9 and p[0].isdigit():
            rows.append([float(v) for v in p[:8]] + [float(p[-1])])
    a = np.array(rows)
    print(f"{a.shape[0]} runs; largest relative loss difference from the engine: {a[:, 8].max():.1e}")
    slopes, residuals, spans = [], [], []
    for seed in np.unique(a[:, 0]):
        r = a[a[:, 0] == seed]
        lw, lk = np.log(r[:, 3]), np.log(r[:, 7])
        line = np.polyfit(lk, lw, 1)
        slopes.append(line[0])
        residuals += list(lw - np.polyval(line, lk))
        spans.append(r[:, 3].max() / r[:, 3].min())
    s = np.array(slopes)
    print("slopes:", ", ".join(f"{v:.3f}" for v in s))
    print(f"slope mean {s.mean():.3f} sd {s.std(ddof=1):.3f} median {np.median(s):.3f}")
    print(f"wander (sd of log sigma_min(W_V) about each seed's line): {np.std(residuals, ddof=1):.3f}")
    print(
        f"W_V's sigma_min span over the 5 settings: median {np.median(spans):.3g}, 90th percentile "
        f"{np.percentile(spans, 90):.3g}, largest {max(spans):.3g}"
    )
    init = np.log(a[::5, 2])
    print(f"log sigma_min(W_V) at init: mean {init.mean():.2f} sd {init.std():.2f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results" / "v6_w1_wv_window_seeds0-39.txt")
