"""Calibration families of the linear-rate decision (C1, C8; ``qin2025.c1.linear_rate``): curves whose answer is known.

Each family is drawn at a claim's own horizon (``steps``) and down to the slowest settled per-step
rate of its real runs (``slowest``). The decision scores a curve up to 1e-24 L_0 or its last step
(S scored steps) and reads its octave ratio r(S/2..S)/r(S/4..S/2).

Must pass: every step contracts by at least exp(-slowest/10) (Theorem 1, with a factor 2 inside
the claims' margin exp(-slowest/20)). Geometric decay with noise below the decrement and a float
floor; GD on a quadratic (2-20 modes) and a rate that settles, r (1 + a e^(-t/tau)), both drawn
where the horizon resolves them (below); warm-ups and slow early stretches at 0.1-0.2 of the later
rate; fast decay that reaches the float floor early and jitters there.

Where the horizon resolves a curve that settles: write its log-loss as r t + E(t), E >= 0 the
faster modes' (or the unsettled rate's) excess, falling. The first octave descends at most
r S/4 + E(S/4), the second at least r S/2, so the octave ratio is at least r / (r + 4 E(S/4)/S),
and at least 0.9 when E(S/4) <= r S/36: the excess left at S/4 is at most a ninth of what the
settled rate descends over the first quarter. Such curves are drawn (``_resolved``: a draw that
misses it is drawn again); the ones that miss it are a curve whose rate still falls at the
horizon, which a sublinear curve also is (``unresolved_settling``: not a family with one answer,
measured in the design record). A warm-up (E < 0, rising rate) gives a ratio >= 1 whatever its length.

Must fail, each where the horizon resolves it (the arithmetic is in ``qin2025.c1.linear_rate``): offset
power laws (1 + t/tau)^-p with p < 3.6 at any tau up to 3 S (their octave ratio is below 0.8 for
tau < 1.097 S, their last half descends under 1 nat beyond), and with p up to 16 at tau < 0.9 S;
stretched exponentials with k 0.2..0.67; plateaus contracting 25x or more slower than ``slowest``
(below the margin), then a drop; drops to a non-zero floor (a stall); runs that rise at a few steps.

In the declared zone (``zone_generators``; the decision answers "zone"): stretched exponentials with
k 0.69..0.84 and power laws with tau 1.11..2.9 S descending 1 nat over the last half. Accepted and
not resolvable by any statistic of the window (said in the protocol): k >= 0.848, and power laws
with tau >= 2.965 S and p >= 7.42.

Each case is one run's measurements: ``loss`` (L_0..L_T, L_0 drawn log-uniform in [0.1, 1000]).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.calibration.draw import jitter, log_uniform, mixture, modes

FASTEST = 0.3  # per-step rate of the fastest geometric case (C1's fastest real settled rate is about 0.15)
FLOAT_FLOOR = (1e-32, 1e-26)  # where a float64 loss bottoms out, relative to L_0 (measured 1e-32..1e-30 in C1)
FLOOR_DEPTH = math.log(1e24)  # nats to the decision's scoring floor, 1e-24 L_0
RESOLVED = 1 / 36  # E(S/4) <= r S / 36 puts the octave ratio of a settling curve at 0.9 or above
DRAWS = 200  # redraws allowed to land a settling curve where the horizon resolves it


def _case(rng: np.random.Generator, curve: np.ndarray, **params: float | str) -> Case:
    scale = log_uniform(rng, 0.1, 1000.0)
    return Case(params, {"loss": curve * scale})


def _floor(rng: np.random.Generator, curve: np.ndarray) -> np.ndarray:
    """Return the curve with a float floor under it: it cannot fall below ~1e-32..1e-26 of L_0, and jitters there."""
    level = log_uniform(rng, *FLOAT_FLOOR)
    return np.asarray(curve + level * (1 + 0.5 * rng.random(curve.size)))


def _scored(log_curve: np.ndarray) -> int:
    """Return S, the steps the decision scores: up to the first at 1e-24 L_0 (log_curve = ln L_t/L_0), or all."""
    below = np.flatnonzero(log_curve <= -FLOOR_DEPTH)
    return int(below[0]) if below.size else log_curve.size - 1


def _resolved(log_curve: np.ndarray, settled: float) -> bool:
    """Return whether the excess over the settled rate at S/4 is at most settled * S / 36 (see the module)."""
    s = _scored(log_curve)
    quarter = round(s / 4)
    excess = -log_curve[quarter] - settled * quarter
    return bool(excess <= settled * s * RESOLVED)


def geometric(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Geometric decay exp(-r t) with noise below the decrement and a float floor."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, slowest, FASTEST)
    eta = log_uniform(rng, 1e-4, 0.1)
    curve = _floor(rng, jitter(rng, np.exp(-r * t), eta * r))
    return _case(rng, curve, rate=r, noise_over_decrement=eta)


def quadratic(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """GD on a quadratic: 2-20 geometric modes, the slowest at slowest..0.1, drawn where the horizon resolves it."""
    t = np.arange(steps + 1, dtype=np.float64)
    for _ in range(DRAWS):
        low = log_uniform(rng, slowest, 0.1)
        k = int(rng.integers(2, 21))
        weights, rates = modes(rng, steps, low, 1.0, k)
        clean = mixture(t, weights, rates)
        with np.errstate(divide="ignore"):  # as in two_modes
            if _resolved(np.log(clean), low):
                break
    curve = _floor(rng, jitter(rng, clean, 1e-3 * low))
    return _case(rng, curve, slowest_rate=low, modes=k, slowest_weight=float(weights[0]))


def two_modes(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """GD on a two-mode quadratic: a fast mode 1.5-50x the slow one, the slow one's weight 1e-4..0.5, resolved."""
    t = np.arange(steps + 1, dtype=np.float64)
    for _ in range(DRAWS):
        low, ratio, w = log_uniform(rng, slowest, 0.1), log_uniform(rng, 1.5, 50.0), log_uniform(rng, 1e-4, 0.5)
        clean = w * np.exp(-low * t) + (1 - w) * np.exp(-ratio * low * t)
        with np.errstate(divide="ignore"):  # a long horizon underflows to 0: log -inf, past the floor
            if _resolved(np.log(clean), low):
                break
    curve = _floor(rng, jitter(rng, clean, 1e-3 * low))
    return _case(rng, curve, slow_rate=low, fast_over_slow=ratio, slow_weight=w)


