"""E2: training error and loss curves, with and without residuals (and residual with another head), per (N, L).

Usage: python -m records.c6_design.e2_curves NAME N TOKENS STEPS DEPTHS SEEDS [CONTROL_DEPTHS]
e.g. e2_curves e2a 256 8 200 1 0,1 1   (exploratory seeds only)
"""

from __future__ import annotations

import sys

from records.c6_design.common import first_zero, run, sample, save

name, n, tok, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
depths = [int(x) for x in sys.argv[5].split(",")]
seeds = [int(x) for x in sys.argv[6].split(",")]
controls = [int(x) for x in sys.argv[7].split(",")] if len(sys.argv) > 7 else []
assert all(s < 1000 for s in seeds), "exploratory seeds only"
out = []
for seed in seeds:
    data = sample(n, tok, seed)
    for depth in depths:
        variants = [("with", 1.0, seed), ("without", 0.0, seed)]
        if depth in controls:
            variants.append(("control", 1.0, seed + 1000))
        for label, res, head in variants:
            r = run(data, depth, res, steps, head)
            r.update(seed=seed, L=depth, variant=label, n=n, tokens=tok, steps=steps)
            out.append(r)
            e = r["error"]
            print(
                f"seed {seed} L={depth} {label:8s} rho={r['rho']:.4g} err0={e[0]:.3f} err@T/4={e[steps // 4]:.3f} "
                f"err@T/2={e[steps // 2]:.3f} errT={e[-1]:.3f} mean={sum(e[1:]) / steps:.4f} "
                f"zero@{first_zero(e)} lossT={r['loss'][-1]:.4g} cpu={r['cpu_s']:.0f}s",
                flush=True,
            )
        save(name, out)
