"""The unit decision of claim C3: a plain function of a unit's raw measurements returning its statistics.

C3's protocol part names it as its ``decision``; the claim test scores every real unit with it
(``ClaimRecorder.score``) and ``claimcheck calibrate`` runs it on cases whose answer is known
(``qin2025.calibration``). The other claims' decisions live beside their machinery: C1's and C8's in
``qin2025.linrate``, C2's in ``qin2025.checks``, C4's in ``qin2025.collapse``, C5's in
``qin2025.residual_speed``, C6's in ``qin2025.residual_depth``, C7's in ``qin2025.conditioning``.
docs/calibration.md lists every decision with its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from qin2025.spectral import floor_ratio

# --- C3: the residual keeps Z at full rank --------------------------------------------------------

FLOOR = "min over the unit's grid of sigma_min(Z)/sigma_min(X)"
COLLAPSED = "min over the unit's draws of sigma_min(Z)/sigma_min(X) with the attention collapsed (S = 11^T/n)"


def _min_ratio(z: Sequence[ArrayLike], x: Sequence[ArrayLike]) -> float:
    return float(min(float(np.min(floor_ratio(a, b))) for a, b in zip(z, x, strict=True)))


def floor_decision(
    z: Sequence[ArrayLike], x: Sequence[ArrayLike], z_collapsed: Sequence[ArrayLike]
) -> dict[str, float]:
    """Return the smallest sigma_min(Z)/sigma_min(X) over a unit's grid, and over the same draws collapsed (C3 "floor").

    ``z`` and ``x``: matching arrays of shape (..., n, d), one pair per grid point (a weight draw at
    one beta on the unit's inputs X). ``z_collapsed``: for each point, Z of the same weights and
    inputs with the attention collapsed to S = 11^T/n, the limit that Attn(X) tends to as it
    collapses to rank one. A floor holds when both minima meet the threshold: on the grid, and at
    the end of the collapse, so a floor that stays above the threshold on the grid but vanishes as
    the attention collapses further is caught at its limit.
    """
    return {FLOOR: _min_ratio(z, x), COLLAPSED: _min_ratio(z_collapsed, x)}
