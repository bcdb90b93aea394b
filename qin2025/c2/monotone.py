"""C2's decision and recorder (no step raises the loss), and the regime a trajectory records (shared)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from claimcheck.decide.record import ClaimRecorder
from qin2025.curves import increases
from qin2025.engine.train import Trajectory


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
