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

The steeper reading's families (``steeper_order_families``, ``steeper_faster_families``) were written by an
outside referee, 7 Dec 2026, from the claim's words before seeing the decision. "Faster" there is "steeper": once
the fast initial phase is over, the faster run nears its own floor F_b at the higher rate r_b(t) = -d log(L_b -
F_b)/dt; significantly: at least 1/0.9 times beta = 0's. The rates are read from each run's terms (``Run``), from
t_s, where the fast terms' share of every run's descent has fallen to 1% (t_s <= T/4, or the seed is redrawn), to
T, both at equal steps and at equal remaining excess L - F_b. For an exponential approach the two agree (r_b = c_b);
for a power-law tail they do not: r_b(t) = p_b / (t + tau/g_b) at step t, p_b g_b/tau (x/A_b)^(1/p_b) at excess x.
So the lower reading's worlds re-read: a time rescaling g^beta of a power-law tail is steeper by g at equal excess
but by (t + tau)/(t + tau/g) <= 1.049 at T at equal steps (zone: the words fix neither comparison; where a seed is
out of rate order in both, fail); L_0 only and a lower floor, reached or not, leave the approach as it was (fail).
New worlds are exponential approaches, c_b = c_0 s^beta with scatter, where the answer is the same either way:
steeper (towards a lower or a higher floor, with L_0 rising, just past the margin: pass), or not (the same rate
towards lower floors, a rate short of the margin at small beta, beta = 0.25 as beta = 0, reversed, a fast phase
that grows with beta, beta moving weight into a slow mode: fail). A per-seed pass keeps seeds whose realised rates
rise by >= 5% a step of beta at every slow step; a per-seed fail keeps the same two pairs (or a pair by >= 10%) out
of rate order at every slow step, so that any rate read over a window of the slow phase is out of order too; a
24-seed sample is kept where each beta's mean ratio to beta = 0 is 3% clear of 1/0.9, on its side, at every step.
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
class Term:
    """One decaying term of a run's excess over its floor: A e^(-r t) (power 0) or A (1 + r t)^-power."""

    amp: float
    rate: float
    power: float = 0.0

    def value(self, t: np.ndarray) -> np.ndarray:
        """Return the term at steps ``t``."""
        if self.power:
            return self.amp * (1 + self.rate * t) ** -self.power
        return self.amp * np.exp(-self.rate * t)

    def slope(self, t: np.ndarray) -> np.ndarray:
        """Return minus its derivative at steps ``t`` (positive: the term falls)."""
        if self.power:
            return self.amp * self.power * self.rate * (1 + self.rate * t) ** -(self.power + 1)
        return self.amp * self.rate * np.exp(-self.rate * t)


@dataclass(frozen=True)
class Run:
    """One run's realised curve: its floor, the terms of its slow phase, and those of its fast initial phase."""

    floor: float
    slow: tuple[Term, ...]
    fast: tuple[Term, ...]

    def curve(self, t: np.ndarray) -> np.ndarray:
        """Return L(t) = floor + every term."""
        return self.floor + sum((term.value(t) for term in (*self.slow, *self.fast)), np.zeros_like(t))


@dataclass(frozen=True)
class Seed:
    """One seed's curves, one per beta, and the parameters that made them."""

    curves: tuple[np.ndarray, ...]
    params: dict[str, float | str]
    runs: tuple[Run, ...] = ()  # each run's realised terms (the steeper reading's rates are read from them)


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
    curves, runs = [], []
    for b in BETAS:
        jitter = np.exp(spec.scatter * rng.standard_normal(3))
        args = (floor * (1 - f * b) * jitter[0], amp * jitter[1], g**b, tau, p * float(np.exp(np.log(jitter[2]) / 2)))
        curves.append(curve(t, *args, e0 * (1 + k * b), te))
        runs.append(Run(args[0], (Term(args[1], args[2] / tau, args[4]),), (Term(e0 * (1 + k * b), 1 / te),)))
    params: dict[str, float | str] = {"F": floor, "A": amp, "tau": tau, "p": p, "g": g, "l0_k": k, "floor_f": f}
    params["excess_T"] = float(amp * (1 + steps / tau) ** -p)
    return Seed(tuple(curves), params, tuple(runs))


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


# --- The steeper reading: how fast each run nears its own floor once the fast initial phase is over ---------------

MARGIN = 1 / 0.9  # "significantly": a rate at least 1/0.9 times beta = 0's (10% fewer steps per e-fold)
CLEAR = 1.03  # a realised sample's mean ratio is kept at least 3% clear of the margin, on its side
FAST_SHARE = 0.01  # the fast phase is over once its share of every run's descent is at most 1%
LEVELS = 25  # common excess levels the equal-excess rates are read at
STEEPER_CASES = 50  # cases per 24-seed family


