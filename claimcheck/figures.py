"""Draw each claim's recorded curves as PNG figures next to the report (matplotlib, headless)."""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from claimcheck.files import write_atomic
from claimcheck.record import Curve
from claimcheck.report import figure_name
from claimcheck.runfile import RunData


def band(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return x, median, min and max over curves of one name (shorter curves padded with NaN)."""
    length = max(len(c.y) for c in curves)
    ys = np.full((len(curves), length), np.nan)
    for i, c in enumerate(curves):
        ys[i, : len(c.y)] = c.y
    ys[~np.isfinite(ys)] = np.nan
    longest = max(curves, key=lambda c: len(c.y))
    x = np.asarray(longest.x if longest.x is not None else np.arange(length), dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns after a diverged run
        return x, np.nanmedian(ys, axis=0), np.nanmin(ys, axis=0), np.nanmax(ys, axis=0)


def draw_group(title: str, curves: Sequence[Curve]) -> bytes:
    """Return a PNG of one figure: per curve name, the median over runs and its min-max band."""
    by_name: dict[str, list[Curve]] = {}
    for c in curves:
        by_name.setdefault(c.name, []).append(c)
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    positive = True
    for name, cs in by_name.items():
        x, med, lo, hi = band(cs)
        (line,) = ax.plot(x, med, label=f"{name} (n={len(cs)})", lw=1.6, marker="o" if len(x) <= 12 else None)
        if len(cs) > 1:
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        finite = lo[np.isfinite(lo)]
        positive = positive and finite.size > 0 and bool(np.all(finite > 0))
    if positive:
        ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(curves[0].xlabel or ("step" if curves[0].x is None else ""))
    ax.set_ylabel(curves[0].ylabel)
    ax.grid(True, alpha=0.3)
    if len(by_name) <= 12:
        ax.legend(fontsize=7)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def draw(run: RunData, folder: Path) -> list[Path]:
    """Write one PNG per (claim, curve group) into ``folder``; return the paths written."""
    written = []
    for r in run.results():
        groups: dict[str, list[Curve]] = {}
        for t in r.tests:
            for c in t.record.curves if t.record else ():
                groups.setdefault(c.group, []).append(c)
        for group, curves in groups.items():
            path = folder / figure_name(r.claim_id, group)
            title = group if group.startswith(r.claim_id) else f"{r.claim_id}: {group}"
            write_atomic(path, draw_group(title, curves))
            written.append(path)
    return written
