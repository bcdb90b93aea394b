"""Score the design runs with the v4 decision (``qin2025.c1.linear_rate``) at several horizons and scoring floors.

python records/linrate_design/look.py c1 FILE.npz            # statistics at the floors 1e-12..1e-24
python records/linrate_design/look.py c8 FILE.npz 1000,2000  # pass counts and lambda_max(t) per horizon
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from qin2025.c1.linear_rate import LATE_DEPTH, PLATEAU, STEADINESS, WORST_RATIO, linear_rate_decision, rate_profile

MET: dict[str, Callable[[float], bool]] = {
    WORST_RATIO: lambda v: v < 1,
    STEADINESS: lambda v: v >= 0.9,
    LATE_DEPTH: lambda v: v >= 1,
    PLATEAU: lambda v: v >= 0.3,
}


def c1(path: str) -> None:
    """Print, per scoring floor, the extremes of each statistic over every curve of a c1 file."""
    z = np.load(path)
    keys = [k for k in z.files if not k.endswith("/lam")]
    for floor in (1e-12, 1e-16, 1e-20, 1e-24):
        profiles = [rate_profile(z[k], floor) for k in keys]
        st = np.array([p.steadiness for p in profiles])
        print(
            f"floor {floor:.0e}: steps {min(p.steps for p in profiles)}-{max(p.steps for p in profiles)}; "
            f"c max {max(p.worst_ratio for p in profiles):.4f}; steadiness min {st.min():.4f} "
            f"(median {np.median(st):.4f}); late depth min {min(p.late_depth for p in profiles):.1f}; "
            f"plateau min {min(p.plateau for p in profiles):.3f}"
        )


def c8(path: str, horizons: list[int]) -> None:
    """Print, per horizon, how many runs pass and which statistic each failing run misses; then mu lambda_max(t)/2."""
    z = np.load(path)
    for horizon in horizons:
        fails = []
        for i, seed in enumerate(z["seeds"]):
            loss = z["loss"][i][: horizon + 1]
            hit = np.flatnonzero(loss <= 1e-24 * loss[0])
            got = linear_rate_decision(loss[: hit[0] + 1] if hit.size else loss)  # the engine stops at 1e-24 L_0
            missed = [name for name, met in MET.items() if not met(got[name])]
            if missed:
                fails.append((int(seed), missed))
        print(f"T = {horizon}: {len(z['seeds']) - len(fails)}/{len(z['seeds'])} pass; {fails}")
    ratio = z["lr"][None, :] * z["lam"] / 2
    print("mu lambda_max(t)/2, rows = seeds, columns = steps", [int(m) for m in z["marks"]])
    for seed, row in zip(z["seeds"], ratio.T, strict=True):
        print(seed, " ".join(f"{v:.2f}" for v in row))


if __name__ == "__main__":
    if sys.argv[1] == "c1":
        c1(sys.argv[2])
    else:
        c8(sys.argv[2], [int(h) for h in sys.argv[3].split(",")])
