"""Draw each claim's recorded curves as PNG figures next to the report (matplotlib, headless, imported only to
draw); the rules a reader can rely on (scatters, labels, gaps, thresholds, values left out, the figure cache) are
in docs/report.md."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from claimcheck.decide.record import Curve
from claimcheck.files import write_atomic
from claimcheck.report.markdown import figure_name
from claimcheck.report.rundata import RunData
from claimcheck.store.cachefile import NotReadable, cache_secret, read_regular, remove_sealed, seal, unseal

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

LIMIT = 1e150  # larger magnitudes overflow matplotlib's transforms and tick locators
SPARSE = 12  # sweeps with at most this many points get markers
_SCATTER_NAMES = re.compile(r"\bper (configuration|config|point)\b|\bscatter\b", re.IGNORECASE)
FIGURE_SEAL = b"claimcheck-figure/2 hmac-sha256\n"  # the first line of a cached figure; its HMAC follows
FIGURE_CAP = 64 * 2**20  # 64 MiB: the largest cached figure read (a figure is tens of KiB)


@dataclass
class Figures:
    """What ``draw_figures`` did: the files written, values left out, and figures that failed."""

    written: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "C5: figure 'loss': 2 values left out (inf ...)"
    problems: list[str] = field(default_factory=list)  # figures not drawn, each with the error


def kind_of(curve: Curve) -> str:
    """Return ``"scatter"`` or ``"line"`` for ``curve`` (the rules are in docs/report.md)."""
    explicit = getattr(curve, "kind", None)
    if explicit in ("scatter", "line"):
        return str(explicit)
    backwards = curve.x is not None and len(curve.x) > 1 and np.any(np.diff(np.asarray(curve.x, dtype=np.float64)) < 0)
    return "scatter" if backwards or _SCATTER_NAMES.search(curve.name) else "line"


def axis_labels(group: str, curves: Sequence[Curve]) -> tuple[str, str]:
    """Return (x label, y label) for a figure of ``curves`` titled ``group``."""
    xlabel = next((c.xlabel for c in curves if c.xlabel), "")
    ylabel = next((c.ylabel for c in curves if c.ylabel), "")
    name = re.sub(r"^C\d+:?\s+", "", group)
    if m := re.fullmatch(r"(.+?) vs (.+?)(?:, .*)?", name):
        ylabel, xlabel = ylabel or m.group(1), xlabel or m.group(2)
    if m := re.fullmatch(r"(.+?) per (GD step|step)", name, flags=re.IGNORECASE):
        ylabel, xlabel = ylabel or m.group(1), xlabel or "GD step"
    if not xlabel:
        xlabel = "GD step" if all(c.x is None for c in curves) else "x"
    return xlabel, ylabel or "value"


def drawable(values: Sequence[float] | np.ndarray) -> tuple[np.ndarray, int]:
    """Return the values as float64, NaN for those that cannot be drawn (inf, beyond LIMIT), and how many those were
    (a NaN is missing, not left out)."""
    with np.errstate(over="ignore", invalid="ignore"):
        a = np.array(values, dtype=np.float64)
    bad = ~np.isnan(a) & ~(np.abs(a) <= LIMIT)
    a[bad] = np.nan
    return a, int(bad.sum())


def band(curves: Sequence[Curve]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Return x, median, min, max over curves of one name, aligned on x (0, 1, 2, ... when none is given; a curve
    that lacks an x is missing there), and how many values were left out."""
    xs = [np.arange(len(c.y), dtype=np.float64) if c.x is None else drawable(c.x)[0] for c in curves]
    x = np.unique(np.concatenate([xi[np.isfinite(xi)] for xi in xs])) if xs else np.array([])
    ys = np.full((len(curves), len(x)), np.nan)
    left_out = 0
    for i, (c, xi) in enumerate(zip(curves, xs, strict=True)):
        y, bad = drawable(c.y)
        left_out += bad
        n = min(len(y), len(xi))
        ok = np.isfinite(xi[:n])
        ys[i, np.searchsorted(x, xi[:n][ok])] = y[:n][ok]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns after a diverged run
        return x, np.nanmedian(ys, axis=0), np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), left_out


def break_gaps(x: np.ndarray, *ys: np.ndarray) -> tuple[np.ndarray, ...]:
    """Insert a NaN point wherever x jumps by more than 1.5 times its median step, so no line crosses it."""
    if len(x) < 3:
        return (x, *ys)
    steps = np.diff(x)
    gaps = np.flatnonzero(steps > 1.5 * np.median(steps))
    if not gaps.size:
        return (x, *ys)
    at = gaps + 1
    x2 = np.insert(x, at, (x[gaps] + x[at]) / 2)
    return (x2, *(np.insert(y, at, np.nan) for y in ys))


