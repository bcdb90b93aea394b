"""Run a user's model once at start-up: check the protocol, find what it honours, fingerprint it.

``probe(model, honours)`` runs the model the factory builds for ``PROBE`` (two blocks, d = 6) on a
(2, 4, 6) float64 batch and checks, in this order (each refusal is a ``ConfigError`` naming
``--claim-model`` and what to do):

1. the output is finite (no NaN, no inf, named as such), and two calls with the same parameters and
   input agree (no call counters, caches or dropout);
2. the output has shape (N, n, d_out);
3. second derivatives: one Hessian-vector product of a squared loss, through
   ``torch.func.functional_call`` and double backward as the engine's Lanczos iteration for
   lambda_max does. If it fails, it is tried once more with the forward under
   ``torch.nn.attention.sdpa_kernel(SDPBackend.MATH)``; when that works (PyTorch's fused CPU
   attention kernel has no second derivative, its math backend has), the model is kept on the math
   backend (``ModuleModel.sdpa_math``: every forward runs under it, and the regime label says so).
   Otherwise the model is refused, naming the operation that has no derivative and the remedy;
4. every parameter learns: each gets a nonzero gradient of that loss on the probe batch, or it
   is refused naming the parameters that get none (a detach, an argmax, a ``no_grad`` block or an
   unused parameter cuts them off), unless the model names them in ``claim_frozen`` (then they are
   labelled as frozen, and the report says the model is outside the theorem). A name in
   ``claim_frozen`` that does get a gradient is refused too (the engine would train it);
5. exposed attention: one S and one (N, n, d) Z per block, each S (N, n, n), or (N, h, n, n) for h
   heads, row-stochastic (entries >= 0, rows sum to one within 1e-9);
6. each knob in ``claim_honours`` changes the output: the model is built from the same seed with a
   second value (beta 0.5 -> 2, n_layers 2 -> 1, qk_init normal -> xavier) and must not give the
   same output bit for bit;
7. ``d_qk``, unless the model declines it: built with d_qk 3 and 5, a model whose parameter shapes
   and output do not change does not read it (``d_qk_read`` False), and the labels say so. A model
   that declines d_qk but whose output changes with it is refused.

Along the way it finds what it can of the model's facts (``Probed.facts``): the number of heads
(from a per-head S), a causal mask (no output depends on a later token, and S is zero above its
diagonal), and hard attention (every row of S one-hot).

The digest covers the parameters, the output, S, Z, the gradient and the Hessian-vector product,
so an edit that changes only a backward pass still changes the cache keys.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import torch

from claimcheck.errors import ConfigError
from qin2025.engine.model import Forward, ModelConfig, Params

if TYPE_CHECKING:
    from qin2025.engine.usermodel import ModelSpec, ModuleModel

PROBE = ModelConfig(d=6, d_qk=3, d_out=2, n_layers=2, beta=0.5)  # small config for the load-time probe
KNOBS = {  # the probe's config with a second value of each knob
    "beta": replace(PROBE, beta=2.0),
    "n_layers": replace(PROBE, n_layers=1),
    "qk_init": replace(PROBE, qk_init="xavier"),
    "d_qk": replace(PROBE, d_qk=5),
}
KNOB_USE = {  # what a model that honours the knob does with it
    "beta": "The model must add its attention residual as cfg.beta * X (Z = Attn(X) + cfg.beta * X); a residual "
    "that ignores cfg.beta, or a residual path that is missing or zeroed, is the bug this check stops",
    "n_layers": "The model must stack cfg.n_layers blocks",
    "qk_init": "The model must draw W_Q, W_K as cfg.qk_init says (normal N(0, 1/d) or xavier N(0, 2/(d + d_qk)))",
}
ROW_TOL = 1e-9  # |row sum of S - 1| allowed in float64
REMEDY = (
    "run the attention under torch.nn.attention.sdpa_kernel(SDPBackend.MATH) and force no fused backend "
    "inside the module, or compute softmax(Q K^T / sqrt(d)) V explicitly"
)


@dataclass(frozen=True)
class Probed:
    """What the probe found: the capabilities, the behaviour digest, how the model must run, its facts."""

    capabilities: frozenset[str]
    digest: str
    sdpa_math: bool  # every forward must run under sdpa_kernel(SDPBackend.MATH)
    d_qk_read: bool  # changing ModelConfig.d_qk changes the model
    facts: dict[str, str] = field(default_factory=dict)  # what the probe saw: heads, causal mask, attention


def _inputs(cfg: ModelConfig) -> torch.Tensor:
    return torch.randn(2, 4, cfg.d, generator=torch.Generator().manual_seed(1), dtype=torch.float64)


def _params(model: ModuleModel, cfg: ModelConfig) -> Params:
    return model.init_params(cfg, torch.Generator().manual_seed(0), torch.float64)


def _hidden_state_and_shape(model: ModuleModel, cfg: ModelConfig, params: Params, x: torch.Tensor) -> None:
    with torch.no_grad():
        first = model.forward(params, x, cfg).out
        again = model.forward(params, x, cfg).out
    _finite(model, first)
    if again.shape != first.shape or not torch.equal(again, first):
        diff = (again - first).abs().max().item() if again.shape == first.shape else math.inf
        raise ConfigError(
            f"--claim-model {model.name}: two calls with the same parameters and input gave different outputs "
            f"(max |difference| {diff:.3g}); the output must depend only on the parameters and the input: remove "
            "hidden state such as call counters, caches or randomness (build dropout with p=0)"
        )
    want = (x.shape[0], x.shape[1], cfg.d_out)
    if tuple(first.shape) != want:
        raise ConfigError(
            f"--claim-model {model.name}: for ModelConfig(d={cfg.d}, d_out={cfg.d_out}) and x of shape "
            f"{tuple(x.shape)} the output has shape {tuple(first.shape)}, expected {want}; the factory "
            "must build its model from the ModelConfig it is given"
        )


def _finite(model: ModuleModel, out: torch.Tensor) -> None:
    """Refuse an output that holds NaN or an infinity, naming which (before comparing two calls, as NaN != NaN)."""
    if not out.is_floating_point() or bool(torch.isfinite(out).all()):
        return
    nans, infs = int(torch.isnan(out).sum()), int(torch.isinf(out).sum())
    what = " and ".join(w for w, n in (("NaN", nans), ("inf", infs)) if n)
    raise ConfigError(
        f"--claim-model {model.name}: on the (2, 4, 6) float64 probe batch the output holds {what} ({nans} NaN, "
        f"{infs} inf of {out.numel()} entries); the claims need finite outputs: check the factory's initialisation, "
        "divisions and logs"
    )


def _derivatives(
    model: ModelSpec, cfg: ModelConfig, params: Params, x: torch.Tensor
) -> tuple[Forward, list[torch.Tensor], torch.Tensor]:
    """Return the forward, the gradient and one Hessian-vector product of ``sum(out^2) / 2``."""
    names = list(params)
    leaves = [params[k].detach().clone().requires_grad_(True) for k in names]
    fwd = model.forward(dict(zip(names, leaves, strict=True)), x, cfg)
    loss = 0.5 * (fwd.out**2).sum()
    grads = torch.autograd.grad(loss, leaves, create_graph=True, allow_unused=True, materialize_grads=True)
    flat = torch.cat([g.reshape(-1) for g in grads])
    v = torch.randn(flat.numel(), generator=torch.Generator().manual_seed(2), dtype=flat.dtype)
    # d(flat . v)/dp is the Hessian-vector product; a scalar output keeps autograd from importing its
    # symbolic-shape checker (and sympy, ~0.7 s) in every session, as grad_outputs= does
    hv = torch.autograd.grad((flat * v).sum(), leaves, allow_unused=True, materialize_grads=True)
    return fwd, [g.detach() for g in grads], torch.cat([h.reshape(-1) for h in hv])


def _kernel(error: BaseException) -> str:
    found = re.search(r"aten::\w+", str(error))
    return found.group(0) if found else "an operation in the model"


def _second_derivatives(
    model: ModuleModel, cfg: ModelConfig, params: Params, x: torch.Tensor
) -> tuple[ModuleModel, Forward, list[torch.Tensor], torch.Tensor]:
    """Return the model as it must run (on the SDPA math backend if that is what works) and its derivatives."""
    try:
        return (model, *_derivatives(model, cfg, params, x))
    except RuntimeError as first:
        failure: RuntimeError = first
    math_model = replace(model, sdpa_math=True)
    try:
        return (math_model, *_derivatives(math_model, cfg, params, x))
    except RuntimeError:
        pass
    kernel = _kernel(failure)
    reason = str(failure).splitlines()[0]
    raise ConfigError(
        f"--claim-model {model.name}: the engine needs second derivatives (Hessian-vector products give "
        f"lambda_max, which sets the step size), but {kernel} has none ({reason}), also with the forward under "
        f"torch.nn.attention.sdpa_kernel(SDPBackend.MATH); {REMEDY}"
    ) from None


def dead_parameters(names: list[str], grads: list[torch.Tensor]) -> list[str]:
    """Return the names whose gradient is zero in every entry (NaN gradients are not zero: they are another fault)."""
    return [name for name, g in zip(names, grads, strict=True) if g.numel() and not bool((g != 0).any())]


def _learns(where: str, names: list[str], grads: list[torch.Tensor], frozen: frozenset[str] | None) -> None:
    """Refuse a model with a parameter that gets no gradient (unless frozen), or a frozen one that gets one.

    ``where`` names the model in the message; ``frozen`` is None for the paper's model (it may freeze nothing).
    """
    dead = dead_parameters(names, grads)
    unexpected = [n for n in dead if not _named(n, frozen or frozenset())]
    if unexpected:
        label = "" if frozen is None else (
            "; a weight meant to stay fixed is named in claim_frozen, and the report then shows the model as one "
            "whose weights are not all trained"
        )  # fmt: skip
        raise ConfigError(
            f"{where}: on the probe batch {len(unexpected)} of {len(names)} parameters get no gradient, so gradient "
            f"descent would never change them: {', '.join(unexpected)}. Something cuts them off from the output: "
            "a .detach(), an argmax or another step function, a torch.no_grad() block, or a parameter the forward "
            f"never uses. Every weight of the model must reach the output through a differentiable path{label}"
        )
    learning = sorted(f for f in frozen or () if not any(_named(n, frozenset([f])) for n in dead))
    if learning:
        raise ConfigError(
            f"{where}: claim_frozen names {learning}, but no parameter under those names is without a gradient, so "
            "the engine would train them; detach them in the forward pass, or remove them from claim_frozen"
        )


def _named(name: str, frozen: frozenset[str]) -> bool:
    """Return whether ``name`` is one of ``frozen`` or lies under one of them (a module prefix)."""
    return any(name == f or name.startswith(f + ".") for f in frozen)


def _attention(model: ModuleModel, cfg: ModelConfig, fwd: Forward, x: torch.Tensor, honours: frozenset[str]) -> bool:
    """Return whether ``fwd`` exposes S and Z; refuse wrong shapes or an S whose rows are not distributions."""
    if not (fwd.attn or fwd.z):
        return False
    n_samples, n, d = x.shape
    layers = cfg.n_layers if "n_layers" in honours else len(fwd.z)
    shapes = [(tuple(s.shape), tuple(z.shape)) for s, z in zip(fwd.attn, fwd.z, strict=False)]
    if (
        len(fwd.attn) != layers
        or len(fwd.z) != layers
        or any(not _s_shape(s, n_samples, n) or z != (n_samples, n, d) for s, z in shapes)
    ):
        raise ConfigError(
            f"--claim-model {model.name}: attn and z must hold one (N, n, n) S (or (N, h, n, n) for h heads) and "
            f"one (N, n, d) Z per block; got {len(fwd.attn)} attn and {len(fwd.z)} z with shapes {shapes}"
        )
    for block, s in enumerate(fwd.attn):
        s = s.detach()
        rows = (s.sum(-1) - 1).abs().max().item()
        if not rows <= ROW_TOL or not s.min().item() >= 0:
            raise ConfigError(
                f"--claim-model {model.name}: block {block}'s attention S is not row-stochastic (max |row sum - 1| "
                f"{rows:.3g}, min entry {s.min().item():.3g}); attn must hold softmax(Q K^T) with the softmax "
                "over the keys (the last axis), so that each row sums to one"
            )
    return True


def _s_shape(shape: tuple[int, ...], n_samples: int, n: int) -> bool:
    return shape == (n_samples, n, n) or (len(shape) == 4 and shape[0] == n_samples and shape[2:] == (n, n))


def _seen_facts(model: ModuleModel, cfg: ModelConfig, fwd: Forward, x: torch.Tensor) -> dict[str, str]:
    """Return what the probe batch shows: heads (per-head S), a causal mask, hard (one-hot) attention."""
    facts: dict[str, str] = {}
    with torch.no_grad():
        raw = model.raw_forward(_params(model, cfg), x, cfg)
    heads = {s.shape[1] for s in getattr(raw, "attn", None) or [] if isinstance(s, torch.Tensor) and s.dim() == 4}
    if heads:
        facts["heads"] = f"{', '.join(str(h) for h in sorted(heads))} (S per head, found by the probe)"
    with torch.no_grad():
        last, first = x.clone(), x.clone()
        last[:, -1] += 1.0  # change the last token only
        first[:, 0] += 1.0  # change the first token only
        params = _params(model, cfg)
        out, out_last, out_first = (model.forward(params, v, cfg).out for v in (x, last, first))
    upper = all(bool((s.detach().triu(diagonal=1) == 0).all()) for s in fwd.attn)
    mixes = not torch.equal(out[:, 1:], out_first[:, 1:])  # a later output depends on an earlier token
    if mixes and upper and torch.equal(out[:, :-1], out_last[:, :-1]):
        facts["causal_mask"] = "yes (found by the probe: no output depends on a later token)"
    if fwd.attn and all(bool(((s == 0) | (s == 1)).all()) for s in fwd.attn):
        facts["attention"] = "hard: every row of S is one-hot (found by the probe)"
    return facts


def _output(model: ModuleModel, cfg: ModelConfig, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Size]]:
    params = _params(model, cfg)
    with torch.no_grad():
        return model.forward(params, x, cfg).out, [p.shape for _, p in sorted(params.items())]


def _knobs(model: ModuleModel, cfg: ModelConfig, x: torch.Tensor, honours: frozenset[str]) -> None:
    """Refuse a model for which a knob it claims to honour changes nothing."""
    base, _ = _output(model, cfg, x)
    for knob in sorted(honours):
        other = KNOBS[knob]
        out, _ = _output(model, other, x)
        if out.shape == base.shape and torch.equal(out, base):
            raise ConfigError(
                f"--claim-model {model.name}: claim_honours names {knob!r}, but the output did not change when "
                f"ModelConfig.{knob} went from {getattr(cfg, knob)!r} to {getattr(other, knob)!r} "
                "(same seed, same input), "
                f"so a claim that varies {knob} would compare a model with itself. {KNOB_USE[knob]}"
            )


def _reads_d_qk(model: ModuleModel, cfg: ModelConfig, x: torch.Tensor, declines: bool) -> bool:
    base, shapes = _output(model, cfg, x)
    other = KNOBS["d_qk"]
    out, other_shapes = _output(model, other, x)
    read = shapes != other_shapes or not torch.equal(out, base)
    if declines and read:
        raise ConfigError(
            f"--claim-model {model.name}: claim_facts declares 'd_qk' (the model declines ModelConfig.d_qk), but "
            f"the model changed when d_qk went from {cfg.d_qk} to {other.d_qk}; drop 'd_qk' from claim_facts, "
            "or build the model without cfg.d_qk"
        )
    return read


def _digest(params: Params, fwd: Forward, grads: list[torch.Tensor], hv: torch.Tensor, sdpa_math: bool) -> str:
    h = hashlib.sha256(b"sdpa-math" if sdpa_math else b"")
    for name, p in sorted(params.items()):
        h.update(name.encode() + p.detach().numpy().tobytes())
    for t in (fwd.out, *fwd.attn, *fwd.z, *grads, hv):
        h.update(t.detach().numpy().tobytes())
    return h.hexdigest()


def probe(
    model: ModuleModel, honours: frozenset[str], *, declines_d_qk: bool = False, frozen: frozenset[str] = frozenset()
) -> tuple[ModuleModel, Probed]:
    """Check ``model`` on a small input; return it as it must run and what the probe found.

    ``honours`` is the model's ``claim_honours``; ``declines_d_qk`` says its ``claim_facts``
    declare ``d_qk``; ``frozen`` is its ``claim_frozen`` (parameter names or module prefixes meant
    never to learn). Raises ConfigError naming ``--claim-model`` on any refusal (see the module).
    """
    cfg = PROBE
    params = _params(model, cfg)
    if not params:
        raise ConfigError(f"--claim-model {model.name}: the module has no parameters to train")
    x = _inputs(cfg)
    _hidden_state_and_shape(model, cfg, params, x)
    model, fwd, grads, hv = _second_derivatives(model, cfg, params, x)
    _learns(f"--claim-model {model.name}", list(params), grads, frozen)
    caps = set(honours)
    if _attention(model, cfg, fwd, x, honours):
        caps.add("attention")
    _knobs(model, cfg, x, honours)
    d_qk_read = _reads_d_qk(model, cfg, x, declines_d_qk)
    digest = _digest(params, fwd, grads, hv, model.sdpa_math)
    return model, Probed(frozenset(caps), digest, model.sdpa_math, d_qk_read, _seen_facts(model, cfg, fwd, x))


def check_learns(model: ModelSpec) -> None:
    """Refuse ``model`` (the paper's, or any ``ModelSpec``) if a parameter gets no gradient on the probe batch.

    The paper's engine runs this at start, so a weight cut off from the output in ``qin2025.engine.model``
    is named there, not left to an autograd error deep in a training run.
    """
    cfg = PROBE
    params = model.init_params(cfg, torch.Generator().manual_seed(0), torch.float64)
    _, grads, _ = _derivatives(model, cfg, params, _inputs(cfg))
    _learns(model.name, list(params), grads, None)
