"""Would bfloat16 make C6's standard budget fit? One C6 run in float32 and under CPU bf16 autocast, side by side.

``python benchmarks/c6_bf16.py [--depth 6] [--steps 20] [--offset 3]`` trains one C6 run (the
residual model at depth ``--depth``, C6's standard grid, its step-size rule) twice on one seed of
the **exploratory** pool (offset ``--offset`` of the standard block at base seed 0): once as the
claim does (float32), once inside ``torch.autocast("cpu", dtype=torch.bfloat16)``, where the
products run in bfloat16 (on AMX where the CPU has it) and the weights stay float32. It first
times one feed-forward product at C6's standard shape in both dtypes. After the float32 run it
counts the weights that a first GD step leaves unchanged once cast to bfloat16 (autocast casts them
for every product). It prints one JSON line per measurement: GFLOP/s of the product, the share of
unchanged weights, and per run its wall seconds, Hessian radius, step size and training error every
5 steps. Needs CLAIMCHECK_DATA_DIR (SST-2) and the pretrained encoder.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from claimcheck.protocol.spec import block_seed
from qin2025.c6.residual_depth import seed_data, window_error
from qin2025.data.sst2 import find_sst2
from qin2025.engine.encoder import EncoderConfig, Pretrained, layer_params, load_pretrained
from qin2025.engine.finetune import SentenceData, finetune, init_head, objective

ROOT = Path(__file__).resolve().parents[1]


def product_rate(dtype: torch.dtype, rows: int, inner: int, cols: int, repeat: int = 30) -> float:
    """Return GFLOP/s of a (rows x inner) @ (inner x cols) product in ``dtype`` at one thread."""
    a, b = torch.randn(rows, inner).to(dtype), torch.randn(inner, cols).to(dtype)
    for _ in range(3):
        a @ b
    start = time.perf_counter()
    for _ in range(repeat):
        a @ b
    return 2 * rows * inner * cols * repeat / (time.perf_counter() - start) / 1e9


def unchanged_in_bf16(pre: Pretrained, enc: EncoderConfig, data: SentenceData, seed: int, lr: float) -> float:
    """Return the share of the weights that one GD step of size ``lr`` leaves equal once cast to bfloat16."""
    params = layer_params(pre, enc.n_layers, torch.float32) | init_head(pre.shape.hidden, seed, torch.float32)
    names = list(params)
    leaves = [params[k].clone().requires_grad_(True) for k in names]
    grads = torch.autograd.grad(objective(dict(zip(names, leaves, strict=True)), data, enc, pre), leaves)
    same = total = 0
    for w, g in zip(leaves, grads, strict=True):
        kept = (w.detach() - lr * g).bfloat16() == w.detach().bfloat16()
        same, total = same + int(kept.sum()), total + kept.numel()
    return same / total


def main(argv: list[str]) -> int:
    """Time the product, then train the run in both precisions; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--offset", type=int, default=3, help="offset in the exploratory pool (0-999)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "claims"))
    import test_c6_depth_residual as c6  # the claim module: its grids and setting

    torch.set_num_threads(1)
    grid, seed = c6.GRIDS[1], block_seed(0, 1, args.offset)
    tokens = grid.n_sentences * grid.max_tokens
    for dtype in (torch.float32, torch.bfloat16):
        rate = product_rate(dtype, tokens, 384, 1536)
        print(json.dumps({"product": f"{tokens}x384 @ 384x1536", "dtype": str(dtype), "gflop_s": round(rate, 1)}))
    pre = load_pretrained(None)
    data = seed_data(pre, find_sst2(Path(os.environ["CLAIMCHECK_DATA_DIR"]), "train"), grid, seed)
    cfg = replace(c6.SETTING.config(grid), steps=args.steps)
    for mode in ("float32", "bf16 autocast"):
        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if mode != "float32" else contextlib.nullcontext()
        start = time.perf_counter()
        with ctx:
            run = finetune(pre, EncoderConfig.uniform(args.depth, 1.0), cfg, data, seed)
        row = {
            "mode": mode,
            "depth": args.depth,
            "steps": args.steps,
            "seed": seed,
            "wall_s": round(time.perf_counter() - start, 1),
            "hessian_radius": round(run.hessian_radius, 3),
            "lr": run.lr,
            "error_every_5": [round(float(e), 4) for e in run.error[::5]],
            "window_error": window_error(run.error),
            "final_loss": run.final_loss,
        }
        print(json.dumps(row), flush=True)
        if mode == "float32":
            share = unchanged_in_bf16(pre, EncoderConfig.uniform(args.depth, 1.0), data, seed, run.lr)
            print(json.dumps({"first step": "weights unchanged in bfloat16", "share": round(share, 3)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
