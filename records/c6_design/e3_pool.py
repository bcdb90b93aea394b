"""E3: the standard budget's exploratory pool (base seed 0, offsets 0..), trained through the claim's own library.

The runs go into the result cache the claim reads (--claim-cache-dir), under the keys the claim test uses, so
``pytest claims/test_c6_depth_residual.py --claim-budget standard --claim-pool exploratory`` reuses them.
Also the head-seed pair at L = 1 (residual, head s + 1000), the v2 control, for the null spread.
Usage: python -m records.c6_design.e3_pool CACHE_DIR FIRST LAST DEPTHS   (offsets FIRST..LAST)
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

from claimcheck.protocol import block_seed
from claimcheck.store import ResultCache
from claims.test_c6_depth_residual import GRIDS, SETTING
from qin2025.c6.residual_depth import run_one_label, run_seed, seed_data
from qin2025.data.sst2 import find_sst2
from qin2025.engine.encoder import EncoderConfig
from qin2025.engine.finetune import cached_finetune
from qin2025.engine.trainer import Trainer
from records.c6_design.common import DATA, PRE, save

cache, first, last = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
depths = tuple(int(x) for x in sys.argv[4].split(","))
assert last < 1000, "exploratory pool only"
trainer = Trainer(ResultCache(cache), "cpu")
grid, path = GRIDS[1], find_sst2(DATA, "train")
out = []
for i in range(first, last + 1):
    seed = block_seed(0, 1, i)  # the standard budget's exploratory pool at base seed 0
    t0 = time.process_time()
    runs = run_seed(trainer, PRE, path, grid, replace(SETTING, depths=depths), seed)
    row = {"offset": i, "seed": seed}
    for L in depths:
        for k, r in (("with", runs.with_res[L]), ("without", runs.without_res[L])):
            row[f"{k}{L}"] = {"error": r.error.tolist(), "loss": r.loss.tolist(), "rho": r.hessian_radius, "lr": r.lr}
    if 1 in depths:
        _, flipped = run_one_label(trainer, PRE, path, grid, SETTING, seed)
        data, cfg = seed_data(PRE, path, grid, seed), SETTING.config(grid)
        head = cached_finetune(trainer, PRE, EncoderConfig.uniform(1, 1.0), cfg, data, seed + 1000)
        for k, r in (("flipped1", flipped), ("head1", head)):
            row[k] = {"error": r.error.tolist(), "loss": r.loss.tolist(), "rho": r.hessian_radius, "lr": r.lr}
    row["cpu_s"] = time.process_time() - t0
    print(f"offset {i} seed {seed} depths {depths} cpu {row['cpu_s']:.0f}s", flush=True)
    out.append(row)
    save(f"e3_pool_{first}_{last}_{'-'.join(map(str, depths))}", out)
