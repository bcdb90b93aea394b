"""Time and count one C6 unit (one seed) at a budget, run by run and phase by phase, on the exploratory pool.

``python benchmarks/c6_unit.py [--budget standard] [--offset 0] [--threads 1] [--depths 1,6]
[--cache-dir DIR] [--out FILE]`` trains one seed of C6 as the claim does (``run_seed`` at each
depth, with and without residuals, then the one-label control's run; the control's residual run
is the claim's own, read from the cache), on a seed of the **exploratory** pool (offset
``--offset`` of the budget's block at base seed 0), so no confirmatory seed is spent.

Per run it measures wall and CPU seconds, the seconds inside the Hessian power iteration (the
step-size rule: mu = fraction x 2/rho, no search), the seconds of the GD steps (the rest), the
matmul FLOPs of each (``torch.utils.flop_counter.FlopCounterMode``: its bookkeeping is per op and
the ops here take milliseconds, so the times are a plain run's to within a few per cent), and the
run's curves. It prints one JSON line per run and one for the unit, and with ``--out`` writes them
all to one JSON file (the curves are the exploratory data the C6 design simulates from). With
``--cache-dir`` the runs go into a result cache under the claim's own keys, so
``pytest claims/test_c6_depth_residual.py --claim-pool exploratory --claim-cache-dir DIR`` reuses
them. Needs CLAIMCHECK_DATA_DIR (SST-2) and the pretrained encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

import qin2025.engine.finetune as ft
from claimcheck.protocol.spec import block_seed
from claimcheck.store.cache import ResultCache
from qin2025.c6.residual_depth import flip_one, seed_data, window_error
from qin2025.data.sst2 import find_sst2
from qin2025.engine.encoder import EncoderConfig, load_pretrained
from qin2025.engine.trainer import Trainer

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = {"ci": (0, 0), "standard": (1, 1), "paper": (2, 2)}  # name -> (position in the suite's list, grid scale)


class PhaseClock:
    """Seconds and FLOPs spent inside the Hessian power iteration, accumulated over the calls it wraps."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.flops = 0

    def wrap(self, fn: Callable[..., float]) -> Callable[..., float]:
        """Return ``fn`` timed and counted on this clock."""

        def timed(*args: Any, **kwargs: Any) -> float:
            start = time.perf_counter()
            with FlopCounterMode(display=False) as counter:
                out = fn(*args, **kwargs)
            self.seconds += time.perf_counter() - start
            self.flops += counter.get_total_flops()
            return out

        return timed


@contextmanager
def hessian_clock() -> Iterator[PhaseClock]:
    """Time every ``hessian_spectral_radius`` call that ``finetune`` makes while the block runs."""
    clock, original = PhaseClock(), ft.hessian_spectral_radius
    ft.hessian_spectral_radius = clock.wrap(original)
    try:
        yield clock
    finally:
        ft.hessian_spectral_radius = original


def timed_run(
    label: str, run: Callable[[], ft.FinetuneRun], depth: int, residual: float
) -> tuple[dict[str, Any], ft.FinetuneRun]:
    """Run one fine-tuning (through the cache) and return its row of figures and the run."""
    with hessian_clock() as clock, FlopCounterMode(display=False) as counter:
        wall, cpu = time.perf_counter(), time.process_time()
        result = run()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    flops = counter.get_total_flops()  # the outer counter sees the Hessian's products too
    row = {
        "run": label,
        "depth": depth,
        "residual": residual,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "hessian_s": round(clock.seconds, 2),
        "steps_s": round(wall - clock.seconds, 2),
        "flops": flops,
        "hessian_flops": clock.flops,
        "gflop_per_wall_s": round(flops / wall / 1e9, 1) if wall > 0 else None,
        "rho": result.hessian_radius,
        "lr": result.lr,
        "diverged_at": result.diverged_at,
        "window_error": window_error(result.error),
        "error": result.error.tolist(),
        "loss": result.loss.tolist(),
    }
    return row, result


def main(argv: list[str]) -> int:
    """Train and count one exploratory C6 unit; print its figures as JSON lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", default="standard", choices=sorted(BUDGETS))
    parser.add_argument("--offset", type=int, default=0, help="offset in the exploratory pool (0-999)")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--depths", default="", help="comma-separated depths (default: the claim's)")
    parser.add_argument("--steps", type=int, default=0, help="GD steps (default: the budget's)")
    parser.add_argument("--cache-dir", type=Path, default=None, help="result cache to fill (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=None, help="write every row, curves included, to this JSON file")
    args = parser.parse_args(argv)
    if not 0 <= args.offset < 1000:
        parser.error(f"--offset {args.offset}: the exploratory pool is offsets 0-999")
    sys.path.insert(0, str(ROOT / "claims"))
    import test_c6_depth_residual as c6  # the claim module: its grids and setting

    position, scale = BUDGETS[args.budget]
    grid, seed = c6.GRIDS[scale], block_seed(0, position, args.offset)
    depths = tuple(int(x) for x in args.depths.split(",")) if args.depths else c6.DEPTHS
    setting = replace(c6.SETTING, depths=depths)
    torch.set_num_threads(args.threads)
    pre = load_pretrained(None)
    path = find_sst2(Path(os.environ["CLAIMCHECK_DATA_DIR"]), "train")
    cfg = setting.config(grid)
    if args.steps:
        cfg = replace(cfg, steps=args.steps)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(ResultCache(args.cache_dir or Path(tmp)))
        unit_wall, unit_cpu = time.perf_counter(), time.process_time()
        data = seed_data(pre, path, grid, seed)
        rows: list[dict[str, Any]] = []
        plan = [(f"L={L} {'with' if r else 'without'}", L, r, data) for L in depths for r in (1.0, 0.0)]
        plan.append((f"L={grid.control_depth} one label flipped", grid.control_depth, 1.0, flip_one(data)))
        for label, L, res, d in plan:
            row, _ = timed_run(
                label, partial(ft.cached_finetune, trainer, pre, EncoderConfig.uniform(L, res), cfg, d, seed), L, res
            )
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items() if k not in ("error", "loss")}), flush=True)
        unit_wall, unit_cpu = time.perf_counter() - unit_wall, time.process_time() - unit_cpu
    unit = {
        "unit": args.offset,
        "seed": seed,
        "budget": args.budget,
        "threads": args.threads,
        "depths": list(depths),
        "grid": {"n_sentences": grid.n_sentences, "max_tokens": grid.max_tokens, "steps": cfg.steps},
        "flops": sum(r["flops"] for r in rows),
        "wall_s": round(unit_wall, 1),
        "cpu_s": round(unit_cpu, 1),
        "hessian_s": round(sum(r["hessian_s"] for r in rows), 1),
        "load": os.getloadavg()[0],
    }
    unit["gflop_per_wall_s"] = round(unit["flops"] / unit_wall / 1e9, 1)
    print(json.dumps(unit), flush=True)
    if args.out is not None:
        args.out.write_text(json.dumps({"unit": unit, "runs": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
