"""C7's machinery: two levers that move the conditioning of Z with beta fixed, the unit they make, and its decisions.

C7 reads "the convergence speed is determined by the extreme singular values of the attention
output Z" as: with beta held fixed, moving kinv(Z) = sigma_min(Z)/sigma_max(Z) over the steps the
rate is fitted on must move GD's linear rate, with an elasticity that the step size (lambda_max)
does not explain, along a lever that holds what Theorem 1's alpha reads off X and the weights
(records/claims/c7.md, v5 and v6). Two levers move it with beta = 1 fixed:

- the **input lever** (``kx``): every X_i keeps the singular vectors of the seed's Gaussian X_i,
  with singular values geometric from 1 to 1/kx at Frobenius norm sqrt(n d); kx in 1 .. 100.
  Z's conditioning moves with X's here, so this lever shows an association, not which of the two
  sets the rate;
- the **rotation lever** (``rt``): W_V(rt) = expm(rt A) W_V expm(rt B) (``qin2025.c7.rotation``),
  rt in 0 .. 1, X and every other weight untouched: W_V's singular values are the Gaussian draw's
  at every rt, and X's spectrum is the draw's, so along it only the relative orientation of W_V and
  X moves; (A, B) are the rotation that worsens kinv(Z) at init most (a rotation selected from the
  draw: every singular value is a Gaussian draw's, but W_V(rt) is not a Gaussian draw in law).

kinv(Z) is read **over the fitted window**: sigma(Z) is recorded every ``SIGMA_EVERY`` steps and a
run's kinv is the geometric mean of kinv(Z_t) over t in [T/4, T], the steps its steady rate is
fitted on (GD moves W_V, so kinv(Z) at step 0 is not the conditioning the rate sees); the
initial value is kept beside it (``kinv0``) for the notes.

**W_V over the fitted window** (v6). The rotation lever holds W_V's singular values at init; GD
then moves W_V. Each run's sigma_min(W_V) over the same window (``wv``, geometric mean, read from a
replay of the engine's descent, ``window_w_v``) goes to the rotation lever's decisions: governs
holds it as a covariate (Theorem 1's alpha reads it beside Z's), and a seed on which it moved
``WV_HELD``-fold or more across the settings is in the zone below.

**The declared zone** (v6). A lever that moves kinv(Z) over the fitted window less than
``MIN_SPAN``-fold on a seed, or (the rotation lever) lets W_V's own sigma_min over it move
``WV_HELD``-fold or more, has not separated Z's conditioning from X's and W_V's there: its rates
cannot tell "the rate follows kinv(Z)" from "it follows something the lever should hold". The
decisions return their statistic as NaN with ``ZONE: 1.0`` for such a unit (``in_zone``), and the
claim excludes it as undecided, never pass or fail. Where no seed's lever separates, no part has
units and the claim is INCONCLUSIVE, with that reason.

Each lever's **unit** (one seed) is 9 runs: its 5 settings, then 4 ``lambda runs`` at its middle
setting that move lambda_max about 25-fold (``s``: X -> s X with W_Q, W_K -> W/s, so S and
kinv(Z) at init are unchanged; ``ug``: W_U -> ug W_U, Z unchanged). Every run steps at
mu = 0.5 * 2/lambda_max of its own initialisation for ``STEPS`` steps; its rate is the steady
rate (``steady_rate``). The decisions (``association_decision``, ``governs_decision``) are plain
functions of one lever's table; ``qin2025.c7.calibration`` feeds them cases whose answer
is known. The read-outs (``readout_units``) train W_U alone on fixed features, Z or X: a rate that
follows Z by construction (the positive controls) or one that follows X alone.

Training and the read-outs run with one torch thread (``one_thread``, whatever ``--claim-threads``
says, restored after): at these shapes (d = 32) torch's default threads cost about 15x the CPU
time of one on a shared 2-core machine (13.2 s against 0.86 s for 50 runs, the design record).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import torch
from numpy.typing import ArrayLike

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.stats import spearman, t_interval
from qin2025.c7.rotation import descend_reading_w_v, rotate, worst_rotation
from qin2025.data import make_synthetic
from qin2025.data.synthetic import TensorData
from qin2025.engine.batched import Run, train_batch_from
from qin2025.engine.model import ModelConfig, Params, forward, init_params
from qin2025.engine.spectral import derive_seed
from qin2025.engine.train import TrainConfig, Trajectory
from qin2025.engine.trainer import Trainer

SIZE = (2, 8, 32)  # N samples, n tokens, d (N n <= d)
MODEL = ModelConfig(d=SIZE[2], d_qk=16, beta=1.0)  # W_Q, W_K ~ N(0, 1/d), logits 1/sqrt(d_QK), FFN of 2 matrices
LR_FRACTION = 0.5  # mu = 0.5 * 2/lambda_max at init, per run
STEPS = 200  # at every budget: b grows with T on the input lever, so the horizon is part of the statistic
STEADY_FROM = 0.25  # the steady rate is fitted over steps [T/4, T]: the first quarter holds the drop every run shares
MIN_SPAN = 10.0  # zone: a lever must move kinv(Z) (read over the fitted window) at least 10-fold over its 5 settings
# zone: W_V's sigma_min over the window must span less than MIN_SPAN ** (0.5 / 2) = 1.78x over the rotation lever's
# settings: at the bound form's exponent 2, such a move changes the rate less than the claimed effect (b = 0.5 over
# MIN_SPAN, 3.16x), so W_V alone could not produce it
WV_HELD = MIN_SPAN**0.25
SIGMA_EVERY = 10  # sigma(Z) is recorded every 10 steps: 16 readings in the fitted window [50, 200]
REL_FLOOR = 1e-24  # a read-out stops once its loss is this far below its start (as TrainConfig.rel_floor)

ASSOCIATION = "Spearman rho(steady rate, kinv(Z) over the fitted steps) over the lever's 5 settings"
GOVERNS = (
    "b: elasticity of the steady rate in kinv(Z) over the fitted steps, lambda_max and W_V's sigma_min over the same "
    "steps held (log least squares over the lever's 9 runs)"
)
HELD_EXACTLY = 1e-6  # a log sigma_min(W_V) spanning less than this over a unit is held already: no covariate
ZONE = "zone"  # the key a decision adds (1.0) when the unit is in the declared zone (its statistic NaN)
ZONE_WHY = (
    "the lever moved kinv(Z) over the fitted steps less than 10x, or let W_V's own sigma_min over them move 1.78x or "
    "more, so it did not separate Z's conditioning from X's and W_V's on this seed"
)
NAIVE = "naive elasticity of rate/mu in the unnormalised sigma_min(Z) over the scale runs"


@dataclass(frozen=True)
class Setting:
    """One run of a unit: how far each lever moved from the seed's Gaussian draw."""

    kx: float = 0.0  # condition number imposed on every X_i (0: the Gaussian X as drawn)
    rt: float = 0.0  # W_V -> expm(rt A) W_V expm(rt B), the seed's worst rotation (0: W_V as drawn)
    s: float = 1.0  # X -> s X, W_Q, W_K -> W/s: sigma(Z) times s, S and kinv(Z) unchanged
    ug: float = 1.0  # W_U -> ug W_U: lambda_max moves, Z does not

    @property
    def reference(self) -> bool:
        """Return whether this run is at the reference scale and gain (one of the lever's 5 settings)."""
        return self.s == 1.0 and self.ug == 1.0

    @property
    def label(self) -> str:
        """Return e.g. ``kx=10 s=2`` (the fields moved off their defaults; "as drawn" when none is)."""
        moved = [f"{k}={getattr(self, k):g}" for k, default in _DEFAULTS if getattr(self, k) != default]
        return " ".join(moved) or "as drawn"