def _settling_log(t: np.ndarray, r: float, a: float, tau: float) -> np.ndarray:
    return -(r * t + r * a * tau * (1 - np.exp(-t / tau)))  # minus the integral of r (1 + a e^(-t/tau))


def settling(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A rate that settles, r(t) = r (1 + a exp(-t/tau)), a 0..3, tau 0.01..0.3 of S, drawn where resolved."""
    t = np.arange(steps + 1, dtype=np.float64)
    for _ in range(DRAWS):
        r, a, theta = log_uniform(rng, slowest, FASTEST), float(rng.uniform(0.0, 3.0)), log_uniform(rng, 0.01, 0.3)
        tau = theta * min(steps, FLOOR_DEPTH / r)
        log_curve = _settling_log(t, r, a, tau)
        if _resolved(log_curve, r):
            break
    curve = _floor(rng, jitter(rng, np.exp(log_curve), 1e-3 * r))
    return _case(rng, curve, rate=r, excess=a, theta=theta)


def unresolved_settling(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A rate that settles too late for the horizon (E(S/4) > r S/36): pass, zone or fail, measured, not a family."""
    t = np.arange(steps + 1, dtype=np.float64)
    for _ in range(DRAWS):
        r, a, theta = log_uniform(rng, slowest, FASTEST), float(rng.uniform(0.0, 3.0)), log_uniform(rng, 0.01, 0.3)
        log_curve = _settling_log(t, r, a, theta * min(steps, FLOOR_DEPTH / r))
        if not _resolved(log_curve, r):
            break
    return _case(rng, _floor(rng, np.exp(log_curve)), rate=r, excess=a, theta=theta)


def settled_late(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """GD on a two-mode quadratic whose slow mode takes over after S/4 (octave ratio < 0.8), settled by 5S/8 (v6)."""
    t = np.arange(steps + 1, dtype=np.float64)
    for _ in range(DRAWS * 5):
        low, ratio, w = log_uniform(rng, slowest, 0.1), log_uniform(rng, 3.0, 50.0), log_uniform(rng, 1e-12, 1e-2)
        fast, slow = (1 - w) * np.exp(-ratio * low * t), w * np.exp(-low * t)
        with np.errstate(divide="ignore"):  # as in two_modes
            s = _scored(np.log(fast + slow))
        if s < 16 or fast[round(5 * s / 8)] > 1e-3 * slow[round(5 * s / 8)]:
            continue
        depth = -np.log((fast + slow)[: s + 1])
        q, h = round(s / 4), round(s / 2)
        if (depth[s] - depth[h]) / (s - h) < 0.8 * (depth[h] - depth[q]) / (h - q):
            break
    curve = _floor(rng, jitter(rng, fast + slow, 1e-3 * low))
    return _case(rng, curve, slow_rate=low, fast_over_slow=ratio, slow_weight=w, scored=s)


def slow_start(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A slow early stretch at 0.1-0.2 of the later rate r for up to 0.6 of the steps, then r (the referee's case)."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, slowest, FASTEST)
    f = float(rng.uniform(0.1, 0.2))
    reach = min(steps, FLOOR_DEPTH / r)  # the steps r alone takes to the floor or the horizon
    until = int(rng.uniform(0.02, 0.6) * reach)
    log_curve = -np.where(t <= until, f * r * t, f * r * until + r * (t - until))
    curve = _floor(rng, jitter(rng, np.exp(log_curve), 1e-3 * f * r))
    return _case(rng, curve, rate=r, early_fraction=f, early_steps=until)


def warm_up(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A warm-up: the rate rises linearly from 0.1-0.5 of r to r over up to 0.6 of the steps, then stays at r."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, slowest, FASTEST)
    f = float(rng.uniform(0.1, 0.5))
    ramp = max(1.0, rng.uniform(0.02, 0.6) * min(steps, FLOOR_DEPTH / r))
    rate = r * np.minimum(1.0, f + (1 - f) * t / ramp)
    log_curve = -np.concatenate([[0.0], np.cumsum(rate[:-1])])
    curve = _floor(rng, jitter(rng, np.exp(log_curve), 1e-3 * f * r))
    return _case(rng, curve, rate=r, start_fraction=f, ramp_steps=ramp)


def to_the_floor(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Fast geometric decay that reaches the float floor well inside the horizon, then jitters there by up to 50%."""
    t = np.arange(steps + 1, dtype=np.float64)
    r = log_uniform(rng, 0.15, 1.0)
    level = log_uniform(rng, *FLOAT_FLOOR)
    curve = np.maximum(np.exp(-r * t), level) * np.exp(rng.normal(0, 0.25, t.size) * (np.exp(-r * t) < level))
    return _case(rng, curve, rate=r, floor=level)


def power_law_shallow(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Offset power law (1 + t/tau)^-p, tau 10..3 steps, p 0.25..3.6: octave < 0.8 or a last half under 1 nat."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 10.0, 3.0 * steps), log_uniform(rng, 0.25, 3.6)
    return _case(rng, (1 + t / tau) ** -p, tau=tau, p=p)


def power_law_steep(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Offset power law (1 + t/tau)^-p, tau 1..0.9 steps, p 0.25..16: the octave ratio is below 0.8."""
    t = np.arange(steps + 1, dtype=np.float64)
    tau, p = log_uniform(rng, 1.0, 0.9 * steps), log_uniform(rng, 0.25, 16.0)
    return _case(rng, _floor(rng, (1 + t / tau) ** -p), tau=tau, p=p)


def _stretched(rng: np.random.Generator, steps: int, k: float, depth: float) -> Case:
    t = np.arange(steps + 1, dtype=np.float64)
    tau = steps * depth ** (-1 / k)
    return _case(rng, _floor(rng, np.exp(-((t / tau) ** k))), k=k, tau=tau, depth=depth)


def stretched(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Stretched exponential exp(-(t/tau)^k), k 0.2..0.67, falling by e^-D over the horizon (D 0.5..60).

    tau = steps D^(-1/k) puts the whole descent inside the horizon; D above 55 reaches the scoring
    floor. Its octave ratio is 2^(k-1) <= 0.80 whatever tau and S.
    """
    return _stretched(rng, steps, float(rng.uniform(0.2, 0.67)), log_uniform(rng, 0.5, 60.0))


def plateau_then_drop(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A plateau (decrement 1e-4..0.04 of ``slowest``) for steps/8..steps/2 steps, then geometric descent."""
    t = np.arange(steps + 1, dtype=np.float64)
    eps = slowest * log_uniform(rng, 1e-4, 0.04)
    until = int(rng.integers(steps // 8, steps // 2 + 1))
    r = log_uniform(rng, slowest, FASTEST)
    log_curve = np.where(t <= until, -eps * t, -eps * until - r * (t - until))
    return _case(rng, _floor(rng, np.exp(log_curve)), plateau_decrement=eps, plateau_steps=until, rate=r)


def stall(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """A drop to a non-zero floor F (1e-8..0.5 of L_0) reached by mid-horizon, then a residual decrement 1e-10..1e-6."""
    t = np.arange(steps + 1, dtype=np.float64)
    level = log_uniform(rng, 1e-8, 0.5)
    r = log_uniform(rng, max(0.05, 4 * math.log(1 / level) / steps), 2.0)
    creep = log_uniform(rng, 1e-10, 1e-6)
    curve = (level + (1 - level) * np.exp(-r * t)) * np.exp(-creep * t)
    return _case(rng, curve, floor=level, rate=r, residual_decrement=creep)


def catapult(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Geometric descent that rises at 1-5 steps (by 1e-6 to 1x) in its first quarter, above the scoring floor."""
    r = log_uniform(rng, max(slowest, 0.01), FASTEST)
    log_step = np.full(steps, -r)
    early = min(steps // 4, int(40 / r))  # rises before the loss is near the scoring floor 1e-24 L_0
    rises = rng.choice(np.arange(early), size=int(rng.integers(1, 6)), replace=False)
    size = log_uniform(rng, 1e-6, 1.0)
    log_step[rises] = math.log1p(size)
    curve = np.exp(np.concatenate([[0.0], np.cumsum(log_step)]))
    return _case(rng, _floor(rng, curve), rate=r, rises=len(rises), rise=size)


# --- The declared zone: what the decision answers "zone" on (expect "zone" once the core has it) ------


def stretched_in_the_zone(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Stretched exponential, k 0.69..0.84 (octave ratio 0.807..0.895), last half at least 1.2 nat (D 4..60)."""
    return _stretched(rng, steps, float(rng.uniform(0.69, 0.84)), log_uniform(rng, 4.0, 60.0))


def power_law_in_the_zone(rng: np.random.Generator, steps: int, slowest: float) -> Case:
    """Offset power law, tau 1.11..2.9 steps, p from 1.1 nat over the last half up to 16 (octave 0.80..0.90)."""
    t = np.arange(steps + 1, dtype=np.float64)
    x = log_uniform(rng, 1.11, 2.9)
    p = log_uniform(rng, 1.1 / math.log((x + 1) / (x + 0.5)), 16.0)
    return _case(rng, (1 + t / (x * steps)) ** -p, tau=x * steps, p=p)


def zone_generators(steps: int, slowest: float) -> tuple[tuple[str, Callable[[np.random.Generator], Case]], ...]:
    """Return (name, generator) of the zone's families at a horizon: the decision answers "zone" on every case."""
    return (
        ("stretched exponential, k 0.69..0.84", partial(stretched_in_the_zone, steps=steps, slowest=slowest)),
        ("offset power law, tau 1.11..2.9 S, 1 nat late", partial(power_law_in_the_zone, steps=steps, slowest=slowest)),
    )


def linear_rate_families(steps: int, slowest: float, cases: int = 200) -> tuple[Family, ...]:
    """Return the linear-rate families at a horizon of ``steps``, positives down to the per-step rate ``slowest``."""
    spec = f"{steps} steps, slowest settled rate {slowest:.3g}"

    def fam(name: str, expect: Expect, gen: Callable[..., Case], grid: str, why: str) -> Family:
        return Family(name, expect, partial(gen, steps=steps, slowest=slowest), cases, f"{grid}; {spec}", why)

    held = "every step contracts by at least exp(-slowest/10), inside the claims' margin exp(-slowest/20)"
    resolved = "; drawn where the horizon resolves it: the excess log-loss at S/4 is at most r S/36"
    return (
        fam(
            "geometric, noisy, with a float floor",
            "pass",
            geometric,
            "rate -ln c log-uniform slowest..0.3; noise sd 1e-4..0.1 of the decrement; floor 1e-32..1e-26 L_0",
            held,
        ),
        fam(
            "GD on a quadratic (2-20 modes)",
            "pass",
            quadratic,
            "slowest mode's rate slowest..0.1 (log-uniform), others up to 1, Dirichlet weights" + resolved,
            held + "; the rate settles at the slowest mode",
        ),
        fam(
            "GD on a two-mode quadratic",
            "pass",
            two_modes,
            "slow rate slowest..0.1, fast 1.5..50x it, slow weight 1e-4..0.5 (log-uniform)" + resolved,
            held + "; the rate settles at the slow mode",
        ),
        fam(
            "a rate that settles",
            "pass",
            settling,
            "settled rate slowest..0.3; excess a 0..3 (the rate starts at up to 4x), dying out with a time constant "
            "0.01..0.3 of the steps to the floor or the horizon" + resolved,
            held + "; real runs' rates drift down while the kernel settles",
        ),
        fam(
            "a slow early stretch (0.1-0.2x the later rate)",
            "pass",
            slow_start,
            "later rate slowest..0.3; the first 0.02..0.6 of the steps to the floor or horizon at 0.1..0.2 of it",
            held + "; a warm-up's rate rises, which Theorem 1 allows",
        ),
        fam(
            "a warm-up (rate ramps up)",
            "pass",
            warm_up,
            "rate rising linearly from 0.1..0.5 r to r (slowest..0.3) over 0.02..0.6 of the steps to the floor",
            held,
        ),
        fam(
            "geometric to the float floor, jitter there",
            "pass",
            to_the_floor,
            "rate 0.15..1; floor 1e-32..1e-26 L_0, 25% jitter below it",
            held + "; the jitter lies below the 1e-24 L_0 scoring floor",
        ),
        fam(
            "offset power law, p < 3.6",
            "fail",
            power_law_shallow,
            "tau 10..3 steps, p 0.25..3.6 (log-uniform)",
            "the per-step rate p/(tau + t) falls to 0; resolved: octave ratio < 0.8 for tau < 1.097 S, "
            "under 1 nat over the last half beyond",
        ),
        fam(
            "offset power law, tau < 0.9 S",
            "fail",
            power_law_steep,
            "tau 1..0.9 steps, p 0.25..16 (log-uniform), float floor",
            "the per-step rate falls to 0; resolved: the octave ratio is below 0.8 for tau < 1.097 S",
        ),
        fam(
            "stretched exponential exp(-(t/tau)^k), k < 0.67",
            "fail",
            stretched,
            "k 0.2..0.67 (uniform); descent over the horizon e^-D, D 0.5..60 (log-uniform): tau = steps D^(-1/k)",
            "the per-step rate falls like t^(k-1): its octave ratio 2^(k-1) is below 0.8",
        ),
        fam(
            "plateau below the margin, then a drop",
            "fail",
            plateau_then_drop,
            "plateau decrement 1e-4..0.04 of slowest for steps/8..steps/2, then rate slowest..0.3",
            "the plateau contracts 25x or more slower than the slowest real rate: below the margin, a stall",
        ),
        fam(
            "drop to a non-zero floor (stall)",
            "fail",
            stall,
            "floor 1e-8..0.5 L_0 reached by mid-horizon; residual decrement 1e-10..1e-6",
            "the loss stops at a non-zero level: the contraction factor tends to 1",
        ),
        fam(
            "rises at a few steps, then geometric (catapult)",
            "fail",
            catapult,
            "1-5 rises of 1e-6..1x in the first quarter (before the loss nears 1e-24 L_0); then rate max(slowest, "
            "0.01)..0.3",
            "a step that raises the loss breaks L_{t+1} <= (1 - mu alpha) L_t",
        ),
        fam(
            "GD on a two-mode quadratic, settled late (v6)",
            "zone",
            settled_late,
            "slow rate slowest..0.1, fast 3..50x it, slow weight 1e-12..1e-2; kept where the octave ratio is below "
            "0.8 and the fast mode is under 1e-3 of the slow at 5S/8",
            "linear (the rate settles at the slow mode), but its rate fell more than 20% an octave, as a staircase "
            "whose rate halves an octave at a time does: the scored window cannot tell them apart, so undecided",
        ),
        *(
            Family(
                name,
                "zone",
                gen,
                cases,
                f"octave ratio in [0.8, 0.9); {spec}",
                "the octave ratio lies in the declared zone [0.8, 0.9): the scored steps cannot tell it from GD "
                "still settling, so undecided is the right answer",
            )
            for name, gen in zone_generators(steps, slowest)
        ),
    )
