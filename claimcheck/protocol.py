"""Say what a model must offer to be checked, and adapt a user's ``torch.nn.Module`` to it.

The engine trains a model through two functions: ``init_params(cfg, generator, dtype) -> Params``
and ``forward(params, x, cfg) -> Forward``. ``PAPER`` is the paper's model (``claimcheck.model``);
``ModuleModel`` wraps a factory ``build(cfg: ModelConfig) -> torch.nn.Module`` that a user names
with ``--claim-model package.module:factory``.

What a user's module must do (the protocol):

- ``module(x)`` maps a float (N, n, cfg.d) batch to the output (N, n, cfg.d_out): either a tensor,
  or an object with ``out`` and, to expose its attention, ``attn`` (a list with the row-stochastic
  S of each block, (N, n, n)) and ``z`` (a list with Z = Attn(X) + beta X of each block, (N, n, d)),
  such as ``claimcheck.model.Forward``.
- ``claim_honours`` (an attribute, optional): the ``ModelConfig`` fields beyond the shape
  (d, d_qk, d_out) that the factory honours, from ``HONOURABLE``. ``beta`` is the residual knob.

Each claim names what it needs (``@pytest.mark.claim_needs(...)``); a claim whose needs the model
does not meet is SKIPPED with a message naming what is missing. The capabilities are:

- ``attention``: the forward pass exposes S and Z (C3, C4, C7 measure their spectra);
- ``beta``, ``n_layers``, ``qk_init``: the factory honours that ``ModelConfig`` field;
- ``paper-model``: the claim runs the suite's own pretrained encoder (C6), not a ``--claim-model``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Protocol

import torch
from torch.func import functional_call

from claimcheck.errors import ConfigError
from claimcheck.model import Forward, ModelConfig, Params, forward, init_params

HONOURABLE = ("beta", "n_layers", "qk_init")
CAPABILITIES = ("attention", *HONOURABLE, "paper-model")
PROBE = ModelConfig(d=6, d_qk=3, d_out=2, n_layers=2, beta=0.5)  # small config for the load-time probe


class ModelSpec(Protocol):
    """What the engine needs from a model: a name, an identity for cache keys, init and forward."""

    @property
    def name(self) -> str:
        """How the report names the model."""
        ...

    @property
    def identity(self) -> str:
        """A string that changes whenever the model's behaviour may have changed (part of every cache key)."""
        ...

    @property
    def capabilities(self) -> frozenset[str]:
        """What the model offers, from ``CAPABILITIES``."""
        ...

    def init_params(self, cfg: ModelConfig, generator: torch.Generator, dtype: torch.dtype) -> Params:
        """Draw the initial parameters for ``cfg`` from ``generator``."""
        ...

    def forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> Forward:
        """Run the model with ``params`` on ``x`` (N, n, d); expose S and Z when it has ``attention``."""
        ...


def missing(model: ModelSpec, needs: Iterable[str]) -> list[str]:
    """Return the needs ``model`` does not meet, in the order given."""
    return [n for n in needs if n not in model.capabilities]


@dataclass(frozen=True)
class PaperModel:
    """The paper's model, ``claimcheck.model``: every capability."""

    name: str = "claimcheck.model (the paper's Transformer)"
    identity: str = "claimcheck.model"
    capabilities: frozenset[str] = frozenset(CAPABILITIES)

    def init_params(self, cfg: ModelConfig, generator: torch.Generator, dtype: torch.dtype) -> Params:
        """Return ``model.init_params``."""
        return init_params(cfg, generator, dtype)

    def forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> Forward:
        """Return ``model.forward``."""
        return forward(params, x, cfg)


PAPER = PaperModel()

Factory = Callable[[ModelConfig], torch.nn.Module]


