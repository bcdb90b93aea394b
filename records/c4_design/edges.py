"""C4 v3 design: the stops and slows decisions at the edges of their families (400 samples each).

python records/c4_design/edges.py
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from claimcheck.calibration import accepts, decide_case

from claimcheck.protocol import Part, Stat
from qin2025 import collapse as c
from qin2025.calibration import collapse as f

STOPS = Part(
    "stops",
    "",
    (Stat(c.STOPS_LEVEL, "<=", -1.0), Stat(c.STOPS_TREND, "<=", c.TREND)),
    rule="mean",
    bounds=c.BOUNDS,
    decision=c.stops_decision,
)
SLOWS = Part("slows", "", (Stat(c.SLOWS, "<=", c.TREND),), rule="mean", bounds=c.BOUNDS, decision=c.slows_decision)
Shape = Callable[[np.ndarray], np.ndarray]


def accepted(part: Part, span: tuple[int, ...], shape: Shape, units: int, rng: np.random.Generator) -> float:
    """Return the share of 400 samples of ``units`` seeds following ``shape`` that ``part`` accepts."""
    return float(
        np.mean([accepts(part, decide_case(part, f._sample(rng, units, span, shape).measurements)) for _ in range(400)])
    )


def main() -> None:
    rng = np.random.default_rng(1)
    for units in (14, 30):
        for s in (0.5, 1.0, 2.0):
            share = accepted(STOPS, c.FAR, lambda q, s=s: 0.1 + 0.9 * q**-s, units, rng)
            print(units, f"stops accepts a saturation at 0.1 (start 1, exponent {s}): {share}")
        print(
            units, "stops accepts 0.3 + 0.7 q^-0.5:", accepted(STOPS, c.FAR, lambda q: 0.3 + 0.7 * q**-0.5, units, rng)
        )
        for s in (0.5, 0.6):
            print(units, f"stops accepts q^-{s}:", accepted(STOPS, c.FAR, lambda q, s=s: q**-s, units, rng))
        print(units, "slows accepts q^-0.25:", accepted(SLOWS, c.NEAR, lambda q: q**-0.25, units, rng))
        print(
            units, "slows accepts 0.5 + 0.5 q^-2:", accepted(SLOWS, c.NEAR, lambda q: 0.5 + 0.5 * q**-2.0, units, rng)
        )


if __name__ == "__main__":
    main()
