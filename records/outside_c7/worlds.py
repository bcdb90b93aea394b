"""Outside referee for c7's governs decision: synthetic worlds with a known right answer.

Each world is a law for a unit's 9 runs along the rotation lever (5 reference settings, best
conditioned first, then 4 "lambda runs" at the middle setting that move lambda_max with kinv(Z)
nearly fixed). The unit decision is qin2025.c7.conditioning.governs_decision; the claim-level rule
(written here from the brief) is: mean of the finite b over admitted units, one-sided 95% Student-t
bounds, REPRODUCED if lower >= 0.1, NOT REPRODUCED if upper < 0.1, else INCONCLUSIVE.

Run from the repository root:  python records/outside_c7/worlds.py
numpy for everything but the t quantile (scipy.stats.t.ppf). Every sample is seeded.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from qin2025.c7.conditioning import GOVERNS, ZONE, governs_decision

FLOOR = 0.1
SIZES = {"ci": 16, "standard": 49}
SAMPLES = 200
T_REF = np.array([0.0, 0.25, 0.5, 0.75, 1.0])  # lever position of the 5 reference runs (best conditioned first)
REFERENCE = [True] * 5 + [False] * 4
# the 4 lambda runs at the middle setting: (s, ug) = (0.5,1), (2,1), (1,0.5), (1,2); each moves lambda_max,
# here by these log factors (a 4x move each way); kinv(Z) stays at the middle setting up to GD's own drift
LAM_RUN_LOG = np.log([0.25, 4.0, 0.25, 4.0])


@dataclass(frozen=True)
class World:
    name: str
    answer: str  # "REPRODUCED", "NOT REPRODUCED" or "INCONCLUSIVE" (undecided by design)
    b_mean: float  # mean over seeds of the true elasticity of the rate in kinv(Z)
    b_sd: float  # per-seed scatter of that elasticity
    g: float  # true elasticity of the rate in lambda_max
    h: float  # true elasticity of the rate in W_V's sigma_min (over the window)
    c_lam: float  # along the lever: log lambda_max moves c_lam * log kinv(Z) (a competitor moving with kinv)
    c_w: float  # along the lever: log wv moves c_w * log kinv(Z)
    w_own: float  # sd of wv's own log movement per run (not tied to kinv); 0: wv in exact lockstep with kinv
    noise: float  # sd of per-run log-rate noise
    b_zero_frac: float = 0.0  # fraction of seeds whose true elasticity is exactly 0 (mixture)
    kinv_meas: float = 0.05  # sd of the log reading error of kinv(Z) (window read-out)
    wv_meas: float = 0.01  # sd of the log reading error of wv
    lam_own: float = 0.1  # sd of lambda_max's own log movement per run
    lam_sat: bool = False  # the lambda_max law is 1/(1 + lambda_max/lambda_c) (not a power law): g is ignored


WORLDS = [
    World(
        "A bound-form", "REPRODUCED", b_mean=1.0, b_sd=0.3, g=-0.5, h=0.0, c_lam=-0.5, c_w=0.05, w_own=0.05, noise=0.3
    ),
    World(
        "B weak-masked", "REPRODUCED", b_mean=0.35, b_sd=0.15, g=-1.0, h=0.0, c_lam=0.6, c_w=0.05, w_own=0.05, noise=0.4
    ),
    World(
        "C mixed-seeds",
        "REPRODUCED",
        b_mean=0.6,
        b_sd=0.15,
        g=-0.5,
        h=1.0,
        c_lam=-0.3,
        c_w=0.08,
        w_own=0.06,
        noise=0.35,
        b_zero_frac=0.3,
    ),
    World(
        "D lambda-sets-rate",
        "NOT REPRODUCED",
        b_mean=0.0,
        b_sd=0.05,
        g=-1.0,
        h=0.0,
        c_lam=-0.8,
        c_w=0.05,
        w_own=0.05,
        noise=0.3,
    ),
    World(
        "D2 lambda-saturating",
        "NOT REPRODUCED",
        b_mean=0.0,
        b_sd=0.05,
        g=0.0,
        h=0.0,
        c_lam=-0.8,
        c_w=0.05,
        w_own=0.05,
        noise=0.3,
        lam_sat=True,
    ),
    World(
        "E wv-sets-rate",
        "NOT REPRODUCED",
        b_mean=0.0,
        b_sd=0.05,
        g=-0.5,
        h=3.0,
        c_lam=-0.2,
        c_w=0.15,
        w_own=0.08,
        noise=0.25,
    ),
    World("F flat", "NOT REPRODUCED", b_mean=0.0, b_sd=0.1, g=0.0, h=0.0, c_lam=-0.3, c_w=0.05, w_own=0.05, noise=0.4),
    World(
        "G wrong-way",
        "NOT REPRODUCED",
        b_mean=-0.4,
        b_sd=0.2,
        g=-1.0,
        h=0.0,
        c_lam=-0.5,
        c_w=0.05,
        w_own=0.05,
        noise=0.3,
    ),
    World(
        "H1 lockstep-wv",
        "INCONCLUSIVE",
        b_mean=0.0,
        b_sd=0.0,
        g=-0.5,
        h=2.0,
        c_lam=-0.2,
        c_w=0.15,
        w_own=0.0,
        noise=0.25,
    ),
    World(
        "H2 lockstep-twin",
        "INCONCLUSIVE",
        b_mean=0.3,
        b_sd=0.0,
        g=-0.5,
        h=0.0,
        c_lam=-0.2,
        c_w=0.15,
        w_own=0.0,
        noise=0.25,
    ),
]


def unit(world: World, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return (rate, kinv, lam, wv) readings of one unit's 9 runs under the world's law."""
    span = math.exp(rng.uniform(math.log(10.0), math.log(40.0)))  # kinv(Z) spans 10-40x over the 5 settings
    k0 = math.log(rng.uniform(0.3, 0.9))
    lk = np.empty(9)
    lk[:5] = k0 - T_REF * math.log(span)
    lk[5:] = k0 - 0.5 * math.log(span) + rng.normal(0.0, 0.1, 4)  # GD's own drift of kinv in the lambda runs
    lkc = lk - lk[:5].mean()
    ll = rng.normal(0.0, 0.5) + world.c_lam * lkc + rng.normal(0.0, world.lam_own, 9)
    ll[5:] += LAM_RUN_LOG
    lw = rng.normal(-1.0, 0.3) + world.c_w * lkc + rng.normal(0.0, world.w_own, 9)
    b = 0.0 if rng.random() < world.b_zero_frac else rng.normal(world.b_mean, world.b_sd)
    lam_term = -np.log1p(np.exp(ll - ll[:5].mean())) if world.lam_sat else world.g * ll
    lr = rng.normal(-3.0, 0.5) + b * lk + lam_term + world.h * lw + rng.normal(0.0, world.noise, 9)
    kinv = np.exp(lk + rng.normal(0.0, world.kinv_meas, 9))
    wv = np.exp(lw + rng.normal(0.0, world.wv_meas, 9))
    return np.exp(lr), kinv, np.exp(ll), wv