_DEFAULTS = (("kx", 0.0), ("rt", 0.0), ("s", 1.0), ("ug", 1.0))

LAMBDA_RUNS = ((0.5, 1.0), (2.0, 1.0), (1.0, 0.5), (1.0, 2.0))  # (s, ug) at the lever's middle setting


@dataclass(frozen=True)
class Lever:
    """A way to move kinv(Z) with beta fixed: the field it sets, its 5 settings and its middle one."""

    name: str  # "input" or "rotation": the parts are named after it
    field: Literal["kx", "rt"]
    values: tuple[float, ...]  # best conditioned first
    middle: float  # where the lambda runs sit
    holds_w_v: bool  # whether it claims to hold W_V's singular values (its decisions then read ``wv``)

    def settings(self) -> list[Setting]:
        """Return the unit's 9 runs of this lever: its 5 settings, then the 4 lambda runs at its middle."""
        runs = [Setting(**{self.field: v}) for v in self.values]
        return runs + [Setting(**{self.field: self.middle}, s=s, ug=ug) for s, ug in LAMBDA_RUNS]


INPUT = Lever("input", "kx", (1.0, 3.0, 10.0, 30.0, 100.0), 10.0, holds_w_v=False)  # X moves, and W_V with GD
ROTATION = Lever("rotation", "rt", (0.0, 0.25, 0.5, 0.75, 1.0), 0.5, holds_w_v=True)
LEVERS = (INPUT, ROTATION)


def geometric(k: int, kappa: float, norm: float) -> np.ndarray:
    """Return ``k`` values geometric from 1 down to 1/kappa, rescaled to Euclidean norm ``norm``."""
    values = kappa ** (-np.arange(k) / max(k - 1, 1))
    return np.asarray(values * norm / np.linalg.norm(values))