def slow_window(s: Seed, steps: int = STEPS) -> np.ndarray | None:
    """Return the steps t_s..T after the fast phase (its terms' share of every run's descent <= 1%), None if t_s > T/4.

    The share is read from the runs' terms: the fast terms' slope against the slow terms' at every step.
    """
    t = np.arange(steps + 1, dtype=float)
    over = np.ones(t.size, dtype=bool)
    for run in s.runs:
        fast = sum((x.slope(t) for x in run.fast), np.zeros_like(t))
        slow = sum((x.slope(t) for x in run.slow), np.zeros_like(t))
        over &= fast <= FAST_SHARE * slow
    late = np.flatnonzero(~over)
    start = int(late[-1]) + 1 if late.size else 0
    return t[start:] if start <= steps // 4 else None


def step_rates(s: Seed, t: np.ndarray) -> np.ndarray:
    """Return each run's rate of approach to its own floor, -d log(L - F)/dt, at steps ``t`` (5 x len(t)).

    Read from the terms (no L - F subtraction): the realised curve's rate, its fast terms' residue included.
    """
    rates = []
    for run in s.runs:
        terms = (*run.slow, *run.fast)
        rates.append(sum(x.slope(t) for x in terms) / sum(x.value(t) for x in terms))
    return np.array(rates)


def level_rates(s: Seed, t: np.ndarray) -> np.ndarray | None:
    """Return each run's rate at ``LEVELS`` common excess levels L - F inside every run's slow window (5 x LEVELS).

    The rates compared at equal remaining approach rather than at equal steps; None where the runs' excesses over
    the window share no level.
    """
    rates = step_rates(s, t)
    logs = [np.log(sum(x.value(t) for x in (*run.slow, *run.fast))) for run in s.runs]
    low, high = max(float(x.min()) for x in logs), min(float(x.max()) for x in logs)
    if not high > low:
        return None
    levels = np.linspace(low, high, LEVELS)
    return np.array([np.interp(levels, x[::-1], r[::-1]) for x, r in zip(logs, rates, strict=True)])


def out_of_order(rates: np.ndarray) -> np.ndarray:
    """Return, for each of the ten pairs of betas (rows) and each column, whether the larger beta has the lower rate."""
    n = rates.shape[0]
    return np.array([rates[j] < rates[i] for i in range(n) for j in range(i + 1, n)])


def discordant(rates: np.ndarray) -> np.ndarray:
    """Return, per column, how many of the ten pairs of betas have the larger beta at the lower rate."""
    return np.asarray(out_of_order(rates).sum(axis=0))


def always_discordant(rates: np.ndarray) -> int:
    """Return how many pairs of betas have the larger beta at the lower rate in every column.

    Such a pair stays out of order in any average of the rates over the columns (a rate read over a window).
    """
    return int(np.all(out_of_order(rates), axis=1).sum())


def rates_of(s: Seed) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Return the seed's rates at every step of its slow window and at its common levels; None without a window."""
    t = slow_window(s)
    if t is None:
        return None
    return step_rates(s, t), level_rates(s, t)


def steeper_ordered(s: Seed, by: float = 1.05, levels: bool = False) -> bool:
    """Return whether each larger beta's rate is at least ``by`` times the next smaller's, at every slow step.

    With ``levels``, at every common excess level too (the two comparisons differ for power-law tails).
    """
    both = rates_of(s)
    if both is None:
        return False
    at_steps, at_levels = both
    ok = bool(np.all(at_steps[1:] >= by * at_steps[:-1]))
    if levels:
        ok = ok and at_levels is not None and bool(np.all(at_levels[1:] >= by * at_levels[:-1]))
    return ok


def steeper_disordered(s: Seed, pairs: int = 2, levels: bool = True) -> bool:
    """Return whether the same ``pairs`` (or more) of the ten pairs are out of rate order at every slow step.

    With ``levels``, at every common excess level too. The same pairs at every step: out of order in any rate read
    over a window of the slow phase too.
    """
    both = rates_of(s)
    if both is None:
        return False
    at_steps, at_levels = both
    ok = always_discordant(at_steps) >= pairs
    if levels:
        ok = ok and at_levels is not None and always_discordant(at_levels) >= pairs
    return ok


def swapped(s: Seed, by: float = 1.1) -> bool:
    """Return whether some larger beta's rate is at most 1/``by`` of one smaller beta's at every slow step."""
    both = rates_of(s)
    if both is None:
        return False
    r = both[0]
    return any(bool(np.all(r[i] >= by * r[j])) for i in range(len(r)) for j in range(i + 1, len(r)))


def readings_disagree(s: Seed) -> bool:
    """Return whether the seed is ordered by rate at every common excess level but not at the end of its window.

    A time-rescaled power-law tail: at equal remaining approach the larger beta is steeper (by g^(1/4) a step of
    beta), at equal late steps the rates are the exponents' p_b / (t + tau / g_b) ~ p_b / t, scattered run to run.
    """
    both = rates_of(s)
    if both is None:
        return False
    at_steps, at_levels = both
    if at_levels is None:
        return False
    return bool(np.all(at_levels[1:] > at_levels[:-1])) and int(discordant(at_steps[:, -1:])[0]) >= 2


