"""Outside calibration families for C4's "convergence stops" as d_QK grows (a sample of seeds per case).

Written by an outside referee from the claim's words alone, without reading the decision or the
design's own families. The claim: for very large d_QK the attention output without the residual
tends to rank one, sigma_min -> 0 and convergence stops. Read as a limit: rho(d_QK) =
rate(beta=0) / rate(beta=1) tends to 0 (or beta=0 stalls outright) rather than levelling off at a
positive value. The range is d_QK = 256, 1024, 4096 (d = 16, q = 16, 64, 256); each seed gives at
each d_QK a pair (r0, r1) of mean rates in orders of magnitude per step over 100 steps.

How a case is made: a population curve rho(d) (or a stall level for r0), a residual rate
r1(d) = R1 (d/256)^b, per-seed scatter on r1 (log-sd s1) and on rho (log-sd s_rho, half of it shared
by a seed across its three d_QK, half fresh at each), and measurement noise on every rate (log-sd
sigma_m, 3-20 %). Stalled rates r0 are drawn in [1e-6, 3e-5] (at most 0.003 orders over the 100
steps, below the ~1e-4 per step at which a rate is told from 0) and get the same relative noise.

The bands (rho at d_QK = 4096, population):
  pass  rho <= 0.005 and r0 <= 4e-5 (beta=0 moved <= 0.004 orders in 100 steps), having fallen >= 6x
        from 1024, or a literal stall from some d_QK on;
  zone  rho in [0.03, 0.1], still falling >= 1.6x from 1024, r0 >= 4e-4 (clearly moving): the limit
        could be 0 or a level just below 0.03;
  fail  rho in [0.1, 0.5] (0.15-0.5 for the mixture), flat within 5 % from 1024 to 4096, or rising.
No family lies in the gaps (0.005-0.03 at 4096; falling at 0.1-0.15; flat below 0.1).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Family, Origin

D_QK: tuple[float, float, float] = (256.0, 1024.0, 4096.0)
ORIGIN: Origin = "outside"
STALL = (1e-6, 3e-5)  # orders per step: a beta=0 run that has stopped descending
Generate = Callable[[np.random.Generator], Case]
Profile = Callable[[np.random.Generator], tuple[list[float | None], dict[str, float | str]]]


def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Return a log-uniform draw from [lo, hi] (lo when hi <= lo)."""
    if hi <= lo:
        return float(lo)
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _units(
    rng: np.random.Generator,
    units: int,
    profiles: list[list[float | None]],
    r1: float,
    slope: float,
    noise: dict[str, float],
) -> list[dict[str, Any]]:
    """Return one dict per seed; profiles[i] is seed i's population rho at each d_QK (None: a stall there)."""
    s1, s_rho, sigma_m = noise["s1"], noise["s_rho"], noise["sigma_m"]
    out: list[dict[str, Any]] = []
    for i in range(units):
        seed_r1 = math.exp(s1 * rng.standard_normal())
        seed_rho = s_rho * math.sqrt(0.5) * rng.standard_normal()
        rates: list[tuple[float, float]] = []
        for j, d in enumerate(D_QK):
            true_r1 = r1 * (d / 256.0) ** slope * seed_r1
            rho = profiles[i][j]
            if rho is None:
                true_r0 = _loguniform(rng, *STALL)
            else:
                true_r0 = rho * math.exp(seed_rho + s_rho * math.sqrt(0.5) * rng.standard_normal()) * true_r1
            m0, m1 = np.exp(sigma_m * rng.standard_normal(2))
            rates.append((float(true_r0 * m0), float(true_r1 * m1)))
        out.append({"d_qk": list(D_QK), "rates": rates})
    return out


def _noise(rng: np.random.Generator, sigma_m: tuple[float, float] = (0.03, 0.2)) -> dict[str, float]:
    """Return the case's per-seed scatter on r1 and rho and its measurement noise (log-sds)."""
    return {
        "s1": float(rng.uniform(0.05, 0.3)),
        "s_rho": float(rng.uniform(0.05, 0.3)),
        "sigma_m": _loguniform(rng, *sigma_m),
    }


def _family(units: int, profile: Profile, r1_floor: float = 0.0) -> Generate:
    """Return a generator: every seed shares the population profile; R1 is raised to r1_floor / rho(4096)."""

    def generate(rng: np.random.Generator) -> Case:
        rho, params = profile(rng)
        noise = _noise(rng)
        slope = float(rng.uniform(-0.2, 0.1))
        r1 = _loguniform(rng, 0.004, 0.03)
        last = rho[-1]
        if r1_floor and last is not None:  # beta=0 visibly moving at 4096: r0 >= r1_floor
            r1 = max(r1, r1_floor / (last * 16.0**slope))
        if params.get("cap_r0") and last is not None:  # beta=0 below resolution at 4096: r0 <= cap
            r1 = min(r1, float(params["cap_r0"]) / (last * 16.0**slope))
        seeds = _units(rng, units, [rho] * units, r1, slope, noise)
        params = {**params, **noise, "R1": r1, "r1_slope": slope, "units": float(units)}
        return Case(params=params, measurements={"units": seeds})

    return generate


