"""Challenge families for C5: one seed's loss curves at five betas from power-law-tail worlds, faster or not.

Written from the claim's words ("increasing beta accelerates convergence; models with beta > 0
converge significantly faster than beta = 0", read as the paper's curves are read: once the fast
initial phase is over, at equal steps the loss is lower, or a common level is reached in fewer
steps), not from the decisions. A run's curve is

    L_b(t) = F_b + A_b (1 + g_b t / tau)^(-p_b) + E_b e^(-t / t_e),

a power-law tail (the regime the Jena runs sit in: none reaches its floor within T) with per-run
scatter in its offset F_b and its exponent p_b, plus a fast initial phase E_b that sets most of
L_0 and is fitted away in t_e = 2-10 steps. The betas are 0, 0.25, 0.5, 0.75, 1; T = 400 (C5's ci
horizon). GD is deterministic, so a curve carries no measurement noise: the scatter is run to run.

- **faster** (pass): g_b = g^beta, g = 1.5-3 (what a larger step does: the same descent in fewer
  steps), with E_b rising with beta (L_0 rises with beta, as on the claim's runs) or not. A seed is
  kept only where its realised curves are ordered, larger beta lower at every t in [T/4, T]:
  that is "faster" in both of the reading's senses.
- **L_0 only** (fail): g_b = 1, E_b rising with beta: only the initial loss depends on beta, the tails
  are the same world's (per-run scatter independent of beta). Not faster: after the initial phase
  neither reading orders the runs. For the per-seed part a seed is kept only where at least two of
  its ten pairs of betas are out of order at T (one adjacent swap is what a faster world with
  scatter may show; two are not "the larger beta, the faster").
- **lower floor only, reached within T** (fail): F_b falls with beta, g_b = 1, the tails steep enough
  (p 1.5-3) that every run is within 10% of the floor gap of its floor by T/2. Both runs reach their
  limits at the same step; a lower limit is a better end, not a faster convergence.
- **lower floor only, not reached within T** (zone): F_b = F (1 - f beta), f 0.4-0.9, and the excess
  A (1 + T/tau)^-p still left at T is at least the floors' whole fall F f (no run is near its
  floor); kept where the seed's curves are ordered at every step of [T/4, T]. Every step lowers
  every run's loss by nearly the same amount, so the rate reading says "not faster"; at equal steps
  the loss is lower, so the level reading says "faster". The words do not choose between them, so
  no decision's answer here is a finding: it is a reading the protocol must declare (and a
  protocol that declares one is right by its declaration, which this family cannot check).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.challenge.draw import log_uniform, uniform, until

BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
STEPS = 400  # T at C5's ci budget
UNITS = 24  # seeds per sample (C5's ci budget)
CASES = 200


@dataclass(frozen=True)
class Seed:
    """One seed's curves, one per beta, and the parameters that made them."""

    curves: tuple[np.ndarray, ...]
    params: dict[str, float | str]


def curve(
    t: np.ndarray, floor: float, amp: float, speed: float, tau: float, p: float, e0: float, te: float
) -> np.ndarray:
    """Return F + A (1 + g t/tau)^-p + E e^(-t/t_e)."""
    return floor + amp * (1 + speed * t / tau) ** -p + e0 * np.exp(-t / te)


@dataclass(frozen=True)
class WorldSpec:
    """How beta enters a world: the speed factor g, the initial-phase growth, the floor's fall, the tail."""

    speed: tuple[float, float] = (1.0, 1.0)  # g = g_1/g_0 range (1: beta does not change the speed)
    l0_growth: tuple[float, float] = (0.0, 0.0)  # E_b = E (1 + k beta), k in this range
    floor_fall: tuple[float, float] = (0.0, 0.0)  # F_b = F (1 - f beta), f in this range (share of F)
    p: tuple[float, float] = (0.3, 1.2)  # the tail's exponent
    scatter: float = 0.05  # per-run log-normal scatter of F and A (offset), and of p (exponent) by half of it


