"""Say what a model must offer to be checked, and adapt a user's ``torch.nn.Module`` to it.

The engine trains a model through two functions: ``init_params(cfg, generator, dtype) -> Params``
and ``forward(params, x, cfg) -> Forward``. ``PAPER`` is the paper's model (``qin2025.engine.model``);
``ModuleModel`` wraps a factory ``build(cfg: ModelConfig) -> torch.nn.Module`` that a user names
with ``--claim-model package.module:factory``; ``load_model`` loads and probes it.

What a user's module must do (the protocol):

- ``module(x)`` maps a float (N, n, cfg.d) batch to the output (N, n, cfg.d_out): either a tensor,
  or an object with ``out`` and, to expose its attention, ``attn`` (a list with the row-stochastic
  S of each block, (N, n, n)) and ``z`` (a list with Z = Attn(X) + beta X of each block, (N, n, d)),
  such as ``qin2025.engine.model.Forward``. A model with h heads returns, per block, either S averaged over
  its heads (N, n, n), as ``nn.MultiheadAttention`` does by default, or one S per head (N, h, n, n),
  which claimcheck averages over the heads: the claims measure the head average. Either way a
  multi-head model is outside Theorem 1 (one head); its head count is found (per-head S,
  ``nn.MultiheadAttention``) or declared (``claim_facts = {"heads": "2"}``).
- ``claim_honours`` (an attribute, optional): the ``ModelConfig`` fields beyond the shape
  (d, d_qk, d_out) that the factory honours, from ``HONOURABLE``. ``beta`` is the residual knob.
  The probe builds the model with a second value of each and refuses one whose output does not move.
- ``claim_facts`` (an attribute, optional): what the model is where it is not the paper's, keyed
  from ``qin2025.engine.facts.FACTS``, e.g. ``{"layernorm": "post", "heads": "2", "causal_mask": True,
  "biases": True, "d_qk": "tied to d"}``. Declaring ``d_qk`` (or ``qk_init``) declines that field.
  The probe finds normalisation layers, head counts, a causal mask and hard attention by itself; a
  declared fact wins over a found one.
- ``claim_frozen`` (an attribute, optional): names (or module prefixes) of parameters meant never to
  learn. Every other parameter must get a gradient on the probe batch, or the model is refused with
  the names of those that do not; frozen ones are shown as a broken premise of the theorem.
- Its output and gradients have second derivatives (the step size comes from Hessian-vector
  products). A module on PyTorch's fused CPU attention kernel, which has none, is run on the SDPA
  math backend (``sdpa_kernel(SDPBackend.MATH)``) for every forward; ``qin2025.engine.probe`` says how.

Each claim names what it needs (``@pytest.mark.claim_needs(...)``); a claim whose needs the model
does not meet is SKIPPED with a message naming what is missing. The capabilities are:

- ``attention``: the forward pass exposes S and Z (C3, C4, C7 measure their spectra);
- ``beta``, ``n_layers``, ``qk_init``: the factory honours that ``ModelConfig`` field;
- ``paper-model``: the claim runs the suite's own pretrained encoder (C6), not a ``--claim-model``.

What a claim asks of any ``ModelSpec`` to label its regime:

- ``model.regime(cfg) -> dict[str, str]``: one value per key of ``qin2025.engine.facts.FACTS``
  (layernorm, heads, d_qk, qk_init, logit_scale, init, biases, output_projection, residual, ffn,
  attention_kernel). ``PAPER`` gives the paper's under ``cfg``; a user model gives its declared
  facts, the fields it honours as ``cfg`` sets them, and "the model's own" for the rest.
- ``model.honours(field) -> bool``: whether the model reads that ``ModelConfig`` field; a claim
  prints no d_qk values for a model where ``honours("d_qk")`` is False.
- ``model.premises_broken() -> list[str]``: the premises of Theorem 1 the model breaks, e.g.
  ``["LayerNorm (post; Theorem 1 assumes none)"]``; empty for ``PAPER``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import ModuleType
from typing import Protocol

import torch
from torch.func import functional_call
from torch.nn.attention import SDPBackend, sdpa_kernel

from claimcheck.errors import ConfigError
from qin2025.engine.facts import found_facts, paper_regime, premises_broken, read_facts, user_regime
from qin2025.engine.model import Forward, ModelConfig, Params, forward, init_params
from qin2025.engine.modelcode import source_digest
from qin2025.engine.probe import PROBE, check_learns, probe

HONOURABLE = ("beta", "n_layers", "qk_init")
CAPABILITIES = ("attention", *HONOURABLE, "paper-model")
SHAPE = ("d", "d_out")  # the fields every model must read


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

    def honours(self, knob: str) -> bool:
        """Return whether the model reads the ``ModelConfig`` field ``knob`` (d_qk, beta, qk_init, ...)."""
        ...

    def regime(self, cfg: ModelConfig | None = None) -> dict[str, str]:
        """Return what the model is under ``cfg``, one value per key of ``qin2025.engine.facts.FACTS``."""
        ...

    def premises_broken(self) -> list[str]:
        """Return the premises of Theorem 1 the model breaks, each with its reason (empty if none)."""
        ...


def missing(model: ModelSpec, needs: Iterable[str]) -> list[str]:
    """Return the needs ``model`` does not meet, in the order given."""
    return [n for n in needs if n not in model.capabilities]


@dataclass(frozen=True)
class PaperModel:
    """The paper's model, ``qin2025.engine.model``: every capability."""

    name: str = "qin2025.engine.model (the paper's Transformer)"
    identity: str = "qin2025.engine.model"
    capabilities: frozenset[str] = frozenset(CAPABILITIES)

    def init_params(self, cfg: ModelConfig, generator: torch.Generator, dtype: torch.dtype) -> Params:
        """Return ``model.init_params``."""
        return init_params(cfg, generator, dtype)

    def forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> Forward:
        """Return ``model.forward``."""
        return forward(params, x, cfg)

    def honours(self, knob: str) -> bool:
        """Return True for every ``ModelConfig`` field: the paper's model reads them all."""
        return knob in _CONFIG_FIELDS

    def regime(self, cfg: ModelConfig | None = None) -> dict[str, str]:
        """Return the paper's facts under ``cfg`` (``qin2025.engine.facts.paper_regime``)."""
        return paper_regime(cfg)

    def premises_broken(self) -> list[str]:
        """Return no premise: the paper's model is the theorem's."""
        return []


