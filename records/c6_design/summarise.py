"""Summarise E3's pool runs: per offset and depth, the v3 statistic and the figures beside it."""

from __future__ import annotations

import glob
import json
import sys

import numpy as np

from qin2025.c6.residual_depth import memorised, window, window_error
from records.c6_design.common import OUT

N = 256
rows: dict[int, dict] = {}
for path in sorted(glob.glob(str(OUT / "e3_pool_*.json"))):
    for row in json.loads(open(path).read()):
        rows.setdefault(row["offset"], {}).update(row)


def med_loss(r: dict) -> float:
    return float(np.median(window(r["loss"])))


def spikes(r: dict) -> int:
    return int(np.sum(np.diff(window(r["error"]) * N) >= 5 - 1e-9))


stats: dict[str, list[float]] = {}
for off in sorted(rows):
    row = rows[off]
    for L in (1, 6):
        if f"with{L}" not in row:
            continue
        w, wo = row[f"with{L}"], row[f"without{L}"]
        d = window_error(wo["error"]) - window_error(w["error"])
        stats.setdefault(f"D{L}", []).append(d)
        print(
            f"offset {off} L={L}: window error with {window_error(w['error']):.4f}"
            f" without {window_error(wo['error']):.4f}"
            f" D={d:+.4f} ({d * N:+.1f} sent.); loss with {med_loss(w):.4f} without {med_loss(wo):.4f}; "
            f"spikes {spikes(w)}/{spikes(wo)}; memorised {memorised(w['error'])}/{memorised(wo['error'])}; "
            f"rho {w['rho']:.4g}/{wo['rho']:.4g}; error at T {w['error'][-1]:.4f}/{wo['error'][-1]:.4f}"
        )
    if "flipped1" in row:
        c = window_error(row["flipped1"]["error"]) - window_error(row["with1"]["error"])
        h = window_error(row["head1"]["error"]) - window_error(row["with1"]["error"])
        stats.setdefault("one-label", []).append(c)
        stats.setdefault("head", []).append(h)
        print(f"   control: one label {c:+.4f} ({c * N:+.1f} sent.); head seed + 1000 {h:+.4f} ({h * N:+.1f} sent.)")
    if "with1" in row and "with6" in row:
        t = (window_error(row["without6"]["error"]) - window_error(row["with6"]["error"])) - (
            window_error(row["without1"]["error"]) - window_error(row["with1"]["error"])
        )
        stats.setdefault("trend", []).append(t)
for k, v in stats.items():
    a = np.asarray(v)
    sd = float(a.std(ddof=1)) if a.size > 1 else float("nan")
    print(f"{k}: n={a.size} mean {a.mean():+.4f} sd {sd:.4f} min {a.min():+.4f} max {a.max():+.4f}")
sys.exit(0)