def seed(rng: np.random.Generator, spec: WorldSpec, steps: int = STEPS) -> Seed:
    """Return one seed's five curves from ``spec``, with per-run scatter in offset and exponent."""
    t = np.arange(steps + 1, dtype=float)
    floor, amp = uniform(rng, 0.05, 0.3), uniform(rng, 0.5, 2.0)
    tau, p = log_uniform(rng, 2.0, 30.0), uniform(rng, *spec.p)
    e0, te = uniform(rng, 0.5, 5.0), uniform(rng, 2.0, 10.0)
    g, k, f = uniform(rng, *spec.speed), uniform(rng, *spec.l0_growth), uniform(rng, *spec.floor_fall)
    curves = []
    for b in BETAS:
        jitter = np.exp(spec.scatter * rng.standard_normal(3))
        curves.append(
            curve(
                t,
                floor * (1 - f * b) * jitter[0],
                amp * jitter[1],
                g**b,
                tau,
                p * float(np.exp(np.log(jitter[2]) / 2)),
                e0 * (1 + k * b),
                te,
            )
        )
    params: dict[str, float | str] = {"F": floor, "A": amp, "tau": tau, "p": p, "g": g, "l0_k": k, "floor_f": f}
    params["excess_T"] = float(amp * (1 + steps / tau) ** -p)
    return Seed(tuple(curves), params)


def adapt(s: Seed) -> dict[str, Any]:
    """Return the decisions' keyword arguments (``order_decision``/``faster_decision(betas, curves)``) for one seed."""
    return {"betas": list(BETAS), "curves": [c.copy() for c in s.curves]}


