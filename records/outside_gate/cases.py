"""Outside referee for the draws-changed gate: worlds whose right gate status is known, 200 instances each.

Run from the repository root: ``python records/outside_gate/cases.py``.
Each run has 20 units (seeds); one statistic ``s`` with ``s <= 1.0`` and bar 0.8, plus a constant control.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.gate.baseline import compare
from claimcheck.gate.decision import Status, judge
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.report.rundata import RunData

N = 20
SEEDS = range(N)
INSTANCES = 200


def _protocol() -> ClaimProtocol:
    part = Part("", "s stays small", (Stat("s", "<=", 1.0),), bar=0.8)
    return ClaimProtocol("C1", 1, (part,), (Control("ctl", "", "shifted"),), Seeds("b", 1000, {"ci": 20}))


PROTO = _protocol()


def _run(values: np.ndarray) -> RunData:
    tests = []
    for seed, v in zip(SEEDS, values, strict=True):
        rec = ClaimRecorder("C1", seed=seed, protocol=PROTO)
        rec.check("s", float(v), "<=", 1.0, unit=seed)
        rec.check("s", 5.0, "<=", 1.0, control="ctl", unit=seed)
        tests.append(TestOutcome(f"t.py::test_C1[{seed}]", "C1", "t", "src", "passed", rec, protocol=PROTO.to_dict()))
    return RunData("r", {"cpu": "cpu A", "torch": "2.13"}, tests)


# A world: rng -> (baseline values, edited values).  Law: value = MU + SD * z, z standard normal per unit.
MU, SD = 0.3, 0.1  # far from the edge at 1.0
MU_E, SD_E = 0.72, 0.1  # near the edge: a unit above 1.0 is a 0.3% event, so 20/20 most often
World = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray]]


def reseed_far(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return MU + SD * rng.standard_normal(N), MU + SD * rng.standard_normal(N)


def reseed_edge(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return MU_E + SD_E * rng.standard_normal(N), MU_E + SD_E * rng.standard_normal(N)


def reseed_edge_falls(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A reseed of the near-edge law, kept only when the baseline has 20/20 and the new draws 17/20 or 18/20."""
    while True:
        base = MU_E + SD_E * rng.standard_normal(N)
        if (base > 1.0).any():
            continue
        z = rng.standard_normal(N)
        k = int(rng.integers(2, 4))
        new = MU_E + SD_E * z
        new[:k] = 1.0 + 0.05 * np.abs(z[:k])  # the law's own upper tail for k units (a rare but lawful block)
        if np.std(new) < 2 * np.std(base):
            return base, new


def bug_redraw_shift(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A bug that changes the draws and moves the law's mean up 1.5 SD."""
    return MU_E + SD_E * rng.standard_normal(N), MU_E + 0.15 + SD_E * rng.standard_normal(N)


def bug_break_few(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Same draws; 3 units broken to just over the threshold."""
    base = MU_E + SD_E * rng.standard_normal(N)
    new = base.copy()
    new[rng.choice(N, 3, replace=False)] = 1.05
    return base, new


def bug_redraw_break_few(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A bug that redraws and breaks 3 units to just over the threshold (values any reseed could not reach)."""
    base = MU_E + SD_E * rng.standard_normal(N)
    new = MU_E + SD_E * rng.standard_normal(N)
    new[rng.choice(N, 3, replace=False)] = 1.05
    return base, new


def bug_noise(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Same draws plus fresh noise of 1.5 SD: the edited law is wider (sd x1.8), its correlation about 0.55."""
    base = MU_E + SD_E * rng.standard_normal(N)
    return base, base + 1.5 * SD_E * rng.standard_normal(N)


def bug_lower_every_unit(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Same draws, every unit moved 0.8 SD towards the threshold (a small, uniform degradation)."""
    base = MU_E + SD_E * rng.standard_normal(N)
    return base, base + 0.08


def bug_reseed_plus_shift(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """New draws of the same spread, mean moved 1 SD towards the threshold."""
    return MU_E + SD_E * rng.standard_normal(N), MU_E + 0.1 + SD_E * rng.standard_normal(N)


WORLDS: list[tuple[str, World, set[Status]]] = [
    ("reseed, far from edge", reseed_far, {Status.PASS, Status.UNDECIDED}),
    ("reseed, near edge", reseed_edge, {Status.PASS, Status.UNDECIDED}),
    ("reseed, near edge, verdict falls", reseed_edge_falls, {Status.PASS, Status.UNDECIDED}),
    ("bug: redraw + shift 1.5 SD", bug_redraw_shift, {Status.FAIL}),
    ("bug: 3 units broken, same draws", bug_break_few, {Status.FAIL}),
    ("bug: redraw + 3 units broken", bug_redraw_break_few, {Status.FAIL}),
    ("bug: adds noise 1.5 SD", bug_noise, {Status.FAIL}),
    ("bug: every unit +0.8 SD", bug_lower_every_unit, {Status.FAIL}),
    ("bug: reseed + shift 1 SD", bug_reseed_plus_shift, {Status.FAIL}),
]


def main() -> None:
    print("| world | right | right/200 | PASS | UNDECIDED | FAIL | drawn | R->INC | R->NR |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, (name, world, right) in enumerate(WORLDS):
        rng = np.random.default_rng(1000 + i)
        counts = dict.fromkeys(Status, 0)
        ok = drawn = fell_inc = fell_nr = 0
        for _ in range(INSTANCES):
            base, new = world(rng)
            comp = compare(_run(new), _run(base), "base.json")
            status = judge(comp).status
            counts[status] += 1
            ok += status in right
            drawn += "C1" in comp.draws_changed()
            moves = {(v.before, v.after) for v in comp.verdicts}
            fell_inc += ("REPRODUCED", "INCONCLUSIVE") in moves
            fell_nr += ("REPRODUCED", "NOT REPRODUCED") in moves
        label = "/".join(sorted(s.value for s in right))
        row = [
            name,
            label,
            f"{ok}/{INSTANCES}",
            *(str(counts[s]) for s in (Status.PASS, Status.UNDECIDED, Status.FAIL)),
        ]
        print("| " + " | ".join([*row, str(drawn), str(fell_inc), str(fell_nr)]) + " |")


if __name__ == "__main__":
    main()
