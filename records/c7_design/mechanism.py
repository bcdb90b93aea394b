"""E5: what each lever moves: lambda_max of the Hessian against the NTK's extremes and Z's singular values.

Run: nice -n 10 python records/c7_design/mechanism.py [seeds...]   (default 0-3)
For a least-squares problem GD at mu = f 2/lambda_max(H) contracts the slowest NTK mode by about
(1 - 2 f lambda_min(NTK)/lambda_max(H))^2 per step; this prints the pieces of that, per lever.
"""

from __future__ import annotations

import sys

import numpy as np

from records.c7_design.common import Config, build, model_cfg, ntk_extremes, run_grid


def main(seeds: list[int]) -> None:
    configs = (
        [Config(kx=k) for k in (1.0, 10.0, 100.0)]
        + [Config(kx=10.0, s=s) for s in (0.5, 2.0)]
        + [Config(kx=10.0, ug=u) for u in (0.5, 2.0)]
        + [Config(qg=g, beta=b) for b in (1.0, 0.3) for g in (0.25, 1.0, 16.0)]
    )
    if len(sys.argv) > 1 and sys.argv[1] == "vc":
        configs = [Config(vc=v) for v in (1.0, 0.3, 0.1, 0.03, 0.01)] + [Config(vc=v, s=2.0) for v in (1.0, 0.1)]
        pass
    rows = run_grid(configs, seeds)
    print(
        "config                        smin(Z)  smax(Z)  kinv(Z)  lamH     lamNTKmax lamNTKmin  pred-rate steady"
        "  (medians)"
    )
    for c in configs:
        mine = [r for r in rows if r.config == c]
        ext = [ntk_extremes(*build(c, r.seed), model_cfg(c)) for r in mine]
        pred = [-2 * np.log10(1 - 2 * 0.5 * lo / r.lam) for (lo, _), r in zip(ext, mine, strict=True)]
        med = lambda f, mine=mine: np.median([getattr(r, f) for r in mine])  # noqa: E731
        lbl = f"kx={c.kx:g} s={c.s:g} ug={c.ug:g} qg={c.qg:g} vc={c.vc:g} b={c.beta:g}"
        print(
            f"{lbl:<36} {med('smin'):8.3g} {med('smax'):8.3g} {med('kinv'):8.3g} {med('lam'):8.4g} "
            f"{np.median([e[1] for e in ext]):9.4g} {np.median([e[0] for e in ext]):9.4g} {np.median(pred):9.4f} "
            f"{med('steady'):8.4f}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:] if a != "vc"] or [0, 1, 2, 3])
