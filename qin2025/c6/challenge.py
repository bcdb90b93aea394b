"""Challenge families for C6: training-error curves of runs with and without residuals, from worlds with a known gap.

Written from the claim's words ("with residual connections the training error is consistently lower
than without them, and the advantage holds or grows as L increases"; the parts: at each depth the
training error once training is under way is lower with residuals by more than 0.01 on average over
seeds; the advantage does not fall from the shallowest depth to the deepest by 0.01 or more), not
from the decisions. A run's error curve over T = 200 steps on N = 256 sentences is

    E(t) = e_end + (e_0 - e_end) e^(-t / tau), e_0 ~ 0.5 (chance),

counted in whole sentences (round(N E)/N) with a sentence or two of step-to-step churn, and an
occasional catapult spike (the error jumps by 0.05-0.3 for 1-3 steps at the edge of stability and
comes back). A seed's two runs at a depth share the sample; the residual run ends at e_end, the
other at e_end + gap, each with 0.005 per-seed scatter. A case is a sample of ``UNITS`` seeds (C6's
standard budget), decided under the mean rule.

- **pass**: gaps of 0.03-0.15 (three to fifteen times the counted advantage 0.01); for the trend, an
  advantage that grows (by 0.02-0.1) or holds (the same gap at both depths) from L = 1 to L = 6.
- **fail**: no gap; a one-label flip (the "worse" run is the residual run again on the sample with
  one label flipped: they differ by one sentence, 1/256 = 0.004, a tie in all but name); a sample
  both runs memorise (zero error) well before the window opens; a residual run that is only ahead
  early (faster, but both end at the same error by T/2); for the trend, an advantage that falls by
  0.04-0.1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.challenge.draw import uniform

N = 256  # sentences
STEPS = 200  # T
UNITS = 12  # seeds per sample (C6's standard budget)
DEPTHS = (1, 6)
SCATTER = 0.005  # per-seed scatter of a run's end error
CASES = 200


def errors(rng: np.random.Generator, end: float, tau: float) -> np.ndarray:
    """Return one run's training-error curve E_0..E_T in whole sentences, with churn and maybe a catapult spike."""
    t = np.arange(STEPS + 1)
    e0 = uniform(rng, 0.45, 0.55)
    e = end + (e0 - end) * np.exp(-t / tau)
    counts = np.round(N * e) + rng.integers(-1, 2, size=t.size) * (rng.random(t.size) < 0.5)
    if rng.random() < 0.3:  # a catapult: the error jumps for 1-3 steps and comes back
        at, width = int(rng.integers(5, STEPS - 5)), int(rng.integers(1, 4))
        counts[at : at + width] += round(N * uniform(rng, 0.05, 0.3))
    return np.clip(counts, 0, N) / N


def adapt(depth: int, better: np.ndarray, worse: np.ndarray) -> dict[str, Any]:
    """Return ``advantage_decision(depth, better, worse)``'s keyword arguments for one seed."""
    return {"depth": depth, "better": better, "worse": worse}


def adapt_trend(better: dict[int, np.ndarray], worse: dict[int, np.ndarray]) -> dict[str, Any]:
    """Return ``trend_decision(better, worse)``'s keyword arguments for one seed."""
    return {"better": better, "worse": worse}


Pair = Callable[[np.random.Generator, float], tuple[np.ndarray, np.ndarray]]


def gap_pair(
    end: tuple[float, float] = (0.0, 0.1),
) -> Callable[[np.random.Generator, float], tuple[np.ndarray, np.ndarray]]:
    """Return a maker of (with, without) residual runs whose end errors differ by ``gap`` (the call's argument)."""

    def make(rng: np.random.Generator, gap: float) -> tuple[np.ndarray, np.ndarray]:
        base = uniform(rng, *end)
        with_res = errors(rng, max(0.0, base + SCATTER * rng.standard_normal()), uniform(rng, 5.0, 40.0))
        without = errors(rng, max(0.0, base + gap + SCATTER * rng.standard_normal()), uniform(rng, 10.0, 60.0))
        return with_res, without

    return make


