"""The proposed C7 v3 unit (one seed), end to end: 18 runs, two rate tables, every part's decision.

Run: nice -n 10 python records/c7_design/unit.py FIRST LAST [--steps T] [--out FILE.json]
(exploratory seeds only: < 100)
Per seed: the input lever (kx in 1..100) and the W_V lever (vc in 1..0.01), each with the four
lambda_max runs (s = 1/2, 2; ug = 1/2, 2) at its middle setting; beta = 1, d_QK = 16, W_Q, W_K
~ N(0, 1/d), logits 1/sqrt(d_QK), N = 2, n = 8, d = 32, mu = 0.5 * 2/lambda_max, T steps.
Prints each seed's statistics, the part summaries, and the CPU time per seed.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
from claimcheck.stats import clopper_pearson, t_interval

from records.c7_design.common import Config, Measured, run_grid
from records.c7_design.decide import GOVERNS_BAR, Table, association, governs, naive_sigma_min

LEVERS = {"kx": ((1.0, 3.0, 10.0, 30.0, 100.0), 10.0), "vc": ((1.0, 0.3, 0.1, 0.03, 0.01), 0.1)}
LAM = ((0.5, 1.0), (2.0, 1.0), (1.0, 0.5), (1.0, 2.0))  # (s, ug) at the lever's middle


def configs(lever: str) -> list[Config]:
    """Return the 9 configurations of one lever: its 5 settings, then the 4 lambda runs at its middle."""
    values, mid = LEVERS[lever]
    return [Config(**{lever: v}) for v in values] + [Config(**{lever: mid}, s=s, ug=u) for s, u in LAM]  # type: ignore[arg-type]


def table(rows: list[Measured], lever: str) -> Table:
    """Return the rate table of one lever's runs of one seed."""
    rows = [r for r in rows if r.ok]
    col = lambda f: np.array([getattr(r, f) for r in rows], dtype=float)  # noqa: E731
    lv = np.array([getattr(r.config, lever) for r in rows], dtype=float)
    s = np.array([r.config.s for r in rows])
    ug = np.array([r.config.ug for r in rows])
    return Table(lv, s, ug, col("steady"), col("kinv"), col("lam"), col("smin"), col("mu"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("first", type=int)
    ap.add_argument("last", type=int)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--out", help="write every run's measurements here (JSON rows, as Measured.row)")
    a = ap.parse_args()
    seeds = list(range(a.first, a.last + 1))
    assert max(seeds) < 100, "exploratory seeds only"
    t0 = time.process_time()
    rows = run_grid(configs("kx") + configs("vc"), seeds, steps=a.steps)
    cpu = time.process_time() - t0
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"steps": a.steps, "rows": [r.row() for r in rows]}, f, indent=0)
    out: dict[str, list] = {k: [] for k in ("ax", "av", "bx", "bv", "naive", "ctl")}
    bad = 0
    for seed in seeds:
        mine = [r for r in rows if r.seed == seed]
        bad += sum(not r.ok for r in mine)
        tx = table([r for r in mine if r.config.kx != 0.0], "kx")
        tv = table([r for r in mine if r.config.kx == 0.0], "vc")
        ax, av, gx, gv = association(tx), association(tv), governs(tx), governs(tv)
        scale = tx.subset(np.flatnonzero((tx.lv == 10.0) & (tx.ug == 1)))
        out["ax"].append(ax)
        out["av"].append(av)
        out["bx"].append(gx.value)
        out["bv"].append(gv.value)
        out["naive"].append(naive_sigma_min(scale))
        out["ctl"].append(governs(scale))
        print(
            f"seed {seed:>2}: rho_X {ax.value:5.2f} rho_V {av.value:5.2f} b_X {gx.value:5.2f} b_V {gv.value:5.2f} "
            f"naive(scale) {out['naive'][-1].value:5.2f} real(scale) {out['ctl'][-1].value}"
        )
    n = len(seeds)
    for key, label in (("ax", "association (input lever), rho >= 0.9"), ("av", "association (W_V lever), rho >= 0.9")):
        k = sum(d.passed for d in out[key])
        p = clopper_pearson(k, n)
        print(
            f"{label:<44} {k}/{n} [{p.low:.2f}, {p.high:.2f}] vs bar 0.8; "
            f"mean rho {np.nanmean([d.value for d in out[key]]):.2f}"
        )
    for key, label in (("bx", "governs (input lever): b"), ("bv", "governs (W_V lever): b")):
        v = [x for x in out[key] if math.isfinite(x)]
        print(
            f"{label:<44} {t_interval(v).format()} (t 90%, {len(v)} seeds); "
            f"seeds >= {GOVERNS_BAR}: {sum(x >= GOVERNS_BAR for x in v)}/{len(v)}"
        )
    k = sum(d.passed for d in out["naive"])
    print(
        f"{'CONTROL scale: naive b(rate/mu ~ sigma_min)':<44} {k}/{n} pass; "
        f"mean {np.mean([d.value for d in out['naive']]):.2f}"
    )
    print(f"{'CONTROL scale: real governs':<44} {sum(d.passed for d in out['ctl'])}/{n} pass ({out['ctl'][0].note})")
    print(
        f"runs that left the premise: {bad}; {len(rows)} runs x {a.steps} steps, "
        f"{cpu:.1f} s CPU ({cpu / n:.2f} s per seed)"
    )


if __name__ == "__main__":
    main()
