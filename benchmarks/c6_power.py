"""How often does a C6 design decide? Simulate the claim at the effects the exploratory seeds show.

``python benchmarks/c6_power.py [--reps 2000] [--units 4,5,6,8,12] FILE...`` reads exploratory C6
units and prints, per number of units, how often each part, the control and the claim come out
REPRODUCED / NOT REPRODUCED / INCONCLUSIVE under the claim module's protocol (Holm over its
family, one look: ``qin2025.c6.calibration.simulate_claim``, which decides with the
controller's own function). A FILE is ``benchmarks/c6_unit.py --out`` output (one seed's runs),
or an E2 or E3 file of records/c6_design/results (several seeds' runs).

From the seeds it computes each unit's values as the claim test scores them (window error without
minus with residuals per depth, their change over the depths, the one-label control's difference)
and runs three worlds per value, each a normal law per part:

- "seen": the exploratory mean and standard deviation;
- "harder": the mean moved one standard error towards the part's threshold and the standard
  deviation at its one-sided 90% upper bound (chi-square), the pessimistic end of what the seeds allow;
- "bootstrap": each simulated unit is one exploratory seed drawn with replacement (its values at
  every part together, so their correlation is kept), used only where every part has a value.

It prints one JSON line per (world, units). Exploratory seeds only: it never reads a confirmatory block.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import TestOutcome, decide
from claimcheck.protocol.spec import ClaimProtocol
from qin2025.c6.calibration import World, simulate_claim
from qin2025.c6.residual_depth import depth_change, window_error

ROOT = Path(__file__).resolve().parents[1]
Runs = Mapping[str, Sequence[float]]  # run label ("with1", "without6", "flipped1") -> error curve


def read_units(path: Path) -> dict[int, dict[str, Sequence[float]]]:
    """Return seed -> run label -> error curve, from a ``c6_unit.py --out`` file or an E3 pool file."""
    raw = json.loads(path.read_text())
    out: dict[int, dict[str, Sequence[float]]] = {}
    if isinstance(raw, dict) and "unit" in raw:  # c6_unit.py --out
        runs = out.setdefault(int(raw["unit"]["seed"]), {})
        for r in raw["runs"]:
            kind = "flipped" if "flipped" in r["run"] else "with" if r["residual"] == 1.0 else "without"
            runs[f"{kind}{r['depth']}"] = r["error"]
        return out
    for row in raw:
        runs = out.setdefault(int(row["seed"]), {})
        if "variant" in row:  # records/c6_design/results/e2a_*.json: one run a row ("control": another head seed)
            if row["variant"] in ("with", "without"):
                runs[f"{row['variant']}{row['L']}"] = row["error"]
            continue
        # records/c6_design/results/e3_pool_*.json: one seed a row
        for key, r in row.items():
            if isinstance(r, dict) and "error" in r:
                runs["flipped1" if key == "flipped1" else key] = r["error"]
    return out


def unit_values(runs: Runs, depths: Sequence[int], control: str) -> dict[str, float]:
    """Return one seed's values as the claim scores them: "L=<d>" per depth it has, "trend", the control."""
    out: dict[str, float] = {}
    adv = {}
    for L in depths:
        if f"with{L}" in runs and f"without{L}" in runs:
            adv[L] = window_error(runs[f"without{L}"]) - window_error(runs[f"with{L}"])
            out[f"L={L}"] = adv[L]
    if len(adv) == len(depths):
        out["trend"] = depth_change(list(depths), [adv[L] for L in depths])
    if "flipped1" in runs and "with1" in runs:
        out[control] = window_error(runs["flipped1"]) - window_error(runs["with1"])
    return out


def threshold(proto: ClaimProtocol, name: str) -> float:
    """Return the threshold of the part (or the control's part) ``name``."""
    ctl = {c.name: c for c in proto.controls}.get(name)
    return proto.part(ctl.part if ctl else name).stats[0].threshold


def worlds(proto: ClaimProtocol, values: Mapping[str, Sequence[float]]) -> dict[str, World]:
    """Return the "seen" and "harder" worlds of the values (see the module)."""
    seen, harder = {}, {}
    for name, vs in values.items():
        a = np.asarray(vs, dtype=np.float64)
        n = a.size
        if n < 2:
            continue
        mean, sd = float(a.mean()), float(a.std(ddof=1))
        sd_hi = sd * math.sqrt((n - 1) / stats.chi2.ppf(0.10, n - 1))
        thr = threshold(proto, name)
        towards = 1.0 if mean < thr else -1.0  # towards the threshold, from either side: harder to decide
        seen[name] = (mean, max(sd, 1e-6))
        harder[name] = (mean + towards * sd / math.sqrt(n), max(sd_hi, 1e-6))
    return {"seen": World(seen, "seen"), "harder": World(harder, "harder")}


def bootstrap(
    proto: ClaimProtocol, seeds: Sequence[Mapping[str, float]], units: int, reps: int, seed: int = 0
) -> dict[str, Counter[str]]:
    """Decide ``reps`` claims of ``units`` units, each unit one exploratory seed drawn with replacement."""
    rng = np.random.default_rng([seed, units])
    controls = {c.name: c for c in proto.controls}
    names = list(seeds[0])
    counts: dict[str, Counter[str]] = {name: Counter() for name in [*names, "claim"]}
    for _ in range(reps):
        rec = ClaimRecorder(proto.claim_id, protocol=proto)
        for u, i in enumerate(rng.integers(0, len(seeds), units)):
            for name in names:
                ctl = controls.get(name)
                part = proto.part(ctl.part if ctl else name)
                rec.check(part.stats[0].name, seeds[i][name], part=part.name, control=ctl.name if ctl else None, unit=u)
        result = decide([TestOutcome("sim", proto.claim_id, "", "", "passed", rec, protocol=proto.to_dict())], proto)
        for p in result.parts:
            counts.setdefault(p.name, Counter())[p.verdict.value] += 1
        for c in result.controls:
            counts.setdefault(c.name, Counter())[c.status] += 1
        counts["claim"][result.verdict.value] += 1
    return counts


def main(argv: list[str]) -> int:
    """Read the exploratory units, print the per-unit values and the simulated verdicts as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--units", default="4,5,6,8,12")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "claims"))
    import test_c6_depth_residual as c6

    proto, depths = c6.PROTOCOL, c6.DEPTHS
    per_seed: dict[int, dict[str, float]] = {}
    for f in args.files:
        for seed, runs in read_units(f).items():
            merged = {**per_seed.get(seed, {}), **unit_values(runs, depths, c6.ONE_LABEL)}
            per_seed[seed] = merged
    values: dict[str, list[float]] = {}
    for seed in sorted(per_seed):
        print(json.dumps({"seed": seed, **per_seed[seed]}))
        for k, v in per_seed[seed].items():
            values.setdefault(k, []).append(v)
    for name, vs in values.items():
        a = np.asarray(vs)
        sd = float(a.std(ddof=1)) if a.size > 1 else math.nan
        print(json.dumps({"value": name, "n": int(a.size), "mean": float(a.mean()), "sd": sd}))
    complete = [v for v in per_seed.values() if len(v) == len(values)]
    for units in (int(u) for u in args.units.split(",")):
        for wname, world in worlds(proto, values).items():
            got: dict[str, Any] = simulate_claim(proto, world, units, args.reps, seed=1)
            print(json.dumps({"world": wname, "units": units, "laws": dict(world.laws), **got}))
        if len(complete) >= 2:
            got = bootstrap(proto, complete, units, args.reps)
            print(json.dumps({"world": f"bootstrap of {len(complete)} seeds", "units": units, **got}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
