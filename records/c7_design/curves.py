"""E2: the loss curves along the kx (or vc) lever (beta = 1): is the rate steady, and from which step?

Run: nice -n 10 python records/c7_design/curves.py STEPS [seeds...] [vc]   (default 400, seeds 0-1, kx lever)
Prints per run log10(L_t/L_0) at a few steps and the local rate (orders per step) in windows, beside
the rate a linearised model would reach, 2 f lambda_min/lambda_max of the NTK (f = 0.5), in orders per step.
"""

from __future__ import annotations

import sys

import numpy as np

from qin2025.engine.batched import Run
from qin2025.engine.train import TrainConfig
from records.c7_design.common import Config, build, model_cfg, ntk_condition, train_from

KX = (1.0, 3.0, 10.0, 30.0, 100.0)
VC = (1.0, 0.3, 0.1, 0.03, 0.01)


def main(steps: int, seeds: list[int], lever: str = "kx") -> None:
    configs = [(Config(**{lever: k}), s) for s in seeds for k in (KX if lever == "kx" else VC)]  # type: ignore[arg-type]
    built = [build(c, s) for c, s in configs]
    tcfg = TrainConfig(steps=steps, lr_fraction=0.5, rel_floor=0.0)
    runs = [Run(model_cfg(c), tcfg, d, s) for (c, s), (_, d) in zip(configs, built, strict=True)]
    trajs = train_from(runs, [p for p, _ in built])
    marks = [t for t in (0, 10, 25, 50, 100, 200, 300, 400, 800, 1200) if t <= steps]
    wins = [
        (a, b) for a, b in ((0, 25), (25, 50), (50, 100), (100, 200), (200, 400), (400, 800), (800, 1200)) if b <= steps
    ]
    print(
        f"seed {lever} | log10 L_t/L_0 at "
        + ",".join(map(str, marks))
        + " | window rates "
        + ",".join(f"{a}-{b}" for a, b in wins)
        + " | ntk-rate"
    )
    for (c, s), (p, d), tr in zip(configs, built, trajs, strict=True):
        lg = np.log10(tr.loss / tr.loss[0])
        at = [lg[t] if t < len(lg) else np.nan for t in marks]
        wr = [-(lg[b] - lg[a]) / (b - a) if b < len(lg) else np.nan for a, b in wins]
        k = ntk_condition(p, d, model_cfg(c))
        pred = -2 * np.log10(1 - 2 * 0.5 * k)
        print(
            f"{s:>3} {getattr(c, lever):>5g} | "
            + " ".join(f"{v:7.2f}" for v in at)
            + " | "
            + " ".join(f"{v:.4f}" for v in wr)
            + f" | {pred:.4f}"
        )


if __name__ == "__main__":
    lev = "vc" if "vc" in sys.argv else "kx"
    args = [int(a) for a in sys.argv[1:] if a != "vc"]
    main(args[0] if args else 400, args[1:] or [0, 1], lev)
