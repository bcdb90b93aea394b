"""Time and count one C6 unit (one seed) at a budget: what a standard run of C6 costs, without running 12 seeds.

``python benchmarks/c6_unit.py [--budget standard] [--offset 0]`` trains one seed of C6 as the
claim does (``run_seed`` at both depths, with and without residuals, then the one-label control's
run; the control's residual run is the claim's own, read from the cache), on a seed of the
**exploratory** pool (offset ``--offset`` of the budget's block at base seed 0), so no
confirmatory seed is spent. It runs at one torch thread, as the claim does by default, inside
``torch.utils.flop_counter.FlopCounterMode`` and prints one JSON line: the unit's matmul FLOPs, its
wall and CPU seconds (under the counter: an upper bound on a plain run's), and the FLOPs per CPU
second. Needs CLAIMCHECK_DATA_DIR (SST-2) and the pretrained encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from claimcheck.protocol import block_seed
from claimcheck.store import ResultCache
from qin2025.data.sst2 import find_sst2
from qin2025.encoder import load_pretrained
from qin2025.residual_depth import run_one_label, run_seed
from qin2025.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = {"ci": (0, 0), "standard": (1, 1), "paper": (2, 2)}  # name -> (position in the suite's list, grid scale)


def main(argv: list[str]) -> int:
    """Train and count one exploratory C6 unit; print its figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="standard", choices=sorted(BUDGETS))
    parser.add_argument("--offset", type=int, default=0, help="offset in the exploratory pool (0-999)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "claims"))
    import test_c6_depth_residual as c6  # the claim module: its grids and setting

    position, scale = BUDGETS[args.budget]
    grid, seed = c6.GRIDS[scale], block_seed(0, position, args.offset)
    torch.set_num_threads(1)
    pre = load_pretrained(None)
    path = find_sst2(Path(os.environ["CLAIMCHECK_DATA_DIR"]), "train")
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(ResultCache(Path(tmp)))
        wall, cpu = time.perf_counter(), time.process_time()
        with FlopCounterMode(display=False) as counter:
            run_seed(trainer, pre, path, grid, c6.SETTING, seed)
            run_one_label(trainer, pre, path, grid, c6.SETTING, seed)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    flops = counter.get_total_flops()
    row = {
        "budget": args.budget,
        "seed": seed,
        "grid": {"n_sentences": grid.n_sentences, "max_tokens": grid.max_tokens, "steps": grid.steps},
        "flops": flops,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "gflop_per_cpu_s": round(flops / cpu / 1e9, 1),
    }
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
