"""C5 v4 design: the level decisions beyond their calibration families (synthetic worlds only).

    python -m records.c5_design.v4_stress [cases]

Prints, per part, how many cases the decision accepts in: the calibration worlds at T = 1,000
(standard); the must-pass worlds with the per-run scatter 3x the families' (``HEAVY``); the two worlds
the grid leaves out (a lower floor not reached within T with the speed flat; the whole excess
falling 2..10x with the speed flat), which the reading counts as faster.
"""

from __future__ import annotations

import sys
from functools import partial

from claimcheck.calibration import run_family

from claimcheck.protocol import Family
from claims.test_c5_residual_speed import PROTOCOL
from qin2025.calibration import residual_speed as cal


def _accepted(part_name: str, fam: Family) -> str:
    part = PROTOCOL.part(part_name)
    r = run_family("C5", part, fam, 0)
    accepted = r.right if fam.expect == "pass" else fam.cases - r.right
    return f"{accepted}/{fam.cases} accepted"


def main(cases: int) -> None:
    """Print each stress row's counts."""
    order, fast = "order", "beta>0 vs beta=0"
    n_fast = max(cases // 4, 5)
    rows: list[tuple[str, str, Family]] = []
    for fam in cal.order_families(cases, steps=1000):
        rows.append((order, f"T = 1000: {fam.name} ({fam.expect})", fam))
    for fam in cal.faster_families(24, n_fast, steps=1000):
        rows.append((fast, f"T = 1000: {fam.name} ({fam.expect})", fam))
    for fam in cal.order_families(cases, heavy=True):
        if fam.name.endswith("heavy scatter"):
            rows.append((order, f"{fam.name} (3x scatter)", fam))
    for fam in cal.faster_families(24, n_fast, heavy=True):
        if fam.name.endswith("heavy scatter"):
            rows.append((fast, f"{fam.name} (3x scatter)", fam))
    left_out = (
        ("floor not reached falls 1.5..3x, speed flat", partial(cal.moves, what="floor", low=1.5, high=3.0, sign=-1)),
        ("whole excess falls 2..10x, speed flat", partial(cal.moves, what="excess", low=2.0, high=10.0, sign=-1)),
    )
    for name, world in left_out:
        gen = partial(cal.one_seed, world=world, steps=cal.STEPS, scatter=cal.RUNS_LIKE)
        rows.append((order, f"left out: {name}", Family(name, "pass", gen, cases)))
        gen = partial(cal.sample, world=world, seeds=24, steps=cal.STEPS, scatter=cal.RUNS_LIKE)
        rows.append((fast, f"left out: {name}", Family(name, "pass", gen, n_fast)))
    for part_name, label, fam in rows:
        print(f"{part_name:17} {label}: {_accepted(part_name, fam)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
