"""E8: does the W_V lever's null come from W_V's own conditioning improving as Z's worsens?

Run: nice -n 10 python records/c7_design/wv_confound.py [seeds...]   (default 0-9)
vc cancels with -beta I (sigma_min(W_V) rises to about beta); vc + vp cancels with -beta (I - p p^T),
p orthogonal to every row of X, which gives Z exactly the same values while W_V keeps a small singular value.
"""

from __future__ import annotations

import sys

import numpy as np

from records.c7_design.common import Config, build, run_grid

VC = (1.0, 0.1, 0.01)


def main(seeds: list[int]) -> None:
    configs = [Config(vc=v, vp=vp) for vp in (False, True) for v in VC]
    rows = run_grid(configs, seeds)
    print("lever        kinv(Z)   smin(W_V)  smax(W_V)  steady   (medians over seeds)")
    for c in configs:
        mine = [r for r in rows if r.config == c]
        wv = [np.linalg.svd(build(c, r.seed)[0]["0.W_V"].numpy(), compute_uv=False) for r in mine]
        print(
            f"vc={c.vc:<5g} vp={c.vp!s:<5} {np.median([r.kinv for r in mine]):8.4g} "
            f"{np.median([w[-1] for w in wv]):10.3g} "
            f"{np.median([w[0] for w in wv]):10.3g} {np.median([r.steady for r in mine]):8.4f}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or list(range(10)))