def mean_ratios(seeds: list[Seed]) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the mean over seeds of each beta > 0's rate over beta = 0's (4 x points), at equal steps and levels.

    Steps: the slow windows' common steps (the latest t_s to T); levels: the level index inside each seed's
    common range (None if a seed has none).
    """
    windows = [slow_window(s) for s in seeds]
    if any(w is None for w in windows):
        raise ValueError("a seed without a slow window")
    start = max(float(w[0]) for w in windows if w is not None)
    t = np.arange(start, STEPS + 1, dtype=float)
    steps = np.mean([(r := step_rates(s, t))[1:] / r[0] for s in seeds], axis=0)
    per_level = [level_rates(s, w) for s, w in zip(seeds, windows, strict=True) if w is not None]
    if any(x is None for x in per_level):
        return steps, None
    return steps, np.mean([x[1:] / x[0] for x in per_level if x is not None], axis=0)


def significant(seeds: list[Seed], levels: bool = False) -> bool:
    """Return whether every beta > 0's mean rate ratio is at least 1.03 x 1/0.9 at every slow step (and level)."""
    steps, at_levels = mean_ratios(seeds)
    ok = bool(steps.min() >= CLEAR * MARGIN)
    if levels:
        ok = ok and at_levels is not None and bool(at_levels.min() >= CLEAR * MARGIN)
    return ok


def short_of(seeds: list[Seed], levels: bool = False) -> bool:
    """Return whether some beta > 0's mean rate ratio is at most 1/0.9 / 1.03 at every slow step (and level)."""
    steps, at_levels = mean_ratios(seeds)
    ok = bool(np.any(steps.max(axis=1) <= MARGIN / CLEAR))
    if levels:
        ok = ok and at_levels is not None and bool(np.any(at_levels.max(axis=1) <= MARGIN / CLEAR))
    return ok


def split_readings(seeds: list[Seed]) -> bool:
    """Return whether the sample is significant at equal levels but short of the margin at step T (both readings)."""
    steps, at_levels = mean_ratios(seeds)
    return (
        at_levels is not None and bool(at_levels.min() >= CLEAR * MARGIN) and bool(steps[:, -1].max() <= MARGIN / CLEAR)
    )


@dataclass(frozen=True)
class SteepSpec:
    """An exponential-approach world: L_b = F_b + A_b [(1 - w_b) e^(-m c_b t) + w_b e^(-c_b t)] + E_b e^(-t / t_e,b).

    c_b = c_0 s^lever(beta) with c_0 = 1 / (beta = 0's e-fold steps); one slow mode (w_b = 1) unless ``weight``
    is set. Per-run log-normal scatter ``scatter`` in F, A and c. Every term falls: the curves descend.
    """

    efold: tuple[float, float] = (50.0, 150.0)  # beta = 0's steps per e-fold of its slow approach, 1 / c_0
    steep: tuple[float, float] = (1.0, 1.0)  # s = c_1 / c_0 (1: beta does not change the rate)
    lever: str = "beta"  # "beta": c_b = c_0 s^beta; "late": s^max(0, (beta - 1/4) / (3/4)): beta = 1/4 as beta = 0
    floor_change: tuple[float, float] = (0.0, 0.0)  # F_b = F (1 + f beta) (f < 0: the floor falls)
    amp_change: tuple[float, float] = (0.0, 0.0)  # A_b = A (1 + a beta)
    l0_growth: tuple[float, float] = (0.0, 0.0)  # E_b = E (1 + k beta)
    fast_growth: tuple[float, float] = (0.0, 0.0)  # t_e,b = t_e (1 + n beta): the fast phase lasts longer
    weight: tuple[float, float] | None = None  # (w_0, w_1): the slow mode's weight at beta 0 and 1, linear between
    mode: tuple[float, float] = (4.0, 8.0)  # m: the other mode's rate over the slow mode's (with ``weight``)
    scatter: float = 0.05


