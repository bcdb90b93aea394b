"""C4 v3 design: units until an anytime-valid sequence decides, at the exploratory effect sizes (300 runs each).

python records/c4_design/sequential.py
Betting on the clipped range [-3, 1] (caps 60 and 100), and the normal mixture at sigma 0.5 and 0.6
(caps 40 and 60), batches of 10. Per statistic: (name, mean, sd, threshold, side shown, alpha); the
control's alpha is halved (two statistics, Bonferroni inside the control).
"""

from __future__ import annotations

import numpy as np
from claimcheck.evidence import mean_evidence

CASES = [
    ("stops level", -1.4, 0.43, -1.0, "below", 0.05),
    ("stops trend", -0.8, 0.36, -1 / 6, "below", 0.05),
    ("slows", -0.32, 0.19, -1 / 6, "below", 0.05),
    ("control floor 64: level", -0.83, 0.30, -1.0, "above", 0.025),
    ("control 1/d: slows", 0.03, 0.14, -1 / 6, "above", 0.05),
]


def decided_at(x: np.ndarray, null: float, side: str, alpha: float, sigma: float | None) -> int | None:
    """Return the units at the first look of 10 that decides, or None by the cap."""
    looks = x.size // 10
    for n in range(10, x.size + 1, 10):
        bounds = None if sigma else (-3.0, 1.0)
        ev = mean_evidence(x[:n], null, alpha, looks, bounds, sigma, x.size)
        if (ev.p_below if side == "below" else ev.p_above) <= alpha:
            return n
    return None


def main() -> None:
    rng = np.random.default_rng(0)
    for sigma, caps in ((None, (60, 100)), (0.5, (40, 60)), (0.6, (40, 60))):
        for name, mu, sd, null, side, alpha in CASES:
            for cap in caps:
                ns = [decided_at(np.clip(rng.normal(mu, sd, cap), -3, 1), null, side, alpha, sigma) for _ in range(300)]
                got = [n for n in ns if n]
                med = np.median(got) if got else None
                method = "betting" if sigma is None else f"normal mixture sigma {sigma}"
                print(f"{method}: {name}, cap {cap}: decided {len(got) / len(ns):.2f}, median units {med}")


if __name__ == "__main__":
    main()
