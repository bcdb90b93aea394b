"""How much does a second torch thread speed up a C6 GD step? One step at standard's shape, 1 and 2 threads, alternated.

``python benchmarks/c6_threads.py [--depth 6] [--steps 5] [--rounds 3] [--offset 0] [--processes]``
builds the sample of one seed of the **exploratory** pool (offset ``--offset`` of the standard
block at base seed 0: N = 256 sentences, 8 tokens), takes the residual model truncated to
``--depth`` layers and times ``--steps`` full-batch gradient evaluations (forward, loss, backward:
what one GD step of ``qin2025.engine.finetune.finetune`` costs) at 1 thread, then at 2, ``--rounds`` times
alternated, so a change of the machine's load hits both. With ``--processes`` the second
configuration is 2 processes x 1 thread instead: two processes time the same steps at once, and the
speed-up is the throughput of the pair over one process alone (two units at a time, as two xdist
workers would run them). It prints one JSON line per measurement (wall and CPU seconds per step,
the load average) and one with the median speed-up. Needs CLAIMCHECK_DATA_DIR (SST-2) and the
pretrained encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import torch

from claimcheck.protocol.spec import block_seed
from qin2025.c6.residual_depth import seed_data
from qin2025.data.sst2 import find_sst2
from qin2025.engine.encoder import EncoderConfig, layer_params, load_pretrained
from qin2025.engine.finetune import init_head, objective

ROOT = Path(__file__).resolve().parents[1]


STEP: dict[str, Any] = {}  # what timed_steps times: leaves, data, enc, pre, steps (set by main before any fork)


def timed_steps(threads: int) -> tuple[float, float]:
    """Return (wall, CPU) seconds per gradient step of STEP's model at ``threads`` torch threads."""
    leaves, data, enc, pre = STEP["leaves"], STEP["data"], STEP["enc"], STEP["pre"]
    torch.set_num_threads(threads)
    torch.autograd.grad(objective(leaves, data, enc, pre), list(leaves.values()))  # warm-up
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(STEP["steps"]):
        torch.autograd.grad(objective(leaves, data, enc, pre), list(leaves.values()))
    return (time.perf_counter() - wall) / STEP["steps"], (time.process_time() - cpu) / STEP["steps"]


def main(argv: list[str]) -> int:
    """Time the step at 1 and 2 threads, alternated; print JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--offset", type=int, default=0, help="offset in the exploratory pool (0-999)")
    parser.add_argument("--processes", action="store_true", help="compare with 2 processes x 1 thread, not 2 threads")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "claims"))
    import test_c6_depth_residual as c6  # the claim module: its standard grid

    grid, seed = c6.GRIDS[1], block_seed(0, 1, args.offset)
    pre = load_pretrained(None)
    data = seed_data(pre, find_sst2(Path(os.environ["CLAIMCHECK_DATA_DIR"]), "train"), grid, seed)
    enc = EncoderConfig.uniform(args.depth, 1.0)
    params = layer_params(pre, args.depth, torch.float32) | init_head(pre.shape.hidden, seed, torch.float32)
    leaves = {k: v.clone().requires_grad_(True) for k, v in params.items()}
    STEP.update(leaves=leaves, data=data, enc=enc, pre=pre, steps=args.steps)  # forked processes inherit it

    second = "2 processes x 1 thread" if args.processes else "2 threads"
    per_step: dict[str, list[float]] = {"1 thread": [], second: []}
    for _ in range(args.rounds):
        for how in per_step:
            if how == "2 processes x 1 thread":
                with ProcessPoolExecutor(2, mp_context=get_context("fork")) as pool:
                    pair = list(pool.map(timed_steps, (1, 1)))
                wall = max(w for w, _ in pair) / 2  # two steps' worth of work per step time: the pair's throughput
                cpu = sum(c for _, c in pair) / 2
            else:
                wall, cpu = timed_steps(1 if how == "1 thread" else 2)
            per_step[how].append(wall)
            row = {"how": how, "depth": args.depth, "wall_s_per_step": round(wall, 3)}
            row |= {"cpu_s_per_step": round(cpu, 3), "load": os.getloadavg()[0]}
            print(json.dumps(row), flush=True)
    one, two = statistics.median(per_step["1 thread"]), statistics.median(per_step[second])
    print(
        json.dumps(
            {"depth": args.depth, "median_wall_s_per_step": {"1 thread": one, second: two}, "speedup": one / two}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
