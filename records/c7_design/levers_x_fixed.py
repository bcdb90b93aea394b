"""E4: levers that move kinv(Z) with X fixed (W_V's spectrum, the sharpness of attention), beta fixed.

Run: nice -n 10 python records/c7_design/levers_x_fixed.py [seeds...]   (default 0-3)
If one moves kinv(Z) tenfold with X fixed, it can separate "Z's conditioning" from "X's conditioning".
"""

from __future__ import annotations

import sys
import time

import numpy as np

from records.c7_design.common import Config, run_grid


def main(seeds: list[int]) -> None:
    for beta in (1.0, 0.3):
        configs = [Config(kv=k, beta=beta) for k in (1.0, 10.0, 100.0)] + [
            Config(qg=g, beta=beta) for g in (0.25, 1.0, 4.0, 16.0)
        ]
        t0 = time.process_time()
        rows = run_grid(configs, seeds)
        print(f"beta {beta}: {len(rows)} runs, {time.process_time() - t0:.1f} s CPU")
        print("  config            kinv(Z)    lam       steady    rate/mu  ok   (medians over seeds)")
        for c in configs:
            mine = [r for r in rows if r.config == c]
            med = lambda f, mine=mine: np.median([getattr(r, f) for r in mine])  # noqa: E731
            lbl = f"kv={c.kv:g}" if c.kv else f"qg={c.qg:g}"
            print(
                f"  {lbl:<14} {med('kinv'):10.4g} {med('lam'):9.4g} {med('steady'):9.4g} "
                f"{np.median([r.steady / r.mu for r in mine]):9.4g}  {sum(r.ok for r in mine)}/{len(mine)}"
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [0, 1, 2, 3])