def steep_seed(rng: np.random.Generator, spec: SteepSpec, steps: int = STEPS) -> Seed:
    """Return one seed's five curves from the exponential-approach world ``spec``."""
    t = np.arange(steps + 1, dtype=float)
    floor, amp = uniform(rng, 0.05, 0.3), uniform(rng, 0.5, 2.0)
    c0 = 1 / uniform(rng, *spec.efold)
    e0, te = uniform(rng, 0.5, 5.0), uniform(rng, 1.0, 4.0)
    s, f, a = uniform(rng, *spec.steep), uniform(rng, *spec.floor_change), uniform(rng, *spec.amp_change)
    k, n, m = uniform(rng, *spec.l0_growth), uniform(rng, *spec.fast_growth), uniform(rng, *spec.mode)
    curves, runs = [], []
    for b in BETAS:
        jitter = np.exp(spec.scatter * rng.standard_normal(3))
        lever = b if spec.lever == "beta" else max(0.0, (b - 0.25) / 0.75)
        rate, amp_b = c0 * s**lever * jitter[2], amp * (1 + a * b) * jitter[1]
        if spec.weight is None:
            slow: tuple[Term, ...] = (Term(amp_b, rate),)
        else:
            w = spec.weight[0] + (spec.weight[1] - spec.weight[0]) * b
            slow = (Term(amp_b * (1 - w), m * rate), Term(amp_b * w, rate))
        run = Run(floor * (1 + f * b) * jitter[0], slow, (Term(e0 * (1 + k * b), 1 / (te * (1 + n * b))),))
        runs.append(run)
        curves.append(run.curve(t))
    params: dict[str, float | str] = {"F": floor, "A": amp, "efold": 1 / c0, "s": s, "floor_f": f, "amp_a": a}
    params.update({"E": e0, "t_e": te, "l0_k": k, "fast_n": n, "m": m})
    return Seed(tuple(curves), params, tuple(runs))


def crosses(s: Seed) -> bool:
    """Return whether beta = 1's curve is below beta = 0's when the slow phase starts and above it at T."""
    t = slow_window(s)
    if t is None:
        return False
    start = int(t[0])
    return bool(s.curves[-1][start] < s.curves[0][start] and s.curves[-1][-1] > s.curves[0][-1])


def has_window(s: Seed) -> bool:
    """Return whether the seed's fast phase is over by T/4 (every kept seed of the steeper families)."""
    return slow_window(s) is not None


def steeper_sample_family(
    name: str,
    expect: Expect,
    make: Callable[[np.random.Generator], Seed],
    keep: Callable[[Seed], bool],
    sample_keep: Callable[[list[Seed]], bool],
    grid: str,
    why: str,
) -> Family:
    """Return a "steeper: beta>0 vs beta=0" family: ``UNITS`` seeds kept by ``keep``, the sample by ``sample_keep``."""

    def draw(rng: np.random.Generator) -> list[Seed]:
        return [until(rng, make, keep) for _ in range(UNITS)]

    def generate(rng: np.random.Generator) -> Case:
        seeds = until(rng, draw, sample_keep)
        shown = ("g", "s", "l0_k", "floor_f", "amp_a", "fast_n")
        params = {k: v for k, v in seeds[0].params.items() if k in shown}
        return Case(params, {"units": [adapt(s) for s in seeds]})

    return Family(name, expect, generate, STEEPER_CASES, grid, why, origin="challenge")


def steeper_seed_family(
    name: str,
    expect: Expect,
    make: Callable[[np.random.Generator], Seed],
    keep: Callable[[Seed], bool],
    grid: str,
    why: str,
) -> Family:
    """Return a "steeper: order" family: one seed's five curves, kept where ``keep`` holds."""

    def generate(rng: np.random.Generator) -> Case:
        s = until(rng, make, keep)
        return Case(s.params, adapt(s))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def _power(spec: WorldSpec) -> Callable[[np.random.Generator], Seed]:
    """Return a drawer of the power-law-tail world ``spec`` (the lower reading's worlds, drawn the same way)."""
    return lambda rng: seed(rng, spec)


def _exp(spec: SteepSpec) -> Callable[[np.random.Generator], Seed]:
    """Return a drawer of the exponential-approach world ``spec``."""
    return lambda rng: steep_seed(rng, spec)


STEEP = SteepSpec(steep=(2.2, 4.0))
STEEP_L0 = SteepSpec(steep=(2.2, 4.0), l0_growth=(0.5, 3.0))
STEEP_HIGHER = SteepSpec(efold=(50.0, 100.0), steep=(2.2, 4.0), floor_change=(0.2, 1.0))
STEEP_SCATTER = SteepSpec(steep=(2.2, 4.0), scatter=0.10)
STEEP_SWAPPED = SteepSpec(steep=(1.5, 3.0), scatter=0.15)
STEEP_JUST = SteepSpec(steep=(1.8, 2.0))
STEEP_SMALL = SteepSpec(steep=(1.15, 1.22))
STEEP_LATE = SteepSpec(steep=(2.2, 4.0), lever="late")
SAME_LOWER = SteepSpec(floor_change=(-0.9, -0.4), l0_growth=(0.5, 3.0))
SHALLOWER = SteepSpec(efold=(40.0, 100.0), steep=(1 / 3, 1 / 1.5), floor_change=(-0.8, -0.4), amp_change=(-0.7, -0.4))
FAST_GROWS = SteepSpec(l0_growth=(1.0, 4.0), fast_growth=(0.5, 1.5))
SLOW_WEIGHT = SteepSpec(efold=(100.0, 200.0), weight=(0.1, 0.7), mode=(3.0, 5.0), l0_growth=(0.5, 3.0))

