"""C4 v3 design: relative rates from saved pairs (train_grid.py output): mean rate (v2) and steady rate (v3)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np


def steady(loss: np.ndarray) -> float:
    """Minus the least-squares slope of log10 L over the second half of the finite prefix."""
    f = loss[np.isfinite(loss)]
    t = np.arange(f.size)
    h = t[f.size // 2 :]
    y = np.log10(f[f.size // 2 :])
    return float(-np.polyfit(h, y, 1)[0])


def mean(loss: np.ndarray) -> float:
    f = loss[np.isfinite(loss)]
    return float(-np.log10(f[-1] / f[0]) / (f.size - 1))


def table(path: str) -> None:
    z = np.load(path)
    qs = z["d_qk"]
    for name, fn in (("mean", mean), ("steady", steady)):
        rel = np.array(
            [[fn(z[f"loss_{q}"][s, 0]) / fn(z[f"loss_{q}"][s, 1]) for q in qs] for s in range(len(z["seeds"]))]
        )
        r0 = np.array([[fn(z[f"loss_{q}"][s, 0]) for q in qs] for s in range(len(z["seeds"]))])
        print(f"{path} {name}: d_qk {qs.tolist()}")
        print("  rel median", np.round(np.median(rel, 0), 4).tolist())
        print("  rel per seed\n", np.round(rel, 4))
        print("  rate0 median", np.round(np.median(r0, 0), 5).tolist())


if __name__ == "__main__":
    for p in sys.argv[1:]:
        table(p)


def slope(x: np.ndarray, y: np.ndarray) -> float:
    lx, ly = np.log10(x), np.log10(y)
    lx = lx - lx.mean()
    return float(lx @ (ly - ly.mean()) / (lx @ lx))


def stats(paths: list[str], fn: Callable[[np.ndarray], float] = steady, floor: float = 1e-3) -> np.ndarray:
    """Per seed: slows slope (d..64 d), stops level log10 rel(256 d), stops trend slope (16 d..256 d)."""
    rows = []
    for path in paths:
        z = np.load(path)
        qs = z["d_qk"]
        for s in range(len(z["seeds"])):
            r = np.array([max(fn(z[f"loss_{q}"][s, 0]), 0) / fn(z[f"loss_{q}"][s, 1]) for q in qs])
            r = np.maximum(r, floor)
            rows.append((slope(qs[:4], r[:4]), np.log10(r[4]), slope(qs[2:], r[2:])))
    return np.array(rows)


def summary(label: str, paths: list[str]) -> None:
    from scipy import stats as st

    for name, fn in (("steady", steady), ("mean", mean)):
        a = stats(paths, fn)
        n = len(a)
        m, sd = a.mean(0), a.std(0, ddof=1)
        t = st.t.ppf(0.95, n - 1)
        print(f"{label} [{name}] n={n}")
        for k, what in enumerate(("slows slope d..64d", "stops level log10 rel(256d)", "stops trend 16d..256d")):
            print(
                f"   {what}: mean {m[k]:.3f} sd {sd[k]:.3f} "
                f"90% [{m[k] - t * sd[k] / n**0.5:.3f}, {m[k] + t * sd[k] / n**0.5:.3f}]"
                f" per seed {np.round(a[:, k], 2).tolist()}"
            )
