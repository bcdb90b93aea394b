"""The claim-level rule of C7 v3 in worlds whose answer is known: how often each verdict comes out.

Run: nice -n 10 python records/c7_design/claim_level.py [--experiments 200] [--seed 0]

``claimcheck calibrate`` simulates the claim rule of pass-rate parts only; C7's governs parts are
mean-rule parts. Here each simulated experiment draws, per unit, one table per lever from the
calibration worlds of ``qin2025.c7.calibration`` (the same skeletons and worlds the unit
decisions are calibrated on), scores them with the protocol's own decisions through a
``ClaimRecorder``, and decides the claim with ``claimcheck.verdicts.decide`` (Holm, Student-t, the
controller's function) at each budget's unit count. The controls get the values the exploratory
read-outs gave (positive: b ~ N(1.0, 0.2) and N(1.6, 0.2); read-out on X: b = 0; shuffle: N(0, 0.25)),
so the verdict is the parts'.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from claimcheck.commands.calibrate import load_protocols
from claimcheck.record import ClaimRecorder
from claimcheck.verdicts import TestOutcome, decide

from claimcheck.protocol import ClaimProtocol
from qin2025.c7.calibration import (
    World,
    beta_alone,
    bound_form,
    elasticity_world,
    follows_kinv,
    input_alone,
    lambda_alone,
    scale_alone,
    unit_case,
)
from qin2025.c7.conditioning import INPUT, W_V

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "test_c7_conditioning.py"
WORLDS: dict[str, tuple[World, str]] = {
    "rate follows kinv(Z), b 0.75..2": (follows_kinv, "holds"),
    "bound form": (bound_form, "holds"),
    "on the bar, b = 0.5": (elasticity_world(0.5), "on the bar"),
    "weak, b = 0.25": (elasticity_world(0.25), "fails"),
    "X's conditioning alone (the exploration's world)": (input_alone, "fails"),
    "lambda_max alone": (lambda_alone, "fails"),
    "beta alone": (beta_alone, "fails"),
    "scale alone": (scale_alone, "fails"),
}


def experiment(proto: ClaimProtocol, world: World, units: int, rng: np.random.Generator) -> str:
    """Return the verdict of one simulated C7 experiment of ``units`` seeds in ``world``."""
    rec = ClaimRecorder("C7", protocol=proto)
    for u in range(units):
        for lever in (INPUT, W_V):
            case = unit_case(lever, world)(rng)
            for kind in ("association", "governs"):
                rec.score(case.measurements, part=f"{kind} ({lever.name})", unit=u)
        b = proto.parts[2].stats[0].name
        rec.check(b, rng.normal(1.0, 0.2), control="read-out on Z alone, input lever (positive)", unit=u)
        rec.check(b, rng.normal(1.6, 0.2), control="read-out on Z alone, W_V lever (positive)", unit=u)
        rec.check(b, 0.0, control="read-out on X alone, W_V lever", unit=u)
        rec.check(b, rng.normal(0.0, 0.25), control="kinv(Z) shuffled within the input lever", unit=u)
    outcome = TestOutcome("sim", "C7", "", "", "passed", rec, protocol=proto.to_dict())
    return decide([outcome], proto).verdict.value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--experiments", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    (proto,) = [p for p in load_protocols([CLAIM]) if p.claim_id == "C7"]
    print("| world | truth | units | REPRODUCED | INCONCLUSIVE | NOT REPRODUCED |")
    print("|---|---|---|---|---|---|")
    for name, (world, truth) in WORLDS.items():
        for units in (40, 100):
            verdicts = [experiment(proto, world, units, rng) for _ in range(a.experiments)]
            counts = [verdicts.count(v) for v in ("REPRODUCED", "INCONCLUSIVE", "NOT REPRODUCED")]
            print(f"| {name} | {truth} | {units} | " + " | ".join(str(c) for c in counts) + " |")


if __name__ == "__main__":
    main()
