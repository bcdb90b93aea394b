"""Limits over a finite grid: a decay to zero, a level-off, and when the grid cannot tell them apart.

C4 reads two limit statements over d_QK = d x q, q in (1, 4, 16, 64, 256): attention tends to rank
one (sigma_2/sigma_1 -> 0), and the rate without the residual tends to zero against the rate with
it. Two worlds make the curve y(q):

- a *decay* y = y_1 q^-s: it tends to zero at any s > 0;
- a *level-off* y = F + (y_1 - F) q^-s': it tends to F > 0.

On a finite grid each can imitate the other: a decay is what a level-off looks like before it nears
its floor, and a level-off flat over the grid is what a slow enough decay looks like. The sample
measures log y at each grid point to within a precision ``eta`` (twice the standard error of the
sample's mean, so a difference larger than eta is seen at about 95%). A decay is *told from* the
level-offs at floors in [f_low, f_high] when no such level-off (any y_1, s') comes within eta of it
at every grid point the part reads; a level-off is told from the decays when no decay with
s >= ``SLOWEST`` does (a decay slower than that halves only over 1000x of d_QK, over the grid it is
flat). A curve that is not told apart from the other world is in the zone: its right answer is
"undecided" at this grid, and a grid reaching further (a larger d_QK) or a larger sample (smaller
eta) would resolve it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Points = Sequence[float] | np.ndarray
SLOWEST = 0.1  # the slowest decay counted as one: 2^-1 over q^0.1 = 1000x
_S_GRID = np.linspace(0.02, 3.0, 150)  # level-off exponents s' searched
_F_POINTS = 24  # floors searched in [f_low, f_high]


def decay(q: np.ndarray, y1: float, s: float) -> np.ndarray:
    """Return y_1 q^-s."""
    return y1 * q**-s


def level_off(q: np.ndarray, y1: float, floor: float, s: float) -> np.ndarray:
    """Return F + (y_1 - F) q^-s'."""
    return floor + (y1 - floor) * q**-s


def _chebyshev_offset(dev: np.ndarray) -> np.ndarray:
    """Return the smallest max |dev - c| over the last axis, over the offset c: half the range."""
    out: np.ndarray = (dev.max(axis=-1) - dev.min(axis=-1)) / 2
    return out


def decay_matched_by_level_off(q: Points, y: Points, f_low: float, f_high: float, eta: float) -> bool:
    """Return whether a level-off with a floor in [f_low, f_high] comes within ``eta`` in log of ``y`` at every ``q``.

    For a floor F and exponent s' the best amplitude A (y = F + A q^-s') is searched on a grid of
    log A; a point y_i <= F can only be matched from below within eta.
    """
    qa, ya = np.asarray(q, float), np.log(np.asarray(y, float))
    floors = np.linspace(f_low, f_high, _F_POINTS)
    log_a = np.linspace(-12.0, 3.0, 400)
    for floor in floors:
        if math.log(floor) > ya.min() + eta:
            continue  # the level-off never goes below F; y does, by more than eta
        # (s', A, point) -> log of the level-off
        curve = np.log(floor + np.exp(log_a)[None, :, None] * qa[None, None, :] ** -_S_GRID[:, None, None])
        if np.abs(curve - ya).max(axis=-1).min() <= eta:
            return True
    return False


def level_off_matched_by_decay(q: Points, y: Points, eta: float) -> bool:
    """Return whether some decay with s >= SLOWEST comes within ``eta`` in log of ``y`` at every ``q``."""
    lq, ly = np.log(np.asarray(q, float)), np.log(np.asarray(y, float))
    slopes = np.linspace(SLOWEST, 3.0, 600)
    dev = ly[None, :] + slopes[:, None] * lq[None, :]  # log y_1 that each point asks for
    return bool(_chebyshev_offset(dev).min() <= eta)