_CONFIG_FIELDS = frozenset(f.name for f in fields(ModelConfig))
PAPER = PaperModel()

Factory = Callable[[ModelConfig], torch.nn.Module]


@dataclass
class ModuleModel:
    """A user's ``nn.Module`` factory, trained functionally (``torch.func.functional_call``).

    ``init_params`` seeds torch's global generator from ``generator`` (inside ``fork_rng``, so the
    caller's random state is untouched), calls the factory and copies the module's parameters;
    ``forward`` substitutes ``params`` into the module the factory built for ``cfg``, under
    ``sdpa_kernel(SDPBackend.MATH)`` when ``sdpa_math`` is set (the probe sets it when the fused
    attention kernel has no second derivative and the math backend has).
    """

    factory: Factory
    name: str
    capabilities: frozenset[str] = frozenset()
    identity: str = ""
    facts: dict[str, str] = field(default_factory=dict)  # declared claim_facts, then what the probe found
    reads_d_qk: bool = True  # the model reads ModelConfig.d_qk (False: declined, or the probe saw no effect)
    sdpa_math: bool = False  # every forward runs under sdpa_kernel(SDPBackend.MATH)
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

    def raw_forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> object:
        """Return what the module built for ``cfg`` returns with ``params`` substituted for its parameters."""
        module = self._module(cfg, x.dtype, x.device)
        with sdpa_kernel(SDPBackend.MATH) if self.sdpa_math else contextlib.nullcontext():
            # a copy of x: a forward that writes into its input must not change the data of later steps or runs
            return functional_call(module, params, (x.clone(),))

    def forward(self, params: Params, x: torch.Tensor, cfg: ModelConfig) -> Forward:
        """Run the module built for ``cfg`` with ``params`` substituted for its parameters (``as_forward``)."""
        return as_forward(self.raw_forward(params, x, cfg), self.name)

    def honours(self, knob: str) -> bool:
        """Return whether the model reads the ``ModelConfig`` field ``knob``.

        d and d_out always; d_qk unless the model declines it or the probe saw it change nothing;
        a ``HONOURABLE`` field when ``claim_honours`` names it; any other field never (unknown).
        """
        if knob in SHAPE:
            return True
        if knob == "d_qk":
            return self.reads_d_qk
        return knob in HONOURABLE and knob in self.capabilities

    def regime(self, cfg: ModelConfig | None = None) -> dict[str, str]:
        """Return the declared facts, the fields the model honours as ``cfg`` sets them, else "the model's own"."""
        honoured = frozenset(f for f in ("d_qk", *HONOURABLE) if self.honours(f))
        return user_regime(self.facts, honoured, cfg, sdpa_math=self.sdpa_math)

    def premises_broken(self) -> list[str]:
        """Return the premises of Theorem 1 that the declared (or found) facts break."""
        return premises_broken(self.facts)


