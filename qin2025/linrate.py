"""Decide whether a loss curve descends at a linear (geometric) rate: the decision of C1 and C8 (protocol v4).

Theorem 1 says L_{t+1} <= (1 - mu alpha) L_t at every step with alpha > 0: the per-step rate
-ln(L_{t+1}/L_t) is bounded away from 0 for ever. A finite curve cannot show "for ever"; what it
can show is that its rate has stopped falling. GD runs have a fast transient, then a rate that
settles (the rate over successive windows becomes constant), while a sublinear curve's rate never
settles: an offset power law (1 + t/tau)^-p falls at p/(tau + t), a stretched exponential
exp(-(t/tau)^k) at a rate proportional to t^(k-1). So a curve, scored up to ``SCORING_FLOOR`` or
its last step, passes when

- every step contracts (worst step ratio c < 1: Theorem 1's inequality with some alpha > 0);
- its rate has settled: the mean rate over the last quarter of the scored steps against the mean
  rate over the third quarter (``STEADINESS``; 1 for a settled rate, (3/4 ... 1) for a power law
  (1 + t/tau)^-p whose tau is large against the horizon, and for a stretched exponential a value
  that depends on k alone: 0.90 at k = 0.69, 0.97 at k = 0.9);
- its settled part descends far enough to tell it from a power law whose tau is so large that its
  rate looks settled (``LATE_DEPTH``: nats descended over the last half of the scored steps); and
- no stretch of it stood still: the slowest of eight equal windows against the mean rate of the
  last half (``PLATEAU``; a plateau followed by a drop, or a slow descent ended by a plunge, is far
  below 1, a run whose rate falls to a settled value is near 1).

The thresholds are the claims' (``claims/test_c1_linear_rate.py``, ``claims/test_c8_multilayer.py``);
their calibration families are in ``qin2025.calibration.linear_rate``. This module also holds C8's
premise measurement: lambda_max along a run, by a batched replay of the runs' GD (``sharpness_at``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.record import ClaimRecorder
from qin2025.batched import Run, _initial, top_eigenvalues
from qin2025.checks import regime_of
from qin2025.data.synthetic import TensorData
from qin2025.model import ModelConfig, squared_loss
from qin2025.train import TrainConfig, Trajectory, gd_update, hessian_top_eigenvalue
from qin2025.trainer import Trainer, train_key
from qin2025.usermodel import PAPER

# Scored up to the first step at or below 1e-24 L_0, where the engine stops (TrainConfig.rel_floor).
# Measured on C1's runs (design record): per-step rates there deviate from their 9-step mean by
# 1e-4..1e-2, as much as at 1e-14 (GD's own oscillation, not rounding); rounding shows from about
# 1e-26 L_0 (3e-2) and the loss bottoms out at 1e-32..1e-30 L_0.
SCORING_FLOOR = 1e-24
WINDOWS = 8  # equal windows of the scored steps; quarters are pairs of them, the last half four
MIN_STEPS = WINDOWS  # every window holds at least one step

WORST_RATIO = "worst step ratio c = max L_{t+1}/L_t"
STEADINESS = "late rate ratio r(4th quarter)/r(3rd quarter)"
LATE_DEPTH = "descent over the last half ln(L_{S/2}/L_S)"
PLATEAU = "slowest eighth's rate / last half's rate"


@dataclass(frozen=True)
class RateProfile:
    """How a loss curve contracts, up to the scoring floor: its worst step and its mean rate per window.

    ``rates`` are the mean per-step rates -ln(L_b/L_a)/(b - a) of ``WINDOWS`` equal windows of the
    ``steps`` scored steps (in order); quarters are pairs of windows. ``floor_step`` is the first
    step at or below the floor, None when the curve never got there (then every step is scored).
    """

    worst_ratio: float
    rates: tuple[float, ...]
    late_depth: float  # nats descended over the last half of the scored steps
    steps: int
    floor_step: int | None

    def quarter(self, q: int) -> float:
        """Return the mean rate over quarter ``q`` (1..4) of the scored steps."""
        return (self.rates[2 * q - 2] + self.rates[2 * q - 1]) / 2

    @property
    def steadiness(self) -> float:
        """Return r(4th quarter)/r(3rd quarter); -inf when the third quarter did not descend."""
        third = self.quarter(3)
        return self.quarter(4) / third if third > 0 else -math.inf

    @property
    def plateau(self) -> float:
        """Return the slowest window's rate over the last half's mean rate; -inf when the last half did not descend."""
        late = self.late_depth / (self.steps - self.steps // 2)
        return min(self.rates) / late if late > 0 else -math.inf


def rate_profile(loss: ArrayLike, floor: float = SCORING_FLOOR) -> RateProfile:
    """Return the ``RateProfile`` of the curve ``loss`` (L_0..L_T) scored up to ``floor`` * L_0.

    Steps after the loss first reaches ``floor`` * L_0 are dropped. Windows are [w_i, w_{i+1}] with
    w_i = round(S i / 8) for S scored steps, so equal rates give equal values whatever S is. Raises
    ValueError for fewer than ``MIN_STEPS`` scored steps; a non-finite or non-positive loss gives
    c = inf, every rate -inf and a late depth of -inf (every statistic fails).
    """
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"rate_profile needs at least two losses, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        return RateProfile(math.inf, (-math.inf,) * WINDOWS, -math.inf, arr.size - 1, None)
    below = np.flatnonzero(arr <= floor * arr[0])
    floor_step = int(below[0]) if below.size else None
    kept = arr if floor_step is None else arr[: floor_step + 1]
    steps = kept.size - 1
    if steps < MIN_STEPS:
        raise ValueError(f"rate_profile needs at least {MIN_STEPS} steps above the floor, got {steps}")
    depth = np.log(kept[0] / kept)  # nats descended by each step
    edges = [round(steps * i / WINDOWS) for i in range(WINDOWS + 1)]
    rates = tuple(float((depth[b] - depth[a]) / (b - a)) for a, b in itertools.pairwise(edges))
    late = float(depth[-1] - depth[edges[WINDOWS // 2]])
    return RateProfile(float((kept[1:] / kept[:-1]).max()), rates, late, steps, floor_step)


def linear_rate_decision(loss: ArrayLike) -> dict[str, float]:
    """Return the four linear-rate statistics of one run's loss curve L_0..L_T (C1 and C8, protocol v4).

    The worst step ratio c, the steadiness r(4th quarter)/r(3rd quarter), the late depth (nats
    descended over the last half) and the plateau ratio (slowest eighth over the last half's mean
    rate), all of the curve scored up to ``SCORING_FLOOR`` L_0 (``rate_profile``).
    """
    p = rate_profile(loss)
    return {WORST_RATIO: p.worst_ratio, STEADINESS: p.steadiness, LATE_DEPTH: p.late_depth, PLATEAU: p.plateau}


def record_rate(
    rec: ClaimRecorder,
    traj: Trajectory,
    *,
    label: str,
    part: str = "",
    unit: object | None = None,
    control: str | None = None,
) -> None:
    """Score the run with its part's decision (``linear_rate_decision``) and keep its curve for the figures."""
    rec.set_regime(label, **regime_of(traj))
    rec.score({"loss": traj.loss}, part=part, unit=unit, control=control, label=label)
    name = label + (f" (control: {control})" if control else "")
    rec.curve(name, traj.loss.tolist(), group="training loss per GD step", ylabel="loss")
    if traj.diverged_at is not None:
        rec.note(f"{label} seed {traj.seed}: loss became non-finite at step {traj.diverged_at}")


