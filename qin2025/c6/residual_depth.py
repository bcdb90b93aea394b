"""C6's machinery: one seed's fine-tuning runs with and without residuals, its unit decisions and its premise.

A unit is a seed s: one label-balanced SST-2 sample of N sentences (sample seed s) and one linear
head (seed s). At each depth L of the grid the encoder truncated to its first L layers is trained
twice from the same start, with every residual add on and with every one off; the control trains
the residual model once more on the same sample with the label of one sentence flipped.

The unit statistic is the *training error* (the share of the N sentences with sign(f) != y) in the
comparison window, the second half of the run (steps floor(T/2)+1..T), taken as the window's
median: the level the error sits at once training is under way, which a brief catapult spike (an
error that jumps for a few steps at the step-size rule's edge of stability and comes back) does not
move. The first half is the start-up, where a comparison says which run started ahead, not which
trains to a lower error. The loss is reported beside it, never decided on.

Decisions (plain functions of one unit's curves; ``claimcheck calibrate`` runs them on
``qin2025.c6.calibration``):

- ``advantage_decision(depth, better, worse)``: window error of ``worse`` minus that of ``better``;
- ``trend_decision(better, worse)``: the change of that advantage from the grid's shallowest depth
  to its deepest, read off the least-squares line over the grid's depths.

The premise (``premise_misses``) says when a unit's comparison at a depth is no evidence: the
sample is too small for the claim's smallest advantage to be two sentences, both runs had memorised
the sample before the window opened, or a run's loss became non-finite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from numpy.typing import ArrayLike

from qin2025.data.sst2 import balanced_sample, load_sst2
from qin2025.engine.encoder import EncoderConfig, Pretrained
from qin2025.engine.finetune import FinetuneConfig, FinetuneRun, SentenceData, cached_finetune, prepare
from qin2025.engine.trainer import Trainer

TREND = "change of the advantage from the shallowest to the deepest L (least-squares line over the grid)"
MIN_SENTENCES = 2.0  # the smallest advantage the claim counts must be at least this many sentences of the sample


def advantage_name(depth: int) -> str:
    """Return the name of a unit's advantage at depth ``depth`` (what the part of that depth decides)."""
    return f"median training error over steps T/2..T, without minus with residual, L={depth}"


