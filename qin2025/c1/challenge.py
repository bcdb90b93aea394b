"""Challenge families for C1 (and, at their horizons, C8): loss curves whose linear rate is known from their maker.

Written from the claim's words alone (Theorem 1: L_{t+1} <= (1 - mu alpha) L_t at every step, alpha
> 0; the part: "every GD step contracts the loss and the rate settles at a positive value"), not
from the decision. The world makes a loss curve L_0..L_S the way a run would: a per-step rate
r_t = ln(L_t / L_{t+1}) from a generator, multiplied by the run's own fluctuation (a mean-one
log-normal AR(1) jitter, so every step still contracts), and the run stops at 1e-24 L_0 (the
claim's horizon: T steps, runs stop at 1e-24 L_0 and are scored up to there).

What decides the answer is the generator's noise-free rate over the scored steps S:
q = r(S) / r(S/2), the rate at the end over the rate at the middle (means over 5% of S).

- **pass**: theorem-consistent makers whose rate has settled by the last half: q >= 0.95. GD on a
  quadratic (two, three or many modes: L = sum_i a_i e^(-r_i t), every step contracts, the rate
  falls to the slowest mode's), warm-ups, early stretches at 0.1-0.2x the later rate, real-like
  runs whose per-step rate jitters by 10-30% (correlated over 1-20 steps) around a settled GD curve,
  and runs whose rate wanders slowly by 5-20% (two to four periods over the scored steps: the
  wandering goes up as often as down, which no sublinear curve's rate does).
- **fail**: makers whose rate falls towards 0 and visibly so within the horizon: q <= 0.80, a fall
  of at least 20% over the last half, four times what a settled curve may show. Stretched
  exponentials exp(-(t/s)^k) have q = 2^(k-1) at any S, so k <= 1 + log2 0.80 = 0.678; offset power
  laws (1 + t/tau)^-p have q = (tau + S/2)/(tau + S), so tau <= 1.5 S; stalls at a floor (q ~ 0);
  geometric starts that turn into a power-law tail.
- **zone** (the horizon cannot resolve them): a fall of at most 12% (q >= 0.88) is what GD itself
  shows while it finishes settling on a spectrum with a square-root edge at its slowest mode (the
  bulk of a Marchenko-Pastur spectrum): there L ~ e^(-r_s t) t^(-3/2), the rate is r_s + 1.5/t and
  q = (x + 1.5)/(x + 3), x = r_s S the slow mode's descent over the scored steps. Such GD reaches
  q >= 0.95 only when x >= 27 nats, and, since scoring stops at 1e-24 L_0 (55.3 nats), never more
  than q = 0.974. So a stretched exponential with k >= 0.816 (q >= 0.88: tau >= 3.17 S for a power
  law) has the fall of a GD run that is theorem-consistent, and for k >= 1 + log2 0.974 = 0.962 no
  horizon helps at all: its q does not depend on S, while the GD run's q is capped by the floor.
  The zone families are these sublinear curves and the GD runs still settling (0.88 <= q < 0.95);
  their right answer is "undecided". Falls between 12% and 20% (0.80 < q < 0.88) are left out: a
  band no family claims to know.

Each family is a tuple of ``Family(origin="challenge")``; ``adapt`` turns a curve into the
decision's keyword arguments (``linear_rate_decision(loss)``), so a changed signature changes one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.challenge.draw import log_uniform, uniform, until

FLOOR = 1e-24  # runs stop at FLOOR * L_0 and are scored up to there (the claim's horizon)
SETTLED = 0.95  # pass: q at least this
FALLS = 0.80  # fail: q at most this
ZONE_LOW = 0.88  # zone: q at least this (sublinear), or in [ZONE_LOW, SETTLED) (GD still settling)
CASES = 200


@dataclass(frozen=True)
class Curve:
    """One run's loss curve as the world made it, with the parameters and the noise-free rate that label it."""

    loss: np.ndarray  # L_0..L_S, stopped at FLOOR L_0 or at the horizon
    q: float  # noise-free rate at the end of the scored steps over the rate at their middle
    params: dict[str, float | str]


# --- the world: rates to a run ---------------------------------------------------------------------