def respectrum(m: np.ndarray, kappa: float, norm: float) -> np.ndarray:
    """Return each matrix of ``m`` (..., a, b) with its singular vectors kept and geometric singular values (kappa)."""
    u, sv, vt = np.linalg.svd(m, full_matrices=False)
    return np.asarray((u * geometric(sv.shape[-1], kappa, norm)[None, :]) @ vt)


def build(setting: Setting, seed: int) -> tuple[Params, TensorData]:
    """Return the initial parameters (CPU, float64) and the data of one run of ``seed``."""
    n_samples, n, d = SIZE
    base = make_synthetic(n_samples, n, d, 1, seed)
    x = base.x.numpy()
    if setting.kx:
        x = respectrum(x, setting.kx, math.sqrt(n * d))
    x = x * setting.s
    params = init_params(MODEL, torch.Generator().manual_seed(seed), torch.float64)
    params["0.W_Q"] = params["0.W_Q"] / setting.s
    params["0.W_K"] = params["0.W_K"] / setting.s
    params["W_U"] = params["W_U"] * setting.ug
    if setting.rt:
        a, b = _worst_rotation(seed)
        params["0.W_V"] = rotate(params["0.W_V"], a, b, setting.rt)
    return params, TensorData(torch.from_numpy(x), base.y, f"{base.name} {setting.label}")