def flip_pair(rng: np.random.Generator, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Return a residual run and its twin on the sample with one label flipped: one sentence apart once trained."""
    run = errors(rng, uniform(rng, 0.0, 0.1), uniform(rng, 5.0, 40.0))
    twin = run.copy()
    twin[STEPS // 10 :] = np.minimum(1.0, twin[STEPS // 10 :] + 1.0 / N)
    return run, twin


def memorised_pair(rng: np.random.Generator, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Return two runs that both reach zero error well before T/2 (a sample both memorise)."""
    a = errors(rng, 0.0, uniform(rng, 2.0, 8.0))
    b = errors(rng, 0.0, uniform(rng, 4.0, 12.0))
    a[STEPS // 3 :], b[STEPS // 3 :] = 0.0, 0.0
    return a, b


def early_only_pair(rng: np.random.Generator, gap: float) -> tuple[np.ndarray, np.ndarray]:
    """Return a residual run that is ahead early only: both end at the same error, reached by T/2."""
    end = uniform(rng, 0.0, 0.1)
    return errors(rng, end, uniform(rng, 3.0, 8.0)), errors(rng, end, uniform(rng, 15.0, 25.0))


def depth_family(
    name: str, expect: Expect, depth: int, pair: Pair, gap: tuple[float, float], grid: str, why: str
) -> Family:
    """Return an advantage family at ``depth``: ``UNITS`` seeds of one world."""

    def generate(rng: np.random.Generator) -> Case:
        g = uniform(rng, *gap)
        return Case({"gap": g}, {"units": [adapt(depth, *pair(rng, g)) for _ in range(UNITS)]})

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def advantage_families(depth: int) -> tuple[Family, ...]:
    """Return the challenge families of C6 "L=<depth>"."""
    grid = f"N = {N}, T = {STEPS}, {UNITS} seeds; end error 0-0.1, tau 5-40 (without: 10-60), churn +-1, catapults"
    return (
        depth_family(
            "residual ahead by 0.03-0.15",
            "pass",
            depth,
            gap_pair(),
            (0.03, 0.15),
            grid + "; gap 0.03-0.15",
            "the run without residuals ends 0.03-0.15 higher (8-38 sentences), well past the counted 0.01",
        ),
        depth_family(
            "no gap",
            "fail",
            depth,
            gap_pair(),
            (0.0, 0.0),
            grid + "; gap 0",
            "both runs end at the same error: 'lower with residuals' is false",
        ),
        depth_family(
            "one-label flip",
            "fail",
            depth,
            flip_pair,
            (0.0, 0.0),
            grid + "; the 'without' run is the residual run with one label flipped",
            "the two runs differ by one sentence (1/256 = 0.004): a tie in all but name, under the counted 0.01",
        ),
        depth_family(
            "both memorise the sample early",
            "fail",
            depth,
            memorised_pair,
            (0.0, 0.0),
            grid + "; both at zero error from T/3",
            "both runs sit at zero error when the window opens: no advantage once training is under way",
        ),
        depth_family(
            "residual ahead early only",
            "fail",
            depth,
            early_only_pair,
            (0.0, 0.0),
            grid + "; same end error, residual tau 3-8, other 15-25",
            "the residual run is faster at the start but both reach the same error by T/2: a comparison before "
            "training is under way is not the claim",
        ),
    )


def trend_family(name: str, expect: Expect, change: tuple[float, float], grid: str, why: str) -> Family:
    """Return a trend family: the advantage at L = 1 is 0.03-0.1, at L = 6 it is that plus ``change``."""
    make = gap_pair((0.0, 0.05))

    def one(rng: np.random.Generator, g1: float, g6: float) -> dict[str, Any]:
        better, worse = {}, {}
        for depth, gap in zip(DEPTHS, (g1, g6), strict=True):
            better[depth], worse[depth] = make(rng, max(0.0, gap))
        return adapt_trend(better, worse)

    def generate(rng: np.random.Generator) -> Case:
        g1 = uniform(rng, 0.03, 0.1)
        d = uniform(rng, *change)
        return Case({"gap_L1": g1, "change": d}, {"units": [one(rng, g1, g1 + d) for _ in range(UNITS)]})

    return Family(name, expect, generate, CASES, grid, why, origin="challenge")


def trend_families() -> tuple[Family, ...]:
    """Return the challenge families of C6 "trend"."""
    grid = f"depths {DEPTHS}, gap at L = 1 0.03-0.1, {UNITS} seeds, N = {N}, T = {STEPS}"
    return (
        trend_family(
            "advantage grows",
            "pass",
            (0.02, 0.1),
            grid + "; change +0.02..+0.1",
            "the gap at L = 6 is 0.02-0.1 wider than at L = 1: the advantage grows with depth",
        ),
        trend_family(
            "advantage holds",
            "pass",
            (0.0, 0.0),
            grid + "; change 0",
            "the world's gap is the same at both depths (per-seed scatter only): the advantage holds",
        ),
        trend_family(
            "advantage falls by 0.04-0.1",
            "fail",
            (-0.1, -0.04),
            grid + "; change -0.1..-0.04",
            "the gap shrinks by four to ten times the counted 0.01: it neither holds nor grows",
        ),
    )
