"""Calibration worlds for C7 v3: synthetic rate tables whose truth is known, fed to the unit decisions.

Run: python records/c7_design/worlds.py [--draws 400] [--units 20]

A world draws one seed's two rate tables (input lever, W_V lever) as the real unit would measure them:
``skeleton`` draws the design's covariates (kinv(Z), lambda_max, sigma_min(Z), mu) from the structure
measured on exploratory seeds 0-29 (T = 200; constants below, with their seed-to-seed spread), then the
world sets each run's rate. Everything is a pure function of its arguments and a numpy Generator.

Worlds where the claim holds (governs must pass): the rate follows kinv(Z), the same way on both levers.
Worlds where it does not (governs must fail): the rate follows lambda_max alone, beta alone (constant
at fixed beta), the input's conditioning alone (the world the exploration found), the scale alone, a
weak conditioning effect, or a curved function of lambda_max.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from claimcheck.stats import clopper_pearson, t_interval

from records.c7_design.decide import GOVERNS_BAR, Table, association, elasticity, governs

SETTINGS = {"kx": (1.0, 3.0, 10.0, 30.0, 100.0), "vc": (1.0, 0.3, 0.1, 0.03, 0.01)}
MIDDLE = {"kx": 10.0, "vc": 0.1}
LAM = ((0.5, 1.0), (2.0, 1.0), (1.0, 0.5), (1.0, 2.0))
# Structure measured on exploratory seeds 0-29 (mean, sd over seeds): d log kinv / d log setting,
# d log lambda / d log setting, log kinv and log lambda at the best-conditioned setting.
STRUCTURE = {
    "kx": {"k_slope": (-0.826, 0.057), "l_slope": (0.205, 0.071), "k0": (-0.672, 0.077), "l0": (6.142, 0.256)},
    "vc": {"k_slope": (0.887, 0.050), "l_slope": (0.044, 0.070), "k0": (-1.177, 0.166), "l0": (6.240, 0.290)},
}
# lambda_max exponents along the lambda levers (s down, s up, ug down, ug up), both levers pooled.
LAM_EXP = {(0.5, 1.0): (2.12, 0.13), (2.0, 1.0): (2.50, 0.29), (1.0, 0.5): (0.71, 0.19), (1.0, 2.0): (1.40, 0.19)}
ASSOC_RATE = 0.8  # the association parts' bar on the seeds' pass rate
SMAX_SLOPE_KX = 0.13  # d log sigma_max(Z) / d log kx (9.5 at kx = 1 to 17.5 at 100)


@dataclass(frozen=True)
class Skeleton:
    """One seed's design for one lever, before the rates: the Table's covariates and each run's inputs."""

    lever: str
    table: Table  # rate NaN
    log_kx: np.ndarray  # log condition number of X per run (0 on the W_V lever: X Gaussian, fixed)


def skeleton(lever: str, rng: np.random.Generator) -> Skeleton:
    """Draw one seed's 9 runs of ``lever`` (5 settings, then 4 lambda runs at the middle setting)."""
    st = {k: rng.normal(*v) for k, v in STRUCTURE[lever].items()}
    settings = list(SETTINGS[lever]) + [MIDDLE[lever]] * 4
    s = np.array([1.0] * 5 + [p[0] for p in LAM])
    ug = np.array([1.0] * 5 + [p[1] for p in LAM])
    best = SETTINGS[lever][0]
    x = np.log(np.array(settings) / best)  # 0 at the best-conditioned setting
    log_kinv = st["k0"] + st["k_slope"] * x
    log_lam = st["l0"] + st["l_slope"] * x
    for i, (si, ui) in enumerate(LAM, start=5):
        log_lam[i] += rng.normal(*LAM_EXP[(si, ui)]) * math.log(si * ui)
    log_smax = math.log(10.0) + (SMAX_SLOPE_KX * x if lever == "kx" else 0.0) + np.log(s)
    smin = np.exp(log_kinv + log_smax)
    lam = np.exp(log_lam)
    tab = Table(np.array(settings), s, ug, np.full(9, np.nan), np.exp(log_kinv), lam, smin, 1.0 / lam)
    log_kx = np.log(np.array(settings)) if lever == "kx" else np.zeros(9)
    return Skeleton(lever, tab, log_kx)


World = Callable[[Skeleton, np.random.Generator], np.ndarray]  # returns log rate per run


def with_rates(sk: Skeleton, log_rate: np.ndarray) -> Table:
    """Return the skeleton's table with its rates set."""
    t = sk.table
    return Table(t.lv, t.s, t.ug, np.exp(log_rate), t.kinv, t.lam, t.smin, t.mu)