_EXP_GRID = "F 0.05-0.3, A 0.5-2, 1/c_0 50-150 steps, E 0.5-5, t_e 1-4, scatter 5% in F, A, c; T = 400"
_RATE = (
    "a run's rate of approach to its own floor is r_b(t) = -d log(L_b - F_b)/dt, read once the fast phase's "
    "share of every run's descent is <= 1% (t_s <= T/4)"
)
_S_WHY = {
    "power rescaled": "the tail F + A (1 + g_b t/tau)^-p has r_b(t) = p_b / (t + tau/g_b): a time rescaling "
    "g_b = g^beta raises the rate at equal steps by (t + tau)/(t + tau/g) <= 130/110 = 1.18 at T/4 and "
    "<= 430/410 = 1.049 at T (tau <= 30, g <= 3), the p_b scatter (2.5%) deciding its order at late steps; at "
    "equal remaining excess x, r_b = p g_b/tau (x/A_b)^(1/p), g^(1/4) = 1.11-1.32 a quarter of beta, the A_b "
    "scatter (5%, to the power 1/p) deciding its order at small p",
    "same tail": "beta does not enter the tail (g = 1): r_b(t) = p_b / (t + tau) at equal steps and "
    "p_b/tau (x/A_b)^(1/p_b) at equal excess, ordered only by the per-run scatter of p (2.5%) and A (5%); over seeds "
    "E[r_b/r_0] = exp(sigma^2), sigma the log-rate's scatter (<= 0.23 at p = 0.3): 1.00 at equal steps, <= 1.04 at "
    "equal excess (3000 seeds), short of 1/0.9 for every beta",
    "exp steeper": "c_b = c_0 s^beta, so r_b = c_b after the fast phase at every step and every excess alike",
}