@dataclass
class ModuleModel:
    """A user's ``nn.Module`` factory, trained functionally (``torch.func.functional_call``).

    ``init_params`` seeds torch's global generator from ``generator`` (inside ``fork_rng``, so the
    caller's random state is untouched), calls the factory and copies the module's parameters;
    ``forward`` substitutes ``params`` into the module the factory built for ``cfg``.
    """

    factory: Factory
    name: str
    capabilities: frozenset[str] = frozenset()
    identity: str = ""
    _modules: dict[tuple[ModelConfig, torch.dtype, str], torch.nn.Module] = field(default_factory=dict, repr=False)

    def _build(self, cfg: ModelConfig, seed: int) -> torch.nn.Module:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = self.factory(cfg)
        if not isinstance(module, torch.nn.Module):
            kind = type(module).__name__
            raise ConfigError(f"--claim-model {self.name}: the factory returned {kind}, not a torch.nn.Module")
        return module

    def _module(self, cfg: ModelConfig, dtype: torch.dtype, device: torch.device) -> torch.nn.Module:
        key = (cfg, dtype, str(device))
        if key not in self._modules:
            self._modules[key] = self._build(cfg, 0).to(device=device, dtype=dtype)
        return self._modules[key]

    def init_params(self, cfg: ModelConfig, generator: torch.Generator, dtype: torch.dtype) -> Params:
        """Build the module from a seed drawn from ``generator`` and return copies of its parameters."""
        seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        module = self._build(cfg, seed)
        return {k: v.detach().to(dtype).clone() for k, v in module.named_parameters()}

    def forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> Forward:
        """Run the module built for ``cfg`` with ``params`` substituted for its parameters."""
        module = self._module(cfg, x.dtype, x.device)
        return as_forward(functional_call(module, params, (x,)), self.name)


def as_forward(result: object, name: str) -> Forward:
    """Return a module's output as a ``Forward``: a tensor, or an object with ``out`` (and ``attn``, ``z``)."""
    if isinstance(result, torch.Tensor):
        return Forward(out=result)
    out = getattr(result, "out", None)
    if not isinstance(out, torch.Tensor):
        raise ConfigError(
            f"--claim-model {name}: forward returned {type(result).__name__}; return the output tensor, "
            "or an object with .out (and .attn, .z lists per block), e.g. claimcheck.model.Forward"
        )
    return Forward(out=out, attn=list(getattr(result, "attn", []) or []), z=list(getattr(result, "z", []) or []))


def _source_digest(obj: object) -> str:
    h = hashlib.sha256()
    for target in (obj, inspect.getmodule(obj)):
        try:
            h.update(inspect.getsource(target).encode())  # type: ignore[arg-type]
        except (OSError, TypeError):
            h.update(repr(target).encode())
    return h.hexdigest()