def as_forward(result: object, name: str) -> Forward:
    """Return a module's output as a ``Forward``: a tensor, or an object with ``out`` (and ``attn``, ``z``).

    A per-head S, (N, h, n, n), is averaged over its heads.
    """
    if isinstance(result, torch.Tensor):
        return Forward(out=result)
    out = getattr(result, "out", None)
    if not isinstance(out, torch.Tensor):
        raise ConfigError(
            f"--claim-model {name}: forward returned {type(result).__name__}; return the output tensor, "
            "or an object with .out (and .attn, .z lists per block), e.g. qin2025.engine.model.Forward"
        )
    attn = [s.mean(dim=1) if s.dim() == 4 else s for s in getattr(result, "attn", []) or []]  # heads averaged
    return Forward(out=out, attn=attn, z=list(getattr(result, "z", []) or []))


def _source_digest(module: ModuleType, factory: object) -> str:
    """Return the sha256 of the model's code: the module's and the factory's files with the local modules they import.

    Code without a file (defined in a notebook or ``exec``) is hashed by its source, else by its repr.
    """
    h = hashlib.sha256()
    for target in (module, factory):
        try:
            path = inspect.getsourcefile(target)  # type: ignore[arg-type]
        except TypeError:
            path = None
        if path and Path(path).is_file():
            h.update(source_digest(Path(path)).encode())
            continue
        try:
            h.update(inspect.getsource(target).encode())  # type: ignore[arg-type]
        except (OSError, TypeError):
            h.update(repr(target).encode())
    return h.hexdigest()


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


def _frozen(value: object, spec: str) -> frozenset[str]:
    """Return ``claim_frozen`` as a set of names; refuse anything but a sequence of strings."""
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        raise ConfigError(
            f"--claim-model {spec}: claim_frozen is a {type(value).__name__}; make it a tuple of parameter names "
            "(or module prefixes), e.g. ('embed.weight',)"
        )
    if not all(isinstance(v, str) for v in value):
        raise ConfigError(f"--claim-model {spec}: claim_frozen must hold parameter names as strings, got {value!r}")
    return frozenset(value)


def load_model(spec: str, option: str = "--claim-model", root: Path | None = None) -> ModelSpec:
    """Return ``PAPER`` for an empty ``spec``, else the named factory as a ``ModuleModel``.

    ``spec`` is ``package.module:factory`` or ``path/to/file.py:factory`` (relative to ``root``).
    The model is built and run on a small input to check the protocol and fingerprint it
    (``qin2025.engine.probe``); its identity also covers the source of the model's own modules
    (``qin2025.engine.modelcode``). The paper's model gets the probe's gradient check. A factory that
    raises, returns something other than a module, or builds a model whose output depends on hidden
    state, that has no second derivatives even on the SDPA math backend, with a parameter that gets
    no gradient, whose S is not row-stochastic, or for which a knob it claims to honour changes
    nothing raises ConfigError naming ``option`` (with the factory's own message). Its
    ``claim_facts`` and ``claim_frozen`` are read and checked (``qin2025.engine.facts.read_facts``).
    """
    spec = spec.strip()
    if not spec:
        check_learns(PAPER)
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
        built = model._build(PROBE, 0)
        honours = frozenset(getattr(built, "claim_honours", ()))
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(
            f"{option}: {spec}: calling the factory with a ModelConfig (d={PROBE.d}, d_out={PROBE.d_out}) raised "
            f"{type(e).__name__}: {e}; name a function "
            "that takes a qin2025.engine.model.ModelConfig and returns a torch.nn.Module"
        ) from None
    unknown = sorted(honours - set(HONOURABLE))
    if unknown:
        raise ConfigError(f"{option}: {spec}: claim_honours names {unknown}; it may name only {list(HONOURABLE)}")
    declared = read_facts(getattr(built, "claim_facts", None), honours, spec)
    frozen = _frozen(getattr(built, "claim_frozen", ()), spec)
    try:
        model, found = probe(model, honours, declines_d_qk="d_qk" in declared, frozen=frozen)
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(
            f"{option}: {spec}: running the model on a (2, 4, {PROBE.d}) float64 probe batch raised "
            f"{type(e).__name__}: {e}; the module must map (N, n, cfg.d) inputs to (N, n, cfg.d_out) outputs"
        ) from None
    facts = {**found_facts(built), **found.facts, **({"frozen": ", ".join(sorted(frozen))} if frozen else {})}
    facts |= declared
    kernel = "+sdpa-math" if found.sdpa_math else ""
    # The identity is what the model does, not what it is called: the same file named two ways shares results.
    identity = f"user-model@{_source_digest(module, factory)[:16]}:{found.digest[:16]}{kernel}"
    return replace(model, capabilities=found.capabilities, identity=identity, facts=facts, reads_d_qk=found.d_qk_read)
