"""C5 v3 design: candidate progress measures as "order" decisions on the v3 calibration families.

    python -m records.c5_design.candidates 200

Each candidate orders one seed's five runs (Spearman rho(beta, speed) >= 0.9) and, where marked,
adds v3's end guard (rho(beta, L_T) <= 0.8); ``calibrate_part`` runs it on the families of
``qin2025.c5.calibration`` (T = 400). Prints each candidate's sensitivity and
specificity, then the table of records/claims/c5.md.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence

import numpy as np
from claimcheck.calibration import calibrate_part
from claimcheck.stats import spearman

from claimcheck.protocol import Part, Stat
from qin2025.c5.calibration import order_families
from qin2025.c5.residual_speed import steady_rate

Speed = Callable[[np.ndarray], float]
NO_GUARD = -1.0  # a guard value every case meets


def _rho(betas: Sequence[float], values: Sequence[float]) -> float:
    return spearman(betas, values).rho if all(math.isfinite(v) for v in values) else math.nan


def _aitken(loss: np.ndarray) -> float:
    steps = loss.size - 1
    d1, d2 = loss[steps // 2] - loss[3 * steps // 4], loss[3 * steps // 4] - loss[steps]
    return math.log(d1 / d2) / (steps / 4) if d1 > 0 and d2 > 0 else math.nan


def _own_fraction(loss: np.ndarray) -> float:
    return -float(np.argmax(loss <= loss[-1] + 0.1 * (loss[0] - loss[-1])))


SPEEDS: dict[str, tuple[Speed, bool]] = {  # name: (speed of one run, larger = faster; whether the end guard applies)
    "v2: log(L_T/L_0)": (lambda c: -math.log(c[-1] / c[0]), False),
    "log-slope of L on [T/2, T]": (lambda c: math.log(c[(c.size - 1) // 2] / c[-1]), False),
    "steps to 90% of own descent (floor L_T)": (_own_fraction, False),
    "Aitken 3-point rate + end guard": (_aitken, True),
    "steady rate, no guard": (steady_rate, False),
    "steady rate + end guard (v3)": (steady_rate, True),
}


def decision(speed: Speed, guard: bool) -> Callable[..., dict[str, float]]:
    """Return an order decision: rho(beta, speed) as "s", rho(beta, L_T) as "g" (or a value always met)."""

    def decide(betas: Sequence[float], curves: Sequence[np.ndarray]) -> dict[str, float]:
        ends = [float(c[-1]) for c in curves]
        return {"s": _rho(betas, [speed(np.asarray(c)) for c in curves]), "g": _rho(betas, ends) if guard else NO_GUARD}

    return decide


def common_target(betas: Sequence[float], curves: Sequence[np.ndarray]) -> dict[str, float]:
    """Return rho(beta, -steps to reach 1.5 x the seed's lowest L_T) (censored at T + 1)."""
    target = 1.5 * min(float(c[-1]) for c in curves)
    steps = [float(np.argmax(c <= target)) if np.any(c <= target) else float(c.size) for c in curves]
    return {"s": _rho(betas, [-s for s in steps]), "g": NO_GUARD}


def main(cases: int) -> None:
    """Calibrate every candidate on ``cases`` cases per family and print the comparison."""
    stats = (Stat("s", ">=", 0.9, tol=1e-9), Stat("g", "<=", 0.8, tol=1e-9))
    families = order_families(cases)
    decisions = {name: decision(speed, guard) for name, (speed, guard) in SPEEDS.items()}
    decisions["steps to 1.5 x the seed's lowest L_T"] = common_target
    rows: dict[str, dict[str, str]] = {}
    for name, decide in decisions.items():
        pc = calibrate_part("C5", Part("order", "", stats, decision=decide, calibration=families))
        rows[name] = {f.name: f"{f.right}/{f.cases}" for f in pc.families}
        sens, spec = pc.sensitivity, pc.specificity
        print(f"{name}: sensitivity {sens.passed}/{sens.n} [{sens.low:.3f}], ", end="")
        print(f"specificity {spec.passed}/{spec.n} [{spec.low:.3f}]")
    print("| world | expect | " + " | ".join(decisions) + " |")
    for fam in families:
        print(f"| {fam.name} | {fam.expect} | " + " | ".join(rows[name][fam.name] for name in decisions) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