def claim_verdict(bs: list[float]) -> tuple[str, float, float]:
    """Return (verdict, lower, upper) from the finite b values: one-sided 95% Student-t bounds of the mean vs FLOOR."""
    b = np.asarray([x for x in bs if math.isfinite(x)], dtype=np.float64)
    if b.size < 2:
        return "INCONCLUSIVE", math.nan, math.nan
    half = student_t.ppf(0.95, b.size - 1) * b.std(ddof=1) / math.sqrt(b.size)
    lo, hi = b.mean() - half, b.mean() + half
    if lo >= FLOOR:
        return "REPRODUCED", lo, hi
    if hi < FLOOR:
        return "NOT REPRODUCED", lo, hi
    return "INCONCLUSIVE", lo, hi


def run_world(world: World, wi: int, n_units: int, samples: int = SAMPLES) -> dict[str, object]:
    counts = {"REPRODUCED": 0, "NOT REPRODUCED": 0, "INCONCLUSIVE": 0}
    zoned = 0
    means = []
    unit_bs = []
    for s in range(samples):
        rng = np.random.default_rng([20250, wi, n_units, s])
        bs = []
        for _ in range(n_units):
            rate, kinv, lam, wv = unit(world, rng)
            d = governs_decision(rate, kinv, lam, REFERENCE, wv)
            if d.get(ZONE):
                zoned += 1
            bs.append(d[GOVERNS])
        verdict, _, _ = claim_verdict(bs)
        counts[verdict] += 1
        fin = [x for x in bs if math.isfinite(x)]
        unit_bs += fin
        means.append(float(np.mean(fin)) if fin else math.nan)
    return {
        "counts": counts,
        "right": counts[world.answer],
        "zoned": zoned / (samples * n_units),
        "mean_b": float(np.nanmean(means)),
        "sd_b": float(np.std(unit_bs, ddof=1)),
    }


