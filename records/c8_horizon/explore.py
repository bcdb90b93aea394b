"""C8 v6 design: settling times of the exploratory runs, to choose each depth's horizon (issue 52).

Runs C8's regime (claims/test_c8_multilayer.py: N=4 n=8 d=64 d_QK=16, beta = 1, mu = 1/3 x
2/lambda_max(0), float64) on the exploratory seeds 0-15 at L = 2, 3, 4 for a long horizon (in
batches of 4 seeds, each cached; batched runs give the bits of single ones on CPU), and scores every
prefix L_0..L_S (S on a grid) with C1's linear-rate decision. A run's settling time is the smallest
grid S from which every longer prefix passes. Seeds 0-15 were looked at in v4/v5's design
(exploratory).

    PYTHONPATH=. python records/c8_horizon/explore.py [cache_dir [depth ...]]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from claimcheck.store.cache import ResultCache
from qin2025.c1.linear_rate import DEPTH_BAR, OCTAVE_BAR, linear_rate_decision, margin_ratio, rate_profile
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

LONG = {2: 6000, 3: 8000, 4: 16000}
SLOWEST = {2: 0.005, 3: 0.004, 4: 0.001}
SEEDS = range(16)
GRID = 250


def verdict(loss: np.ndarray, slowest: float) -> str:
    out = linear_rate_decision(loss)
    if "zone" in out:
        return "zone"
    ok = out["worst step ratio c = max L_{t+1}/L_t"] <= margin_ratio(slowest)
    ok = ok and out["descent over the last half ln(L_{S/2}/L_S)"] >= DEPTH_BAR
    ok = ok and out["octave ratio r(S/2..S)/r(S/4..S/2)"] >= OCTAVE_BAR
    return "pass" if ok else "fail"


def main() -> None:
    cache = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    train = Trainer(ResultCache(cache))
    out: dict[str, object] = {}
    only = [int(a) for a in sys.argv[2:]] or list(LONG)
    for layers, steps in ((k, v) for k, v in LONG.items() if k in only):
        cfg = ModelConfig(d=64, d_qk=16, d_out=1, n_layers=layers, beta=1.0)
        tcfg = TrainConfig(steps=steps, lr_fraction=1 / 3)
        runs = [Run(cfg, tcfg, make_synthetic(4, 8, 64, 1, s), s) for s in SEEDS]
        rows = []
        trajs = [t for i in range(0, len(runs), 4) for t in train.batch(runs[i : i + 4])]  # cached every 4 seeds
        for traj in trajs:
            loss = np.asarray(traj.loss)
            grid = [*range(GRID, loss.size, GRID), loss.size - 1]
            marks = {s: verdict(loss[: s + 1], SLOWEST[layers]) for s in grid if s >= 16}
            settle = None
            for s in sorted(marks, reverse=True):
                if marks[s] != "pass":
                    break
                settle = s
            rises = int(np.sum(~(loss[1:] <= loss[:-1] * (1 + 1e-12))))
            p = rate_profile(loss)
            rows.append(
                {
                    "seed": traj.seed,
                    "steps_run": int(loss.size - 1),
                    "floor_step": p.floor_step,
                    "rises": rises,
                    "settled_from": settle,
                    "at": {str(s): marks[s] for s in (1500, 2000, 4000, 8000, 12000, 16000) if s in marks},
                    "late_rate": p.late,
                }
            )
            print(layers, rows[-1], flush=True)
        out[f"L{layers}"] = rows
    name = "explore.json" if len(sys.argv) <= 2 else f"explore-L{'-'.join(sys.argv[2:])}.json"
    Path(__file__).with_name(name).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