def _threshold(curves: Sequence[Curve], given: float | None) -> float | None:
    if given is not None:
        return float(given)
    values = [float(t) for c in curves if (t := getattr(c, "threshold", None)) is not None]
    return values[0] if values else None


def _pyplot() -> Any:
    """Return matplotlib.pyplot on the headless Agg backend (imported on first use: about 0.5 s)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def draw_group(title: str, curves: Sequence[Curve], *, threshold: float | None = None) -> tuple[bytes, int]:
    """Return a PNG of one figure, and how many values were left out because they cannot be drawn."""
    fig, left_out = figure(title, curves, threshold=threshold)
    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        return buf.getvalue(), left_out
    finally:
        _pyplot().close(fig)


def figure_key(title: str, curves: Sequence[Curve], threshold: float | None) -> str:
    """Return the sha256 of everything that decides a figure's PNG: its data, its style and the drawing code."""
    parts = {
        "title": title,
        "curves": [
            {"type": type(c).__name__, **vars(c)} | {k: getattr(c, k) for k in ("kind", "threshold") if hasattr(c, k)}
            for c in curves
        ],  # vars: no deep copy; a curve's optional drawing attributes (kind, threshold) too
        "threshold": threshold,
        "code": _drawing_code()[0],
        "matplotlib": _drawing_code()[1],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=repr).encode()).hexdigest()


@functools.cache
def _drawing_code() -> tuple[str, str]:
    """Return this file's sha256 and matplotlib's version, once a process (a version lookup scans the installed
    packages' metadata: 20 ms, 0.3 s over a report's 16 figures), without importing matplotlib."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest(), version("matplotlib")


def cached_group(
    title: str, curves: Sequence[Curve], *, threshold: float | None = None, cache: Path | None = None
) -> tuple[bytes, int]:
    """Return ``draw_group``'s PNG and count, from ``cache`` when the same figure was drawn before (an entry is
    sealed over its key, the count and the PNG; one that fails its seal or holds another key is drawn again)."""
    if cache is None:
        return draw_group(title, curves, threshold=threshold)
    key = figure_key(title, curves, threshold)
    path = cache / f"{key}.png"
    try:
        secret: bytes | None = cache_secret(cache)
    except OSError:
        secret = None  # a cache without its key is not read, and not written
    if secret is not None and (hit := _cached_figure(path, key, secret)) is not None:
        return hit
    png, left_out = draw_group(title, curves, threshold=threshold)
    with contextlib.suppress(OSError):  # a cache that cannot be written costs a redraw next time, never the figure
        if secret is not None:
            write_atomic(path, seal(FIGURE_SEAL, f"{key} {left_out}\n".encode() + png, secret))
    return png, left_out


def _cached_figure(path: Path, key: str, secret: bytes) -> tuple[bytes, int] | None:
    """Return the PNG and count the cached figure ``path`` holds for ``key``, or None if it cannot be vouched for."""
    try:
        data = read_regular(path, cap=FIGURE_CAP)
    except (NotReadable, OSError):
        return None
    if data is None:
        return None
    payload, sealed = unseal(FIGURE_SEAL, data, secret)
    head, _, png = payload.partition(b"\n")
    words = head.split(b" ")
    if not sealed or len(words) != 2 or words[0] != key.encode() or not words[1].isdigit():
        return None
    return (png, int(words[1])) if png.startswith(b"\x89PNG") else None


def clear_figure_cache(cache: Path) -> int:
    """Delete every cached figure in ``cache`` (nothing else); return how many."""
    return remove_sealed(cache, ".png", FIGURE_SEAL)


def figure(title: str, curves: Sequence[Curve], *, threshold: float | None = None) -> tuple[Figure, int]:
    """Return one figure (the caller closes it) and how many values were left out: per curve name, a line (the
    median over runs, with its min-max band) or a scatter; the threshold as a dashed line."""
    by_name: dict[str, list[Curve]] = {}
    for c in curves:
        by_name.setdefault(c.name, []).append(c)
    level = _threshold(curves, threshold)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    try:
        lows: list[np.ndarray] = []
        left_out = 0
        for name, cs in by_name.items():
            lo, bad = _draw_one(ax, name, cs)
            lows.append(lo)
            left_out += bad
        finite = np.concatenate([lo[np.isfinite(lo)] for lo in lows]) if lows else np.array([])
        if finite.size and np.all(finite > 0) and (level is None or level > 0):
            ax.set_yscale("log")
        if level is not None and abs(level) <= LIMIT:
            ax.axhline(level, color="black", ls="--", lw=1.0, label=f"threshold {level:g}")
        xlabel, ylabel = axis_labels(title, curves)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, alpha=0.3)
        if left_out:
            ax.text(
                0.01, 0.01, f"{left_out} value(s) left out: inf or beyond ±{LIMIT:.0e}",
                transform=ax.transAxes, fontsize=7, color="firebrick", va="bottom",
            )  # fmt: skip
        if len(by_name) <= 12:
            ax.legend(fontsize=7)
        fig.tight_layout()
    except BaseException:
        plt.close(fig)
        raise
    return fig, left_out


def _points(c: Curve) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the drawable (x, y) points of a scatter curve and how many values were left out."""
    y, bad_y = drawable(c.y)
    x, bad_x = drawable(c.x) if c.x is not None else (np.arange(len(y), dtype=np.float64), 0)
    n = min(len(x), len(y))
    ok = np.isfinite(x[:n]) & np.isfinite(y[:n])
    return x[:n][ok], y[:n][ok], bad_x + bad_y