def main() -> None:
    t0 = time.time()
    rows = []
    for wi, w in enumerate(WORLDS):
        res = {k: run_world(w, wi, n) for k, n in SIZES.items()}
        rows.append((w, res))
        c, s = res["ci"], res["standard"]
        print(
            f"{w.name:20s} answer={w.answer:15s} ci right {c['right']:3d}/200 {c['counts']} "
            f"| std right {s['right']:3d}/200 {s['counts']} | mean b {s['mean_b']:+.3f} "
            f"sd(b) per unit {s['sd_b']:.3f} zoned {s['zoned']:.3f}",
            flush=True,
        )
    print(
        "\n| world | right answer | 16 units right/200 | 49 units right/200 | verdicts at 16 (R/N/I) "
        "| verdicts at 49 (R/N/I) | mean b | sd b per unit | zoned |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for w, res in rows:
        c16, c = res["ci"]["counts"], res["standard"]["counts"]
        st = res["standard"]
        print(
            f"| {w.name} | {w.answer} | {res['ci']['right']} | {st['right']} | "
            f"{c16['REPRODUCED']}/{c16['NOT REPRODUCED']}/{c16['INCONCLUSIVE']} | "
            f"{c['REPRODUCED']}/{c['NOT REPRODUCED']}/{c['INCONCLUSIVE']} | {st['mean_b']:+.2f} | "
            f"{st['sd_b']:.2f} | {st['zoned']:.1%} |"
        )
    # sensitivity (not one of the worlds): the no-effect worlds at the low end of the noise range, and the
    # lockstep pair at 400 units, to separate "the check lacks power" from "the check cannot tell"
    print("\nsensitivity: right/200")
    from dataclasses import replace

    extra = [
        (replace(w, name=w.name + " @noise0.1", noise=0.1), {"ci": 16, "standard": 49})
        for w in WORLDS
        if w.name.split()[0] in ("D", "E", "F")
    ]
    extra += [(replace(w, name=w.name + " @400 units"), {"big": 400}) for w in WORLDS if w.name.startswith("H")]
    for j, (w, sizes) in enumerate(extra):
        res = {k: run_world(w, 100 + j, n, samples=50 if k == "big" else SAMPLES) for k, n in sizes.items()}
        print(
            f"  {w.name:32s} "
            + " ".join(
                f"{k}({sizes[k]}): right {r['right']}/{sum(r['counts'].values())} {r['counts']} "
                f"mean b {r['mean_b']:+.3f} sd b {r['sd_b']:.3f}"
                for k, r in res.items()
            ),
            flush=True,
        )
    print(f"\n{time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
