"""Score C4 v5's "stops" part (still falling over 16-256 d) on the cases issue 38 quotes (records/claims/c4.md).

python records/c4_design/stops_v5.py [CASES]

Samples of 30 and 14 seeds (the v5 and v4 ci units), drawn as ``qin2025.c4.calibration``
draws them: falls that level off at 0.02..0.09 (knee anywhere from q = 2 to past the grid), and
slow decays to 0, a q^-s with s 0.2..0.6. Prints the shares REPRODUCED / NOT REPRODUCED /
undecided (the mean shown below TREND, above it, neither).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from claimcheck.calibration import decide_case
from claimcheck.commands.calibrate import load_protocols

from qin2025.c4.calibration import _sample, _start
from qin2025.c4.collapse import FAR, STOPS_TREND
from qin2025.calibration.draw import log_uniform


def levels_off(rng: np.random.Generator, units: int) -> Any:
    a, level, knee = _start(rng), float(rng.uniform(0.02, 0.09)), log_uniform(rng, 2.0, 1024.0)
    s = math.log((a - level) / level) / math.log(knee)
    return _sample(rng, units, FAR, lambda q: level + (a - level) * q**-s, level=level, knee=knee)


def slow_decay(rng: np.random.Generator, units: int) -> Any:
    a, s = _start(rng), float(rng.uniform(0.2, 0.6))
    return _sample(rng, units, FAR, lambda q: a * q**-s, exponent=s)


def main(cases: int) -> None:
    proto = next(p for p in load_protocols([Path("claims")]) if p.claim_id == "C4")
    part = proto.part("stops")
    stat = part.stats[0]
    for units in (30, 14):
        for name, draw in (("levels off at 0.02..0.09", levels_off), ("slow decay q^-s, s 0.2..0.6", slow_decay)):
            got: Counter[str] = Counter()
            for i in range(cases):
                case = draw(np.random.default_rng([units, i]), units)
                v = decide_case(part, case.measurements)[STOPS_TREND]
                shown_below = v.high <= stat.threshold  # type: ignore[union-attr]
                shown_above = v.low > stat.threshold  # type: ignore[union-attr]
                got["REPRODUCED" if shown_below else "NOT REPRODUCED" if shown_above else "undecided"] += 1
            print(f"{units} seeds, {name}: {dict(got)} of {cases}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
