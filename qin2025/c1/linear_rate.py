"""Decide whether a loss curve descends at a linear (geometric) rate: the decision of C1 and C8 (C1 v6, C8 v6).

Theorem 1 says L_{t+1} <= (1 - mu alpha) L_t at every step with alpha > 0: every step contracts by
at least a fixed factor, for ever. It allows any curve that does so (GD on a quadratic with several
modes, whose rate settles at the slowest; warm-ups; slower but contracting stretches) and excludes a
rate that keeps falling towards 0 (power laws, stretched exponentials) or stalls. A finite curve,
scored up to ``SCORING_FLOOR`` L_0 or its last step (S scored steps), is read by three statistics:

- the worst step ratio c = max_t L_{t+1}/L_t over the scored steps: every step contracts, by a
  margin the claim states (``c <= exp(-slowest/20)``, a twentieth of its slowest real rate);
- the late depth ln(L_{S/2}/L_S): the last half descends at least ``DEPTH_BAR`` nat (a stall, or a
  power law slow enough to look steady, descends less);
- the octave ratio: the mean per-step rate -ln(L_b/L_a)/(b - a) over [S/2, S] against the mean
  rate over [S/4, S/2] (an octave of time against the one before it). A settled rate gives 1, a
  warm-up more. A stretched exponential exp(-(t/s)^k) gives exactly 2^(k-1) whatever s and S (the
  rate k t^(k-1)/s^k changes by 2^(k-1) per doubling of t); an offset power law (1 + t/tau)^-p gives
  ln((x+1)/(x+1/2)) / (2 ln((x+1/2)/(x+1/4))), x = tau/S, from 1/2 (tau << S) up towards 1.

``OCTAVE_BAR`` = 0.9 is k = 1 + log2(0.9) = 0.848, ``OCTAVE_ZONE`` = 0.8 is k = 0.678; a power law
reaches 0.8 at tau = 1.097 S (so S >= 0.91 tau resolves it) and 0.9 at tau = 2.965 S, where it
descends p ln(3.965/3.465) = p / 7.42 nat over the last half (at tau = 1.097 S: p / 3.67). So below
0.8 a curve fails; in [0.8, 0.9) its rate is falling by 10-20% an octave, which a run still settling
and a sublinear curve (a stretched exponential with k 0.678-0.848, a power law with tau 1.1-3.0 S and
p >= 3.67) both do at this horizon: such a curve, when it contracts at every step (c < 1) and its
last half descends ``DEPTH_BAR``, is in the declared zone: its statistics are NaN and ``"zone": 1.0``
is added, and the claim counts the unit as undecided. Below 0.8, a curve whose rate no longer
falls over its last half (the last quarter's rate at least ``SETTLED_BAR`` = 0.95 of the third
quarter's) is in the zone too (v6): a rate that settled from above onto its limit after S/4, or a
slow mode that surfaced before 3S/4, is linear, and a staircase whose rate halves an octave at a
time is not, and the scored window cannot tell them apart; a power law with octave ratio below
0.8 (tau < 1.097 S) has a last-quarter ratio below 0.873 (at tau = 1.097 S: ln(2.097/1.847) /
ln(1.847/1.597)), a stretched exponential below 0.8 (k < 0.678) one below 0.895 ((1 - 0.75^k) /
(0.75^k - 0.5^k)), so neither reaches the zone without noise. Above 0.9 with the depth, a stretched
exponential with k >= 0.848 and a power law with tau >= 2.965 S and p >= 7.42 are accepted: no
statistic of the scored window tells them from a settled rate (float64 gives no deeper floor).

``linear_rate_decision(loss)`` takes the curve L_0..L_T as a 1-D array and returns a dict of the
three statistics (plus ``"zone"`` in the zone). The thresholds are the claims'
(``claims/test_c1_linear_rate.py``, ``claims/test_c8_multilayer.py``); their calibration families
are in ``qin2025.c1.calibration``. This module also holds C8's premise measurement:
lambda_max along a run, by a batched replay of the runs' GD (``sharpness_at``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.decide.record import ClaimRecorder
from claimcheck.protocol.spec import Estimate, Stat
from qin2025.c2.monotone import regime_of
from qin2025.data.synthetic import TensorData
from qin2025.engine.batched import Run, _initial, top_eigenvalues
from qin2025.engine.model import ModelConfig, squared_loss
from qin2025.engine.train import TrainConfig, Trajectory, gd_update, hessian_top_eigenvalue
from qin2025.engine.trainer import Trainer, train_key
from qin2025.engine.usermodel import PAPER

# Scored up to the first step at or below 1e-24 L_0, where the engine stops (TrainConfig.rel_floor).
# Measured on C1's runs (design record): per-step rates there deviate from their 9-step mean by
# 1e-4..1e-2, as much as at 1e-14 (GD's own oscillation, not rounding); rounding shows from about
# 1e-26 L_0 (3e-2) and the loss bottoms out at 1e-32..1e-30 L_0.
SCORING_FLOOR = 1e-24
MIN_STEPS = 8  # the first octave [S/4, S/2] holds at least two steps
OCTAVE_BAR = 0.9  # 2^(k - 1) at k = 0.848
OCTAVE_ZONE = 0.8  # 2^(k - 1) at k = 0.678; [0.8, 0.9) is the declared zone
DEPTH_BAR = 1.0  # nats over the last half
SETTLED_BAR = 0.95  # r(3S/4..S)/r(S/2..3S/4) of a rate that fell > 20% an octave but no longer falls: settled late
ZONE = "zone"  # the key a decision adds for a curve in the declared zone (its statistics are NaN)

WORST_RATIO = "worst step ratio c = max L_{t+1}/L_t"
LATE_DEPTH = "descent over the last half ln(L_{S/2}/L_S)"
OCTAVE = "octave ratio r(S/2..S)/r(S/4..S/2)"
ZONE_TEXT = (
    "a unit whose octave ratio lies in [0.8, 0.9) while every step contracts and its last half descends 1 nat is "
    "undecided (the declared zone: a rate falling 10-20% an octave is a run still settling or a stretched "
    "exponential with k 0.68-0.85, a power law with tau 1.1-3.0 S; a horizon S >= 0.91 tau resolves a power law, "
    "no horizon resolves k); so is one whose octave ratio is below 0.8 but whose rate no longer falls over its "
    "last half (last quarter >= 0.95 of the third: settled late, or a staircase; power laws and stretched "
    "exponentials below 0.8 give at most 0.873 and 0.895)"
)


def margin_ratio(slowest: float) -> float:
    """Return the worst step ratio a claim allows: exp(-slowest/20), a twentieth of its slowest real rate."""
    return math.exp(-slowest / 20)


@dataclass(frozen=True)
class RateProfile:
    """How a loss curve contracts, up to the scoring floor: its worst step, its late depth, its octave rates.

    ``early`` and ``late`` are the mean per-step rates -ln(L_b/L_a)/(b - a) over [S/4, S/2] and
    [S/2, S] of the ``steps`` (S) scored steps (S/4 and S/2 rounded); ``last_quarter`` is
    r(3S/4..S)/r(S/2..3S/4). ``floor_step`` is the first step at or below the floor, None when the
    curve never got there (then every step is scored).
    """

    worst_ratio: float
    early: float
    late: float
    late_depth: float  # nats descended over the last half of the scored steps
    steps: int
    floor_step: int | None
    last_quarter: float = math.nan

    @property
    def octave(self) -> float:
        """Return r(S/2..S)/r(S/4..S/2); -inf when the first octave did not descend."""
        return self.late / self.early if self.early > 0 else -math.inf


def rate_profile(loss: ArrayLike, floor: float = SCORING_FLOOR) -> RateProfile:
    """Return the ``RateProfile`` of the curve ``loss`` (L_0..L_T) scored up to ``floor`` * L_0.

    Steps after the loss first reaches ``floor`` * L_0 are dropped. Raises ValueError for fewer
    than ``MIN_STEPS`` scored steps; a non-finite or non-positive loss gives c = inf and every rate
    and the late depth -inf (every statistic fails).
    """
    arr = np.asarray(loss, dtype=np.float64)
    if arr.size < 2:
        raise ValueError(f"rate_profile needs at least two losses, got {arr.size}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        return RateProfile(math.inf, -math.inf, -math.inf, -math.inf, arr.size - 1, None)
    below = np.flatnonzero(arr <= floor * arr[0])
    floor_step = int(below[0]) if below.size else None
    kept = arr if floor_step is None else arr[: floor_step + 1]
    steps = kept.size - 1
    if steps < MIN_STEPS:
        raise ValueError(f"rate_profile needs at least {MIN_STEPS} steps above the floor, got {steps}")
    depth = np.log(kept[0] / kept)  # nats descended by each step
    quarter, half = round(steps / 4), round(steps / 2)
    early = float((depth[half] - depth[quarter]) / (half - quarter))
    late_depth = float(depth[steps] - depth[half])
    late = late_depth / (steps - half)
    three = round(3 * steps / 4)
    third, fourth = (depth[three] - depth[half]) / (three - half), (depth[steps] - depth[three]) / (steps - three)
    last_quarter = float(fourth / third) if third > 0 else -math.inf
    worst = float((kept[1:] / kept[:-1]).max())
    return RateProfile(worst, early, late, late_depth, steps, floor_step, last_quarter)


def linear_rate_decision(loss: ArrayLike) -> dict[str, float]:
    """Return the linear-rate statistics of one run's loss curve L_0..L_T (C1 v6, C8 v6).

    The worst step ratio c, the late depth (nats over the last half) and the octave ratio
    r(S/2..S)/r(S/4..S/2), of the curve scored up to ``SCORING_FLOOR`` L_0 (``rate_profile``). A
    curve in the declared zone (octave ratio in [``OCTAVE_ZONE``, ``OCTAVE_BAR``), c < 1, late depth
    >= ``DEPTH_BAR``), or below it with a last quarter at least ``SETTLED_BAR`` of the third (settled
    late), gets NaN statistics and ``"zone": 1.0``.
    """
    p = rate_profile(loss)
    contracts = p.worst_ratio < 1 and p.late_depth >= DEPTH_BAR
    settled_late = p.octave < OCTAVE_ZONE and p.last_quarter >= SETTLED_BAR
    if contracts and (OCTAVE_ZONE <= p.octave < OCTAVE_BAR or settled_late):
        return {WORST_RATIO: math.nan, LATE_DEPTH: math.nan, OCTAVE: math.nan, ZONE: 1.0}
    return {WORST_RATIO: p.worst_ratio, LATE_DEPTH: p.late_depth, OCTAVE: p.octave}


def record_unit(
    rec: ClaimRecorder,
    runs: Sequence[tuple[str, Trajectory]],
    *,
    unit: object,
    part: str = "",
    control: str | None = None,
) -> None:
    """Score one unit's runs (``(label, trajectory)`` pairs) with the part's decision; keep their curves.

    A run in the declared zone (its decision returns ``"zone"``) is not scored. When one is and
    none of the unit's other runs fails, the unit is excluded as undecided, the zone named; when
    another run fails, that failure decides the unit.
    """
    proto = rec.protocol
    if proto is None:
        raise ValueError("record_unit needs a recorder with a protocol: the part's decision scores the runs")
    p = proto.part(proto.control(control).part if control is not None else part)
    decide = p.decision or linear_rate_decision
    zoned, failed = [], False
    for label, traj in runs:
        rec.set_regime(label, **regime_of(traj))
        name = label + (f" (control: {control})" if control else "")
        rec.curve(name, traj.loss.tolist(), group="training loss per GD step", ylabel="loss")
        if traj.diverged_at is not None:
            rec.note(f"{label} seed {traj.seed}: loss became non-finite at step {traj.diverged_at}")
        if ZONE in decide(loss=traj.loss):
            zoned.append(label)
            continue
        values = rec.score({"loss": traj.loss}, part=part, unit=unit, control=control, label=label)
        failed = failed or not all(_met(stat, values[stat.name]) for stat in p.stats)
    if zoned and not failed:
        rec.exclude(
            f"in the declared zone (octave ratio in [0.8, 0.9), or below 0.8 and settled late): {', '.join(zoned)}",
            unit=unit,
            part=part,
            control=control,
        )


def _met(stat: Stat, value: float | Estimate) -> bool:
    """Return whether a number meets ``stat`` (this decision returns numbers, never an ``Estimate``)."""
    return not isinstance(value, Estimate) and stat.met(value)


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


def same_loss(replayed: float, recorded: float) -> bool:
    """Return whether a replayed loss is the one the run recorded: within 1e-9 of it, or non-finite alike.

    A diverged run's loss is NaN (or an infinity) in the replay as in the run: that is the same run,
    not a different one (NaN compares unequal to itself, so it is matched here by kind).
    """
    if math.isfinite(replayed) and math.isfinite(recorded):
        return abs(replayed - recorded) <= 1e-9 * abs(recorded)
    return replayed == recorded or (math.isnan(replayed) and math.isnan(recorded))


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
                if not same_loss(loss.item(), want):
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
            if not same_loss(values[i], recorded):
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
