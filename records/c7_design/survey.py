"""E1: one lever at a time, beta = 1 fixed: how far each moves kinv(Z), lambda_max and the rate.

Run: nice -n 10 python records/c7_design/survey.py [seeds...]   (default seeds 0-3)
"""

from __future__ import annotations

import sys
import time

import numpy as np

from records.c7_design.common import Config, run_grid

GRID = {
    "kx": (1.0, 3.0, 10.0, 30.0, 100.0),
    "kv": (1.0, 3.0, 10.0, 30.0, 100.0),
    "s": (0.25, 0.5, 1.0, 2.0, 4.0),
    "ug": (0.25, 0.5, 1.0, 2.0, 4.0),
}


def main(seeds: list[int]) -> None:
    configs = [Config(**{lever: v}) for lever, vals in GRID.items() for v in vals]  # type: ignore[arg-type]
    t0 = time.process_time()
    rows = run_grid(configs, seeds, ntk=True)
    print(f"{len(rows)} runs, {time.process_time() - t0:.1f} s CPU; seeds {seeds}")
    cols = ("rate", "tail", "rate_per_mu", "lam", "kinv", "kinv_stacked", "smin", "smax", "kinv_x", "ntk")
    for lever, vals in GRID.items():
        print(f"\nlever {lever} (median over seeds)")
        print(f"{'value':>7} " + " ".join(f"{c:>12}" for c in cols) + "  ok")
        for v in vals:
            mine = [r for r in rows if getattr(r.config, lever) == v and Config(**{lever: v}) == r.config]  # type: ignore[arg-type]
            med = [np.median([getattr(r, c) for r in mine]) for c in cols]
            print(f"{v:>7g} " + " ".join(f"{m:>12.4g}" for m in med) + f"  {sum(r.ok for r in mine)}/{len(mine)}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [0, 1, 2, 3])
