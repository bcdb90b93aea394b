"""Challenge families for C2: loss curves that never rise and reach the minimum, or rise once, oscillate, or stall.

Written from the claim's words ("with mu below the bound the loss never rises, and it reaches the
global minimum (0 here) to float precision within the horizon"), not from the decision. The world
is C1's (``qin2025.c1.challenge``: a per-step rate from a theorem-consistent maker, a run's own
rate jitter, a stop at 1e-24 L_0) at C2's horizon of 1,500 steps, with the settled rate set so
that every run reaches the stop (60-120 nats over the horizon); the failures are edits of such a run.

- **pass**: monotone runs that reach 1e-24 L_0: settled GD, real-like jitter, warm-ups and slow
  early stretches (every step lowers the loss; the minimum 0 is approached to float precision).
- **fail**: one step that rises by 1e-9 to 1e-3 of the loss (far above float64 rounding, ~1e-14
  of a loss summed over a few thousand terms: "never rises" is false); a period-2 oscillation of
  1e-3 to 1e-1 that outgrows the descent at some steps (an edge-of-stability run); a run with
  multiplicative noise of 1e-4 to 1e-2 per step that rises somewhere (both on runs with a slow
  stretch at 0.1-0.2x, where a small wobble beats the descent); a run that stalls at
  1e-15 to 1e-10 of L_0 (never reaching the minimum within the horizon).
- **zone**: one step that rises by 1e-14 to 1e-13 of the loss, the size of float64 rounding in
  the loss itself: a rise that small cannot be told from the arithmetic's error, so whether the
  loss "rose" is not a fact the curve holds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.c1 import challenge as c1
from qin2025.challenge.draw import log_uniform, uniform, until

STEPS = 1500  # C2's horizon; runs stop at 1e-24 L_0
CASES = 200
RISE = 1e-9  # the smallest relative rise a fail family counts (far above rounding)


def monotone_run(rng: np.random.Generator, sigma: float = 0.0) -> np.ndarray:
    """Return a settled two-mode GD run that reaches 1e-24 L_0 within the horizon (60-120 nats over it)."""
    r_s = uniform(rng, 60.0, 120.0) / STEPS
    mult, weight = log_uniform(rng, 1.5, 30.0), log_uniform(rng, 1.0, 1e3)
    rates = c1.modes(np.array([1.0, weight]), np.array([r_s, r_s * mult]), STEPS)
    return c1.run(rng, rates, sigma, uniform(rng, 1.0, 20.0), {}).loss


def adapt(loss: np.ndarray) -> dict[str, Any]:
    """Return the decision's keyword arguments (``monotone_decision(loss)``)."""
    return {"loss": loss}


def rises(loss: np.ndarray) -> float:
    """Return the largest relative rise of one step, L_{t+1}/L_t - 1 (<= 0 for a curve that never rises)."""
    return float(np.max(loss[1:] / loss[:-1] - 1))


def uptick(low: float, high: float) -> Callable[[np.random.Generator], tuple[np.ndarray, dict[str, float | str]]]:
    """Return a maker of monotone runs with one step that rises by ``low``..``high`` of the loss, then descends on."""

    def make(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float | str]]:
        loss = monotone_run(rng)
        t = int(rng.integers(10, loss.size - 10))
        size = log_uniform(rng, low, high)
        out = loss.copy()
        out[t + 1 :] = loss[t + 1 :] * (loss[t] * (1 + size) / loss[t + 1])  # rise at t -> t+1, the same descent on
        return out, {"step": t, "rise": size}

    return make


def slow_run(rng: np.random.Generator) -> np.ndarray:
    """Return a monotone run with one stretch at 0.1-0.2x its rate, reaching the stop (where a small wobble shows)."""
    rates, params = c1.slow_stretch(rng, STEPS)
    rates = rates * (uniform(rng, 60.0, 120.0) / float(rates.sum()))
    return c1.run(rng, rates, 0.0, 1.0, params).loss


def oscillation(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return a run with a period-2 oscillation of 1e-3..1e-1 of the loss (an edge-of-stability run)."""
    loss, amp = slow_run(rng), log_uniform(rng, 1e-3, 1e-1)
    sign = np.where(np.arange(loss.size) % 2 == 0, 1.0, -1.0)
    return loss * (1 + amp * sign), {"amplitude": amp}


def noisy(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return a run with independent multiplicative noise of 1e-4..1e-2 per step."""
    loss, sd = slow_run(rng), log_uniform(rng, 1e-4, 1e-2)
    return loss * (1 + sd * rng.standard_normal(loss.size)), {"noise": sd}


def stall(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float | str]]:
    """Return a monotone run that stalls at 1e-15..1e-10 of L_0 (still strictly falling, towards its floor)."""
    floor = log_uniform(rng, 1e-15, 1e-10)
    loss = monotone_run(rng)
    return loss[0] * floor + loss * (1 - floor), {"floor": floor}


