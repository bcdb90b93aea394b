"""The tolerances of ``--claim-baseline-exact``: how far a statistic may move and still count as the same bits.

Apart from the comparison (``gate.baseline``), so that reading the options loads no statistics.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    """Relative tolerances of the bit-identity check: on the same hardware, and across hardware."""

    same: float = 0.0  # float64 on one machine is reproducible bit for bit
    cross: float = 0.05  # another CPU/GPU, BLAS or torch build may reorder sums


DEFAULT_TOLERANCE = Tolerance()