def kappa_world(b: float, c: float, sd: float) -> World:
    """Rate follows kinv(Z) with elasticity b on both levers, lambda_max with exponent c (claim holds if b >= bar)."""
    return lambda sk, rng: -3.0 + b * np.log(sk.table.kinv) + c * np.log(sk.table.lam) + rng.normal(0, sd, 9)


def bound_world(sd: float) -> World:
    """Rate = mu * sigma_min(Z)^2 (the theorem's form at a fixed fraction of the curvature bound)."""
    return lambda sk, rng: np.log(sk.table.mu) + 2 * np.log(sk.table.smin) + rng.normal(0, sd, 9)


def lambda_world(gamma: float, sd: float) -> World:
    """Rate follows lambda_max alone: log rate = -gamma log lambda_max (the step size)."""
    return lambda sk, rng: -gamma * np.log(sk.table.lam) + rng.normal(0, sd, 9)


def curved_lambda_world(gamma: float, sd: float) -> World:
    """Rate follows a curved function of lambda_max alone: -gamma (log lambda - 6.2)^2 - log lambda."""
    return lambda sk, rng: -gamma * (np.log(sk.table.lam) - 6.2) ** 2 - np.log(sk.table.lam) + rng.normal(0, sd, 9)


def beta_world(sd: float) -> World:
    """Rate follows beta alone: beta is fixed within a unit, so the rate does not move."""
    return lambda sk, rng: -3.0 + rng.normal(0, sd, 9)


def input_world(bx: float, sd: float) -> World:
    """Rate follows the input's conditioning 1/kx alone (and lambda_max weakly): Z's conditioning only through X."""
    return lambda sk, rng: -3.0 - bx * sk.log_kx - 0.1 * np.log(sk.table.lam) + rng.normal(0, sd, 9)


def scale_world(e: float, sd: float) -> World:
    """Rate follows the scale s alone (and so does sigma_min(Z)); the conditioning does nothing."""
    return lambda sk, rng: -3.0 + e * np.log(sk.table.s) + rng.normal(0, sd, 9)


PARTS = ("assoc_x", "assoc_v", "gov_x", "gov_v")


@dataclass(frozen=True)
class Case:
    """A world and what each part's unit decision must say there: True pass, False fail, None not scored.

    A part is judged on its own statement: 'gov_x' (the rate follows kinv(Z) along the input lever,
    elasticity >= 0.5 with lambda_max held) is true in the input-alone world, where the rate does follow
    kinv(Z) along that lever; the claim (every part) is false there, and 'claim' says so.
    """

    name: str
    world: World
    truth: dict[str, bool | None]
    claim: bool | None


def _case(name: str, world: World, ax: bool | None, av: bool | None, gx: bool | None, gv: bool | None) -> Case:
    truth = dict(zip(PARTS, (ax, av, gx, gv), strict=True))
    known = [v for v in truth.values() if v is not None]
    claim = None if None in (gx, gv) else all(known) if all(known) else False
    if any(v is False for v in truth.values()):
        claim = False
    return Case(name, world, truth, claim)


def cases() -> list[Case]:
    """Return the calibration grid (noise sd 0.15, 0.25, 0.4: the real residual sd's median is 0.15-0.24)."""
    out: list[Case] = []
    for sd in (0.15, 0.25, 0.4):
        for b in (0.75, 1.0, 2.0):
            for c in (0.0, -0.3):
                out.append(_case(f"kinv b={b:g} c={c:g} sd={sd:g}", kappa_world(b, c, sd), True, True, True, True))
        out.append(_case(f"bound form sd={sd:g}", bound_world(sd), True, True, True, True))
        out.append(_case(f"kinv b=0.5 (on the bar) sd={sd:g}", kappa_world(0.5, 0.0, sd), True, True, None, None))
        out.append(_case(f"kinv b=0.25 (weak) sd={sd:g}", kappa_world(0.25, 0.0, sd), None, None, False, False))
        for g in (0.3, 1.0, 2.0, 3.0):
            out.append(_case(f"lambda alone gamma={g:g} sd={sd:g}", lambda_world(g, sd), None, None, False, False))
        out.append(_case(f"curved lambda sd={sd:g}", curved_lambda_world(0.3, sd), None, None, False, False))
        out.append(_case(f"beta alone sd={sd:g}", beta_world(sd), False, False, False, False))
        for bx in (0.5, 0.8):
            out.append(_case(f"input alone bx={bx:g} sd={sd:g}", input_world(bx, sd), True, False, None, False))
        out.append(_case(f"scale alone sd={sd:g}", scale_world(-0.4, sd), False, False, False, False))
    return out