@functools.lru_cache(maxsize=256)
def _worst_rotation(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the seed's worst rotation (A, B) of W_V, found at the Gaussian draw (``Setting()``); never modified."""
    params, data = build(Setting(), seed)
    return worst_rotation(params, data.x, MODEL)


def steady_rate(loss: ArrayLike, steps: int, start: float = STEADY_FROM) -> float:
    """Return minus the least-squares slope of log10 L_t over t in [start * steps, T'] (orders per step).

    ``steps`` is the planned horizon T; T' is the run's last recorded step with a finite, positive
    loss (a run that reached its floor early is fitted up to it). NaN with fewer than 5 points.
    """
    arr = np.asarray(loss, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
    kept = arr[: bad[0]] if bad.size else arr
    lo = math.ceil(start * steps)
    t = np.arange(lo, kept.size)
    if t.size < 5:
        return math.nan
    return float(-np.polyfit(t, np.log10(kept[lo:]), 1)[0])


def conditioning(z: np.ndarray) -> tuple[float, float, float]:
    """Return (kinv, sigma_min, sigma_max) of Z (N, n, d): min_i sigma_min(Z_i) / max_i sigma_max(Z_i)."""
    sv = np.linalg.svd(z, compute_uv=False)
    lo, hi = float(sv[:, -1].min()), float(sv[:, 0].max())
    return lo / hi, lo, hi


@dataclass(frozen=True)
class Table:
    """One lever's runs of one seed: the settings and what each run measured at init and over its descent."""

    lever: Lever
    settings: tuple[Setting, ...]
    rate: np.ndarray  # steady rate, orders of loss decrease per step
    kinv: np.ndarray  # sigma_min/sigma_max of Z, geometric mean over the fitted window (what the decisions read)
    kinv0: np.ndarray  # sigma_min/sigma_max of Z at init (shown, not decided on)
    lam: np.ndarray  # lambda_max at init (the Hessian's, or H^T H's for a read-out)
    smin: np.ndarray  # sigma_min(Z) at init, unnormalised
    mu: np.ndarray  # the step size
    wv: np.ndarray  # sigma_min(W_V), geometric mean over the fitted window (v6: held as a covariate by governs)
    ok: np.ndarray  # the loss stayed finite, ended below its start and fell over the steady window

    def measurements(self) -> dict[str, Any]:
        """Return the decisions' keyword arguments: ``rate``, ``kinv``, ``lam``, ``reference`` (and ``wv``).

        ``wv`` only for a lever that claims to hold W_V's singular values (the rotation lever).
        """
        out = {
            "rate": self.rate.tolist(),
            "kinv": self.kinv.tolist(),
            "lam": self.lam.tolist(),
            "reference": [s.reference for s in self.settings],
        }
        return out | ({"wv": self.wv.tolist()} if self.lever.holds_w_v else {})

    def premise(self) -> str:
        """Return why this table is outside the step-size premise, or "" when every run is inside it."""
        bad = [s.label for s, ok in zip(self.settings, self.ok, strict=True) if not ok]
        if bad:
            return (
                f"{self.lever.name} lever: left the step-size premise at {', '.join(bad)} (loss non-finite, ended "
                "above its start, or rose over the steady window)"
            )
        return ""

    def zone(self) -> str:
        """Return why this table is in the declared zone (its lever did not separate), or "" when it is not."""
        ref = [s.reference for s in self.settings]
        span = kinv_span(self.kinv, ref)
        if not span >= MIN_SPAN:
            return f"{self.lever.name} lever: kinv(Z) spans {span:.3g}x over its settings, under {MIN_SPAN:g}x"
        if self.lever.holds_w_v and in_zone(self.kinv, ref, self.wv):
            return (
                f"{self.lever.name} lever: W_V's sigma_min over the fitted steps spans {kinv_span(self.wv, ref):.3g}x "
                f"over its settings, {WV_HELD:.3g}x or more"
            )
        return ""

    def admitted(self) -> bool:
        """Return whether this table is inside the premise and outside the zone (what the notes summarise)."""
        return not self.premise() and not self.zone()

    def shuffled(self, seed: int) -> Table:
        """Return the table with kinv(Z) permuted across the lever's 5 settings, seeded from ``seed`` (sanity).

        The lambda runs keep theirs, so the span of kinv(Z), and with it the premise, is unchanged.
        """
        rng = np.random.default_rng(derive_seed(seed, 7, LEVERS.index(self.lever)))
        ref = np.flatnonzero([s.reference for s in self.settings])
        kinv = self.kinv.copy()
        kinv[ref] = rng.permutation(kinv[ref])
        return replace(self, kinv=kinv)


@dataclass(frozen=True)
class Unit:
    """One seed: a table per lever."""

    seed: int
    tables: Mapping[str, Table]  # lever name -> its table


def _runs(seeds: Sequence[int], steps: int, device: str) -> tuple[list[Run], list[Params]]:
    train = TrainConfig(steps=steps, lr_fraction=LR_FRACTION, sigma_every=SIGMA_EVERY, device=device)
    runs, params = [], []
    for seed in seeds:
        for lever in LEVERS:
            for setting in lever.settings():
                p, data = build(setting, seed)
                runs.append(Run(MODEL, train, data, seed))
                params.append(p)
    return runs, params


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with one torch intra-op thread, then restore the count it had."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def window_kinv(sigma_steps: ArrayLike, sigma_min: ArrayLike, sigma_max: ArrayLike, steps: int) -> float:
    """Return the geometric mean of kinv(Z_t) = sigma_min/sigma_max over the recorded t in [T/4, T].

    ``steps`` is the planned horizon T, so every run is read from the step its steady rate is fitted
    from; a run that stopped at its floor before T/4 is read at its last recorded step.
    """
    t = np.asarray(sigma_steps)
    kinv = np.asarray(sigma_min, dtype=np.float64) / np.asarray(sigma_max, dtype=np.float64)
    window = t >= math.ceil(STEADY_FROM * steps)
    kept = kinv[window] if window.any() else kinv[-1:]
    return float(np.exp(np.mean(np.log(kept))))


def _measured(traj: Trajectory, steps: int, wv: float) -> list[float]:
    """Return [rate, kinv (fitted window), kinv0 (init), lam, smin (init), mu, wv, ok] of one trained run."""
    loss = traj.loss
    rate = steady_rate(loss, steps)
    ok = traj.diverged_at is None and math.isfinite(rate) and rate > 0 and bool(loss[-1] < loss[0])
    smin, smax = float(traj.sigma_min[0, 0]), float(traj.sigma_max[0, 0])
    kinv = window_kinv(traj.sigma_steps, traj.sigma_min[:, 0], traj.sigma_max[:, 0], steps)
    return [rate, kinv, smin / smax, traj.lambda_max, smin, traj.lr, wv, float(ok)]


COLUMNS = ("rate", "kinv", "kinv0", "lam", "smin", "mu", "wv", "ok")


def window_w_v(runs: Sequence[Run], params: Sequence[Params], trajs: Sequence[Trajectory], steps: int) -> list[float]:
    """Return each run's sigma_min(W_V), geometric mean over the readings in [T/4, T'] of its descent.

    The engine returns no weights, so the descent is replayed (``descend_reading_w_v``: the same
    updates, the engine's step size) and W_V read every ``SIGMA_EVERY`` steps; T' is the last step
    the engine's run reached (a run stopped early is read up to it, or at its last reading). The
    replay runs on the CPU in float64: bit for bit the engine's CPU run, within float rounding of a
    run on another device.
    """
    _, readings = descend_reading_w_v(runs, params, [t.lr for t in trajs], steps, SIGMA_EVERY)
    t = np.arange(readings.shape[1]) * SIGMA_EVERY
    out = []
    for row, traj in zip(readings, trajs, strict=True):
        reached = t <= len(traj.loss) - 1
        window = reached & (t >= math.ceil(STEADY_FROM * steps))
        kept = row[window] if window.any() else row[reached][-1:]
        out.append(float(np.exp(np.mean(np.log(kept)))) if np.all(kept > 0) else math.nan)
    return out


def train_units(seeds: Sequence[int], steps: int = STEPS, device: str = "cpu") -> dict[str, np.ndarray]:
    """Train every run of every seed's unit as one batch; return each column as (seeds, 18 runs)."""
    with one_thread():  # the rotation search in ``build`` as well as the training
        runs, params = _runs(seeds, steps, device)
        trajs = train_batch_from(runs, params)
        wv = window_w_v(runs, params, trajs, steps)
    rows = np.array([_measured(t, steps, w) for t, w in zip(trajs, wv, strict=True)])
    rows = rows.reshape(len(seeds), -1, len(COLUMNS))
    return {c: rows[..., i] for i, c in enumerate(COLUMNS)}


def _units(seeds: Sequence[int], arrays: Mapping[str, np.ndarray]) -> list[Unit]:
    out = []
    for i, seed in enumerate(seeds):
        tables, at = {}, 0
        for lever in LEVERS:
            settings = tuple(lever.settings())
            cols = {c: np.asarray(arrays[c][i, at : at + len(settings)]) for c in COLUMNS}
            at += len(settings)
            tables[lever.name] = Table(lever, settings, **{**cols, "ok": cols["ok"] > 0.5})
        out.append(Unit(seed, tables))
    return out


def _key(kind: str, seeds: Sequence[int], steps: int) -> dict[str, Any]:
    """Return the inputs a cached batch of units depends on: sizes, levers and seeds (its code is in its key)."""
    return {
        "kind": kind,
        "seeds": [int(s) for s in seeds],
        "steps": steps,
        "sigma_every": SIGMA_EVERY,
        "model": MODEL.to_dict(),
        "size": list(SIZE),
        "lr_fraction": LR_FRACTION,
        "levers": [[lv.field, list(lv.values), lv.middle, lv.holds_w_v] for lv in LEVERS],
    }


def measure(trainer: Trainer, seeds: Sequence[int], steps: int = STEPS) -> list[Unit]:
    """Return every seed's unit, trained on the trainer's device through its cache (one entry per batch of seeds)."""
    parts = {**_key("c7-levers", seeds, steps), "device_type": torch.device(trainer.device).type}
    arrays, _ = trainer.memo(parts, lambda: (train_units(seeds, steps, trainer.device), {}))
    return _units(seeds, arrays)


Features = Literal["z", "x"]


def readout(setting: Setting, seed: int, features: Features, steps: int = STEPS) -> list[float]:
    """Return [rate, kinv, kinv0, lam, smin, mu, wv, ok] of GD on W_U alone, every other weight frozen at its init.

    The model's output is H W_U; with H fixed, GD on W_U is least squares on H, whose rate is set by
    H's conditioning. ``features`` "z": H = Z (the FFN off), so the rate follows kinv(Z) by
    construction; "x": H = X (attention bypassed), so it follows X alone. lambda is the top
    eigenvalue of H^T H (this problem's Hessian), mu = 0.5 * 2/lambda; kinv(Z) and sigma_min(W_V) are the run's
    own at init (W_V is frozen, and Z does
    not move, so its value over the fitted window is its value at init).
    """
    params, data = build(setting, seed)
    with torch.no_grad():
        z = forward(params, data.x, MODEL).z[0].numpy()
    h = (z if features == "z" else data.x.numpy()).reshape(-1, SIZE[2])
    y = data.y.numpy().reshape(-1)
    w = params["W_U"].numpy().reshape(-1).copy()
    lam = float(np.linalg.eigvalsh(h.T @ h)[-1])
    mu = LR_FRACTION * 2 / lam
    loss: list[float] = []
    for _ in range(steps + 1):
        r = h @ w - y
        loss.append(0.5 * float(r @ r))
        if not math.isfinite(loss[-1]) or loss[-1] <= REL_FLOOR * loss[0]:
            break
        w -= mu * (h.T @ r)
    kinv, smin, _ = conditioning(z)
    rate = steady_rate(loss, steps)
    ok = math.isfinite(rate) and rate > 0 and loss[-1] < loss[0]
    wv = float(np.linalg.svd(params["0.W_V"].numpy(), compute_uv=False)[-1])
    return [rate, kinv, kinv, lam, smin, mu, wv, float(ok)]


def readout_units(trainer: Trainer, seeds: Sequence[int], features: Features, steps: int = STEPS) -> list[Unit]:
    """Return every seed's unit of read-outs on ``features``, through the trainer's cache (numpy, on the CPU)."""

    def compute() -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        with one_thread():
            rows = [readout(s, seed, features, steps) for seed in seeds for lever in LEVERS for s in lever.settings()]
        table = np.array(rows).reshape(len(seeds), -1, len(COLUMNS))
        return {c: table[..., i] for i, c in enumerate(COLUMNS)}, {}

    arrays, _ = trainer.memo({**_key("c7-readouts", seeds, steps), "features": features}, compute)
    return _units(seeds, arrays)


# --- the decisions: plain functions of one lever's table --------------------------------------------


def kinv_span(kinv: ArrayLike, reference: Sequence[bool]) -> float:
    """Return max/min of kinv(Z) over the reference runs (the lever's 5 settings); NaN without two."""
    k = np.asarray(kinv, dtype=np.float64)[np.asarray(reference, dtype=bool)]
    k = k[np.isfinite(k) & (k > 0)]
    return float(k.max() / k.min()) if k.size >= 2 else math.nan


def in_zone(kinv: ArrayLike, reference: Sequence[bool], wv: ArrayLike | None = None) -> bool:
    """Return whether the unit is in the declared zone: the lever did not separate Z's conditioning from X's and W_V's.

    Over the reference runs: kinv(Z) spans under ``MIN_SPAN`` (or cannot be read), or, where
    ``wv`` is given, W_V's sigma_min over the fitted window spans ``WV_HELD`` or more.
    """
    if not kinv_span(kinv, reference) >= MIN_SPAN:
        return True
    return wv is not None and not kinv_span(wv, reference) < WV_HELD


def association_decision(
    rate: Sequence[float],
    kinv: Sequence[float],
    lam: Sequence[float],
    reference: Sequence[bool],
    wv: Sequence[float] | None = None,
) -> dict[str, float]:
    """Return Spearman's rho between the rate and kinv(Z) over the lever's 5 settings (the reference runs).

    ``rate``, ``kinv``, ``lam``, ``reference`` and ``wv`` describe the lever's runs (the 5 settings
    at s = ug = 1, marked ``reference``, and the lambda runs, which this decision ignores, as it does
    ``lam``). NaN with fewer than 4 reference runs with a finite positive rate; NaN with
    ``ZONE: 1.0`` in the declared zone (``in_zone``: kinv(Z) spans under ``MIN_SPAN`` over them, or
    ``wv``, where given, ``WV_HELD`` or more). With 5 points
    rho >= 0.9 is the exact one-sided 5% test (5/120 orderings reach it under no association).
    """
    r = np.asarray(rate, dtype=np.float64)
    k = np.asarray(kinv, dtype=np.float64)
    idx = np.asarray(reference, dtype=bool) & np.isfinite(r) & (r > 0)
    if idx.sum() < 4:
        return {ASSOCIATION: math.nan}
    if in_zone(k[idx], [True] * int(idx.sum()), None if wv is None else np.asarray(wv, dtype=np.float64)[idx]):
        return {ASSOCIATION: math.nan, ZONE: 1.0}
    return {ASSOCIATION: spearman(r[idx], k[idx]).rho}


def elasticity(y: ArrayLike, x: ArrayLike, covariates: Sequence[ArrayLike] = ()) -> float:
    """Return the least-squares coefficient of log x in log y ~ 1 + log x + log(each covariate)."""
    ya = np.asarray(y, dtype=np.float64)
    cols = [np.ones_like(ya), np.log(np.asarray(x, dtype=np.float64))]
    cols += [np.log(np.asarray(c, dtype=np.float64)) for c in covariates]
    coef, *_ = np.linalg.lstsq(np.column_stack(cols), np.log(ya), rcond=None)
    return float(coef[1])


def governs_decision(
    rate: Sequence[float],
    kinv: Sequence[float],
    lam: Sequence[float],
    reference: Sequence[bool],
    wv: Sequence[float] | None = None,
) -> dict[str, float]:
    """Return b, the elasticity of the rate in kinv(Z) with lambda_max (and W_V's sigma_min) held, over the 9 runs.

    Least squares of log rate on [1, log kinv(Z), log lambda_max, log wv] over every run with a
    finite positive rate (and a positive ``wv``): how much faster a better-conditioned Z makes GD
    once the step size (set by lambda_max) and W_V's own sigma_min over the fitted window (``wv``,
    which Theorem 1's alpha also reads and GD moves after the lever set it) are held. Without
    ``wv`` the covariate is lambda_max alone (v5's statistic). With lambda_max among the
    covariates, b is the same whether the rate is counted per step or per unit of mu. A ``wv`` whose
    log spans under ``HELD_EXACTLY`` (W_V frozen, as in a read-out) is held already and not fitted.
    NaN with fewer than 6 such runs; NaN with ``ZONE: 1.0`` in the declared zone (``in_zone`` over
    the reference runs).
    """
    r = np.asarray(rate, dtype=np.float64)
    k = np.asarray(kinv, dtype=np.float64)
    m = np.asarray(lam, dtype=np.float64)
    w = np.ones_like(r) if wv is None else np.asarray(wv, dtype=np.float64)
    ok = np.isfinite(r) & (r > 0) & (k > 0) & (m > 0) & np.isfinite(w) & (w > 0)
    ref = np.asarray(reference, dtype=bool) & ok
    if ok.sum() < 6:
        return {GOVERNS: math.nan}
    if in_zone(k, ref.tolist(), None if wv is None else w):
        return {GOVERNS: math.nan, ZONE: 1.0}
    held = wv is not None and np.ptp(np.log(w[ok])) > HELD_EXACTLY  # a W_V held exactly adds no covariate
    return {GOVERNS: elasticity(r[ok], k[ok], [m[ok]] + ([w[ok]] if held else []))}


def naive_scale(table: Table) -> float:
    """Return the naive check a scale change fools: the elasticity of rate/mu in sigma_min(Z) over the scale runs.

    The runs at the lever's middle setting with ug = 1 (s = 1/2, 1, 2): kinv(Z) is the same in all
    three, sigma_min(Z) moves 4-fold, and a rate at a common absolute step follows it (the bound form
    mu sigma_min^2 gives 2). The real decisions see no conditioning change there.
    """
    idx = [
        i for i, s in enumerate(table.settings) if s.ug == 1.0 and getattr(s, table.lever.field) == table.lever.middle
    ]
    return elasticity(table.rate[idx] / table.mu[idx], table.smin[idx])


# --- recording: what the claim module calls --------------------------------------------------------


def record_lever(
    rec: ClaimRecorder,
    units: Sequence[Unit],
    lever: Lever,
    *,
    parts: Sequence[str] = (),
    control: str | None = None,
    shuffled: bool = False,
) -> None:
    """Score every unit's table of ``lever`` on ``parts`` (or on ``control``); exclude a table outside the premise.

    A table in the declared zone (``Table.zone``, the condition under which the decisions return
    ``ZONE``) is excluded as undecided, "in the declared zone: ...", never scored as pass or fail.
    ``shuffled``: score the table with kinv(Z) permuted across the lever's 5 settings (a sanity control).
    """
    if not parts and control is None:
        raise ValueError("record_lever needs the parts to score, or a control")
    for unit in units:
        table = unit.tables[lever.name]
        table = table.shuffled(unit.seed) if shuffled else table
        why = table.premise()
        if not why and (span := table.zone()):
            why = f"in the declared zone: {ZONE_WHY} ({span})"
        for part in parts if control is None else ("",):
            if why:
                rec.exclude(why, unit=unit.seed, part=part, control=control)
            else:
                rec.score(table.measurements(), part=part, unit=unit.seed, label=f"{lever.name} lever", control=control)


def regime(device: str) -> dict[str, object]:
    """Return the regime the claim records: the model, the levers, the step-size rule, the horizon."""
    return {
        "model": "qin2025.engine.model, 1 layer, d=32, d_qk=16, W ~ N(0, 1/d), logits 1/sqrt(d_qk), FFN 2 matrices, "
        "beta=1",
        "data": "synthetic N={} n={} d={} (Gaussian X and Y)".format(*SIZE),
        "input lever": f"X_i given condition number kx in {list(INPUT.values)}, same singular vectors",
        "rotation lever": f"W_V -> expm(rt A) W_V expm(rt B), rt in {list(ROTATION.values)}, (A, B) the rotation that "
        "worsens kinv(Z) at init most; W_V's singular values, X and every other weight are the Gaussian draw's (a "
        "selected rotation of a Gaussian W_V: not a Gaussian draw in law)",
        "kinv(Z)": f"geometric mean of sigma_min/sigma_max of Z over steps [{STEADY_FROM:g} T, T], read every "
        f"{SIGMA_EVERY} steps (the steps the rate is fitted on)",
        "declared zone": f"kinv(Z) over the fitted steps spanning under {MIN_SPAN:g}x over a lever's settings, or "
        f"(rotation lever) W_V's sigma_min over them {WV_HELD:.3g}x or more: {ZONE_WHY}; excluded as undecided",
        "lambda runs": f"(s, ug) in {list(LAMBDA_RUNS)} at each lever's middle: X, W_Q, W_K -> s X, W/s; W_U -> ug W_U",
        "step size rule": f"mu = {LR_FRACTION} * 2/lambda_max at init, per run (a proxy for the bound)",
        "steps": STEPS,
        "rate": f"steady: minus the slope of log10 L over steps [{STEADY_FROM:g} T, T]",
        "dtype": "float64",
        "device": device,
        "torch threads": "1 (set while training, then restored)",
    }


def note_levers(rec: ClaimRecorder, units: Sequence[Unit], what: str = "GD on every weight") -> None:
    """Add, per lever, the median over seeds of kinv(Z) (fitted window, and init), lambda_max and the rate, a figure."""
    for lever in LEVERS:
        tables = [u.tables[lever.name] for u in units]
        med = {c: np.median([getattr(t, c) for t in tables], axis=0) for c in ("kinv", "kinv0", "lam", "rate")}
        rows = [
            f"{s.label}: kinv {k:.3g} (init {k0:.3g}), lambda_max {m:.3g}, rate {r:.3g}"
            for s, k, k0, m, r in zip(
                tables[0].settings, med["kinv"], med["kinv0"], med["lam"], med["rate"], strict=True
            )
        ]
        rec.note(
            f"{what}, {lever.name} lever, median over {len(units)} seeds (rate in log10 loss per step): "
            + "; ".join(rows)
        )
        ref = [i for i, s in enumerate(tables[0].settings) if s.reference]
        rec.curve(
            f"{lever.name} lever ({what})",
            med["rate"][ref].tolist(),
            x=np.log10(med["kinv"][ref]).tolist(),
            group="median steady rate against log10 kinv(Z) over the fitted steps, beta = 1",
            xlabel="log10 sigma_min(Z)/sigma_max(Z)",
            ylabel="orders of loss per step",
        )


def note_naive_scale(rec: ClaimRecorder, units: Sequence[Unit], bar: float) -> None:
    """Add the naive check a scale change fools (``naive_scale`` on the input lever), against ``bar``."""
    values = [naive_scale(t) for u in units if (t := u.tables[INPUT.name]).admitted()]
    passing = sum(v >= bar for v in values)
    rec.note(
        f"scale at fixed kinv(Z) (s = 1/2, 1, 2 at kx = {INPUT.middle:g}; sigma_min(Z) moves 4x): the naive check, "
        f"{NAIVE} >= {bar:g}, passes {passing} of {len(values)} seeds in the premise (mean {np.mean(values):.3g}); "
        "kinv(Z) at init is the same in all three runs"
    )


def note_one_lever(rec: ClaimRecorder, units: Sequence[Unit], bar: float) -> None:
    """Add what a one-lever design (the input lever alone) says of these units: its b, against ``bar``."""
    values = [governs_decision(**u.tables[INPUT.name].measurements())[GOVERNS] for u in units]
    kept = [v for v in values if math.isfinite(v)]
    mean = t_interval(kept, 0.9).format() if len(kept) >= 2 else "undefined"
    rec.note(
        f"the same read-out on the input lever, where kinv(Z) moves with X's conditioning: b {mean} (Student-t 90%), "
        f"{sum(v >= bar for v in kept)} of {len(kept)} seeds >= {bar:g}; a one-lever design would have passed it"
    )


def note_readings(rec: ClaimRecorder, units: Sequence[Unit], bar: float) -> None:
    """Add what undecided readings give: b on the input lever; on the rotation lever without W_V held, or at step 0."""
    lines = []
    readings = (
        (INPUT, "kinv", True, "input lever (X and Z move together: an association only)"),
        (ROTATION, "kinv", False, "rotation lever, W_V's sigma_min not held (v5's statistic)"),
        (ROTATION, "kinv0", True, "rotation lever with kinv(Z) read at step 0 (not decided)"),
    )
    for lever, column, with_wv, what in readings:
        values = []
        for u in units:
            t = u.tables[lever.name]
            if t.admitted():
                m = {**t.measurements(), "kinv": getattr(t, column).tolist()}
                values.append(governs_decision(**(m if with_wv else {**m, "wv": None}))[GOVERNS])
        kept = [v for v in values if math.isfinite(v)]
        mean = t_interval(kept, 0.9).format() if len(kept) >= 2 else "undefined"
        lines.append(f"{what}: b {mean}, {sum(v >= bar for v in kept)} of {len(kept)} seeds >= {bar:g}")
    tables = [u.tables[ROTATION.name] for u in units]
    spans = [kinv_span(t.kinv, [s.reference for s in t.settings]) for t in tables]
    wv_spans = [kinv_span(t.wv, [s.reference for s in t.settings]) for t in tables]
    wide = sum(s >= MIN_SPAN for s in spans)
    rec.note(
        "GD on every weight, readings no part decides: " + "; ".join(lines) + f"; the rotation lever moved kinv(Z) "
        f"over the fitted steps {np.median(spans):.3g}x (median), >= {MIN_SPAN:g}x on {wide} of {len(spans)} seeds, "
        f"and W_V's sigma_min over the same steps {np.median(wv_spans):.3g}x (median; at most "
        f"{np.nanmax(wv_spans):.3g}x)"
    )