def ordered(s: Seed) -> bool:
    """Return whether a larger beta has the lower loss at every step of [T/4, T] (both readings: faster)."""
    late = np.array([c[c.size // 4 :] for c in s.curves])
    return bool(np.all(np.diff(late, axis=0) < 0))


def discordant_at_end(s: Seed) -> int:
    """Return how many of the ten pairs of betas have the larger beta higher at T."""
    end = [float(c[-1]) for c in s.curves]
    return sum(end[j] > end[i] for i in range(len(end)) for j in range(i + 1, len(end)))


def floors_reached(s: Seed) -> bool:
    """Return whether every run is within 10% of the smallest floor gap of its floor by T/2 (lower floor worlds)."""
    f = float(s.params["F"]) * float(s.params["floor_f"]) * 0.25  # the gap between adjacent betas' floors
    left = float(s.params["A"]) * (1 + (STEPS / 2) / float(s.params["tau"])) ** -float(s.params["p"])
    return bool(left <= 0.1 * f)


def floors_unreached(s: Seed) -> bool:
    """Return whether every run is still further from its floor at T than the floors are apart, and the seed ordered.

    The excess A (1 + T/tau)^-p left at T is at least the whole fall of the floors, F f: no run
    has reached its floor. Ordered: the level reading's answer ("lower at equal steps") is not in doubt.
    """
    unreached = float(s.params["F"]) * float(s.params["floor_f"]) <= float(s.params["excess_T"])
    return unreached and ordered(s)


FASTER = WorldSpec(speed=(1.5, 3.0))
FASTER_L0 = WorldSpec(speed=(1.5, 3.0), l0_growth=(0.5, 3.0))
FASTER_SCATTER = WorldSpec(speed=(1.5, 3.0), l0_growth=(0.0, 3.0), scatter=0.15)
L0_ONLY = WorldSpec(l0_growth=(0.5, 3.0))
FLOOR_REACHED = WorldSpec(floor_fall=(0.2, 0.8), p=(1.5, 3.0))
FLOOR_UNREACHED = WorldSpec(floor_fall=(0.4, 0.9), p=(0.3, 0.8))

_GRID = "F 0.05-0.3, A 0.5-2, tau 2-30, E 0.5-5, t_e 2-10, T = 400, betas 0..1"
_WHY = {
    "faster": "g_b = g^beta (g 1.5-3) runs the same descent in fewer steps, as a larger step does; the seed's curves "
    "are ordered at every step of [T/4, T]: lower at equal steps and a common level sooner",
    "L0": "only the initial phase E_b (hence L_0) grows with beta; the tails are one world's, so after the initial "
    "phase the runs are not ordered by beta: not faster in either reading",
    "floor reached": "the floor falls with beta but the approach does not change (g = 1); every run is at its floor "
    "by T/2, so all reach their limits at the same step: a lower limit, not a faster convergence",
    "floor unreached": "the floor falls with beta, the approach does not (g = 1), and no floor is reached within T: "
    "the level reading says faster, the rate reading says not; the words leave it open",
}


def seed_family(
    name: str, expect: Expect, spec: WorldSpec, keep: Callable[[Seed], bool], grid: str, why: str
) -> Family:
    """Return a per-seed family ("order"): one seed's five curves, kept where ``keep`` holds."""

    def generate(rng: np.random.Generator) -> Case:
        s = until(rng, lambda r: seed(r, spec), keep)
        return Case(s.params, adapt(s))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def sample_family(
    name: str, expect: Expect, spec: WorldSpec, keep: Callable[[Seed], bool], grid: str, why: str
) -> Family:
    """Return a mean-rule family ("beta>0 vs beta=0"): ``UNITS`` seeds of one world, each kept where ``keep`` holds."""

    def generate(rng: np.random.Generator) -> Case:
        seeds = [until(rng, lambda r: seed(r, spec), keep) for _ in range(UNITS)]
        params = {k: v for k, v in seeds[0].params.items() if k in ("g", "l0_k", "floor_f")}
        return Case(params, {"units": [adapt(s) for s in seeds]})

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def order_families() -> tuple[Family, ...]:
    """Return the challenge families of C5 "order" (one seed, every beta)."""
    return (
        seed_family(
            "faster, power-law tails", "pass", FASTER, ordered, f"{_GRID}; g 1.5-3; scatter 5%", _WHY["faster"]
        ),
        seed_family(
            "faster, L_0 rising with beta",
            "pass",
            FASTER_L0,
            ordered,
            f"{_GRID}; g 1.5-3, E_b x (1 + 0.5-3 beta)",
            _WHY["faster"] + "; L_0 rises with beta, as on the claim's runs",
        ),
        seed_family(
            "faster, 15% per-run scatter",
            "pass",
            FASTER_SCATTER,
            ordered,
            f"{_GRID}; g 1.5-3; scatter 15%",
            _WHY["faster"] + "; the offsets and exponents scatter by 15% (7.5%) run to run",
        ),
        seed_family(
            "L_0 only",
            "fail",
            L0_ONLY,
            lambda s: discordant_at_end(s) >= 2,
            f"{_GRID}; g = 1, E_b x (1 + 0.5-3 beta); kept with >= 2 of 10 pairs out of order at T",
            _WHY["L0"],
        ),
        seed_family(
            "lower floor only, reached within T",
            "fail",
            FLOOR_REACHED,
            floors_reached,
            f"{_GRID}; p 1.5-3, F_b = F (1 - 0.2-0.8 beta); kept where every run is at its floor by T/2",
            _WHY["floor reached"],
        ),
        seed_family(
            "lower floor only, not reached within T (zone)",
            "zone",
            FLOOR_UNREACHED,
            floors_unreached,
            f"{_GRID}; p 0.3-0.8, F_b = F (1 - 0.4-0.9 beta); excess at T >= the floors' fall; ordered",
            _WHY["floor unreached"],
        ),
    )


def faster_families() -> tuple[Family, ...]:
    """Return the challenge families of C5 "beta>0 vs beta=0" (mean over 24 seeds)."""
    return (
        sample_family(
            "faster, power-law tails", "pass", FASTER, ordered, f"{_GRID}; g 1.5-3; 24 seeds", _WHY["faster"]
        ),
        sample_family(
            "faster, L_0 rising with beta",
            "pass",
            FASTER_L0,
            ordered,
            f"{_GRID}; g 1.5-3, E_b rising; 24 seeds",
            _WHY["faster"] + "; L_0 rises with beta",
        ),
        sample_family(
            "L_0 only",
            "fail",
            L0_ONLY,
            lambda s: True,
            f"{_GRID}; g = 1, E_b rising with beta; 24 seeds",
            _WHY["L0"] + "; over seeds the advantage of any beta over 0 is 0 in expectation",
        ),
        sample_family(
            "lower floor only, reached within T",
            "fail",
            FLOOR_REACHED,
            floors_reached,
            f"{_GRID}; p 1.5-3, floors falling, reached by T/2; 24 seeds",
            _WHY["floor reached"],
        ),
        sample_family(
            "lower floor only, not reached within T (zone)",
            "zone",
            FLOOR_UNREACHED,
            floors_unreached,
            f"{_GRID}; p 0.3-0.8, floors falling, excess at T >= their fall, ordered; 24 seeds",
            _WHY["floor unreached"],
        ),
    )