def steeper_order_families() -> tuple[Family, ...]:
    """Return the challenge families of C5 "steeper: order" (one seed, every beta, the rate reading)."""
    pl = f"{_GRID}; kept with t_s <= T/4"
    return (
        steeper_seed_family(
            "steeper: faster by a time rescaling, not ordered by rate either way",
            "fail",
            _power(FASTER),
            steeper_disordered,
            f"{pl}; g 1.5-3; >= 2 of 10 pairs out of rate order at every slow step and every common excess level",
            f"{_RATE}; {_S_WHY['power rescaled']}. Kept where >= 2 pairs are out of order at every step of [t_s, T] "
            "and at every common excess level: in neither comparison is this seed's larger beta the steeper",
        ),
        steeper_seed_family(
            "steeper: faster by a time rescaling, ordered at equal excess only (zone)",
            "zone",
            _power(FASTER),
            readings_disagree,
            f"{pl}; g 1.5-3; ordered at every common excess level, >= 2 pairs out of order at T",
            f"{_RATE}; {_S_WHY['power rescaled']}. Kept where the rates are ordered at every common excess level but "
            ">= 2 pairs are out of order at step T: at equal remaining approach the larger beta is steeper, at equal "
            "steps it is not; the words ('at the higher rate', 'steps per e-fold of the remaining approach') do not "
            "say which comparison, and for a power-law tail the two differ by g",
        ),
        steeper_seed_family(
            "steeper: faster by a time rescaling with 15% scatter, not ordered by rate",
            "fail",
            _power(FASTER_SCATTER),
            steeper_disordered,
            f"{pl}; g 1.5-3, E rising with beta; scatter 15%; >= 2 pairs out of rate order at every step and level",
            f"{_RATE}; {_S_WHY['power rescaled']} (15%, 7.5% here). Kept where >= 2 pairs are out of order at every "
            "slow step and level: not ordered by steepness in either comparison",
        ),
        steeper_seed_family(
            "steeper: L_0 only",
            "fail",
            _power(L0_ONLY),
            steeper_disordered,
            f"{pl}; g = 1, E_b x (1 + 0.5-3 beta); >= 2 pairs out of rate order at every step and level",
            f"{_RATE}; only L_0 grows with beta (a higher start is irrelevant); {_S_WHY['same tail']}. Kept where "
            ">= 2 pairs are out of order at every slow step and level",
        ),
        steeper_seed_family(
            "steeper: lower floor only, reached within T",
            "fail",
            _power(FLOOR_REACHED),
            lambda s: floors_reached(s) and steeper_disordered(s),
            f"{pl}; p 1.5-3, F_b = F (1 - 0.2-0.8 beta), every run at its floor by T/2; >= 2 pairs out of rate order",
            f"{_RATE}; a floor F_b does not enter L_b - F_b: a lower floor alone is not steeper; {_S_WHY['same tail']}",
        ),
        steeper_seed_family(
            "steeper: lower floor only, not reached within T",
            "fail",
            _power(FLOOR_UNREACHED),
            lambda s: floors_unreached(s) and steeper_disordered(s),
            f"{pl}; p 0.3-0.8, F_b = F (1 - 0.4-0.9 beta), excess at T >= the floors' fall, curves ordered (lower); "
            ">= 2 pairs out of rate order",
            f"{_RATE}; the floor falls, the approach A (1 + t/tau)^-p does not change with beta: a lower curve whose "
            f"floor is not reached, not a steeper one (the lower reading's zone, settled by the rate reading); "
            f"{_S_WHY['same tail']}",
        ),
        steeper_seed_family(
            "steeper: exponential approaches, rate rising with beta",
            "pass",
            _exp(STEEP),
            steeper_ordered,
            f"{_EXP_GRID}; s 2.2-4; each larger beta's rate >= 1.05 x the next at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}, s^(1/4) = 1.22-1.41 a quarter of beta. Kept where the realised rates "
            "(after the 5% scatter in c) rise by >= 5% a step of beta at every step of [t_s, T]",
        ),
        steeper_seed_family(
            "steeper: rate rising with beta, L_0 rising with beta",
            "pass",
            _exp(STEEP_L0),
            steeper_ordered,
            f"{_EXP_GRID}; s 2.2-4, E_b x (1 + 0.5-3 beta); rates ordered by >= 5% at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}; the fast phase (hence L_0) also grows with beta, as on the claim's "
            "runs, and is over by t_s. Kept where the realised rates rise by >= 5% a step of beta at every slow step",
        ),
        steeper_seed_family(
            "steeper: rate rising with beta towards a higher floor (curves cross)",
            "pass",
            _exp(STEEP_HIGHER),
            lambda s: steeper_ordered(s) and crosses(s),
            f"{_EXP_GRID}; 1/c_0 50-100, s 2.2-4, F_b = F (1 + 0.2-1 beta); beta = 1 below beta = 0 at t_s, above at T",
            f"{_RATE}; {_S_WHY['exp steeper']}; the floor rises with beta, so beta = 1 ends above beta = 0: steeper, "
            "not lower. Kept where the rates rise by >= 5% a step of beta at every slow step and the curves cross",
        ),
        steeper_seed_family(
            "steeper: rate rising with beta, 10% per-run scatter, still ordered",
            "pass",
            _exp(STEEP_SCATTER),
            steeper_ordered,
            f"{_EXP_GRID}; s 2.2-4; scatter 10%; rates ordered by >= 5% at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}; the rates scatter by 10% run to run. Kept where the realised rates "
            "still rise by >= 5% a step of beta at every slow step",
        ),
        steeper_seed_family(
            "steeper: rate rising with beta, scatter swaps a pair",
            "fail",
            _exp(STEEP_SWAPPED),
            swapped,
            f"{_EXP_GRID}; s 1.5-3; scatter 15%; some larger beta's rate <= 1/1.1 of a smaller's at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}, but the rates scatter by 15% run to run. Kept where in this seed some "
            "larger beta's realised rate is at least 10% below a smaller beta's at every slow step: this seed's runs "
            "are not ordered by steepness",
        ),
        steeper_seed_family(
            "steeper: same rate, lower floors and L_0 rising (a lower curve)",
            "fail",
            _exp(SAME_LOWER),
            lambda s: ordered(s) and steeper_disordered(s),
            f"{_EXP_GRID}; s = 1, F_b = F (1 - 0.4-0.9 beta), E_b x (1 + 0.5-3 beta); curves ordered (lower) on "
            "[T/4, T]; >= 2 pairs out of rate order at every slow step",
            f"{_RATE}; c_b = c_0 for every beta (5% scatter): the larger beta starts higher and ends lower, at the "
            "same rate. Kept where the curves are lower with beta at every step of [T/4, T] and >= 2 pairs are out "
            "of rate order at every slow step: a lower curve, not a steeper one",
        ),
        steeper_seed_family(
            "steeper: reversed, shallower with beta but lower",
            "fail",
            _exp(SHALLOWER),
            lambda s: ordered(s) and swapped(s),
            f"{_EXP_GRID}; 1/c_0 40-100, c_b = c_0 s^-beta (s 1.5-3), F_b, A_b x (1 - 0.4-0.8, 0.4-0.7 beta); "
            "curves ordered (lower) on [T/4, T]",
            f"{_RATE}; c_b = c_0 s^-beta: the larger beta nears its floor more slowly (1/s^(1/4) = 0.76-0.90 a quarter "
            "of beta), while its floor and amplitude fall enough to keep its curve lower at every step of [T/4, T]",
        ),
        steeper_seed_family(
            "steeper: fast phase grows with beta, same slow rate",
            "fail",
            _exp(FAST_GROWS),
            steeper_disordered,
            f"{_EXP_GRID}; s = 1, E_b x (1 + 1-4 beta), t_e,b = t_e (1 + 0.5-1.5 beta); >= 2 pairs out of rate order",
            f"{_RATE}; the fast phase is up to 5x larger and 2.5x longer at beta = 1, the slow rate c_b = c_0 the "
            "same (5% scatter). Kept where >= 2 pairs are out of rate order at every step after the longest fast "
            "phase: a bigger fast phase, not a steeper approach",
        ),
        steeper_seed_family(
            "steeper: two modes, beta moves weight into the slow mode",
            "fail",
            _exp(SLOW_WEIGHT),
            steeper_disordered,
            f"{_EXP_GRID}; 1/c 100-200, L = F + A [(1 - w_b) e^(-m c t) + w_b e^(-c t)], m 3-5, w_b = 0.1 + 0.6 beta, "
            "E rising with beta; >= 2 pairs out of rate order at every slow step",
            f"{_RATE}; r_b(t) is the modes' rates m c and c weighted by their current shares, so a larger slow weight "
            "w_b gives a lower rate at every step until both are c: never steeper. Kept where >= 2 pairs are out of "
            "rate order at every slow step",
        ),
    )


