"""Describe a model for the report: the facts a regime label prints, and the paper's premises it breaks.

Every key of ``FACTS`` names one modelling choice. The paper's model (``qin2025.engine.model``) has one
value for each (``paper_regime``). A user's module may state its own with a class attribute

    claim_facts = {"layernorm": "post", "logit_scale": "1/sqrt(d)", "biases": True, "d_qk": "tied to d"}

whose keys come from ``FACTS`` and whose values are strings, numbers or booleans (True reads
"yes", False "none"). ``user_regime`` prints those, what the model reads from ``ModelConfig``
(``beta``, ``qk_init``, ``d_qk`` when it honours them) and "the model's own" for the rest.
Declaring ``d_qk`` or ``qk_init`` declines that ``ModelConfig`` field: a model may not both honour
``qk_init`` (``claim_honours``) and declare it. ``found_facts`` adds what the start-up probe can see
for itself (LayerNorm modules, the head count of ``nn.MultiheadAttention``) when it is not declared.

``premises_broken`` lists the premises of Theorem 1 a model's facts break (a normalisation layer,
more than one head, a causal mask, attention other than softmax, weights that do not learn), so a
claim can say that its model is outside the theorem: in its row of the report's first screen.
``subject_facts`` is the line the first screen prints about the model under test.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from claimcheck.errors import ConfigError
from qin2025.engine.model import ModelConfig

FACTS: dict[str, str] = {  # key: what the value says
    "layernorm": "where LayerNorm (or another normalisation layer) sits: none, pre or post",
    "heads": "the number of attention heads",
    "causal_mask": "whether a token attends only to itself and earlier tokens: none or yes",
    "attention": "the kind of attention: softmax, or another (hard argmax, linear, ...)",
    "frozen": "parameters that never learn (claim_frozen): none, or their names",
    "d_qk": "the query/key width",
    "qk_init": "how W_Q, W_K are drawn",
    "logit_scale": "the multiplier of the attention logits",
    "init": "how the other weights are drawn",
    "biases": "whether the projections carry biases",
    "output_projection": "a projection applied after S X W_V",
    "residual": "the attention residual, Z = Attn(X) + beta X in the paper",
    "ffn": "the feed-forward block and its residual",
    "attention_kernel": "how softmax(Q K^T) V is computed",
}
OWN = "the model's own"
DECLINABLE = ("d_qk", "qk_init")  # a fact for one of these declines the ModelConfig field of that name
NONE = ("none", "no", "false", "0")  # fact values that say the thing is absent
SDPA_MATH = (
    "SDPA on the math backend: claimcheck runs every forward under "
    "torch.nn.attention.sdpa_kernel(SDPBackend.MATH), because the default CPU kernel has no second derivative"
)
_SCALES = {"inv_sqrt_dqk": "1/sqrt(d_qk)", "inv_dqk": "1/d_qk", "one": "1"}


def _text(value: object) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "none"
    return str(value)


def read_facts(declared: object, honours: frozenset[str], name: str) -> dict[str, str]:
    """Return a module's ``claim_facts`` as strings; raise ConfigError for unknown keys or a contradiction.

    ``name`` is the ``--claim-model`` value, named in every message.
    """
    if declared is None:
        return {}
    if not isinstance(declared, Mapping):
        raise ConfigError(
            f"--claim-model {name}: claim_facts is a {type(declared).__name__}; make it a dict from "
            f"{list(FACTS)} to strings, e.g. {{'layernorm': 'post', 'biases': True}}"
        )
    unknown = sorted(str(k) for k in declared if k not in FACTS)
    if unknown:
        raise ConfigError(f"--claim-model {name}: claim_facts names {unknown}; it may name only {list(FACTS)}")
    both = sorted(k for k in declared if k in DECLINABLE and k in honours)
    if both:
        raise ConfigError(
            f"--claim-model {name}: claim_facts declares {both}, which declines that ModelConfig field, but "
            f"claim_honours names it too; keep it in one of them"
        )
    for key, value in declared.items():
        if not isinstance(value, str | int | float | bool):
            raise ConfigError(
                f"--claim-model {name}: claim_facts[{key!r}] is a {type(value).__name__}; give a string, number or bool"
            )
    return {str(k): _text(v) for k, v in declared.items()}


NORMS: tuple[type[torch.nn.Module], ...] = (
    torch.nn.LayerNorm,
    torch.nn.GroupNorm,
    torch.nn.modules.batchnorm._BatchNorm,
    torch.nn.modules.instancenorm._InstanceNorm,
    *([torch.nn.RMSNorm] if hasattr(torch.nn, "RMSNorm") else []),
)  # normalisation layers the probe recognises by class


def found_facts(module: torch.nn.Module) -> dict[str, str]:
    """Return what a module shows of itself: its normalisation layers and ``nn.MultiheadAttention`` head counts."""
    found: dict[str, str] = {}
    kinds = sorted({type(m).__name__ for m in module.modules() if isinstance(m, NORMS)})
    if kinds:
        found["layernorm"] = f"{', '.join(kinds)} found by the probe, placement not declared"
    heads = sorted({m.num_heads for m in module.modules() if isinstance(m, torch.nn.MultiheadAttention)})
    if heads:
        found["heads"] = ", ".join(str(h) for h in heads)
    return found


def paper_regime(cfg: ModelConfig | None = None) -> dict[str, str]:
    """Return the paper's model's facts under ``cfg`` (without one: as ``ModelConfig`` sets them)."""
    if cfg is None:
        return {
            "layernorm": "none",
            "heads": "1",
            "causal_mask": "none",
            "attention": "softmax",
            "frozen": "none",
            "d_qk": "ModelConfig.d_qk",
            "qk_init": "ModelConfig.qk_init: normal N(0, 1/d) or xavier N(0, 2/(d + d_qk))",
            "logit_scale": "ModelConfig.logit_scale (default 1/sqrt(d_qk))",
            "init": "Gaussian: W_V, W_U ~ N(0, g^2/d), W_1, W_2 ~ N(0, g^2/fan_in)",
            "biases": "none",
            "output_projection": "none",
            "residual": "Z = S X W_V + beta X, beta = ModelConfig.beta",
            "ffn": "relu(Z W_1) W_2 + gamma Z",
            "attention_kernel": "explicit softmax (qin2025.engine.model)",
        }
    qk = "xavier N(0, 2/(d + d_qk))" if cfg.qk_init == "xavier" else "normal N(0, 1/d)"
    if cfg.qk_gain != 1.0:
        qk += f", std times {cfg.qk_gain:g}"
    ffn = "relu(Z W_1)" if cfg.ffn_matrices == 1 else f"relu(Z W_1) W_2 (hidden {cfg.hidden})"
    return {
        "layernorm": "none",
        "heads": "1",
        "causal_mask": "none",
        "attention": "softmax",
        "frozen": "none",
        "d_qk": str(cfg.d_qk),
        "qk_init": qk,
        "logit_scale": _SCALES[cfg.logit_scale],
        "init": (
            f"Gaussian: W_V ~ N(0, {cfg.v_gain:g}^2/d), W_1, W_2 ~ N(0, {cfg.ffn_gain:g}^2/fan_in), "
            f"W_U ~ N(0, {cfg.u_gain:g}^2/d)"
        ),
        "biases": "none",
        "output_projection": "none",
        "residual": f"Z = S X W_V + beta X, beta = {cfg.beta:g}",
        "ffn": f"{ffn} + gamma Z, gamma = {cfg.ffn_residual:g}",
        "attention_kernel": "explicit softmax (qin2025.engine.model)",
    }


def user_regime(
    facts: Mapping[str, str],
    honoured: frozenset[str],
    cfg: ModelConfig | None = None,
    *,
    sdpa_math: bool = False,
) -> dict[str, str]:
    """Return a user model's facts: declared ones, the ``ModelConfig`` fields it honours, else ``OWN``.

    ``honoured`` holds the fields the model reads (``beta``, ``qk_init``, ``d_qk``); ``sdpa_math``
    says claimcheck runs its forward on the SDPA math backend.
    """
    out = dict.fromkeys(FACTS, OWN)
    if "d_qk" in honoured:
        out["d_qk"] = str(cfg.d_qk) if cfg else "ModelConfig.d_qk"
    else:
        out["d_qk"] = f"{OWN} (it does not read ModelConfig.d_qk)"
    if "qk_init" in honoured:
        out["qk_init"] = f"{cfg.qk_init if cfg else 'ModelConfig.qk_init'}, as the model reads it"
    out.update(facts)
    if "beta" in honoured:
        beta = f"beta = {f'{cfg.beta:g}' if cfg else 'ModelConfig.beta'}, as the model reads it"
        out["residual"] = f"{facts['residual']}; {beta}" if "residual" in facts else beta
    if sdpa_math:
        out["attention_kernel"] = SDPA_MATH
    return out


def _present(facts: Mapping[str, str], key: str) -> str | None:
    """Return the fact's value when it says the thing is there (not absent, not unknown), else None."""
    value = facts.get(key, "none").strip()
    return None if value.lower() in NONE or value.startswith(OWN) else value


