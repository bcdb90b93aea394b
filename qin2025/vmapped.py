"""Train a ``--claim-model``'s runs together, as ``batched`` trains the paper's: one vmapped graph per step.

``train_module_batch(runs, model) -> list[Trajectory]`` and ``module_lambdas(runs, model)``. A
user's ``nn.Module`` has no batched forward of its own, so ``torch.func.vmap`` makes one: the
runs' parameters are stacked along a leading batch dimension B and ``functional_call`` of the
module the factory built for the runs' ``ModelConfig`` is mapped over them, their data and
targets. The summed loss of independent runs has a block-diagonal Hessian, so one gradient (and
one Hessian-vector product) of the sum gives each run its own, and ``batched.descend`` and
``batched.top_eigenvalues`` drive the steps and the Lanczos iteration exactly as they do for the
paper's model: each run keeps its seed, step size and stop rules, and nothing one run computes
reaches another. Before a batch trains, ``_faithful`` checks that vmap computes what the module
computes alone (a forward that branches on ``requires_grad`` or writes to its own parameters does
not) and refuses the model otherwise.

The numbers are ``train(..., model=model)``'s to rounding (float64: about 1e-13 relative at the
claims' shapes; the tests hold them to 1e-9), not bit for bit, so these results are cached under
keys of their own (``Trainer.batch``). Every run of a call must share its ``ModelConfig``, dtype,
device and data shapes (``check_same``). A module vmap cannot map (a Python branch on a tensor's
value, ``.item()``, an in-place write to a captured buffer) raises ``NotVmappable``, and the
trainer then trains its runs one at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch.func import functional_call, vmap

from claimcheck.errors import ConfigError
from qin2025.batched import Run, Stack, descend, top_eigenvalues
from qin2025.data.synthetic import TensorData
from qin2025.model import ModelConfig, Params, squared_loss
from qin2025.train import Trajectory, TrajectoryLog, step_size
from qin2025.usermodel import ModuleModel, as_forward

# The batch of one loss evaluation: (params stacked (B, ...), x (B, N, n, d), y (B, N, n, d_out))
# -> (losses (B,), Z per layer (B, N, n, d)).
Mapped = Callable[[Params, torch.Tensor, torch.Tensor], tuple[torch.Tensor, tuple[torch.Tensor, ...]]]


class NotVmappable(Exception):
    """The model's forward cannot be mapped over a batch of parameter sets by ``torch.func.vmap``."""


def check_same(runs: Sequence[Run]) -> None:
    """Raise ConfigError naming the first run that differs from run 0 in ModelConfig, dtype, device or data shape."""
    if not runs:
        raise ConfigError("train_module_batch needs at least one run, got none")

    def shared(run: Run) -> tuple[object, ...]:
        return run.model, run.train.dtype, run.train.device, tuple(run.data.x.shape), tuple(run.data.y.shape)

    first = shared(runs[0])
    for i, run in enumerate(runs[1:], start=1):
        if shared(run) != first:
            raise ConfigError(
                f"train_module_batch needs every run to share its ModelConfig, dtype, device and data shapes: "
                f"run {i} (seed {run.seed}) differs from run 0; group the runs by configuration first"
            )


def _kernels(model: ModuleModel) -> contextlib.AbstractContextManager[object]:
    """Return the attention-kernel context every forward of ``model`` runs under (the probe's ``sdpa_math``)."""
    attention = torch.nn.attention
    return attention.sdpa_kernel(attention.SDPBackend.MATH) if model.sdpa_math else contextlib.nullcontext()


