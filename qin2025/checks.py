"""Turn trajectories into recorded checks: the statistics shared by several claims."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.record import ClaimRecorder
from qin2025.curves import increases
from qin2025.data.synthetic import TensorData
from qin2025.model import ModelConfig, squared_loss
from qin2025.train import TrainConfig, Trajectory, gd_update, hessian_top_eigenvalue
from qin2025.trainer import Trainer, train_key


def regime_of(traj: Trajectory) -> dict[str, Any]:
    """Return the regime a trajectory was trained in, for the report."""
    m, t = traj.model, traj.train
    return {
        "data": traj.data,
        "L": m["n_layers"],
        "d_qk": m["d_qk"],
        "beta": m["beta"],
        "qk_init": m["qk_init"],
        "logit_scale": m["logit_scale"],
        "steps": t["steps"],
        "step size rule": traj.lr_rule,
        "mu / (2/lambda_max)": round(traj.lr_over_bound, 4),
        "dtype": t["dtype"],
        "device": t["device"],
    }


def _loss_curve(rec: ClaimRecorder, traj: Trajectory, label: str, control: str | None) -> None:
    name = label + (f" (control: {control})" if control else "")
    rec.curve(name, traj.loss.tolist(), group="training loss per GD step", ylabel="loss")


ROSE = "steps where the loss rose"
FINAL_RATIO = "loss_T / loss_0"


def monotone_decision(loss: ArrayLike) -> dict[str, float]:
    """Return C2's statistics of one loss curve L_0..L_T: the steps where it rose, and L_T / L_0.

    A step rose when L_{t+1} > L_t (1 + 1e-12) or either loss is not finite (``increases``); the
    protocol asks for no such step, and for L_T / L_0 at or below its threshold (the descent
    reached the global minimum 0 to within that factor).
    """
    arr = np.asarray(loss, dtype=np.float64)
    return {ROSE: float(increases(arr).count), FINAL_RATIO: float(arr[-1] / arr[0])}


def record_monotone(
    rec: ClaimRecorder,
    traj: Trajectory,
    *,
    label: str,
    control: str | None = None,
    part: str = "",
    unit: object | None = None,
) -> None:
    """Score the run with its part's decision (``monotone_decision``: rises, final ratio) and keep its curve."""
    rec.set_regime(label, **regime_of(traj))
    rec.score({"loss": traj.loss}, control=control, label=label, part=part, unit=unit)
    _loss_curve(rec, traj, label, control)
    if traj.diverged_at is not None:
        rec.note(f"{label}: loss became non-finite at step {traj.diverged_at} (run stopped there)")


# --- Horizon-free linear-rate statistics (C1 and C8, protocol v2) -----------------------------

NUMERICAL_FLOOR = 1e-12  # steps after the loss first reaches 1e-12 * L_0 are not scored (see linear_rate)


@dataclass(frozen=True)
class LinearRate:
    """How a loss curve contracts, step by step, up to the numerical floor.

    ``worst_ratio`` c = max_t L_{t+1}/L_t: Theorem 1's inequality L_{t+1} <= (1 - mu alpha) L_t holds
    for every step with 1 - mu alpha = c, and with some alpha > 0 only if c < 1. ``persistence`` is
    log(c_late)/log(c_early), the worst step of the second half against the worst step of the
    first, in log: 1 for a straight line of log L whatever its slope, above 1 when the rate grows,
    exactly 1/2 for every power law L ~ t^-p (worst decrements p/T against p/(T/2)), near 0 for a
    plateau, negative or undefined when a step rises. Neither number grows with the horizon the way
    T log10 c does, so a slow but straight run is not scored as a failure.
    """

    worst_ratio: float
    persistence: float
    steps: int  # steps scored (up to the floor)
    floor_step: int | None  # first step at or below the floor, None if the run never got there


