"""Turn trajectories into recorded checks: the statistics shared by several claims."""

from __future__ import annotations

from typing import Any

from claimcheck.record import ClaimRecorder
from claimcheck.stats import contraction, increases, log_linear_fit
from claimcheck.train import Trajectory

# Thresholds fixed before any claim was run; see README "How each claim is checked".
LINEAR_RATE_ORDERS = -2.0  # the worst-step envelope c^T must guarantee >= 2 orders of decrease
LOG_FIT_R2 = 0.9  # log10 loss must be explained by a straight line in t to R^2 >= 0.9


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


def record_linear_rate(rec: ClaimRecorder, traj: Trajectory, *, label: str, control: str | None = None) -> None:
    """Record the two linear-rate statistics of ``traj``: worst-step envelope and log-linear fit.

    The envelope statistic is T log10(max_t L_{t+1}/L_t): every step contracted the loss by at
    least c, and c^T is the decrease that alone guarantees. Theorem 1 bounds c by 1 - mu alpha.
    """
    rec.set_regime(label, **regime_of(traj))
    env = contraction(traj.loss)
    fit = log_linear_fit(traj.loss)
    rec.check("worst-step envelope T*log10(c)", env.orders, "<=", LINEAR_RATE_ORDERS, control=control, label=label)
    rec.check("log-linear fit R^2", fit.r2, ">=", LOG_FIT_R2, control=control, label=label)
    _loss_curve(rec, traj, label, control)
    if traj.diverged_at is not None:
        rec.note(f"{label}: loss became non-finite at step {traj.diverged_at}")


def record_monotone(rec: ClaimRecorder, traj: Trajectory, *, label: str, control: str | None = None) -> None:
    """Record how many steps increased the loss (non-finite losses count) and the final ratio."""
    rec.set_regime(label, **regime_of(traj))
    inc = increases(traj.loss)
    rec.check("steps where the loss rose", inc.count, "<=", 0, control=control, label=label)
    final = traj.loss[-1] / traj.loss[0]
    rec.check("loss_T / loss_0", final, "<=", 1e-3, control=control, label=label)
    _loss_curve(rec, traj, label, control)
    if traj.diverged_at is not None:
        rec.note(f"{label}: loss became non-finite at step {traj.diverged_at} (run stopped there)")