def _family(
    name: str,
    expect: Expect,
    make: Callable[[np.random.Generator], tuple[np.ndarray, dict[str, float | str]]],
    keep: Callable[[np.ndarray], bool],
    grid: str,
    why: str,
) -> Family:
    def generate(rng: np.random.Generator) -> Case:
        loss, params = until(rng, make, lambda lp: keep(lp[0]))
        return Case({**params, "max_rise": rises(loss)}, adapt(loss))

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def _pass(maker: c1.Maker) -> Callable[[np.random.Generator], tuple[np.ndarray, dict[str, float | str]]]:
    def make(rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float | str]]:
        rates, params = maker(rng, STEPS)
        rates = rates * (uniform(rng, 60.0, 120.0) / float(rates.sum()))  # reaches the stop within the horizon
        curve = c1.run(rng, rates, uniform(rng, 0.0, 0.3), uniform(rng, 1.0, 20.0), params)
        return curve.loss, {k: v for k, v in curve.params.items() if k != "q"}

    return make


def reached(loss: np.ndarray) -> bool:
    """Return whether a run reached the stop (1e-24 L_0) and never rose."""
    return bool(loss[-1] <= c1.FLOOR * loss[0] * 1.0001) and rises(loss) <= 0


def monotone_families() -> tuple[Family, ...]:
    """Return the challenge families of C2 (one run each)."""
    return (
        _family(
            "settled GD reaching the minimum",
            "pass",
            _pass(lambda rng, n: c1.gd_modes(rng, n, 2)),
            reached,
            "two-mode GD, 60-120 nats over 1500 steps, rate jitter 0-30%; stops at 1e-24 L_0",
            "every step lowers the loss (a positive rate at every step) and it reaches 1e-24 L_0: it never rises and "
            "reaches the minimum 0 to float precision",
        ),
        _family(
            "warm-up, then settled, reaching the minimum",
            "pass",
            _pass(c1.warm_up),
            reached,
            "rate rising from 2-30% over the first 5-30% of the horizon; jitter 0-30%",
            "a slow start is still a descent at every step; it reaches 1e-24 L_0",
        ),
        _family(
            "early stretch at 0.1-0.2x, reaching the minimum",
            "pass",
            _pass(c1.slow_stretch),
            reached,
            "one stretch of 5-15% of the horizon at 0.1-0.2x the rate; jitter 0-30%",
            "the slow stretch still descends at every step; it reaches 1e-24 L_0",
        ),
        _family(
            "one small uptick (1e-9..1e-3)",
            "fail",
            uptick(1e-9, 1e-3),
            lambda loss: rises(loss) >= RISE,
            "a settled run with one step raised by 1e-9..1e-3 of the loss (log-uniform), the same descent after",
            "the loss rises at one step by far more than float64 rounding (~1e-14): 'never rises' is false",
        ),
        _family(
            "period-2 oscillation (1e-3..1e-1)",
            "fail",
            oscillation,
            lambda loss: rises(loss) >= RISE,
            "a run with a 0.1-0.2x stretch times (1 +- a) on alternate steps, a 1e-3..1e-1; kept where a step rises",
            "where the oscillation outgrows the descent the loss rises: not monotone",
        ),
        _family(
            "multiplicative noise (1e-4..1e-2)",
            "fail",
            noisy,
            lambda loss: rises(loss) >= RISE,
            "a run with a 0.1-0.2x stretch times (1 + sd z_t), sd 1e-4..1e-2; kept where a step rises >= 1e-9",
            "the noise makes the loss rise at some step by far more than rounding: not monotone",
        ),
        _family(
            "stall at 1e-15..1e-10 of L_0",
            "fail",
            stall,
            lambda loss: rises(loss) <= 0,
            "a settled run plus a floor of 1e-15..1e-10 L_0",
            "monotone, but the loss stops at a floor far above the minimum: it does not reach the global minimum",
        ),
        _family(
            "uptick at rounding size, 1e-14..1e-13 (zone)",
            "zone",
            uptick(1e-14, 1e-13),
            lambda loss: rises(loss) > 0,
            "a settled run with one step raised by 1e-14..1e-13 of the loss",
            "a rise as small as float64 rounding of the loss itself cannot be told from the arithmetic's error: "
            "whether the loss rose is not in the curve",
        ),
    )
