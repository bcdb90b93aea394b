"""Score E3's tables with the proposed unit decisions, and with the naive ones beside them.

Run: python records/c7_design/analyse.py RESULTS.json [--rate steady|rate|tail]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np
from claimcheck.stats import clopper_pearson, t_interval

from records.c7_design.decide import Table, association, elasticity, governs, naive_sigma_min, spearman


def tables(path: str, rate: str) -> dict[int, Table]:
    """Return one Table per seed from a design.py output, with ``rate`` as the rate."""
    blob = json.load(open(path))
    rows, lever = blob["rows"], blob["args"].get("lever", "kx")
    by: dict[int, list[dict]] = defaultdict(list)
    for r in rows:
        by[int(r["seed"])].append(r)
    out = {}
    for seed, rs in sorted(by.items()):
        rs = [r for r in rs if r["ok"]]
        col = lambda k, rs=rs: np.array([r[k] for r in rs], dtype=float)  # noqa: E731
        out[seed] = Table(col(lever), col("s"), col("ug"), col(rate), col("kinv"), col("lam"), col("smin"), col("mu"))
    return out


MIDDLE = {"kx": 10.0, "vc": 0.1}


def plus(t: Table, mid: float) -> Table:
    """Return the 'plus' design: the conditioning lever at s = ug = 1, and the s, ug levers at its middle."""
    return t.subset(np.flatnonzero(((t.s == 1) & (t.ug == 1)) | (t.lv == mid)))


def summarise(name: str, values: list[float], passed: list[bool]) -> None:
    v = [x for x in values if np.isfinite(x)]
    iv = t_interval(v) if len(v) >= 2 else None
    p = clopper_pearson(sum(passed), len(passed))
    print(
        f"  {name:<52} mean {iv.format() if iv else 'n/a'} (t 90%)  pass {sum(passed)}/{len(passed)} "
        f"[{p.low:.2f}, {p.high:.2f}]  per seed: " + " ".join(f"{x:.2f}" for x in values)
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--rate", default="steady")
    a = ap.parse_args()
    ts = tables(a.path, a.rate)
    mid = MIDDLE[json.load(open(a.path))["args"].get("lever", "kx")]
    print(f"{a.path}: {len(ts)} seeds, rate = {a.rate}")
    # medians along the conditioning lever
    print("  conditioning lever at s = ug = 1 (median over seeds): setting, kinv(Z), lambda_max, rate, rate/mu")
    for k in sorted(set(next(iter(ts.values())).lv)):
        sel = [(t, np.flatnonzero((t.lv == k) & (t.s == 1) & (t.ug == 1))) for t in ts.values()]
        med = lambda f, sel=sel: np.median([getattr(t, f)[i][0] for t, i in sel if i.size])  # noqa: E731
        print(
            f"    {k:>5g} {med('kinv'):10.4g} {med('lam'):10.4g} {med('rate'):10.4g} "
            f"{np.median([t.rate[i][0] / t.mu[i][0] for t, i in sel if i.size]):10.4g}"
        )
    print(f"  lambda levers at the lever's middle {mid:g} (median): (s, ug), lambda_max, rate")
    for s, u in ((0.5, 1), (1, 1), (2, 1), (1, 0.5), (1, 2)):
        sel = [(t, np.flatnonzero((t.lv == mid) & (t.s == s) & (t.ug == u))) for t in ts.values()]
        if not all(i.size for _, i in sel):
            continue
        print(
            f"    ({s:g}, {u:g}) {np.median([t.lam[i][0] for t, i in sel]):10.4g} "
            f"{np.median([t.rate[i][0] for t, i in sel]):10.4g}"
        )
    d = [association(t) for t in ts.values()]
    summarise("association rho(rate, kinv) on kx lever", [x.value for x in d], [x.passed for x in d])
    for label, f in (("full 25-run grid", lambda t: t), ("plus design (9 runs)", lambda t: plus(t, mid))):
        g = [governs(f(t)) for t in ts.values()]
        summarise(f"governs b (| log lambda_max), {label}", [x.value for x in g], [x.passed for x in g])
        raw = [elasticity(f(t).rate, f(t).kinv, []) for t in ts.values()]
        summarise(f"raw elasticity b (no covariate), {label}", raw, [x >= 0.5 for x in raw])
        lamonly = [elasticity(f(t).rate, f(t).lam, []) for t in ts.values()]
        summarise(f"elasticity in lambda_max alone, {label}", lamonly, [False] * len(lamonly))
    # controls: the s lever alone (kinv fixed exactly), naive statistic
    for lev, mask in (("s", lambda t: t.ug == 1), ("ug", lambda t: t.s == 1)):
        sub = {k: t.subset(np.flatnonzero(mask(t) & (t.lv == mid))) for k, t in ts.items()}
        n1 = [naive_sigma_min(t) for t in sub.values()] if lev == "s" else None
        if n1:
            summarise("CONTROL s lever: naive b(rate/mu ~ sigma_min(Z))", [x.value for x in n1], [x.passed for x in n1])
            n2 = [naive_sigma_min(t, per_mu=False) for t in sub.values()]
            summarise("CONTROL s lever: naive b(rate ~ sigma_min(Z))", [x.value for x in n2], [x.passed for x in n2])
            rho = [spearman(t.rate / t.mu, t.smin) for t in sub.values()]
            summarise("CONTROL s lever: naive rho(rate/mu, sigma_min(Z))", rho, [r > 0 for r in rho])
        g = [governs(t) for t in sub.values()]
        summarise(f"CONTROL {lev} lever: proposed governs", [x.value for x in g], [x.passed for x in g])
        spread = [float(np.ptp(np.log10(t.kinv))) for t in sub.values()]
        print(f"    ({lev} lever: log10 span of kinv(Z) per seed, max {max(spread):.2e})")


if __name__ == "__main__":
    main()
