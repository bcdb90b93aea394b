"""E1: cost of one fine-tuning run per (N, tokens, L), 1 torch thread; seed 0 only, 5 steps."""

from __future__ import annotations

import sys

from records.c6_design.common import run, sample, save, tokens_per_sample

rows = []
for n, tok in [(24, 8), (128, 8), (256, 8), (256, 16), (512, 8)]:
    data = sample(n, tok, 0)
    pad, mean = tokens_per_sample(data)
    for depth in (1, 6) if n <= 256 else (1,):
        for res in (1.0, 0.0):
            r5 = run(data, depth, res, 5, 0)
            r15 = run(data, depth, res, 15, 0)
            per_step = (r15["cpu_s"] - r5["cpu_s"]) / 10
            row = dict(
                n=n,
                tokens=tok,
                pad=pad,
                mean_tokens=mean,
                L=depth,
                res=res,
                rho=r5["rho"],
                setup_s=r5["cpu_s"] - 5 * per_step,
                per_step_s=per_step,
            )
            print(row, flush=True)
            rows.append(row)
save("e1_timing", rows)
sys.exit(0)
