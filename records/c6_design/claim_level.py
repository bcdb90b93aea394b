"""The claim-level rule of C6 v3: samples of units in known worlds, decided by verdicts.decide (the controller's).

One part or control at a time is put in a world (mean, sd of its units' values); the others sit where they
clearly hold or clearly fail as required, so the Holm family is the protocol's (four hypotheses) and the
part under test meets its first step, alpha/4, the hardest case for a failure to be shown.
Usage: python -m records.c6_design.claim_level REPS
"""

from __future__ import annotations

import json
import sys

from claims.test_c6_depth_residual import DELTA, ONE_LABEL, PROTOCOL
from qin2025.c6.calibration import World, simulate_claim
from records.c6_design.common import OUT

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
CLEAR = {"L=1": (0.1, 0.03), "L=6": (0.1, 0.03), "trend": (0.05, 0.04), ONE_LABEL: (1 / 256, 0.003)}
rows = []


def run(target: str, mean: float, sd: float, units: int, what: str) -> None:
    laws = {**CLEAR, target: (mean, sd)}
    c = simulate_claim(PROTOCOL, World(laws, f"{target} {mean} {sd}"), units, reps, seed=0)
    row = {"target": target, "mean": mean, "sd": sd, "units": units, "what": what, "reps": reps}
    row.update({k: dict(v) for k, v in c.items()})
    rows.append(row)
    got = c[target]
    counts = ", ".join(f"{k} {v}" for k, v in sorted(got.items()))
    print(f"{target:8.8s} {what:22s} mean {mean:+.4f} sd {sd:.3f} n {units:2d}: {counts}", flush=True)


for units in (12, 30):
    for sd in (0.005, 0.01, 0.02):
        for mean, what in [
            (-2 * DELTA, "deficit 2 delta"),
            (0.0, "tie"),
            (0.5 / 256, "half a sentence"),
            (2 / 256, "two sentences"),
            (DELTA, "delta (on the bar)"),
            (1.5 * DELTA, "1.5 delta"),
            (2 * DELTA, "2 delta"),
            (3 * DELTA, "3 delta"),
        ]:
            run("L=1", mean, sd, units, what)
    for sd in (0.01, 0.02, 0.04):
        for mean, what in [
            (-3 * DELTA, "falls 3 delta"),
            (-2 * DELTA, "falls 2 delta"),
            (-DELTA, "falls delta (bar)"),
            (0.0, "holds"),
            (DELTA, "grows delta"),
        ]:
            run("trend", mean, sd, units, what)
    for mean, sd in [(1 / 256, 0.002), (1 / 256, 0.005), (2 / 256, 0.005)]:
        run(ONE_LABEL, mean, sd, units, f"{mean * 256:.0f} sentence(s)")
OUT.mkdir(exist_ok=True)
(OUT / "claim_level.json").write_text(json.dumps(rows, indent=1))