def premises_broken(facts: Mapping[str, str]) -> list[str]:
    """Return the premises of Theorem 1 that ``facts`` break, each named with its reason."""
    broken = []
    norm = _present(facts, "layernorm")
    if norm:
        broken.append(f"LayerNorm ({norm}; Theorem 1 assumes none)")
    heads = facts.get("heads", "1").strip()
    if heads.split(" ")[0].rstrip(",") != "1" and not heads.startswith(OWN):
        broken.append(f"{heads} attention heads (Theorem 1 assumes single-head attention)")
    mask = _present(facts, "causal_mask")
    if mask:
        broken.append(f"a causal mask ({mask}; Theorem 1 lets every token attend to every token)")
    kind = facts.get("attention", "softmax").strip()
    if not kind.lower().startswith("softmax") and not kind.startswith(OWN):
        broken.append(f"{kind} attention (Theorem 1 assumes softmax attention)")
    frozen = _present(facts, "frozen")
    if frozen:
        broken.append(f"frozen weights ({frozen}; Theorem 1 trains every weight by gradient descent)")
    return broken


SUBJECT_KEYS = ("heads", "causal_mask", "layernorm", "attention", "frozen")  # what the first screen says of a model


def subject_facts(regime: Mapping[str, str]) -> str:
    """Return one line on the model under test: heads, causal mask, normalisation, attention kind, frozen weights."""
    names = {"causal_mask": "causal mask", "layernorm": "normalisation", "frozen": "frozen weights"}
    return "; ".join(f"{names.get(k, k)}: {regime.get(k, OWN)}" for k in SUBJECT_KEYS)
