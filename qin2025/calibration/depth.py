"""Calibration families of C6's decisions: training-error curves with and without residuals, gaps known.

One seed's runs at each depth of the ci grid (L = 1 and 6, N = 24 sentences, T = 60 steps). A
run's error after step t is a count of sentences: k_t = floor(N e0 exp(-t/tau) + u_t), u_t uniform
on [0, 1) (a dithered count), e0 0.3..0.6. The residual run fits with tau_w 2..15 steps; the run
without residuals with tau_w + A T / e0, so that its mean error over steps 1..T is higher by about
A (the expected advantage).

"advantage per L" (per depth: mean error without minus with > 0). Must pass: a real gap,
A = 1/N..0.25 (at least one sentence in 24 on average over the run) at every depth. Must fail: a
tie (the same tau for both; only the dither differs), and a gap of a fraction of one sentence,
A = 0.1/N..0.5/N in favour of the residual ("a difference of one sentence in 24 is a tie in all
but name", CLAIMS.md).

"trend" (the least-squares slope of the advantage over L >= 0). Must pass: the advantage holds
(the same real gap at every depth) or grows (x1.5..4 from the shallowest to the deepest). Must
fail: it shrinks (x0..0.5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from claimcheck.protocol import Case, Expect, Family
from qin2025.calibration.draw import log_uniform

Gaps = Callable[[np.random.Generator, Sequence[int], int], tuple[dict[int, float], dict[str, float]]]


def _errors(rng: np.random.Generator, tau: float, e0: float, n: int, steps: int) -> np.ndarray:
    t = np.arange(steps + 1, dtype=np.float64)
    counts = np.floor(n * e0 * np.exp(-t / tau) + rng.random(t.size))
    return np.asarray(counts / n)


def seed_runs(rng: np.random.Generator, gaps: Gaps, depths: Sequence[int], n: int, steps: int) -> Case:
    """One seed: per depth, the residual run and the run without, apart by the world's expected advantage."""
    advantage, params = gaps(rng, depths, n)
    better, worse = {}, {}
    for L in depths:
        e0, tau = float(rng.uniform(0.3, 0.6)), log_uniform(rng, 2.0, 15.0)
        better[L] = _errors(rng, tau, e0, n, steps)
        worse[L] = _errors(rng, tau + advantage[L] * steps / e0, e0, n, steps)
    return Case(params, {"better": better, "worse": worse})


def real_gap(rng: np.random.Generator, depths: Sequence[int], n: int) -> tuple[dict[int, float], dict[str, float]]:
    """The same real gap at every depth: A = 1/N..0.25."""
    a = log_uniform(rng, 1 / n, 0.25)
    return dict.fromkeys(depths, a), {"advantage": a}


def tie(rng: np.random.Generator, depths: Sequence[int], n: int) -> tuple[dict[int, float], dict[str, float]]:
    """No gap: both variants fit at the same speed."""
    return dict.fromkeys(depths, 0.0), {}


def sliver(rng: np.random.Generator, depths: Sequence[int], n: int) -> tuple[dict[int, float], dict[str, float]]:
    """A gap of 0.1..0.5 of one sentence, averaged over the run, in favour of the residual."""
    a = log_uniform(rng, 0.1 / n, 0.5 / n)
    return dict.fromkeys(depths, a), {"advantage_in_sentences": a * n}


def _trend(low: float, high: float) -> Gaps:
    def gaps(rng: np.random.Generator, depths: Sequence[int], n: int) -> tuple[dict[int, float], dict[str, float]]:
        a, factor = log_uniform(rng, 1 / n, 0.25), float(rng.uniform(low, high))
        first, last = min(depths), max(depths)
        out = {L: a * (1 + (factor - 1) * (L - first) / (last - first)) for L in depths}
        return out, {"advantage_at_shallowest": a, "deepest_over_shallowest": factor}

    return gaps


def _fam(name: str, expect: Expect, gaps: Gaps, grid: str, why: str, at: tuple[Sequence[int], int, int, int]) -> Family:
    depths, n, steps, cases = at
    where = f"L = {', '.join(map(str, depths))}; N = {n}; T = {steps}"
    gen = partial(seed_runs, gaps=gaps, depths=depths, n=n, steps=steps)
    return Family(name, expect, gen, cases, f"{grid}; {where}", why)


def advantage_families(depths: Sequence[int], n: int, steps: int, cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C6's "advantage per L" part."""
    at = (depths, n, steps, cases)
    return (
        _fam(
            "a real gap",
            "pass",
            real_gap,
            "expected advantage 1/N..0.25 at every depth",
            "lower error with residuals",
            at,
        ),
        _fam("a tie", "fail", tie, "the same tau; dithered counts", "neither fits better", at),
        _fam(
            "a gap of a fraction of one sentence",
            "fail",
            sliver,
            "expected advantage 0.1/N..0.5/N",
            "a difference under one sentence in N is a tie in all but name (CLAIMS.md)",
            at,
        ),
    )


def trend_families(depths: Sequence[int], n: int, steps: int, cases: int = 200) -> tuple[Family, ...]:
    """Return the families of C6's "trend" part."""
    at = (depths, n, steps, cases)
    return (
        _fam("the advantage holds", "pass", real_gap, "the same gap 1/N..0.25 at every depth", "'holds'", at),
        _fam("the advantage grows", "pass", _trend(1.5, 4.0), "x1.5..4 from shallowest to deepest", "'grows'", at),
        _fam(
            "the advantage shrinks",
            "fail",
            _trend(0.0, 0.5),
            "x0..0.5 from shallowest to deepest",
            "it falls with L",
            at,
        ),
    )
