"""Self-check of the outside families for C1/C8 (linear rate) and C4 (stops): build, draw, inspect.

Draws 3 cases of every family (C1 at several horizons, C4 at 30 and 60 seeds) and checks shapes,
finiteness, positivity, and that a C1 curve is cut exactly where it first reaches 1e-24 L_0. It never
calls a decision. Run from the repository root: PYTHONPATH=. python records/outside_c1_c4/check.py
"""

from __future__ import annotations

import math
import time

import numpy as np

from claimcheck.protocol.spec import Case, Family
from qin2025.c1.outside import linear_rate_outside
from qin2025.c4.outside import D_QK, stops_outside

DRAWS = 3
BUDGET_S = 0.05  # one case must be drawn well within 50 ms


def _draws(family: Family) -> list[Case]:
    cases: list[Case] = []
    for i in range(DRAWS):
        start = time.perf_counter()
        cases.append(family.generate(np.random.default_rng(1000 + i)))
        took = time.perf_counter() - start
        assert took < BUDGET_S, f"{family.name}: drawing a case took {took * 1e3:.1f} ms"
    again = family.generate(np.random.default_rng(1000))
    first = cases[0]
    assert repr(again.params) == repr(first.params), f"{family.name}: not reproducible from its rng"
    return cases


def check_c1(steps: int) -> int:
    families = linear_rate_outside(steps)
    assert len(families) >= 8 and len({f.name for f in families}) == len(families)
    for fam in families:
        assert fam.origin == "outside" and fam.expect in ("pass", "fail", "zone") and fam.why and fam.grid
        for case in _draws(fam):
            loss = case.measurements["loss"]
            assert isinstance(loss, np.ndarray) and loss.ndim == 1 and loss.dtype == np.float64, fam.name
            assert 2 <= loss.size <= steps + 1, (fam.name, loss.size)
            assert np.all(np.isfinite(loss)) and np.all(loss > 0), fam.name
            assert 1.0 <= loss[0] <= 100.0, (fam.name, loss[0])
            floor = 1e-24 * loss[0]
            reached = loss <= floor * (1 + 1e-9)
            if loss.size < steps + 1:  # stopped early: exactly at the first step that reached the floor
                assert reached[-1] and not reached[:-1].any(), (fam.name, loss[-1] / loss[0])
            else:
                assert not reached[:-1].any(), fam.name
            assert np.all(np.diff(loss) <= 0), f"{fam.name}: a step raised the loss"
            for key, value in case.params.items():
                assert isinstance(value, str) or math.isfinite(value), (fam.name, key, value)
    return len(families)


def check_c4(units: int) -> int:
    families = stops_outside(units)
    assert len(families) >= 5 and len({f.name for f in families}) == len(families)
    for fam in families:
        assert fam.origin == "outside" and fam.expect in ("pass", "fail", "zone") and fam.why and fam.grid
        for case in _draws(fam):
            seeds = case.measurements["units"]
            assert isinstance(seeds, list) and len(seeds) == units, fam.name
            for unit in seeds:
                assert unit["d_qk"] == list(D_QK) == [256.0, 1024.0, 4096.0], fam.name
                assert len(unit["rates"]) == 3, fam.name
                for r0, r1 in unit["rates"]:
                    assert isinstance(r0, float) and isinstance(r1, float), fam.name
                    assert math.isfinite(r0) and math.isfinite(r1) and r0 > 0 and r1 > 0, (fam.name, r0, r1)
                    assert r1 < 1.0 and r0 < 2 * r1, (fam.name, r0, r1)
    return len(families)


def main() -> None:
    for steps in (1000, 1500, 2000, 4000, 16000):
        n = check_c1(steps)
        print(f"C1 steps={steps}: {n} families x {DRAWS} cases ok")
    for units in (30, 60):
        n = check_c4(units)
        print(f"C4 units={units}: {n} families x {DRAWS} cases ok")


if __name__ == "__main__":
    main()
