"""Train the runs of a sweep as one batched computation, giving what ``train`` gives run by run.

``train_batch(runs) -> list[Trajectory]``. Runs that share the model's shapes (a sweep over seeds,
beta, gamma, step sizes or data values) stack their parameters along a leading batch dimension B
and take every GD step together. Each operation acts on a run's slice as the one-run engine does:
a projection multiplies one (N n, d) matrix per run by its weight (``matrixwise.project``; there
``forward`` folds the tokens into one ``mm``), attention keeps its per-sample ``bmm``, and losses
and norms reduce each run along the last dimension. On CPU this gives ``train``'s numbers bit for
bit at the claims' shapes (tiny ones can differ in the last bits); the tests hold it to 1e-10
relative. The summed loss of independent runs has a block-diagonal Hessian, so one
Hessian-vector product of the sum gives each run its own. A run that diverges, reaches its loss
floor or its last step stops being recorded, and nothing it computes reaches another run.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch

from claimcheck.errors import ConfigError
from qin2025.data.synthetic import TensorData
from qin2025.engine.matrixwise import project, project_once
from qin2025.engine.model import ModelConfig, Params, forward, init_params
from qin2025.engine.train import Lanczos, TrainConfig, Trajectory, TrajectoryLog, sigma_extremes, step_size

# What every run of a batch must share; everything else (seed, beta, ffn_residual, init gains,
# data values, steps, step size, Lanczos steps, floor, sigma schedule) may differ per run.
SHARED_MODEL_FIELDS = ("d", "d_qk", "d_out", "d_ff", "n_layers", "ffn_matrices", "logit_scale", "half_loss")
SHARED_TRAIN_FIELDS = ("dtype", "device")


@dataclass(frozen=True)
class Run:
    """One training run of a batch: the four arguments ``train`` takes."""

    model: ModelConfig
    train: TrainConfig
    data: TensorData
    seed: int


def _shared(run: Run) -> dict[str, object]:
    """Return what every run of a batch must share, keyed by the name an error shows."""
    shared: dict[str, object] = {f"ModelConfig.{f}": getattr(run.model, f) for f in SHARED_MODEL_FIELDS}
    shared |= {f"TrainConfig.{f}": getattr(run.train, f) for f in SHARED_TRAIN_FIELDS}
    shared |= {"data.x shape": tuple(run.data.x.shape), "data.y shape": tuple(run.data.y.shape)}
    return shared


def check_batchable(runs: Sequence[Run]) -> None:
    """Raise ConfigError naming the first field on which a run differs from run 0 in shape."""
    if not runs:
        raise ConfigError("train_batch needs at least one run, got none")
    first = _shared(runs[0])
    for i, run in enumerate(runs[1:], start=1):
        for name, got in _shared(run).items():
            if got != first[name]:
                raise ConfigError(
                    f"train_batch needs every run to share {name}: run 0 has {first[name]!r}, run {i} has "
                    f"{got!r}; train runs of different shapes in separate batches"
                )


@dataclass(frozen=True)
class Stack:
    """Runs stacked along a leading batch dimension B; rows of finished runs may ride along."""

    rows: list[int]  # position in the run list of each batch row
    params: Params  # name -> (B, *shape of the weight)
    x: torch.Tensor  # (B, N, n, d)
    y: torch.Tensor  # (B, N, n, d_out)
    beta: torch.Tensor  # (B, 1, 1, 1)
    gamma: torch.Tensor  # (B, 1, 1, 1)
    lr: torch.Tensor  # (B, 1, 1) step size of each run

    def keep(self, kept: list[int]) -> Stack:
        """Return the stack of batch rows ``kept`` (positions in this stack), parameters detached."""
        if len(kept) == len(self.rows):
            return Stack(self.rows, {k: v.detach() for k, v in self.params.items()}, *self._rest())
        index = torch.tensor(kept, dtype=torch.long, device=self.x.device)
        rest = [t.index_select(0, index) for t in self._rest()]
        params = {k: v.detach().index_select(0, index) for k, v in self.params.items()}
        return Stack([self.rows[i] for i in kept], params, *rest)

    def with_lr(self, lrs: list[float]) -> Stack:
        """Return this stack with step sizes ``lrs``, one per batch row."""
        return replace(self, lr=_column(lrs, self.x, 2))

    def _rest(self) -> tuple[torch.Tensor, ...]:
        return self.x, self.y, self.beta, self.gamma, self.lr

    def losses(
        self, cfg: ModelConfig, params: Params, *, once: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Return each run's loss at ``params`` (B,) and Z per layer (B, N, n, d).

        ``once``: the graph will be differentiated once only (``matrixwise.project_once``).
        """
        product = project_once if once else project
        fwd = forward(params, self.x, cfg, project=product, beta=self.beta, gamma=self.gamma)
        r = fwd.out - self.y
        total = (r * r).flatten(1).sum(1)  # (B,)
        return (0.5 * total if cfg.half_loss else total), fwd.z


