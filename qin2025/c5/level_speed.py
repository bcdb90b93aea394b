"""C5's instrument (v4): a larger beta converges faster when its loss is lower at equal steps after the fast phase.

The reading is the paper's own way of reading loss curves: once the fast initial phase is over, the
faster run is the one whose loss is lower at equal steps (equivalently, that reaches a common level
in fewer steps). The level is read at two checkpoints of the horizon T, at T/2 and at T, on the
log of the loss:

- "order" (one seed, every beta): Spearman rho(beta, -L(T/2)) >= 0.9 and rho(beta, -L_T) >= 0.9,
  the larger beta lower at both checkpoints (``order_decision``);
- "beta>0 vs beta=0" (one seed; mean over seeds): per beta > 0 the level advantage
  a = min over the checkpoints of (L_0(t) - L_beta(t)) / (L_0(t) + L_beta(t)), in [-1, 1]; 0 is no
  effect, a > 0 is lower at both checkpoints (``faster_decision``). (L_0(t) here is the beta = 0
  run's loss at step t, not a starting loss.)

Why this is blind to the starting loss: beta moves L_0 through the output's scale at initialisation,
which the first few GD steps fit away (on the Jena runs 90% of the descent goes in the first 3-27
steps), so by T/2 the start has left no trace in the level. Why it sees a speed-up: a run made c
times faster (a larger step) is, to first order, the same curve at c times the time, L(c t), which
is lower at every t of a descending run. After the fast phase the Jena runs descend like power laws,
F + A (t/tau)^-p, and for such a curve a time rescaling by c is exactly an amplitude c^-p times
smaller: the level is the one thing a speed-up changes, so only a level can see it.

What the level cannot tell apart, and what the decisions do there (records/claims/c5.md, v4):

- *A floor reached within T*. When a run's loss has stopped moving, its level is its floor, and a
  lower floor is a better minimum, not a faster convergence. A run whose loss falls by less than
  ``FLAT`` in log over the last quarter [3T/4, T] has flattened; a unit with such a run is in the
  declared zone: every statistic is NaN and the dict carries ``"zone": 1.0`` (undecided, neither pass
  nor fail). A longer horizon resolves nothing there; a different reading (time to reach one's own
  floor) would be needed.
- *A lower floor not reached within T*. While every run is still descending, its floor is not
  observed (any value is an extrapolation), and a lower level at equal steps is read as faster. This
  is the reading, stated, not a finding: such a world is counted as faster.

Signatures (plain, for outside calibration families): ``order_decision(betas, curves)`` and
``faster_decision(betas, curves)`` take the betas (a sequence of floats; for ``faster_decision``
beta = 0 first) and one loss curve L_0..L_T per beta (1-D arrays, same seed, same step size), and
return a dict of statistics (names below), plus ``"zone": 1.0`` with NaN statistics in the zone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from claimcheck.decide.stats import spearman

CHECKPOINTS = (0.5, 1.0)  # the level is read at these fractions of the horizon T
FLAT_FROM = 0.75  # a run has flattened when its loss falls by less than FLAT in log over [FLAT_FROM x T, T]
FLAT = 0.01  # 1% in the last quarter; the Jena runs fall by 2.2-23% there at ci (exploratory seeds 0-23)
FEWER = 0.1  # "significantly": at least 10% fewer steps, in either reading (fixed before v5 ran; records/claims/c5.md)
ZONE = "zone"  # the key of a unit in the declared zone (a floor reached within T): statistics NaN

HALF_RHO = "Spearman rho(beta, -L(T/2))"
END_RHO = "Spearman rho(beta, -L_T)"


def saved_name(beta: float) -> str:
    """Return the name of the mean fraction of steps ``beta`` saves to reach beta = 0's loss at T."""
    return f"mean over seeds of the steps saved by beta={beta:g} to beta=0's L_T (fraction of T)"


def _curve(curve: ArrayLike) -> np.ndarray:
    loss = np.asarray(curve, dtype=np.float64)
    if loss.ndim != 1 or loss.size < 5:
        raise ValueError(f"a loss curve is a 1-D array L_0..L_T with T >= 4, got shape {loss.shape}")
    return loss


