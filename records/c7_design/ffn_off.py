"""E13: the full model trained by GD with the FFN switched off (ffn_gain 0, so H = Z): does the W_V null persist?

Run: nice -n 10 python records/c7_design/ffn_off.py   (seeds 0-9, T = 200)
"""

from dataclasses import replace

from claimcheck.stats import t_interval

from records.c7_design.common import run_grid
from records.c7_design.decide import governs
from records.c7_design.unit import configs, table

seeds = list(range(10))
for lever in ("kx", "vc"):
    cs = [replace(c, fg=0.0) for c in configs(lever)]
    rows = run_grid(cs, seeds, steps=200)
    bs = [governs(table([r for r in rows if r.seed == s], lever)).value for s in seeds]
    ok = sum(r.ok for r in rows)
    print(
        f"{lever} lever, full GD, FFN off: governs b {t_interval(bs).format()} per seed "
        + " ".join(f"{b:.2f}" for b in bs)
        + f"; ok {ok}/{len(rows)}"
    )