def steeper_faster_families() -> tuple[Family, ...]:
    """Return the challenge families of C5 "steeper: beta>0 vs beta=0" (24 seeds, the rate reading)."""
    pl = f"{_GRID}; t_s <= T/4; 24 seeds"
    return (
        steeper_sample_family(
            "steeper: faster by a time rescaling, power-law tails (zone)",
            "zone",
            _power(FASTER),
            has_window,
            lambda ss: split_readings(ss),
            f"{pl}; g 1.5-3; sample kept where the mean ratio is >= 1.03/0.9 at every common level, <= 1/(1.03 x 0.9) "
            "at T",
            f"{_RATE}; {_S_WHY['power rescaled']}. Over 24 seeds the mean rate ratio to beta = 0 is 1.00-1.06 at "
            "equal steps from T/4 on and g^beta (1.2-2.2) at equal excess: significant at equal remaining approach, "
            "not at equal steps; the words do not say which, and neither a longer T (the step ratio tends to 1, the "
            "excess ratio stays g) nor this one reconciles them",
        ),
        steeper_sample_family(
            "steeper: faster by a time rescaling, L_0 rising (zone)",
            "zone",
            _power(FASTER_L0),
            has_window,
            lambda ss: split_readings(ss),
            f"{pl}; g 1.5-3, E_b x (1 + 0.5-3 beta); kept as the zone above",
            f"{_RATE}; {_S_WHY['power rescaled']}; L_0 rising is irrelevant. Step and excess readings split as in "
            "the family above",
        ),
        steeper_sample_family(
            "steeper: L_0 only",
            "fail",
            _power(L0_ONLY),
            has_window,
            lambda ss: short_of(ss, levels=True),
            f"{pl}; g = 1, E_b rising; kept where some beta's mean ratio <= 1/(1.03 x 0.9) at every step and level",
            f"{_RATE}; only L_0 grows with beta; {_S_WHY['same tail']}",
        ),
        steeper_sample_family(
            "steeper: lower floor only, reached within T",
            "fail",
            _power(FLOOR_REACHED),
            lambda s: floors_reached(s) and has_window(s),
            lambda ss: short_of(ss, levels=True),
            f"{pl}; p 1.5-3, floors falling, reached by T/2; some beta short of the margin at every step and level",
            f"{_RATE}; a lower floor alone is not steeper; {_S_WHY['same tail']}",
        ),
        steeper_sample_family(
            "steeper: lower floor only, not reached within T",
            "fail",
            _power(FLOOR_UNREACHED),
            lambda s: floors_unreached(s) and has_window(s),
            lambda ss: short_of(ss, levels=True),
            f"{pl}; p 0.3-0.8, floors falling, excess at T >= their fall, curves lower with beta; some beta short",
            f"{_RATE}; a lower curve towards an unreached lower floor, the approach unchanged (the lower reading's "
            f"zone, settled by the rate reading); {_S_WHY['same tail']}, except that keeping curves lower with beta "
            "keeps smaller A_b at larger beta, raising the equal-excess mean ratio to 1.04-1.05 (beta 0.25) and "
            "1.10-1.12 (beta 1) over 3000 seeds: beta 0.25 stays >= 5% short at every level, every beta at every step",
        ),
        steeper_sample_family(
            "steeper: exponential approaches, rate rising with beta",
            "pass",
            _exp(STEEP),
            has_window,
            significant,
            f"{_EXP_GRID}; s 2.2-4; 24 seeds; every beta's mean ratio >= 1.03/0.9 at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}: beta = 0.25's ratio s^(1/4) >= 1.22 = 1.10 x 1/0.9, the others more",
        ),
        steeper_sample_family(
            "steeper: rate rising with beta, L_0 rising with beta",
            "pass",
            _exp(STEEP_L0),
            has_window,
            significant,
            f"{_EXP_GRID}; s 2.2-4, E_b x (1 + 0.5-3 beta); 24 seeds; every beta significant at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}: s^(1/4) >= 1.22; the fast phase grows with beta too (irrelevant)",
        ),
        steeper_sample_family(
            "steeper: rate rising with beta towards higher floors",
            "pass",
            _exp(STEEP_HIGHER),
            has_window,
            significant,
            f"{_EXP_GRID}; 1/c_0 50-100, s 2.2-4, F_b = F (1 + 0.2-1 beta); 24 seeds; every beta significant",
            f"{_RATE}; {_S_WHY['exp steeper']}: s^(1/4) >= 1.22, while the floor rises with beta, so the larger beta "
            "mostly ends higher: steeper, not lower",
        ),
        steeper_sample_family(
            "steeper: rate rising with beta, just past the margin",
            "pass",
            _exp(STEEP_JUST),
            has_window,
            significant,
            f"{_EXP_GRID}; s 1.8-2.0; 24 seeds; every beta's mean ratio >= 1.03/0.9 at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}: beta = 0.25's ratio s^(1/4) = 1.158-1.189, 4-7% past 1/0.9 = 1.111; "
            "the 5% scatter in c makes a 24-seed mean ratio's standard error ~ 1.17 x 0.071/sqrt(24) = 0.017",
        ),
        steeper_sample_family(
            "steeper: rate rising with beta by less than the margin at small beta",
            "fail",
            _exp(STEEP_SMALL),
            has_window,
            short_of,
            f"{_EXP_GRID}; s 1.15-1.22; 24 seeds; some beta's mean ratio <= 1/(1.03 x 0.9) at every slow step",
            f"{_RATE}; {_S_WHY['exp steeper']}: ratios s^beta = 1.035-1.051 (beta 0.25), 1.07-1.10 (0.5), 1.11-1.16 "
            "(0.75), 1.15-1.22 (1): beta = 1 is significantly steeper, beta = 0.25 is not (>= 5% short, ~3.5 standard "
            "errors): not every beta > 0",
        ),
        steeper_sample_family(
            "steeper: beta = 0.25 no steeper than beta = 0, the rest much steeper",
            "fail",
            _exp(STEEP_LATE),
            has_window,
            short_of,
            f"{_EXP_GRID}; c_b = c_0 s^max(0, (beta - 1/4)/(3/4)), s 2.2-4; 24 seeds; beta = 0.25 short at every step",
            f"{_RATE}; c_0.25 = c_0 (ratio 1), c_0.5 = c_0 s^(1/3) >= 1.30, c_1 = c_0 s >= 2.2: every beta >= 0.5 is "
            "significantly steeper, beta = 0.25 is not: not every beta > 0",
        ),
        steeper_sample_family(
            "steeper: same rate, lower floors and L_0 rising",
            "fail",
            _exp(SAME_LOWER),
            has_window,
            short_of,
            f"{_EXP_GRID}; s = 1, F_b = F (1 - 0.4-0.9 beta), E_b rising; 24 seeds; some beta short at every step",
            f"{_RATE}; c_b = c_0 for every beta (5% scatter: mean ratio exp(0.05^2) ~ 1.003): a lower, "
            "higher-starting curve at the same rate",
        ),
        steeper_sample_family(
            "steeper: reversed, shallower with beta but lower",
            "fail",
            _exp(SHALLOWER),
            has_window,
            short_of,
            f"{_EXP_GRID}; 1/c_0 40-100, c_b = c_0 s^-beta (s 1.5-3), floors and amplitudes falling; 24 seeds",
            f"{_RATE}; c_b/c_0 = s^-beta <= 1: every beta > 0 nears its floor more slowly than beta = 0 (0.33-0.90), "
            "though its floor and amplitude fall with beta",
        ),
        steeper_sample_family(
            "steeper: fast phase grows with beta, same slow rate",
            "fail",
            _exp(FAST_GROWS),
            has_window,
            short_of,
            f"{_EXP_GRID}; s = 1, E_b x (1 + 1-4 beta), t_e,b = t_e (1 + 0.5-1.5 beta); 24 seeds",
            f"{_RATE}; after the (beta-grown) fast phase every run descends at c_0 (5% scatter): the mean ratio is "
            "~1.0-1.02 at every slow step",
        ),
        steeper_sample_family(
            "steeper: two modes, beta moves weight into the slow mode",
            "fail",
            _exp(SLOW_WEIGHT),
            has_window,
            short_of,
            f"{_EXP_GRID}; 1/c 100-200, slow weight w_b = 0.1 + 0.6 beta, other mode m c (m 3-5); 24 seeds",
            f"{_RATE}; the mixture's rate falls with the slow mode's weight at every step, down to c when it "
            "dominates: every beta > 0 is at most as steep as beta = 0 (mean ratios 0.4-1.0)",
        ),
    )