def _column(values: list[float], like: torch.Tensor, dims: int) -> torch.Tensor:
    """Return ``values`` as a (B, 1, ..., 1) tensor with ``dims`` trailing ones, dtype and device of ``like``."""
    return torch.tensor(values, dtype=like.dtype, device=like.device).view(-1, *([1] * dims))


def _stack(runs: Sequence[Run], params: list[Params], datas: list[TensorData]) -> Stack:
    """Stack the runs' initial parameters, data and residual coefficients in run order (step sizes 0)."""
    x = datas[0].x
    return Stack(
        rows=list(range(len(runs))),
        params={k: torch.stack([p[k] for p in params]) for k in params[0]},
        x=torch.stack([d.x for d in datas]),
        y=torch.stack([d.y for d in datas]),
        beta=_column([r.model.beta for r in runs], x, 3),
        gamma=_column([r.model.ffn_residual for r in runs], x, 3),
        lr=_column([0.0] * len(runs), x, 2),
    )


def _flat_rows(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """Return each run's tensors flattened in parameter order, one row per run: (B, P)."""
    return torch.cat([t.reshape(t.shape[0], -1) for t in tensors], dim=1)


def _hvp(stack: Stack, cfg: ModelConfig) -> Callable[[torch.Tensor], torch.Tensor]:
    """Return v (B, P) -> each run's Hessian-vector product H_b v_b (B, P) at the stack's parameters."""
    leaves = [p.detach().clone().requires_grad_(True) for p in stack.params.values()]
    losses, _ = stack.losses(cfg, dict(zip(stack.params, leaves, strict=True)))
    flat_grad = _flat_rows(torch.autograd.grad(losses.sum(), leaves, create_graph=True))

    def hvp(v: torch.Tensor) -> torch.Tensor:
        return _flat_rows(torch.autograd.grad(flat_grad, leaves, grad_outputs=v, retain_graph=True))

    return hvp


def _mostly_finished(stack: Stack, live: set[int]) -> bool:
    """Return whether half or more of the stack's rows belong to runs that have finished.

    Finished runs ride along, their results ignored, until then: a batch so takes few sizes, and
    each size costs a new graph and one probe per product (``matrixwise.bmm_matches_mm``).
    """
    return 2 * len(live) <= len(stack.rows)


def top_eigenvalues(stack: Stack, cfg: ModelConfig, runs: Sequence[Run]) -> list[float]:
    """Return each run's top Hessian eigenvalue at the stack's parameters, as ``hessian_top_eigenvalue``.

    Every run starts from the vector its own seed draws and stops by its own rule (its
    ``power_iters`` and ``power_tol``, the same ``Lanczos`` steps); a stopped run is frozen.
    """
    size = sum(p[0].numel() for p in stack.params.values())
    states = [Lanczos(size, torch.Generator().manual_seed(run.seed), stack.x, run.train.power_tol) for run in runs]
    counts = [0] * len(runs)
    found = {i: states[i].value for i, run in enumerate(runs) if run.train.power_iters < 1}  # no product to take
    while len(found) < len(runs):
        stack = stack.keep([k for k, row in enumerate(stack.rows) if row not in found])
        hvp = _hvp(stack, cfg)
        while not _mostly_finished(stack, set(stack.rows) - set(found)):
            hv = hvp(torch.stack([states[row].v for row in stack.rows]))
            for k, row in enumerate(stack.rows):
                if row not in found:
                    states[row].update(hv[k])
                    counts[row] += 1
                    if states[row].done or counts[row] >= runs[row].train.power_iters:
                        found[row] = states[row].value
    return [found[i] for i in range(len(runs))]


def descend(stack: Stack, cfg: ModelConfig, logs: list[TrajectoryLog]) -> None:
    """Run full-batch GD on every run of ``stack``, recording into ``logs`` (indexed by run).

    A run that stops (``TrajectoryLog.observe``) is no longer recorded; its row rides along until
    most rows have finished, and nothing it computes reaches another row.
    """
    live = set(stack.rows)
    for step in itertools.count():
        if _mostly_finished(stack, live):
            stack = stack.keep([k for k, row in enumerate(stack.rows) if row in live])
        leaves = [p.requires_grad_(True) for p in stack.params.values()]
        losses, z = stack.losses(cfg, dict(zip(stack.params, leaves, strict=True)), once=True)
        for k, (row, value) in enumerate(zip(stack.rows, losses.tolist(), strict=True)):
            if row in live:
                wants_sigma, stop = logs[row].observe(step, value)
                if wants_sigma:
                    logs[row].sigma(step, sigma_extremes([zl[k] for zl in z]))
                if stop:
                    live.discard(row)
        if not live:
            return
        grads = torch.autograd.grad(losses.sum(), leaves)
        with torch.no_grad():
            lr = stack.lr
            for leaf, g in zip(leaves, grads, strict=True):
                leaf.sub_(g.mul_(lr))  # each weight feeds one product, whose backward gives it a fresh gradient


def _initial(runs: Sequence[Run]) -> tuple[Stack, list[TensorData]]:
    """Check the runs, draw each run's initial parameters from its seed and stack them with the data."""
    check_batchable(runs)
    first = runs[0].train
    dtype, device = first.torch_dtype, torch.device(first.device)
    datas = [TensorData(r.data.x.to(device, dtype), r.data.y.to(device, dtype), r.data.name) for r in runs]
    params = [
        {k: v.to(device) for k, v in init_params(r.model, torch.Generator().manual_seed(r.seed), dtype).items()}
        for r in runs
    ]
    return _stack(runs, params, datas), datas


def initial_lambdas(runs: Sequence[Run]) -> list[float]:
    """Return each run's lambda_max at initialisation, as ``train`` measures it, in one batch.

    This is ``hessian_top_eigenvalue`` at ``init_params`` of the run's seed, with the run's
    ``power_iters`` and ``power_tol``: what a sweep needs to pick one step size for several runs.
    """
    stack, _ = _initial(runs)
    return top_eigenvalues(stack, runs[0].model, runs)


def train_batch_from(runs: Sequence[Run], params: Sequence[Params]) -> list[Trajectory]:
    """Train every run from the initial parameters given for it (``params[i]`` for ``runs[i]``), as one batch.

    What ``train_batch`` does, but from parameters the caller built (a weight moved off the seed's
    draw, say) instead of ``init_params`` of the run's seed; the seed still starts the run's power
    iteration. Every ``params[i]`` must hold the weights ``init_params(runs[i].model, ...)`` names,
    with their shapes; they are moved to the runs' dtype and device and not modified.
    """
    check_batchable(runs)
    if len(params) != len(runs) or any(p.keys() != params[0].keys() for p in params):
        raise ConfigError(
            f"train_batch_from needs one parameter dict per run, all with the same weights: got {len(params)} "
            f"dict(s) for {len(runs)} run(s)"
        )
    first = runs[0].train
    dtype, device = first.torch_dtype, torch.device(first.device)
    datas = [TensorData(r.data.x.to(device, dtype), r.data.y.to(device, dtype), r.data.name) for r in runs]
    stack = _stack(runs, [{k: v.to(device, dtype) for k, v in p.items()} for p in params], datas)
    return _descend_stack(runs, stack, datas)


def _step_size(i: int, run: Run, lam: float) -> tuple[float, str]:
    """Return ``step_size`` for run ``i``, naming the run (index and seed) if it raises ConfigError."""
    try:
        return step_size(run.train, lam)
    except ConfigError as e:
        raise ConfigError(f"run {i} (seed {run.seed}): {e}") from e


def train_batch(runs: Sequence[Run]) -> list[Trajectory]:
    """Train every run as one batched computation; return, in order, what ``train`` returns for each.

    The runs must share the shapes ``check_batchable`` names (ConfigError otherwise). Each run is
    initialised from its own seed, measures its own lambda_max and step size, and stops on its own
    (NaN or infinite loss, loss floor, last step) without changing any other run's trajectory.
    """
    stack, datas = _initial(runs)
    return _descend_stack(runs, stack, datas)


def _descend_stack(runs: Sequence[Run], stack: Stack, datas: list[TensorData]) -> list[Trajectory]:
    """Measure each run's lambda_max and step size at the stack's parameters, then descend; return the trajectories."""
    cfg = runs[0].model
    lams = top_eigenvalues(stack, cfg, runs)
    sizes = [_step_size(i, r, lam) for i, (r, lam) in enumerate(zip(runs, lams, strict=True))]
    logs = [TrajectoryLog(r.train) for r in runs]
    descend(stack.with_lr([lr for lr, _ in sizes]), cfg, logs)
    return [
        log.trajectory(r.model, data, r.seed, lam, lr, rule)
        for log, r, data, lam, (lr, rule) in zip(logs, runs, datas, lams, sizes, strict=True)
    ]