def _probe(model: ModuleModel, honours: frozenset[str]) -> tuple[frozenset[str], str]:
    """Run the model on a small input; check the shapes and return (capabilities, behaviour digest).

    The model runs twice on the same parameters and input: outputs that differ mean hidden state (a
    call counter, a cache, dropout), which would make every result depend on how often the model ran
    before, so the model is refused. The digest covers the initial parameters, the output and the
    gradients, so an edit that only changes the backward pass (say, a detached attention output)
    still changes the cache keys.
    """
    cfg = PROBE
    params = model.init_params(cfg, torch.Generator().manual_seed(0), torch.float64)
    x = torch.randn(2, 4, cfg.d, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    leaves = {k: v.requires_grad_(True) for k, v in params.items()}
    if not leaves:
        raise ConfigError(f"--claim-model {model.name}: the module has no parameters to train")
    fwd = model.forward(leaves, x, cfg)
    again = model.forward(leaves, x, cfg).out.detach()
    if again.shape != fwd.out.shape or not torch.equal(again, fwd.out.detach()):
        diff = (again - fwd.out.detach()).abs().max().item() if again.shape == fwd.out.shape else math.inf
        raise ConfigError(
            f"--claim-model {model.name}: two calls with the same parameters and input gave different outputs "
            f"(max |difference| {diff:.3g}); the output must depend only on the parameters and the input: remove "
            "hidden state such as call counters, caches or randomness (build dropout with p=0)"
        )
    want = (2, 4, cfg.d_out)
    if tuple(fwd.out.shape) != want:
        raise ConfigError(
            f"--claim-model {model.name}: for ModelConfig(d={cfg.d}, d_out={cfg.d_out}) and x of shape "
            f"{tuple(x.shape)} the output has shape {tuple(fwd.out.shape)}, expected {want}; the factory "
            "must build its model from the ModelConfig it is given"
        )
    caps = set(honours)
    if fwd.attn or fwd.z:
        layers = cfg.n_layers if "n_layers" in honours else len(fwd.z)
        shapes = [(tuple(s.shape), tuple(z.shape)) for s, z in zip(fwd.attn, fwd.z, strict=False)]
        if (
            len(fwd.attn) != layers
            or len(fwd.z) != layers
            or any(s != (2, 4, 4) or z != (2, 4, cfg.d) for s, z in shapes)
        ):
            raise ConfigError(
                f"--claim-model {model.name}: attn and z must hold one (N, n, n) and one (N, n, d) tensor per "
                f"block; got {len(fwd.attn)} attn and {len(fwd.z)} z with shapes {shapes}"
            )
        caps.add("attention")
    loss = (fwd.out**2).sum()
    grads = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
    h = hashlib.sha256()
    for name, p in sorted(params.items()):
        h.update(name.encode() + p.detach().numpy().tobytes())
    for t in (fwd.out, *fwd.attn, *fwd.z, *(g for g in grads if g is not None)):
        h.update(t.detach().numpy().tobytes())
    return frozenset(caps), h.hexdigest()


def _import(target: str, option: str, root: Path) -> ModuleType:
    """Import ``package.module``, or the file ``path/to/file.py`` (its folder goes on ``sys.path``)."""
    if not target.endswith(".py"):
        try:
            return importlib.import_module(target)
        except ImportError as e:
            raise ConfigError(
                f"{option}: cannot import {target!r} ({e}); install it, or name a file: path/to/file.py:factory"
            ) from None
    path = Path(target).expanduser()
    path = path if path.is_absolute() else root / path
    if not path.is_file():
        raise ConfigError(f"{option}: {path} does not exist; give package.module:factory or path/to/file.py:factory")
    folder = str(path.parent.resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours, as pytest's rootdir imports do
    spec = importlib.util.spec_from_file_location(f"claimcheck_user_model_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise ConfigError(f"{option}: importing {path} failed: {type(e).__name__}: {e}") from None
    return module


def load_model(spec: str, option: str = "--claim-model", root: Path | None = None) -> ModelSpec:
    """Return ``PAPER`` for an empty ``spec``, else the named factory as a ``ModuleModel``.

    ``spec`` is ``package.module:factory`` or ``path/to/file.py:factory`` (relative to ``root``).
    The model is built and run on a small input to check the protocol and fingerprint it. A factory
    that raises, returns something other than a module, or builds a model whose output depends on
    hidden state raises ConfigError naming ``option`` (with the factory's own message).
    """
    spec = spec.strip()
    if not spec:
        return PAPER
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise ConfigError(f"{option}: expected package.module:factory or path/to/file.py:factory, got {spec!r}")
    module = _import(target, option, root or Path.cwd())
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"{option}: {target!r} has no callable {attr!r}; name the function that builds a model")
    model = ModuleModel(factory, spec)
    try:
        honours = frozenset(getattr(model._build(PROBE, 0), "claim_honours", ()))
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(
            f"{option}: {spec}: calling the factory with a ModelConfig (d={PROBE.d}, d_out={PROBE.d_out}) raised "
            f"{type(e).__name__}: {e}; name a function "
            "that takes a claimcheck.model.ModelConfig and returns a torch.nn.Module"
        ) from None
    unknown = sorted(honours - set(HONOURABLE))
    if unknown:
        raise ConfigError(f"{option}: {spec}: claim_honours names {unknown}; it may name only {list(HONOURABLE)}")
    try:
        caps, digest = _probe(model, honours)
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(
            f"{option}: {spec}: running the model on a (2, 4, {PROBE.d}) float64 probe batch raised "
            f"{type(e).__name__}: {e}; the module must map (N, n, cfg.d) inputs to (N, n, cfg.d_out) outputs"
        ) from None
    # The identity is what the model does, not what it is called: the same file named two ways shares results.
    return replace(model, capabilities=caps, identity=f"user-model@{_source_digest(factory)[:16]}:{digest[:16]}")