def unit(case: Case, rng: np.random.Generator) -> dict[str, float | bool]:
    """Draw one unit of ``case`` and return every part's decision and value, and the naive ones."""
    sx, sv = skeleton("kx", rng), skeleton("vc", rng)
    tx, tv = with_rates(sx, case.world(sx, rng)), with_rates(sv, case.world(sv, rng))
    gx, gv = governs(tx), governs(tv)
    return {
        "assoc_x": association(tx).passed,
        "assoc_v": association(tv).passed,
        "gov_x": gx.passed,
        "gov_v": gv.passed,
        "b_x": gx.value,
        "b_v": gv.value,
        "sign_x": association(tx, bar=0.0).passed,  # section 0's unit rule: rho > 0
        "raw_x": bool(elasticity(tx.rate, tx.kinv, []) >= GOVERNS_BAR),  # no covariate, input lever only
    }


def part_verdict(block: list[dict[str, float | bool]], key: str) -> str:
    """Return R, N or I for one part over a block of units (pass rate 0.8 for associations, mean b for governs)."""
    if key.startswith("assoc"):
        p = clopper_pearson(sum(bool(d[key]) for d in block), len(block))
        return "R" if p.low > ASSOC_RATE else "N" if p.high < ASSOC_RATE else "I"
    iv = t_interval([float(d["b" + key[3:]]) for d in block])
    return "R" if iv.low >= GOVERNS_BAR else "N" if iv.high < GOVERNS_BAR else "I"


def claim_verdict(parts: list[str]) -> str:
    """Return the claim's verdict from its parts': R when all are R, N when any is N, else I."""
    return "R" if all(p == "R" for p in parts) else "N" if "N" in parts else "I"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--units", type=int, default=30)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    tally: dict[str, list[int]] = {}  # decision -> [pos right, pos n, neg right, neg n]
    claims: dict[bool, list[str]] = {True: [], False: []}
    print(
        f"{'world':<36} " + " ".join(f"{p:>8}" for p in PARTS) + f" {'sign_x':>7} {'raw_x':>6}"
        f"  claim verdicts over blocks of {a.units} units (R N I)"
    )
    for case in cases():
        draws = [unit(case, rng) for _ in range(a.draws)]
        truth = dict(case.truth) | {"sign_x": case.truth["assoc_x"], "raw_x": case.claim}
        for key, t in truth.items():
            if t is not None:
                got = tally.setdefault(key, [0, 0, 0, 0])
                got[0 if t else 2] += sum(bool(d[key]) == t for d in draws)
                got[1 if t else 3] += len(draws)
        blocks = [draws[i : i + a.units] for i in range(0, a.draws - a.units + 1, a.units)]
        verdicts = [claim_verdict([part_verdict(b, p) for p in PARTS]) for b in blocks]
        if case.claim is not None:
            claims[case.claim] += verdicts

        def mark(k: str, draws: list[dict[str, float | bool]] = draws, truth: dict[str, bool | None] = truth) -> str:
            sign = "" if truth[k] is None else ("+" if truth[k] else "-")
            return f"{np.mean([d[k] for d in draws]):.2f}{sign}"

        print(
            f"{case.name:<36} " + " ".join(f"{mark(p):>8}" for p in PARTS) + f" {mark('sign_x'):>7} {mark('raw_x'):>6}"
            f"  {verdicts.count('R')} {verdicts.count('N')} {verdicts.count('I')}"
        )
    print(
        "\n(+ must pass, - must fail, per the part's own statement; figures are unit pass rates over draws;"
        " raw_x is scored against the claim)"
    )
    for key, (pr, pn, nr, nn) in tally.items():
        sens, spec = clopper_pearson(pr, pn), clopper_pearson(nr, nn)
        print(
            f"{key:<8} sensitivity {pr}/{pn} = {pr / max(pn, 1):.3f} (95% lower {sens.low:.3f})   "
            f"specificity {nr}/{nn} = {nr / max(nn, 1):.3f} (95% lower {spec.low:.3f})"
        )
    for truth, vs in claims.items():
        print(
            f"claim {'holds' if truth else 'fails'}: {len(vs)} simulated experiments of {a.units} units: "
            f"REPRODUCED {vs.count('R')}, NOT REPRODUCED {vs.count('N')}, INCONCLUSIVE {vs.count('I')}"
        )


if __name__ == "__main__":
    main()