def linear_rate(loss: ArrayLike, floor: float = NUMERICAL_FLOOR) -> LinearRate:
    """Return the worst step ratio and the rate persistence of ``loss`` (L_0..L_T) above ``floor`` * L_0.

    Steps after the loss first reaches ``floor`` * L_0 are dropped: in float64 the residuals there
    are 1e-6 of their initial size and a step ratio is exact to about 1e-10, but nearer the 1e-24
    stop rounding moves it. A non-finite or non-positive loss gives c = inf and persistence -inf.
    Needs at least four scored steps (two per half).
    """
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"linear_rate needs at least two losses, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        return LinearRate(math.inf, -math.inf, arr.size - 1, None)
    below = np.flatnonzero(arr <= floor * arr[0])
    floor_step = int(below[0]) if below.size else None
    kept = arr if floor_step is None else arr[: floor_step + 1]
    ratios = kept[1:] / kept[:-1]
    if ratios.size < 4:
        raise ValueError(f"linear_rate needs at least four steps above the floor, got {ratios.size}")
    half = ratios.size // 2
    early, late = float(ratios[:half].max()), float(ratios[half:].max())
    return LinearRate(float(ratios.max()), _persistence(early, late), int(ratios.size), floor_step)


def _persistence(early: float, late: float) -> float:
    """Return log(late)/log(early) for worst ratios in (0, 1); -inf when either half rose or stood still."""
    if early >= 1 or late >= 1:
        return -math.inf
    return math.log(late) / math.log(early)


def rate_per_sharpness(worst_ratio: float, lr: float, lambda_max0: float) -> float:
    """Return -ln(c) / (mu lambda_max(0)): the worst step's rate in units of the initial curvature.

    Theorem 1's per-step rate is mu alpha, so this is alpha / lambda_max(0), an inverse condition
    number that does not depend on the step size or the horizon; 0 when c >= 1 (no contraction).
    """
    if not worst_ratio < 1:
        return 0.0
    return -math.log(worst_ratio) / (lr * lambda_max0)


WORST_RATIO = "worst step ratio c = max L_{t+1}/L_t"
RATE_PER_SHARPNESS = "worst-step rate -ln(c) / (mu lambda_max(0))"
PERSISTENCE = "rate persistence log(c_late)/log(c_early)"


def linear_rate_decision(loss: ArrayLike, lr: float, lambda_max: float) -> dict[str, float]:
    """Return the three horizon-free linear-rate statistics of one run (C1 and C8).

    ``loss`` is the curve L_0..L_T, ``lr`` the step size mu, ``lambda_max`` the top Hessian
    eigenvalue at initialisation. Every step contracts (worst ratio c < 1), the worst step is not a
    stall (its rate per unit of initial curvature, -ln(c) / (mu lambda_max), above the protocol's
    floor), and the rate persists (persistence above the power-law value 1/2). Scored up to the
    float floor 1e-12 L_0; see ``linear_rate`` and ``rate_per_sharpness``.
    """
    rate = linear_rate(loss)
    per = rate_per_sharpness(rate.worst_ratio, lr, lambda_max)
    return {WORST_RATIO: rate.worst_ratio, RATE_PER_SHARPNESS: per, PERSISTENCE: rate.persistence}


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
    measurements = {"loss": traj.loss, "lr": traj.lr, "lambda_max": traj.lambda_max}
    rec.score(measurements, part=part, unit=unit, control=control, label=label)
    _loss_curve(rec, traj, label, control)
    if traj.diverged_at is not None:
        rec.note(f"{label} seed {traj.seed}: loss became non-finite at step {traj.diverged_at}")


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
    parts = {"kind": "sharpness", "checkpoints": steps, **train_key(model_cfg, tcfg, data, traj.seed, train.model)}

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


def premise_ratio(traj: Trajectory, lambdas: dict[int, float]) -> tuple[float, int]:
    """Return (max_t mu / (2/lambda_max(t)), its step) over step 0 and the measured checkpoints."""
    best, at = traj.lr_over_bound, 0
    for step, lam in sorted(lambdas.items()):
        ratio = traj.lr * lam / 2
        if ratio > best:
            best, at = ratio, step
    return best, at
