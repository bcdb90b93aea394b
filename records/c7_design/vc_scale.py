"""E10: the W_V lever at several input scales s (lazier training at larger s), beta = 1, T = 200.

Run: nice -n 10 python records/c7_design/vc_scale.py [s=0.5,1,2,4] [seeds...]   (default 0-9)
"""

from __future__ import annotations

import sys

import numpy as np

from records.c7_design.common import Config, run_grid
from records.c7_design.decide import elasticity

VC = (1.0, 0.3, 0.1, 0.03, 0.01)


SCALES = (0.5, 1.0, 2.0, 4.0)


def main(seeds: list[int]) -> None:
    for s in SCALES:
        configs = [Config(vc=v, s=s) for v in VC]
        rows = run_grid(configs, seeds, steps=200)
        med = [np.median([r.steady for r in rows if r.config == c]) for c in configs]
        kin = [np.median([r.kinv for r in rows if r.config == c]) for c in configs]
        el = [
            elasticity(
                np.array([r.steady for r in rows if r.seed == sd]), np.array([r.kinv for r in rows if r.seed == sd]), []
            )
            for sd in seeds
        ]
        print(
            f"s={s:<4g} median steady rate at vc={VC}: "
            + " ".join(f"{m:.4f}" for m in med)
            + f" | kinv {kin[0]:.3f}..{kin[-1]:.4f} | raw elasticity median {np.median(el):.3f}"
            + f" (min {min(el):.3f}, max {max(el):.3f})"
            + f" | ok {sum(r.ok for r in rows)}/{len(rows)}"
        )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1].startswith("s="):  # e.g. s=8,16,32 then seeds
        SCALES = tuple(float(v) for v in sys.argv.pop(1)[2:].split(","))
    main([int(a) for a in sys.argv[1:]] or list(range(10)))