# --- The premise along the run (C8): lambda_max at checkpoints ------------------------------------


def premise_marks(traj: Trajectory, checkpoints: Sequence[int]) -> list[int]:
    """Return the steps to measure lambda_max at: the ``checkpoints`` the run reached, and its first rise.

    The first rise is where a run past the local bound shows itself: the step whose update raised
    the loss, and the step after it (lambda_max can alternate between the two: explored at L = 4,
    1.35 and 0.55 of 2/mu on alternate steps). Steps the run did not reach are dropped.
    """
    rises = np.flatnonzero(~(traj.loss[1:] <= traj.loss[:-1] * (1 + 1e-12)))
    marks = set(checkpoints) | ({int(rises[0]), int(rises[0]) + 1} if rises.size else set())
    return sorted(k for k in marks if 0 < k < traj.loss.size)


def sharpness_along(
    train: Trainer, traj: Trajectory, model_cfg: ModelConfig, data: TensorData, checkpoints: Sequence[int]
) -> dict[int, float]:
    """Return lambda_max, the top Hessian eigenvalue, at ``checkpoints`` of the run ``traj`` (cached).

    Replays the run's GD (its seed's initialisation, its step size ``traj.lr``) up to the last
    checkpoint the run reached, and measures lambda_max there with the engine's
    ``hessian_top_eigenvalue`` (the power iteration ``train`` uses at step 0). The replay is held to
    the trajectory's own losses (relative 1e-9): a mismatch raises, since the numbers would be of
    another run.
    """
    steps = sorted({k for k in checkpoints if 0 < k < traj.loss.size})
    if not steps:
        return {}
    tcfg = TrainConfig(**{k: v for k, v in traj.train.items() if k != "device"}, device=train.device)  # type: ignore[arg-type]
    parts = {"kind": "sharpness", "checkpoints": steps, "run": train_key(model_cfg, tcfg, data, traj.seed)}

    def compute() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        model = train.model
        dtype, device = tcfg.torch_dtype, torch.device(tcfg.device)
        params = model.init_params(model_cfg, torch.Generator().manual_seed(traj.seed), dtype)
        params = {k: v.to(device) for k, v in params.items()}
        on = TensorData(data.x.to(device, dtype), data.y.to(device, dtype), data.name)
        names = list(params)
        leaves = [params[k].requires_grad_(True) for k in names]
        found: dict[str, float] = {}
        for step in range(steps[-1] + 1):
            out = model.forward(dict(zip(names, leaves, strict=True)), on.x, model_cfg).out
            loss = squared_loss(out, on.y, model_cfg)
            if step in steps:
                want = float(traj.loss[step])
                if not abs(loss.item() - want) <= 1e-9 * abs(want):
                    raise RuntimeError(
                        f"sharpness replay of seed {traj.seed} gives loss {loss.item()!r} at step {step}, "
                        f"the run recorded {want!r}: the replay is not the same run"
                    )
                frozen = {k: v.detach() for k, v in zip(names, leaves, strict=True)}
                found[str(step)] = hessian_top_eigenvalue(
                    frozen, on, model_cfg, iters=tcfg.power_iters, tol=tcfg.power_tol, seed=traj.seed, model=model
                )
            if step < steps[-1]:
                gd_update(loss, leaves, traj.lr)
        return {}, {"lambda_max": found}

    meta = train.memo(parts, compute)[1]
    return {int(k): float(v) for k, v in meta["lambda_max"].items()}