def _draw_one(ax: Axes, name: str, cs: Sequence[Curve]) -> tuple[np.ndarray, int]:
    """Draw the curves of one name; return the values that set the y scale and how many were left out."""
    label = f"{name} (n={len(cs)})"
    if all(kind_of(c) == "scatter" for c in cs):
        points = [_points(c) for c in cs]
        xs = np.concatenate([p[0] for p in points])
        ys = np.concatenate([p[1] for p in points])
        ax.scatter(xs, ys, s=18, alpha=0.8 if len(cs) == 1 else 0.5, label=label)
        return ys, sum(p[2] for p in points)
    x, med, lo, hi, bad = band(cs)
    gx, gmed, glo, ghi = break_gaps(x, med, lo, hi)
    sparse = len(x) <= SPARSE or len(gx) > len(x)
    (line,) = ax.plot(gx, gmed, label=label, lw=1.6, marker="o" if sparse else None, ms=4)
    if len(cs) > 1:
        ax.fill_between(gx, glo, ghi, color=line.get_color(), alpha=0.2, lw=0)
    isolated = np.isfinite(gmed) & ~np.isfinite(np.roll(gmed, 1)) & ~np.isfinite(np.roll(gmed, -1))
    if not sparse and isolated.any():  # a point between two gaps has no line to show it
        ax.plot(gx[isolated], gmed[isolated], "o", ms=3, color=line.get_color())
    return lo, bad


def draw_figures(
    run: RunData,
    folder: Path,
    *,
    enabled: bool = True,
    thresholds: Mapping[tuple[str, str], float] | None = None,
    cache: Path | None = None,
) -> Figures:
    """Write one PNG per (claim, curve group) into ``folder`` (none when not ``enabled``); never raise for one:
    a figure that fails is listed in ``problems``, values left out in ``notes``. ``thresholds`` maps (claim id,
    group) to a level drawn on that figure; ``cache`` is ``cached_group``'s folder."""
    out = Figures()
    if not enabled:
        return out
    for r in run.results():
        groups: dict[str, list[Curve]] = {}
        for t in r.tests:
            for c in t.record.curves if t.record else ():
                groups.setdefault(c.group, []).append(c)
        for group, curves in groups.items():
            title = group if group.startswith(r.claim_id) else f"{r.claim_id}: {group}"
            try:
                level = (thresholds or {}).get((r.claim_id, group))
                png, left_out = cached_group(title, curves, threshold=level, cache=cache)
                path = folder / figure_name(r.claim_id, group)
                write_atomic(path, png)
            except Exception as e:  # one bad figure must not cost the report
                out.problems.append(f"{r.claim_id}: figure {group!r} not drawn: {type(e).__name__}: {e}")
                continue
            out.written.append(path)
            if left_out:
                out.notes.append(
                    f"{r.claim_id}: figure {group!r}: {left_out} value(s) left out (inf or beyond ±{LIMIT:.0e})"
                )
    return out


def draw(run: RunData, folder: Path, *, enabled: bool = True) -> list[Path]:
    """Write the figures as ``draw_figures`` does; return the paths written, each problem and note a UserWarning."""
    figures = draw_figures(run, folder, enabled=enabled)
    for text in figures.problems + figures.notes:
        warnings.warn(text, UserWarning, stacklevel=2)
    return figures.written
