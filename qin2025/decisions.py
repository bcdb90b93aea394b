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

# --- C3: the residual keeps Z at full rank --------------------------------------------------------

FLOOR = "min over the unit's grid of sigma_min(Z)/sigma_min(X)"
COLLAPSED = "min over the unit's draws of sigma_min(Z)/sigma_min(X) with the attention collapsed (S = 11^T/n)"


def _smallest(ratios: Sequence[ArrayLike]) -> float:
    """Return the smallest of every array's values; NaN if any is NaN or there is none (a floor nobody measured)."""
    values = [np.ravel(np.asarray(r, dtype=float)) for r in ratios]
    flat = np.concatenate(values) if values else np.empty(0)
    return float(flat.min()) if flat.size else float("nan")


def floor_decision(floor: Sequence[ArrayLike], collapsed: Sequence[ArrayLike]) -> dict[str, float]:
    """Return the smallest sigma_min(Z)/sigma_min(X) over a unit's grid, and over the same draws collapsed (C3 "floor").

    ``floor``: one array per grid point (a weight draw at one beta), sigma_min(Z)/sigma_min(X) for
    each of the unit's inputs X, Z = Attn(X) + beta X. ``collapsed``: the same ratios with the
    attention of the same weights and inputs collapsed to S = 11^T/n, the limit that Attn(X) tends
    to as it collapses to rank one. A floor holds when both minima meet the threshold: on the grid,
    and at the end of the collapse, so a floor that stays above the threshold on the grid but
    vanishes as the attention collapses further is caught at its limit. A NaN ratio makes its
    minimum NaN, which meets no threshold. (A NaN in Z itself never gets here: the instrument's SVD
    raises on it, and the claim test errors, naming the failure.)
    """
    return {FLOOR: _smallest(floor), COLLAPSED: _smallest(collapsed)}