# --------------------------------------------------------------------------------------------- profiles


def _decay_to_zero(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
    """rho(256) in [0.1, 0.8]; rho(4096) <= 0.005, 6-30x below rho(1024), itself >= 1.5x below rho(256)."""
    rho1 = rng.uniform(0.1, 0.8)
    rho4 = _loguniform(rng, 2e-4, 0.005)
    rho2 = rho4 * _loguniform(rng, 6.0, min(30.0, rho1 / (1.5 * rho4)))
    return [rho1, rho2, rho4], {"rho256": rho1, "rho1024": rho2, "rho4096": rho4, "cap_r0": 4e-5}


def _stall_from(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
    """beta=0 stalls from 1024 or from 4096 on; before that rho in [0.1, 0.6] (then [0.05, rho256])."""
    rho1 = rng.uniform(0.1, 0.6)
    if rng.uniform() < 0.5:
        return [rho1, None, None], {"onset": "1024", "rho256": rho1}
    rho2 = rng.uniform(0.05, rho1)
    return [rho1, rho2, None], {"onset": "4096", "rho256": rho1, "rho1024": rho2}


def _level_off(lo: float, hi: float) -> Profile:
    def profile(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
        """rho = c (1 + A (d/256)^-a), a in [3, 4], A in [0, 3]: within 5 % of c from 1024 on."""
        c, amp, a = rng.uniform(lo, hi), rng.uniform(0.0, 3.0), rng.uniform(3.0, 4.0)
        rho: list[float | None] = [c * (1 + amp * (d / 256.0) ** -a) for d in D_QK]
        return rho, {"level": c, "A": amp, "a": a}

    return profile


def _flat_or_rising(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
    """rho = c (d/256)^e, c in [0.1, 0.5], e in [0, 0.1]: flat or rising by up to 32 % over the range."""
    c, e = rng.uniform(0.1, 0.5), rng.uniform(0.0, 0.1)
    return [c * (d / 256.0) ** e for d in D_QK], {"level": c, "exponent": e}


def _still_falling(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
    """rho = rho4 (d/4096)^-a, rho4 in [0.03, 0.1], a in [0.35, 1] (rho(256) <= 0.9)."""
    rho4 = rng.uniform(0.03, 0.1)
    a = rng.uniform(0.35, min(1.0, math.log(0.9 / rho4) / math.log(16.0)))
    rho: list[float | None] = [rho4 * (d / 4096.0) ** -a for d in D_QK]
    return rho, {"rho4096": rho4, "a": a}


def _hidden_level(rng: np.random.Generator) -> tuple[list[float | None], dict[str, float | str]]:
    """rho = c + A (d/256)^-a, c in [0.005, 0.03]: rho(4096) in [0.03, 0.1], still >= 1.6x below rho(1024)."""
    while True:
        c, rho4, a = rng.uniform(0.005, 0.03), rng.uniform(0.03, 0.1), rng.uniform(0.5, 1.5)
        rho2 = c + (rho4 - c) * 4.0**a
        rho1 = c + (rho4 - c) * 16.0**a
        if rho2 >= 1.6 * rho4 and rho1 <= 0.9:
            return [rho1, rho2, rho4], {"level": c, "rho4096": rho4, "a": a}


# --------------------------------------------------------------------------------------------- mixtures


def _noisy_stops(units: int) -> Generate:
    """Each seed its own way to 0 (a decay as _decay_to_zero or a stall from 1024/4096); noisy, with outliers."""

    def generate(rng: np.random.Generator) -> Case:
        noise = _noise(rng, sigma_m=(0.1, 0.2))
        slope = float(rng.uniform(-0.2, 0.1))
        seeds: list[dict[str, Any]] = []
        outliers = 0
        for _ in range(units):
            r1 = _loguniform(rng, 0.004, 0.03)
            rho, _params = (_decay_to_zero if rng.uniform() < 0.5 else _stall_from)(rng)
            if rho[-1] is not None:
                r1 = min(r1, 4e-5 / (rho[-1] * 16.0**slope))
            seed_noise = dict(noise)
            if rng.uniform() < 0.1:  # an outlier seed: twice the scatter and 0.4 measurement noise
                outliers += 1
                seed_noise = {"s1": 2 * noise["s1"], "s_rho": 2 * noise["s_rho"], "sigma_m": 0.4}
                rho = [None if x is None else min(x, 0.0025) if k == 2 else x for k, x in enumerate(rho)]
            seeds.extend(_units(rng, 1, [rho], r1, slope, seed_noise))
        params: dict[str, float | str] = {**noise, "r1_slope": slope, "outliers": float(outliers)}
        return Case(params=params, measurements={"units": seeds})

    return generate


def _minority_stalls(units: int) -> Generate:
    """5-15 % of seeds (at least one) stall from 4096; the rest level off at c in [0.15, 0.5]."""

    def generate(rng: np.random.Generator) -> Case:
        noise = _noise(rng)
        slope = float(rng.uniform(-0.2, 0.1))
        c, amp, a = rng.uniform(0.15, 0.5), rng.uniform(0.0, 3.0), rng.uniform(3.0, 4.0)
        level: list[float | None] = [c * (1 + amp * (d / 256.0) ** -a) for d in D_QK]
        stalled = max(1, round(rng.uniform(0.05, 0.15) * units))
        stall: list[float | None] = [level[0], float(rng.uniform(0.05, c)), None]
        profiles = [stall] * stalled + [level] * (units - stalled)
        order = rng.permutation(units)
        r1 = max(_loguniform(rng, 0.004, 0.03), 4e-4 / (c * 16.0**slope))
        seeds = _units(rng, units, [profiles[int(k)] for k in order], r1, slope, noise)
        params: dict[str, float | str] = {**noise, "level": c, "stalled": float(stalled), "R1": r1}
        return Case(params=params, measurements={"units": seeds})

    return generate


def stops_outside(units: int) -> tuple[Family, ...]:
    """Return the outside families for C4's "stops" part, each case a sample of ``units`` seeds."""
    u = units
    return (
        Family(
            "outside: rho decays to ~0 within the range",
            "pass",
            _family(u, _decay_to_zero),
            grid="rho(256) U[0.1, 0.8]; rho(4096) log-U[2e-4, 0.005] and r0(4096) <= 4e-5; "
            "rho(1024) = rho(4096) x log-U[6, min(30, rho(256) / (1.5 rho(4096)))]; R1 log-U[0.004, 0.03]",
            why="at 4096 beta=0 makes <= 0.5 % of beta=1's progress, <= 0.004 orders in 100 steps: it has stopped",
            origin=ORIGIN,
        ),
        Family(
            "outside: beta=0 stalls from 1024 or from 4096 on",
            "pass",
            _family(u, _stall_from),
            grid="onset 1024 or 4096 (even odds); stalled r0 log-U[1e-6, 3e-5]; "
            "rho before U[0.1, 0.6], then U[0.05, rho256]",
            why="a literal stall from some d_QK on is 'convergence stops' in the claim's words",
            origin=ORIGIN,
        ),
        Family(
            "outside: rho levels off at 0.1-0.5",
            "fail",
            _family(u, _level_off(0.1, 0.5), r1_floor=4e-4),
            grid="rho = c (1 + A (d/256)^-a), c U[0.1, 0.5], A U[0, 3], a U[3, 4]; r0 >= 4e-4",
            why="flat within 5 % from 1024 to 4096 at >= 10 % of the residual rate: it levels off, does not stop",
            origin=ORIGIN,
        ),
        Family(
            "outside: rho flat or rising at 0.1-0.5",
            "fail",
            _family(u, _flat_or_rising, r1_floor=4e-4),
            grid="rho = c (d/256)^e, c U[0.1, 0.5], e U[0, 0.1]",
            why="no decline at all over 16x in d_QK: nothing tends to 0",
            origin=ORIGIN,
        ),
        Family(
            "outside: rho still falling at 4096, 0.03-0.1",
            "zone",
            _family(u, _still_falling, r1_floor=4e-4),
            grid="rho = rho4 (d/4096)^-a, rho4 U[0.03, 0.1], a U[0.35, 1] (rho(256) <= 0.9); r0(4096) >= 4e-4",
            why="falls 1.6-4x per quadrupling and is still at 3-10 % at 4096: -> 0 or a level just below, undecided",
            origin=ORIGIN,
        ),
        Family(
            "outside: small level (0.005-0.03) hidden in a decay",
            "zone",
            _family(u, _hidden_level, r1_floor=4e-4),
            grid="rho = c + A (d/256)^-a, c U[0.005, 0.03], rho(4096) U[0.03, 0.1], a U[0.5, 1.5], "
            "rho(1024) >= 1.6 rho(4096), rho(256) <= 0.9",
            why="truly levels off below 0.03, but the range shows only a decline still in progress",
            origin=ORIGIN,
        ),
        Family(
            "outside: noisy heterogeneous seeds, every one stops",
            "pass",
            _noisy_stops(u),
            grid="per seed: a decay to ~0 or a stall (even odds); measurement noise log-U[0.1, 0.2]; "
            "10 % outlier seeds with doubled scatter and 0.4 noise",
            why="every seed's beta=0 rate at 4096 is below resolution (<= 4e-5) or stalled",
            origin=ORIGIN,
        ),
        Family(
            "outside: a minority of seeds stall, the rest level off at 0.15-0.5",
            "fail",
            _minority_stalls(u),
            grid="5-15 % of seeds (>= 1) stall at 4096; the rest rho = c (1 + A (d/256)^-a), c U[0.15, 0.5]",
            why="85-95 % of seeds keep converging at >= 15 % of the residual rate: the population does not stop",
            origin=ORIGIN,
        ),
    )