def sharpness_at(
    train: Trainer, runs: Sequence[Run], trajs: Sequence[Trajectory], marks: Sequence[Sequence[int]]
) -> list[dict[int, float]]:
    """Return, for each run, lambda_max (the top Hessian eigenvalue) at its steps ``marks[i]`` (cached).

    ``trajs`` are the runs' trajectories (``train.batch(runs)``).

    Replays the runs' GD as one batch (the engine's stack, step sizes and update) up to the last
    step any run needs, and measures lambda_max with the engine's ``top_eigenvalues`` (the
    iteration ``train`` uses at step 0) at each run's marks. The replay is held to the runs' cached
    trajectories (relative 1e-9): a mismatch raises, since the numbers would be of another run. A
    ``--claim-model`` model replays one run at a time (``sharpness_along``).
    """
    runs = [replace(r, train=replace(r.train, device=train.device)) for r in runs]
    if train.model is not PAPER:
        return [sharpness_along(train, t, r.model, r.data, m) for r, t, m in zip(runs, trajs, marks, strict=True)]
    keys = [train_key(r.model, r.train, r.data, r.seed) for r in runs]
    parts = {"kind": "sharpness batch", "runs": keys, "marks": [sorted(m) for m in marks]}

    def compute() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        return {}, {"lambda_max": [{str(k): v for k, v in d.items()} for d in _replay(runs, trajs, marks)]}

    found = train.memo(parts, compute)[1]["lambda_max"]
    return [{int(k): float(v) for k, v in d.items()} for d in found]