def _mapped(model: ModuleModel, cfg: ModelConfig, dtype: torch.dtype, device: torch.device) -> Mapped:
    """Return the vmapped loss of ``model`` built for ``cfg``: each run's loss and its Z per layer."""
    module = model._module(cfg, dtype, device)

    def one(params: Params, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        fwd = as_forward(functional_call(module, params, (x,)), model.name)
        return squared_loss(fwd.out, y, cfg), tuple(fwd.z)

    mapped = vmap(one)

    def run(params: Params, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        with _kernels(model):
            if x.shape[0] > 1:
                return mapped(params, x, y)
            # vmap maps a batch of one onto other kernels (other last bits): pad it to two, keep the first;
            # the copy's share of every gradient is an exact zero, so a run alone gets the bits it gets in a batch
            losses, z = mapped({k: torch.cat([v, v]) for k, v in params.items()}, torch.cat([x, x]), torch.cat([y, y]))
            return losses[:1], tuple(t[:1] for t in z)

    return run


@dataclass(frozen=True)
class ModuleStack(Stack):
    """A ``batched.Stack`` whose losses come from a user's module, mapped over the batch by vmap."""

    fn: Mapped | None = None

    def losses(
        self, cfg: ModelConfig, params: Params, *, once: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Return each run's loss at ``params`` (B,) and Z per layer (B, N, n, d), as the module computes them."""
        assert self.fn is not None
        losses, z = self.fn(params, self.x, self.y)
        return losses, list(z)


def _initial(runs: Sequence[Run], model: ModuleModel) -> tuple[ModuleStack, list[TensorData]]:
    """Check the runs, draw each run's parameters from its seed as ``train`` does, and stack them."""
    check_same(runs)
    first = runs[0].train
    dtype, device = first.torch_dtype, torch.device(first.device)
    datas = [TensorData(r.data.x.to(device, dtype), r.data.y.to(device, dtype), r.data.name) for r in runs]
    params = [
        {k: v.to(device) for k, v in model.init_params(r.model, torch.Generator().manual_seed(r.seed), dtype).items()}
        for r in runs
    ]
    zeros = torch.zeros(len(runs), 1, 1, 1, dtype=dtype, device=device)
    stack = ModuleStack(
        rows=list(range(len(runs))),
        params={k: torch.stack([p[k] for p in params]) for k in params[0]},
        x=torch.stack([d.x for d in datas]),
        y=torch.stack([d.y for d in datas]),
        beta=zeros,  # the module reads beta from its ModelConfig; the stack's columns stay unused
        gamma=zeros,
        lr=zeros[..., 0],
        fn=_mapped(model, runs[0].model, dtype, device),
    )
    return stack, datas


def _faithful(stack: ModuleStack, model: ModuleModel, cfg: ModelConfig) -> None:
    """Raise NotVmappable unless vmap computes what the module computes alone, at the first run's start.

    A forward can behave otherwise under vmap without failing: a branch on ``requires_grad`` (every
    tensor reports False inside vmap, so a gradient hook is skipped), or a write to its own
    parameters (a max-norm clamp under ``no_grad``), which a vmapped batch and a run alone would not
    apply alike. So the first run's loss and gradient are computed both ways, each on copies of the
    parameters, and must agree to sqrt(eps) of the dtype; and the forward must leave its parameters
    as it found them.
    """
    assert stack.fn is not None
    names = list(stack.params)
    mapped = {k: v.detach().clone().requires_grad_(True) for k, v in stack.params.items()}
    before = {k: v.detach().clone() for k, v in mapped.items()}
    losses, _ = stack.fn(mapped, stack.x, stack.y)
    got = torch.autograd.grad(losses.sum(), [mapped[k] for k in names], allow_unused=True, materialize_grads=True)
    alone = {k: v[0].detach().clone().requires_grad_(True) for k, v in stack.params.items()}
    module = model._module(cfg, stack.x.dtype, stack.x.device)
    kept = {k: v.detach().clone() for k, v in alone.items()}
    with _kernels(model):
        out = as_forward(functional_call(module, alone, (stack.x[0],)), model.name).out
    writes = [k for k in names if not (torch.equal(mapped[k].detach(), before[k]) and torch.equal(alone[k], kept[k]))]
    if writes:  # a batch of one is padded with a copy, so only the run alone shows it there
        raise NotVmappable(f"--claim-model {model.name}: its forward writes to its own parameters ({writes[0]})")
    loss = squared_loss(out, stack.y[0], cfg)
    want = torch.autograd.grad(loss, [alone[k] for k in names], allow_unused=True, materialize_grads=True)
    tol = torch.finfo(stack.x.dtype).eps ** 0.5
    pairs = [("the loss", losses[0], loss)] + [
        (f"the gradient of {k}", g[0], w) for k, g, w in zip(names, got, want, strict=True)
    ]
    for what, a, b in pairs:
        scale = float(b.detach().abs().max()) or 1.0
        gap = float((a.detach() - b.detach()).abs().max()) / scale
        if not gap <= tol:
            raise NotVmappable(
                f"--claim-model {model.name}: under vmap its forward computes another function ({what} differs by "
                f"{gap:.3g} relative from the module run alone: a branch on requires_grad, or a gradient hook?)"
            )


def _guarded(work: Callable[[], list[Trajectory]] | Callable[[], list[float]], model: ModuleModel) -> object:
    try:
        return work()
    except (ConfigError, NotVmappable):
        raise
    except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:  # vmap's refusals
        raise NotVmappable(f"--claim-model {model.name}: torch.func.vmap cannot map its forward ({e})") from e


def module_lambdas(runs: Sequence[Run], model: ModuleModel) -> list[float]:
    """Return each run's lambda_max at initialisation, as ``train(..., model=model)`` measures it, in one batch."""

    def work() -> list[float]:
        stack, _ = _initial(runs, model)
        _faithful(stack, model, runs[0].model)
        return top_eigenvalues(stack, runs[0].model, runs)

    found = _guarded(work, model)
    assert isinstance(found, list)
    return [float(v) for v in found]


def train_module_batch(runs: Sequence[Run], model: ModuleModel) -> list[Trajectory]:
    """Train every run of ``model`` as one vmapped computation; return, in order, what ``train`` returns for each.

    Each run is initialised from its own seed, measures its own lambda_max and step size, and stops
    on its own (non-finite loss, loss floor, last step). Raises ``NotVmappable`` when vmap cannot
    map the module, ConfigError when the runs do not share a configuration or a step size cannot
    be set.
    """

    def work() -> list[Trajectory]:
        stack, datas = _initial(runs, model)
        cfg = runs[0].model
        _faithful(stack, model, cfg)
        lams = top_eigenvalues(stack, cfg, runs)
        sizes = []
        for i, (run, lam) in enumerate(zip(runs, lams, strict=True)):
            try:
                sizes.append(step_size(run.train, lam))
            except ConfigError as e:
                raise ConfigError(f"run {i} (seed {run.seed}): {e}") from e
        logs = [TrajectoryLog(r.train) for r in runs]
        descend(stack.with_lr([lr for lr, _ in sizes]), cfg, logs)
        return [
            log.trajectory(r.model, data, r.seed, lam, lr, rule)
            for log, r, data, lam, (lr, rule) in zip(logs, runs, datas, lams, sizes, strict=True)
        ]

    found = _guarded(work, model)
    assert isinstance(found, list)
    return found
