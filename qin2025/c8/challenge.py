"""Challenge families for C8: C1's linear-rate world (``qin2025.c1.challenge``) at each depth's horizon.

C8 reads each depth as C1 reads one block ("every step contracts and the rate settles at a positive
value"), over a horizon that grows with depth: 3,500 steps at L = 2, 4,500 at L = 3, 17,500 at L = 4
(v6; v5's were 1,500, 2,000, 4,000), runs stopping at 1e-24 L_0. The makers scale with the horizon
(the settled rate descends 15-80 nats over it), so the bands (q >= 0.95 pass, q <= 0.80 fail, q >=
0.88 zone) and their arithmetic are C1's: a stretched exponential's q = 2^(k-1) does not depend on
the horizon, and a GD run's q is capped by the scoring floor (55.3 nats) at any depth.
"""

from __future__ import annotations

from claimcheck.protocol.spec import Family
from qin2025.c1.challenge import families

HORIZONS = {2: 3500, 3: 4500, 4: 17500}  # depth -> GD steps (the claim's horizon, v6)


def c8_families(depth: int) -> tuple[Family, ...]:
    """Return the challenge families of C8's part at ``depth`` stacked blocks."""
    return families(HORIZONS[depth])