def window(curve: ArrayLike) -> np.ndarray:
    """Return the comparison window of a curve c_0..c_T: steps floor(T/2)+1..T."""
    c = np.asarray(curve, dtype=np.float64)
    steps = c.size - 1
    if steps < 2:
        raise ValueError(f"a curve needs at least 3 points (T >= 2) to have a window, got {c.size}")
    return c[steps // 2 + 1 :]


def window_error(error: ArrayLike) -> float:
    """Return the median training error over the window (NaN when the curve holds a NaN: a diverged run)."""
    w = window(error)
    return math.nan if not np.all(np.isfinite(w)) else float(np.median(w))


def advantage_decision(depth: int, better: ArrayLike, worse: ArrayLike) -> dict[str, float]:
    """Return the window error of ``worse`` minus that of ``better`` at ``depth`` (C6 "L=<depth>").

    ``better`` and ``worse``: training-error curves E_0..E_T of one seed's two runs at that depth
    (with and without residuals; a diverged run is a curve of NaN). Positive: ``better`` sits at a
    lower training error once training is under way.
    """
    return {advantage_name(depth): window_error(worse) - window_error(better)}


def depth_change(depths: Sequence[int], values: Sequence[float]) -> float:
    """Return slope x (deepest - shallowest) of the least-squares line of ``values`` on ``depths``.

    With two depths it is values[deepest] - values[shallowest]. NaN with fewer than two depths or a NaN.
    Hand-worked: depths (1, 3, 6), values (0, 0.01, 0.05): slope 0.010, change 0.050.
    """
    if len(depths) < 2 or not all(math.isfinite(v) for v in values):
        return math.nan
    x = np.asarray(depths, dtype=np.float64)
    slope = float(np.polyfit(x, np.asarray(values, dtype=np.float64), 1)[0])
    return slope * float(x.max() - x.min())


def trend_decision(better: Mapping[int, ArrayLike], worse: Mapping[int, ArrayLike]) -> dict[str, float]:
    """Return the change of the advantage from the shallowest depth to the deepest (C6 "trend").

    ``better``, ``worse``: depth -> training-error curve of one seed. Returns nothing with fewer
    than two depths (no trend is measured then).
    """
    depths = sorted(worse)
    if len(depths) < 2:
        return {}
    adv = [window_error(worse[L]) - window_error(better[L]) for L in depths]
    return {TREND: depth_change(depths, adv)}


def memorised(error: ArrayLike) -> bool:
    """Return whether a run had memorised its sample before the window: zero error at every step from T/2 on."""
    c = np.asarray(error, dtype=np.float64)
    return bool(np.all(c[(c.size - 1) // 2 :] == 0))


def premise_misses(n_sentences: int, delta: float, runs: Sequence[FinetuneRun]) -> str:
    """Return why a comparison of ``runs`` (on one sample, at one depth) is no evidence, or "" when it is.

    - the sample cannot resolve the claim's smallest advantage ``delta``: delta x N < 2 sentences
      (docs/claims-reading.md: on 24 sentences a difference of one is a tie in practice);
    - every run had memorised the sample before the window (a tie by capacity, not by training);
    - a run's loss became non-finite under its step-size rule.
    """
    if delta * n_sentences < MIN_SENTENCES:
        return (
            f"a sample of {n_sentences} sentences resolves {delta:g} as {delta * n_sentences:.2g} sentences, under "
            f"{MIN_SENTENCES:g}: a smoke-test size, no evidence either way"
        )
    diverged = [r for r in runs if r.diverged_at is not None]
    if diverged:
        return f"a run's loss became non-finite at step {diverged[0].diverged_at}"
    if all(memorised(r.error) for r in runs):
        return "every run had memorised the sample (zero training error) before the window opened"
    return ""


def error_curve(run: FinetuneRun) -> np.ndarray:
    """Return the run's training error after each step; all NaN when the run diverged."""
    return np.full(run.error.shape, np.nan) if run.diverged_at is not None else run.error


def flip_one(data: SentenceData, index: int = 0) -> SentenceData:
    """Return ``data`` with the target of sentence ``index`` negated (the sample is shuffled: a random sentence)."""
    y = data.y.clone()
    y[index] = -y[index]
    return SentenceData(data.x, data.mask, y, f"{data.name}, label of sentence {index} flipped")


@dataclass(frozen=True)
class Grid:
    """What one budget runs: sample size, token cap, GD steps, and the depth of the one-label control."""

    n_sentences: int  # N, label-balanced
    max_tokens: int  # truncation, [CLS] and [SEP] included
    steps: int  # GD steps T; the window is steps T/2..T
    control_depth: int  # L of the one-label control (the cheapest depth)


@dataclass
class SeedRuns:
    """The runs of one seed: per depth, with and without residuals."""

    seed: int
    with_res: dict[int, FinetuneRun] = field(default_factory=dict)
    without_res: dict[int, FinetuneRun] = field(default_factory=dict)


@dataclass(frozen=True)
class Setting:
    """How every run of the claim trains: the depths, the step-size fraction of 2/rho, the dtype."""

    depths: tuple[int, ...]
    lr_fraction: float
    dtype: str

    def config(self, grid: Grid) -> FinetuneConfig:
        """Return the fine-tuning config of a run on ``grid``."""
        return FinetuneConfig(steps=grid.steps, lr_fraction=self.lr_fraction, dtype=self.dtype)


def seed_data(pre: Pretrained, path: Path, grid: Grid, seed: int) -> SentenceData:
    """Return the seed's sample, embedded by the frozen embeddings and truncated to the grid's token cap."""
    return prepare(pre, balanced_sample(load_sst2(path), grid.n_sentences, seed), grid.max_tokens)


def run_seed(trainer: Trainer, pre: Pretrained, path: Path, grid: Grid, setting: Setting, seed: int) -> SeedRuns:
    """Train one seed's runs through the trainer's cache: with and without residuals at every depth."""
    data, cfg = seed_data(pre, path, grid, seed), setting.config(grid)
    runs = SeedRuns(seed)
    for L in setting.depths:
        runs.with_res[L] = cached_finetune(trainer, pre, EncoderConfig.uniform(L, 1.0), cfg, data, seed)
        runs.without_res[L] = cached_finetune(trainer, pre, EncoderConfig.uniform(L, 0.0), cfg, data, seed)
    return runs


def run_one_label(
    trainer: Trainer, pre: Pretrained, path: Path, grid: Grid, setting: Setting, seed: int
) -> tuple[FinetuneRun, FinetuneRun]:
    """Return the control's pair at its depth: the residual run (the claim's own, cached) and the one-label run."""
    data, cfg = seed_data(pre, path, grid, seed), setting.config(grid)
    enc = EncoderConfig.uniform(grid.control_depth, 1.0)
    return cached_finetune(trainer, pre, enc, cfg, data, seed), cached_finetune(
        trainer, pre, enc, cfg, flip_one(data), seed
    )


# --- what the report shows beside the statistics -------------------------------------------------


def window_loss(run: FinetuneRun) -> float:
    """Return the median loss over the window (NaN for a diverged run)."""
    return math.nan if run.diverged_at is not None else float(np.median(window(run.loss)))


def spikes(run: FinetuneRun, n_sentences: int, jump: int = 5) -> int:
    """Return the steps of the window where the training error rose by at least ``jump`` sentences."""
    w = window(run.error) * n_sentences
    return int(np.sum(np.diff(w) >= jump - 1e-9))


def first_zero(run: FinetuneRun) -> int | None:
    """Return the first step at zero training error, or None."""
    hits = np.flatnonzero(run.error == 0)
    return int(hits[0]) if hits.size else None


def fmt(values: Sequence[float | int | None], digits: int = 3) -> str:
    """Return ``[a, b, ...]`` with each number to ``digits`` significant digits ("-" for None)."""
    return "[" + ", ".join("-" if v is None else f"{float(v):.{digits}g}" for v in values) + "]"


def depth_note(
    depth: int,
    seeds: Sequence[int],
    with_res: Sequence[FinetuneRun],
    without_res: Sequence[FinetuneRun],
    n_sentences: int,
) -> str:
    """Return the report's line about one depth: window error and loss per seed, spikes, zero steps, radii."""
    w, wo = with_res, without_res
    return (
        f"L={depth} (seeds {list(seeds)}): median training error over the window with residual "
        f"{fmt([window_error(error_curve(r)) for r in w])}, without {fmt([window_error(error_curve(r)) for r in wo])}; "
        f"median loss over the window with {fmt([window_loss(r) for r in w])}, without "
        f"{fmt([window_loss(r) for r in wo])}; error at T with {fmt([r.final_error for r in w])}, without "
        f"{fmt([r.final_error for r in wo])}; window steps where the error jumped by 5+ sentences with "
        f"{[spikes(r, n_sentences) for r in w]}, without {[spikes(r, n_sentences) for r in wo]}; first step at zero "
        f"error with {fmt([first_zero(r) for r in w], 4)}, without {fmt([first_zero(r) for r in wo], 4)}; Hessian "
        f"radius at the start with {fmt([r.hessian_radius for r in w], 4)}, without "
        f"{fmt([r.hessian_radius for r in wo], 4)}"
    )


def threads() -> int:
    """Return torch's thread count (the report's regime names it)."""
    return torch.get_num_threads()