def scored(rates: np.ndarray) -> int:
    """Return S, the steps a run with these per-step rates is scored on: until FLOOR L_0, or all of them."""
    descent = np.cumsum(rates)
    hit = np.flatnonzero(descent >= -math.log(FLOOR))
    return int(hit[0]) + 1 if hit.size else rates.size


def fall(rates: np.ndarray, steps: int) -> float:
    """Return q = r(S)/r(S/2) of a noise-free rate profile scored on ``steps`` steps (means over 5% of S)."""
    w = max(2, steps // 40)
    mid = steps // 2
    end, middle = float(rates[steps - 2 * w : steps].mean()), float(rates[mid - w : mid + w].mean())
    return end / middle if middle > 0 else 0.0  # a loss that stood still at the middle has stalled


def jitter(rng: np.random.Generator, size: int, sigma: float, corr: float) -> np.ndarray:
    """Return a mean-one log-normal AR(1) factor per step: the run's own fluctuation of its rate."""
    if sigma == 0:
        return np.ones(size)
    phi = math.exp(-1.0 / corr)
    z = np.empty(size)
    z[0] = rng.standard_normal()
    shocks = rng.standard_normal(size) * math.sqrt(1 - phi * phi)
    for t in range(1, size):
        z[t] = phi * z[t - 1] + shocks[t]
    return np.exp(sigma * z - sigma * sigma / 2)


def run(
    rng: np.random.Generator,
    rates: np.ndarray,
    sigma: float,
    corr: float,
    params: dict[str, float | str],
    wander: np.ndarray | None = None,
) -> Curve:
    """Return the run of a noise-free rate profile: jittered, from L_0 ~ 1-100, stopped at FLOOR L_0.

    ``wander``: a factor per step on the rate that is the run's own (a landscape's slow wandering),
    like the jitter not part of the maker, so it does not enter q.
    """
    noisy = rates * jitter(rng, rates.size, sigma, corr) * (1.0 if wander is None else wander)
    steps = scored(noisy)
    l0 = log_uniform(rng, 1.0, 100.0)
    loss = l0 * np.exp(-np.concatenate([[0.0], np.cumsum(noisy[:steps])]))
    q = fall(rates, min(steps, rates.size))
    return Curve(loss, q, {**params, "sigma": sigma, "corr": corr, "S": steps, "q": round(q, 4)})


def modes(weights: np.ndarray, rates: np.ndarray, steps: int) -> np.ndarray:
    """Return the per-step rates of GD on a quadratic: L_t = sum_i w_i e^(-r_i t), computed in logs."""
    t = np.arange(steps + 1)[:, None]
    log_l = np.logaddexp.reduce(np.log(weights)[None, :] - rates[None, :] * t, axis=1)
    out: np.ndarray = -np.diff(log_l)
    return out


# --- makers: one noise-free rate profile each (per-step rates over the horizon) ---------------------


def slow_rate(rng: np.random.Generator, steps: int) -> float:
    """Return a settled rate whose descent over the horizon is 15-80 nats (the run may reach the floor first)."""
    return uniform(rng, 15.0, 80.0) / steps


def gd_modes(rng: np.random.Generator, steps: int, count: int) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return GD on a quadratic with ``count`` modes: the slowest at rate r_s, the others 1.5-30x faster, heavier."""
    r_s = slow_rate(rng, steps)
    mult = np.array([1.0] + [log_uniform(rng, 1.5, 30.0) for _ in range(count - 1)])
    weight = np.array([1.0] + [log_uniform(rng, 1.0, 1e3) for _ in range(count - 1)])
    params: dict[str, float | str] = {"r_s": r_s, **{f"m{i}": float(m) for i, m in enumerate(mult[1:], 2)}}
    return modes(weight, r_s * mult, steps), params


def gd_edge(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return GD on a many-mode spectrum with a square-root edge at its slowest mode (chi-square weights)."""
    count = int(rng.integers(64, 513))
    r_s = slow_rate(rng, steps)
    width = log_uniform(rng, 2.0, 20.0) * r_s
    u = rng.beta(1.5, 1.0, count - 1)  # density ~ sqrt(u) near the edge
    rates = r_s + width * np.concatenate([[0.0], u])
    weight = rng.chisquare(1, count) + 1e-12
    return modes(weight, rates, steps), {"r_s": r_s, "width": width, "modes": count}


def warm_up(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return a rate that rises from 2-30% of its settled value over the first 5-30% of the horizon."""
    r_s, f0, w = slow_rate(rng, steps), uniform(rng, 0.02, 0.3), int(uniform(rng, 0.05, 0.3) * steps)
    ramp = np.ones(steps)
    ramp[:w] = f0 + (1 - f0) * (0.5 - 0.5 * np.cos(np.pi * np.arange(w) / w))
    return r_s * ramp, {"r_s": r_s, "start": f0, "warm_up": w}


def slow_stretch(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return a settled GD curve with one early stretch (5-15% of the horizon) at 0.1-0.2x its rate."""
    base, params = gd_modes(rng, steps, 2)
    start, length, factor = uniform(rng, 0.05, 0.25), uniform(rng, 0.05, 0.15), uniform(rng, 0.1, 0.2)
    a, b = int(start * steps), int((start + length) * steps)
    base = base.copy()
    base[a:b] *= factor
    return base, {**params, "stretch_from": a, "stretch_to": b, "factor": factor}


def stretched(rng: np.random.Generator, steps: int, k_low: float, k_high: float) -> tuple[np.ndarray, dict[str, Any]]:
    """Return exp(-(t/s)^k): k in [k_low, k_high], s so that the horizon descends 5-50 nats."""
    k, depth = uniform(rng, k_low, k_high), uniform(rng, 5.0, 50.0)
    s = steps / depth ** (1 / k)
    t = np.arange(steps + 1) / s
    return np.diff(t**k), {"k": k, "s": s, "depth": depth}


def power_law(
    rng: np.random.Generator, steps: int, tau_low: float, tau_high: float
) -> tuple[np.ndarray, dict[str, Any]]:
    """Return (1 + t/tau)^-p: tau in [tau_low, tau_high] x the horizon, p so that the horizon descends 3-50 nats."""
    tau, depth = log_uniform(rng, tau_low, tau_high) * steps, uniform(rng, 3.0, 50.0)
    p = depth / math.log1p(steps / tau)
    t = np.arange(steps + 1)
    return p * np.diff(np.log1p(t / tau)), {"tau/T": tau / steps, "p": p, "depth": depth}


def stall(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Return F + (1 - F) e^(-r t): geometric down to a floor F (1e-15..1e-4 L_0), reached at 10-50% of the horizon."""
    floor, onset = log_uniform(rng, 1e-15, 1e-4), uniform(rng, 0.1, 0.5)
    r = math.log(1 / floor) / (onset * steps)
    t = np.arange(steps + 1)
    log_l = np.logaddexp(math.log(floor), math.log1p(-floor) - r * t)
    return -np.diff(log_l), {"floor": floor, "onset": onset, "r": r}


def power_tail(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Return a geometric start that turns, at 10-40% of the horizon, into a power-law tail p/(tau + t)."""
    r, turn = slow_rate(rng, steps), int(uniform(rng, 0.1, 0.4) * steps)
    tau, p = log_uniform(rng, 0.005, 0.2) * steps, uniform(rng, 0.5, 4.0)
    rates = np.full(steps, r)
    t = np.arange(steps - turn + 1)
    rates[turn:] = p * np.diff(np.log1p(t / tau))
    return rates, {"r": r, "turn": turn, "tau/T": tau / steps, "p": p}


# --- families -------------------------------------------------------------------------------------

Maker = Callable[[np.random.Generator, int], tuple[np.ndarray, dict[str, Any]]]


def adapt(curve: Curve) -> dict[str, Any]:
    """Return the decision's keyword arguments for one curve (``linear_rate_decision(loss)``)."""
    return {"loss": curve.loss}


def _family(
    name: str,
    expect: Expect,
    maker: Maker,
    steps: int,
    keep: Callable[[Curve], bool],
    sigma: tuple[float, float],
    grid: str,
    why: str,
) -> Family:
    def draw(rng: np.random.Generator) -> Curve:
        rates, params = maker(rng, steps)
        return run(rng, rates, uniform(rng, *sigma) if sigma[1] else 0.0, uniform(rng, 1.0, 20.0), params)

    def generate(rng: np.random.Generator) -> Case:
        curve = until(rng, draw, keep)
        return Case(curve.params, adapt(curve))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def wandering_family(steps: int) -> Family:
    """Return settled GD runs whose rate wanders slowly by 5-20% (two to four periods over the scored steps)."""

    def draw(rng: np.random.Generator) -> Curve:
        rates, params = gd_modes(rng, steps, 2)
        amp, periods, phase = uniform(rng, 0.05, 0.2), uniform(rng, 2.0, 4.0), uniform(rng, 0.0, 2 * math.pi)
        s = min(scored(rates), rates.size)
        wander = 1 + amp * np.sin(2 * math.pi * periods * np.arange(rates.size) / s + phase)
        extra: dict[str, float | str] = {"amplitude": amp, "periods": periods}
        return run(rng, rates, uniform(rng, 0.0, 0.1), uniform(rng, 1.0, 20.0), {**params, **extra}, wander)

    def generate(rng: np.random.Generator) -> Case:
        curve = until(rng, draw, settled)
        return Case(curve.params, adapt(curve))

    return Family(
        "real-like run whose rate wanders slowly (5-20%)",
        "pass",
        generate,
        CASES,
        "two-mode settled GD times 1 + a sin(2 pi m t / S + phi), a 5-20%, m 2-4 periods over the scored steps",
        "every step contracts by at least (1 - a) r_s > 0 for ever (Theorem 1's inequality with alpha set by the "
        "slowest stretch), and the wandering goes up and down over the window: no trend towards 0",
        origin="challenge",
    )


def settled(c: Curve) -> bool:
    """Return whether a curve's noise-free rate has settled over its last half (pass band)."""
    return c.q >= SETTLED


def families(steps: int) -> tuple[Family, ...]:
    """Return the linear-rate challenge families at a horizon of ``steps`` GD steps."""
    quiet = (0.0, 0.1)  # sublinear makers jitter as little as a real run does at least
    return (
        _family(
            "two-mode quadratic GD, settled",
            "pass",
            lambda rng, n: gd_modes(rng, n, 2),
            steps,
            settled,
            quiet,
            "r_s descends 15-80 nats over T, fast mode 1.5-30x faster and 1-1e3x heavier; q >= 0.95; jitter <= 10%",
            "GD on a quadratic contracts at every step by at least e^(-r_s) (Theorem 1's inequality) and its rate "
            "settles at the slow mode's; q >= 0.95 by construction: the rate has settled before the last half",
        ),
        _family(
            "three-mode quadratic GD, settled",
            "pass",
            lambda rng, n: gd_modes(rng, n, 3),
            steps,
            settled,
            quiet,
            "as two-mode, two faster modes; q >= 0.95",
            "as two-mode GD: a positive mixture of geometric decays contracts at the slowest mode's rate or faster",
        ),
        _family(
            "many-mode GD (square-root spectral edge), settled",
            "pass",
            gd_edge,
            steps,
            settled,
            quiet,
            "64-512 modes, rates r_s + width u, u ~ Beta(1.5, 1), width 2-20 r_s, chi-square weights; q >= 0.95",
            "GD on a realistic (Marchenko-Pastur-like) spectrum: every step contracts by at least e^(-r_s); kept "
            "only where the rate has settled (q >= 0.95)",
        ),
        _family(
            "warm-up, then settled",
            "pass",
            warm_up,
            steps,
            settled,
            quiet,
            "rate rising from 2-30% of r_s over the first 5-30% of T (cosine ramp), then r_s",
            "every step contracts (the rate is positive throughout) and the rate settles at r_s > 0: Theorem 1 bounds "
            "the contraction from above only, so a slow start is allowed",
        ),
        _family(
            "early stretch at 0.1-0.2x the later rate",
            "pass",
            slow_stretch,
            steps,
            lambda c: settled(c) and float(c.params["stretch_to"]) <= 0.45 * float(c.params["S"]),
            quiet,
            "two-mode settled GD, one stretch of 5-15% of T starting at 5-25% of T at 0.1-0.2x; ends before 0.45 S",
            "the stretch still contracts at every step (rate 0.1-0.2 r_s > 0) and the rate settles afterwards: the "
            "issue's 'slower but contracting early stretch', allowed by Theorem 1",
        ),
        _family(
            "real-like contracting run (rate jitter 10-30%)",
            "pass",
            lambda rng, n: gd_modes(rng, n, 2),
            steps,
            settled,
            (0.1, 0.3),
            "two-mode settled GD with a log-normal AR(1) rate jitter of sd 10-30%, correlated over 1-20 steps",
            "every step contracts (a log-normal factor keeps each step's rate positive) around a settled GD curve: "
            "a run on a non-quadratic landscape whose local rate wanders; theorem-consistent",
        ),
        wandering_family(steps),
        _family(
            "stretched exponential, k 0.3-0.678",
            "fail",
            lambda rng, n: stretched(rng, n, 0.3, 0.678),
            steps,
            lambda c: c.q <= FALLS,
            quiet,
            "exp(-(t/s)^k), k 0.3-0.678, s so the horizon descends 5-50 nats; q = 2^(k-1) <= 0.80",
            "its rate k/s (t/s)^(k-1) falls to 0 (no alpha > 0 bounds it), and it falls by >= 20% over the last half "
            "of the scored steps: visibly unsettled within the horizon",
        ),
        _family(
            "offset power law, tau <= 1.5 S",
            "fail",
            lambda rng, n: power_law(rng, n, 0.01, 1.5),
            steps,
            lambda c: c.q <= FALLS,
            quiet,
            "(1 + t/tau)^-p, tau 0.01-1.5 T (log-uniform), p so the horizon descends 3-50 nats; q <= 0.80",
            "its rate p/(tau + t) falls to 0; with tau <= 1.5 S it falls by >= 20% over the last half of the scored "
            "steps: visibly unsettled",
        ),
        _family(
            "stall at a floor",
            "fail",
            stall,
            steps,
            lambda c: c.q <= FALLS,
            quiet,
            "F + (1 - F) e^(-r t), F 1e-15..1e-4 of L_0, reached at 10-50% of T",
            "the loss stops at F > 0 (the rate falls to 0): not a linear rate to the minimum",
        ),
        _family(
            "geometric start, power-law tail",
            "fail",
            power_tail,
            steps,
            lambda c: c.q <= FALLS,
            quiet,
            "rate r_s until 10-40% of T, then p/(tau + t), tau 0.005-0.2 T, p 0.5-4; q <= 0.80",
            "the tail's rate falls to 0 and falls by >= 20% over the last half: a linear start does not make a "
            "linear rate",
        ),
        _family(
            "stretched exponential, k 0.816-0.95 (zone)",
            "zone",
            lambda rng, n: stretched(rng, n, 0.816, 0.95),
            steps,
            lambda c: c.q >= ZONE_LOW,
            quiet,
            "exp(-(t/s)^k), k 0.816-0.95; q = 2^(k-1) in 0.88-0.966",
            "sublinear, but its rate falls by <= 12% over the last half, as GD on a square-root-edge spectrum does "
            "while settling (q = (x + 1.5)/(x + 3), x = 8-27 nats); for k >= 0.962 no horizon separates it, since "
            "scoring stops at 1e-24 L_0 (x <= 55 nats, q <= 0.974): undecidable here",
        ),
        _family(
            "offset power law, tau >= 3.17 S (zone)",
            "zone",
            lambda rng, n: power_law(rng, n, 3.2, 20.0),
            steps,
            lambda c: c.q >= ZONE_LOW,
            quiet,
            "(1 + t/tau)^-p, tau 3.2-20 T, p so the horizon descends 3-50 nats; q = (tau + S/2)/(tau + S) >= 0.88",
            "sublinear, but over the scored steps its rate falls by <= 12%, as a GD run still settling does; a "
            "horizon of S' resolves it once (tau + S'/2)/(tau + S') <= 0.80, i.e. S' >= tau/1.5",
        ),
        _family(
            "many-mode GD still settling (zone)",
            "zone",
            gd_edge,
            steps,
            lambda c: ZONE_LOW <= c.q < SETTLED,
            quiet,
            "as the settled many-mode family; kept where 0.88 <= q < 0.95",
            "theorem-consistent GD, but its rate still falls by 5-12% over the last half, as the zone's sublinear "
            "curves do: the horizon does not show it settled",
        ),
    )


HORIZON = 1000  # C1: 1000 steps at every budget, a cap (runs stop at 1e-24 L_0)


def c1_families() -> tuple[Family, ...]:
    """Return C1's challenge families at its horizon."""
    return families(HORIZON)