def _replay(runs: Sequence[Run], trajs: Sequence[Trajectory], marks: Sequence[Sequence[int]]) -> list[dict[int, float]]:
    """Replay the runs' GD together and measure each run's lambda_max at its marks (see ``sharpness_at``)."""
    stack, _ = _initial(runs)
    cfg = runs[0].model
    stack = stack.with_lr([t.lr for t in trajs])
    want = [set(m) for m in marks]
    last = max((max(m) for m in want if m), default=0)
    found: list[dict[int, float]] = [{} for _ in runs]
    for step in range(last + 1):
        leaves = [p.requires_grad_(True) for p in stack.params.values()]
        losses, _ = stack.losses(cfg, dict(zip(stack.params, leaves, strict=True)))
        here = [i for i in range(len(runs)) if step in want[i]]
        values = losses.detach().tolist()
        for i in here:
            recorded = float(trajs[i].loss[step])
            if not abs(values[i] - recorded) <= 1e-9 * abs(recorded):
                raise RuntimeError(
                    f"sharpness replay of seed {runs[i].seed} gives loss {values[i]!r} at step {step}, "
                    f"the run recorded {recorded!r}: the replay is not the same run"
                )
        if here:
            rows = replace(stack.keep(here), rows=list(range(len(here))))  # top_eigenvalues reads row i as run i
            lams = top_eigenvalues(rows, cfg, [runs[i] for i in here])
            for i, lam in zip(here, lams, strict=True):
                found[i][step] = lam
        if step == last:
            break
        grads = torch.autograd.grad(losses.sum(), leaves)
        with torch.no_grad():
            for leaf, g in zip(leaves, grads, strict=True):
                leaf.sub_(stack.lr * g)
    return found


def exclude_past_the_bound(
    rec: ClaimRecorder,
    train: Trainer,
    runs: Sequence[Run],
    trajs: Sequence[Trajectory],
    checkpoints: Sequence[int],
    *,
    part: str = "",
    control: str | None = None,
) -> None:
    """Exclude from ``part`` (or ``control``) each run whose mu reached the local bound 2/lambda_max(t) when measured.

    lambda_max is measured at step 0 and at ``premise_marks`` (the checkpoints the run reached and
    the step after its first rise), by ``sharpness_at``; the exclusion names the ratio and the step.
    """
    marks = [premise_marks(t, checkpoints) for t in trajs]
    for traj, lams in zip(trajs, sharpness_at(train, runs, trajs, marks), strict=True):
        ratio, at = premise_ratio(traj, lams)
        if ratio >= 1:
            grew = ratio / traj.lr_over_bound
            rec.exclude(
                f"mu = {ratio:.2f} x 2/lambda_max(t) at step {at} (lambda_max(t)/lambda_max(0) = {grew:.2f})",
                part=part,
                control=control,
                unit=traj.seed,
            )


def premise_ratio(traj: Trajectory, lambdas: dict[int, float]) -> tuple[float, int]:
    """Return (max_t mu / (2/lambda_max(t)), its step) over step 0 and the measured steps."""
    best, at = traj.lr_over_bound, 0
    for step, lam in sorted(lambdas.items()):
        ratio = traj.lr * lam / 2
        if ratio > best:
            best, at = ratio, step
    return best, at
