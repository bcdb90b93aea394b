"""E3: the proposed grid, beta fixed: a conditioning lever (kx or vc) crossed with s and ug (lambda_max levers).

Run: nice -n 10 python records/c7_design/design.py OUT.json [seeds...] [--beta B] [--dqk D --xavier] [--steps T]
Writes every run's measurements to OUT.json (rows as ``Measured.row``) for analyse.py and worlds.py.
"""

from __future__ import annotations

import argparse
import json
import time

from records.c7_design.common import Config, run_grid

LEVERS = {"kx": (1.0, 3.0, 10.0, 30.0, 100.0), "vc": (1.0, 0.3, 0.1, 0.03, 0.01)}
LAM_LEVER = ((1.0, 1.0), (0.5, 1.0), (2.0, 1.0), (1.0, 0.5), (1.0, 2.0))  # (s, ug)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("seeds", nargs="*", type=int, default=list(range(10)))
    ap.add_argument("--beta", type=float, default=1.0)
    ap.add_argument("--dqk", type=int, default=16)
    ap.add_argument("--xavier", action="store_true")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--lever", choices=sorted(LEVERS), default="kx")
    ap.add_argument("--lam-lever", default="s,ug", help="which lambda levers to cross: s,ug | s | ug | none")
    a = ap.parse_args()
    init = "xavier" if a.xavier else "normal"
    lam = [
        (s, u)
        for s, u in LAM_LEVER
        if (s, u) == (1.0, 1.0) or ("s" in a.lam_lever and s != 1) or ("ug" in a.lam_lever and u != 1)
    ]
    configs = [
        Config(**{a.lever: v}, s=s, ug=u, beta=a.beta, d_qk=a.dqk, qk_init=init)  # type: ignore[arg-type]
        for v in LEVERS[a.lever]
        for s, u in lam
    ]
    t0 = time.process_time()
    rows = run_grid(configs, a.seeds, steps=a.steps, fraction=a.fraction)
    cpu = time.process_time() - t0
    print(f"{len(rows)} runs x {a.steps} steps: {cpu:.1f} s CPU")
    with open(a.out, "w") as f:
        json.dump({"args": vars(a), "cpu_s": cpu, "rows": [r.row() for r in rows]}, f, indent=0)


if __name__ == "__main__":
    main()