def levels(curve: ArrayLike) -> tuple[float, ...]:
    """Return the loss at each checkpoint of ``CHECKPOINTS`` (steps round(fraction x T))."""
    loss = _curve(curve)
    steps = loss.size - 1
    return tuple(float(loss[round(f * steps)]) for f in CHECKPOINTS)


def late_fall(curve: ArrayLike) -> float:
    """Return log(L(3T/4) / L_T): how much the loss still falls over the last quarter (NaN if not finite)."""
    loss = _curve(curve)
    a, b = loss[round(FLAT_FROM * (loss.size - 1))], loss[-1]
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or b <= 0:
        return math.nan
    return math.log(a / b)


def flattened(curve: ArrayLike) -> bool:
    """Return whether the run has reached its floor within T: its loss falls by less than ``FLAT`` over [3T/4, T]."""
    fall = late_fall(curve)
    return math.isfinite(fall) and fall < FLAT


def in_zone(curves: Sequence[ArrayLike]) -> bool:
    """Return whether any run of a unit has flattened (its level is then its floor, not its speed)."""
    return any(flattened(c) for c in curves)


def _rho(betas: Sequence[float], values: Sequence[float]) -> float:
    if not all(math.isfinite(v) for v in values):
        return math.nan
    return spearman(betas, [-v for v in values]).rho


def order_decision(betas: Sequence[float], curves: Sequence[ArrayLike]) -> dict[str, float]:
    """Return one seed's rho(beta, -L(T/2)) and rho(beta, -L_T) (C5 "order"; NaN and ``"zone": 1.0`` in the zone)."""
    if len(betas) != len(curves):
        raise ValueError(f"order_decision needs one curve per beta, got {len(betas)} betas and {len(curves)} curves")
    if in_zone(curves):
        return {HALF_RHO: math.nan, END_RHO: math.nan, ZONE: 1.0}
    at = [levels(c) for c in curves]
    return {HALF_RHO: _rho(betas, [a[0] for a in at]), END_RHO: _rho(betas, [a[1] for a in at])}


def steps_saved(curve: ArrayLike, curve0: ArrayLike) -> float:
    """Return the fraction of the horizon ``curve`` saves to reach ``curve0``'s loss at T (negative: ``curve0`` saves).

    ``1 - t/T`` with t the first step at which ``curve`` is at or below ``curve0``'s L_T; when ``curve``
    ends above it, minus the same fraction for ``curve0`` reaching ``curve``'s L_T. In [-1, 1]; 0 is no
    effect. A time rescaling L(t) = L0(c t) saves exactly 1 - 1/c.
    """
    run, base = _curve(curve), _curve(curve0)
    if run.size != base.size:
        raise ValueError(f"steps_saved compares curves of one horizon, got {run.size - 1} and {base.size - 1} steps")
    if not (np.isfinite(run).all() and np.isfinite(base).all()):
        return math.nan
    steps = run.size - 1
    if run[-1] <= base[-1]:
        return 1 - int(np.argmax(run <= base[-1])) / steps
    return -(1 - int(np.argmax(base <= run[-1])) / steps)


def lower_faster_decision(betas: Sequence[float], curves: Sequence[ArrayLike]) -> dict[str, float]:
    """Return one seed's steps saved by every beta > 0 to reach beta = 0's L_T (C5 "lower: beta>0 vs beta=0").

    NaN statistics and ``"zone": 1.0`` when a run of the seed has flattened (the declared zone).
    """
    names = [saved_name(b) for b in against_zero(betas, curves, "lower_faster_decision")]
    if in_zone(curves):
        return {**dict.fromkeys(names, math.nan), ZONE: 1.0}
    return {name: steps_saved(curves[j + 1], curves[0]) for j, name in enumerate(names)}


def against_zero(betas: Sequence[float], curves: Sequence[ArrayLike], who: str) -> Sequence[float]:
    """Return the betas > 0 of a comparison with beta = 0 (first); ValueError naming ``who`` otherwise."""
    if not betas or betas[0] != 0:
        raise ValueError(f"{who} compares every beta with beta = 0, which must come first; got {betas}")
    if len(betas) != len(curves):
        raise ValueError(f"{who} needs one curve per beta, got {len(betas)} betas and {len(curves)} curves")
    return betas[1:]
