"""Print one line per design.py output: the lever's spans, association and governs (plus design and full grid).

Run: python records/c7_design/summary.py [--rate steady|rate|tail] FILE...
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from claimcheck.stats import t_interval

from records.c7_design.analyse import MIDDLE, plus, tables
from records.c7_design.decide import association, governs


def line(path: str, rate: str) -> str:
    blob = json.load(open(path))
    a = blob["args"]
    ts = tables(path, rate)
    mid = MIDDLE[a.get("lever", "kx")]
    lev = [t.subset(t.conditioning_lever()) for t in ts.values()]
    kspan = np.median([t.kinv.max() / t.kinv.min() for t in lev])
    order = [np.argsort(-t.kinv) for t in lev]  # best conditioned first
    rspan = np.median([t.rate[o][0] / t.rate[o][-1] for t, o in zip(lev, order, strict=True)])
    lspan = np.median([t.lam[o][-1] / t.lam[o][0] for t, o in zip(lev, order, strict=True)])
    asc = [association(t) for t in ts.values()]
    out = [
        f"{a.get('lever', 'kx')} beta={a['beta']:g} dqk={a['dqk']} {'xav' if a['xavier'] else 'nrm'} "
        f"T={a['steps']} f={a['fraction']:g}",
        f"n={len(ts)}",
        f"kinv span {kspan:5.1f}x",
        f"rate(best)/rate(worst) {rspan:5.2f}",
        f"lam(worst)/lam(best) {lspan:4.2f}",
        f"assoc {np.nanmean([d.value for d in asc]):5.2f} {sum(d.passed for d in asc)}/{len(asc)}",
    ]
    for label, f in (("plus", lambda t: plus(t, mid)), ("grid", lambda t: t)):
        g = [governs(f(t)).value for t in ts.values()]
        g = [x for x in g if np.isfinite(x)]
        iv = t_interval(g) if len(g) >= 2 else None
        out.append(f"b[{label}] {iv.format(2) if iv else 'n/a':<20} {sum(x >= 0.5 for x in g)}/{len(ts)}")
    return " | ".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rate", default="steady")
    a = ap.parse_args()
    print(
        f"rate = {a.rate}; 'best', 'worst': the lever's best- and worst-conditioned Z (kx = 1 and 100; "
        "vc = 1 and 0.01), medians over seeds"
    )
    for f in a.files:
        print(line(f, a.rate))


if __name__ == "__main__":
    main()
