"""Bring your own model: the protocol, loading a factory, training it, and its cache identity."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.errors import ConfigError
from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.facts import FACTS, OWN
from qin2025.engine.model import ModelConfig
from qin2025.engine.spectral import sample_attention
from qin2025.engine.train import TrainConfig, train
from qin2025.engine.trainer import Trainer, train_key
from qin2025.engine.usermodel import PAPER, ModuleModel, load_model, missing

EXAMPLE = Path(__file__).parents[2] / "examples" / "tinyformer"
ADAPTER = f"{EXAMPLE / 'claim_adapter.py'}:build"
CFG = ModelConfig(d=8, d_qk=4, d_out=1)
DATA = make_synthetic(2, 3, 8, 1, seed=0)


def _module_file(tmp_path: Path, body: str, name: str = "user_model.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return f"{path}:build"


BARE = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.w = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            return self.w(torch.tanh(x))

    def build(cfg):
        return Net(cfg)
"""


def test_an_empty_spec_is_the_papers_model() -> None:
    assert load_model("") is PAPER
    assert missing(PAPER, ["attention", "beta", "n_layers", "qk_init", "paper-model"]) == []


def test_the_example_offers_attention_and_the_knobs_but_not_the_papers_own_model() -> None:
    model = load_model(ADAPTER)
    assert sorted(model.capabilities) == ["attention", "beta", "n_layers", "qk_init"]
    assert missing(model, ["attention", "qk_init", "paper-model"]) == ["paper-model"]
    assert model.name == ADAPTER


def test_a_model_returning_only_its_output_has_no_attention(tmp_path: Path) -> None:
    model = load_model(_module_file(tmp_path, BARE))
    assert model.capabilities == frozenset()
    traj = train(CFG, TrainConfig(steps=5), DATA, seed=0, model=model)
    assert traj.loss[-1] < traj.loss[0]
    assert traj.sigma_steps.size == 0 and traj.sigma_min.shape == (0, 1)  # no Z to measure


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_colon", "expected package.module:factory or path/to/file.py:factory"),
        ("no_such_package_xyz:build", "cannot import 'no_such_package_xyz'"),
        ("qin2025.engine.model:no_such_factory", "has no callable 'no_such_factory'"),
        ("missing/file.py:build", "does not exist"),
    ],
)
def test_a_bad_spec_is_rejected_naming_the_option(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match="--claim-model") as e:
        load_model(spec)
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("def build(cfg):\n    return 3\n", "returned int, not a torch.nn.Module"),
        (BARE.replace("cfg.d_out", "cfg.d"), "the output has shape (2, 4, 6), expected (2, 4, 2)"),
        (BARE.replace("def build", "Net.claim_honours = ('beta', 'dropout')\n    def build"), "claim_honours names"),
        ("raise RuntimeError('broken import')\n", "RuntimeError: broken import"),
    ],
)
def test_a_model_that_breaks_the_protocol_is_rejected(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ConfigError, match="--claim-model") as e:
        load_model(_module_file(tmp_path, body))
    assert message in str(e.value)


def test_training_a_user_model_is_reproducible_and_seeded() -> None:
    model = load_model(ADAPTER)
    tcfg = TrainConfig(steps=20, sigma_every=5)
    a = train(CFG, tcfg, DATA, seed=3, model=model)
    b = train(CFG, tcfg, DATA, seed=3, model=model)
    c = train(CFG, tcfg, DATA, seed=4, model=model)
    np.testing.assert_array_equal(a.loss, b.loss)
    assert not np.array_equal(a.loss, c.loss)
    assert a.loss[-1] < 0.5 * a.loss[0]
    assert a.sigma_steps.tolist() == [0, 5, 10, 15, 20] and a.sigma_min.shape == (5, 1)


def test_init_does_not_touch_the_global_random_state() -> None:
    model = load_model(ADAPTER)
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    model.init_params(CFG, torch.Generator().manual_seed(0), torch.float64)
    torch.testing.assert_close(torch.rand(3), expected)


def test_beta_reaches_the_example_and_attention_is_exposed() -> None:
    model = load_model(ADAPTER)
    x = make_synthetic(4, 5, 8, 1, seed=1).x
    a = sample_attention(ModelConfig(d=8, d_qk=4, beta=1.0), x, seed=0, model=model)
    np.testing.assert_allclose(a.s.sum(-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(a.z, a.attn + a.x, rtol=1e-10, atol=1e-12)


def test_cache_keys_name_the_model_and_change_with_its_behaviour() -> None:
    healthy = load_model(ADAPTER)
    detached = load_model(f"{EXAMPLE / 'mutants.py'}:scaled_step")  # same forward values, other gradients
    inputs = train_key(CFG, TrainConfig(), DATA, 0)
    keys = [Trainer(ResultCache(None), model=m).key(inputs, train) for m in (PAPER, healthy, detached)]
    assert len({k.digest for k in keys}) == 3 and len({k.model for k in keys}) == 3
    assert load_model(ADAPTER).identity == healthy.identity  # stable across loads
    relative = load_model("claim_adapter.py:build", root=EXAMPLE)
    assert relative.identity == healthy.identity and relative.name != healthy.name  # named two ways, one model


def test_the_trainer_trains_and_caches_the_user_model(tmp_path: Path) -> None:
    model = load_model(ADAPTER)
    trainer = Trainer(ResultCache(tmp_path), model=model)
    first = trainer(CFG, TrainConfig(steps=5), DATA, 0)
    again = trainer(CFG, TrainConfig(steps=5), DATA, 0)
    np.testing.assert_array_equal(first.loss, again.loss)
    assert (trainer.counts.computed, trainer.counts.cached) == (1, 1)
    paper = Trainer(ResultCache(tmp_path))(CFG, TrainConfig(steps=5), DATA, 0)
    assert not np.array_equal(paper.loss, first.loss)
    assert trainer.lambda_max(CFG, DATA, 0) == pytest.approx(first.lambda_max, rel=1e-12)


NEEDY_CLAIM = """
import pytest

pytestmark = pytest.mark.claim_needs("attention", "beta")


@pytest.mark.claim("C9", "toy claim on the model under test", "Sec. 9")
def test_claim(claim_record, claim_model):
    claim_record.check("toy statistic", 2.0, "<=", 1.0, label=claim_model.name)
    claim_record.check("toy statistic", 5.0, "<=", 1.0, label=claim_model.name, control="toy control")
"""


def test_a_claim_whose_needs_the_model_lacks_is_skipped_naming_them(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_needy=NEEDY_CLAIM)
    spec = _module_file(pytester.path, BARE, "bare_model.py")
    result = pytester.runpytest(f"--claim-model={spec}", "--claim-report", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*lacks attention, beta*"])
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "SKIPPED" in text and "| model " in text and "bare_model.py:build" in text


def test_the_paper_model_meets_every_need_and_ini_expectations_do_not_apply_to_a_user_model(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_needy=NEEDY_CLAIM)
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "NOT REPRODUCED"\n')
    pytester.makeini("[pytest]\nclaim_expectations = expected.toml\n")
    paper = pytester.runpytest()
    assert paper.ret == 0  # the ini's known verdict describes the suite's own model
    user = pytester.runpytest(f"--claim-model={ADAPTER}")
    assert user.ret == pytest.ExitCode.TESTS_FAILED  # a user's model is held to the claim, not to the paper's record
    explicit = pytester.runpytest(f"--claim-model={ADAPTER}", "--claim-expectations=expected.toml")
    assert explicit.ret == 0


def test_a_bad_model_option_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_needy=NEEDY_CLAIM)
    result = pytester.runpytest("--claim-model=nowhere_pkg_q:build")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-model: cannot import 'nowhere_pkg_q'*"])


UNUSED = BARE.replace(
    "self.w = nn.Linear(cfg.d, cfg.d_out, bias=False)",
    "self.w = nn.Linear(cfg.d, cfg.d_out, bias=False)\n            self.unused = nn.Parameter(torch.ones(3))",
)


def test_a_parameter_that_gets_no_gradient_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"1 of 2 parameters get no gradient.*: unused\. Something cuts them off"):
        load_model(_module_file(tmp_path, UNUSED))


def test_a_frozen_parameter_the_user_names_is_labelled_and_training_goes_on(tmp_path: Path) -> None:
    model = load_model(
        _module_file(tmp_path, UNUSED.replace("def build", "Net.claim_frozen = ('unused',)\n    def build"))
    )
    assert model.regime()["frozen"] == "unused"
    assert any(p.startswith("frozen weights (unused;") for p in model.premises_broken())
    traj = train(CFG, TrainConfig(steps=5), DATA, seed=0, model=model)
    assert traj.diverged_at is None and traj.loss[-1] < traj.loss[0]


def test_a_frozen_name_that_learns_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"claim_frozen names \['w'\], but no parameter under those names"):
        load_model(
            _module_file(tmp_path, UNUSED.replace("def build", "Net.claim_frozen = ('w', 'unused')\n    def build"))
        )


@pytest.mark.parametrize(
    ("mutant", "dead"),
    [
        ("hard_argmax", "net.blocks.0.query.weight, net.blocks.0.key.weight, net.blocks.1.query.weight"),
        ("qk_detached", "net.blocks.0.query.weight, net.blocks.0.key.weight, net.blocks.1.query.weight"),
        ("value_frozen", "net.blocks.0.value.weight, net.blocks.1.value.weight."),
        ("attention_detached", "net.blocks.0.query.weight, net.blocks.0.key.weight, net.blocks.0.value.weight"),
    ],
)
def test_the_probe_names_the_weights_a_mutant_cuts_off(mutant: str, dead: str) -> None:
    with pytest.raises(ConfigError, match="get no gradient") as e:
        load_model(f"{EXAMPLE / 'mutants.py'}:{mutant}")
    assert dead in str(e.value) and "claim_honours" not in str(e.value)


def test_the_papers_engine_names_a_weight_cut_off_from_the_output(monkeypatch: pytest.MonkeyPatch) -> None:
    import qin2025.engine.model as paper

    def detached(x, w_q, w_k, w_v, scale, project=torch.matmul):  # type: ignore[no-untyped-def]
        return real(x, w_q.detach(), w_k.detach(), w_v, scale, project)

    real = paper.attention
    monkeypatch.setattr(paper, "attention", detached)
    with pytest.raises(ConfigError, match=r"qin2025.engine.model .*get no gradient.*: 0.W_Q, 0.W_K, 1.W_Q, 1.W_K\."):
        load_model("")


def test_the_refusal_of_a_missing_residual_does_not_suggest_dropping_beta() -> None:
    with pytest.raises(ConfigError, match="claim_honours names 'beta'") as e:
        load_model(f"{EXAMPLE / 'mutants.py'}:no_residual")
    assert "drop" not in str(e.value) and "cfg.beta * X" in str(e.value)


@pytest.mark.parametrize(
    ("mutant", "premise"),
    [
        ("causal_mask", "a causal mask (yes (found by the probe"),
        ("layernorm", "LayerNorm (LayerNorm found by the probe"),
        ("two_heads", "2 (S per head, found by the probe) attention heads"),
    ],
)
def test_the_probe_finds_the_premises_a_mutant_breaks(mutant: str, premise: str) -> None:
    model = load_model(f"{EXAMPLE / 'mutants.py'}:{mutant}")
    assert any(p.startswith(premise) for p in model.premises_broken()), model.premises_broken()
    assert load_model(ADAPTER).premises_broken() == []


def test_a_multi_head_model_is_measured_on_the_head_average_of_s() -> None:
    model = load_model(f"{EXAMPLE / 'mutants.py'}:two_heads")
    x = make_synthetic(4, 5, 8, 1, seed=1).x
    a = sample_attention(ModelConfig(d=8, d_qk=4), x, seed=0, model=model)
    assert a.s.shape == (4, 5, 5)
    np.testing.assert_allclose(a.s.sum(-1), 1.0, rtol=1e-12)


def test_editing_a_module_the_model_file_imports_changes_its_identity(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("SCALE = 1.0\n")
    spec = _module_file(tmp_path, BARE.replace("import torch\n", "import torch\n    import helper\n", 1))
    before = load_model(spec).identity
    (tmp_path / "helper.py").write_text("SCALE = 1.0  # an edit the probe cannot see\n")
    assert load_model(spec).identity != before


def test_a_batch_of_user_model_runs_trains_one_at_a_time_under_the_same_keys(tmp_path: Path) -> None:
    model = load_model(ADAPTER)
    trainer = Trainer(ResultCache(tmp_path), model=model)
    runs = [Run(ModelConfig(d=8, d_qk=4, beta=b), TrainConfig(steps=5), DATA, s) for b in (0.0, 1.0) for s in (0, 1)]
    batched = trainer.batch(runs)
    lams = trainer.lambda_maxes(runs)
    alone = Trainer(ResultCache(tmp_path), model=model)
    for run, traj, lam in zip(runs, batched, lams, strict=True):
        np.testing.assert_array_equal(alone(run.model, run.train, run.data, run.seed).loss, traj.loss)
        assert alone.lambda_max(run.model, run.data, run.seed) == lam
    assert (alone.counts.computed, alone.counts.cached) == (0, 8)  # all read back: the keys are shared


# --- the start-up probe: second derivatives, knobs, row sums; facts and regime labels ------------

ENCODER = """
    import torch
    from torch import nn
    from torch.nn.attention import SDPBackend, sdpa_kernel

    class Encoder(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(cfg.d, 1, cfg.d, dropout=0.0, batch_first=True)
            self.out = nn.Linear(cfg.d, cfg.d_out)

        def forward(self, x):
            with KERNEL:
                return self.out(self.layer(x))

    def build(cfg):
        return Encoder(cfg)
"""


def _encoder(tmp_path: Path, kernel: str) -> str:
    return _module_file(tmp_path, ENCODER.replace("KERNEL", kernel), "encoder.py")


def test_an_encoder_layer_on_the_fused_cpu_kernel_runs_on_the_sdpa_math_backend(tmp_path: Path) -> None:
    model = load_model(_encoder(tmp_path, "torch.enable_grad()"))  # the layer's own SDPA call
    assert isinstance(model, ModuleModel) and model.sdpa_math and model.identity.endswith("+sdpa-math")
    assert "sdpa_kernel(SDPBackend.MATH)" in model.regime()["attention_kernel"]
    traj = train(CFG, TrainConfig(steps=3), DATA, seed=0, model=model)  # lambda_max needs Hessian-vector products
    assert traj.lambda_max > 0 and traj.loss[-1] < traj.loss[0]


def test_an_encoder_layer_that_forces_the_fused_kernel_is_refused_naming_it_and_the_remedy(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--claim-model") as e:
        load_model(_encoder(tmp_path, "sdpa_kernel(SDPBackend.FLASH_ATTENTION)"))
    assert "aten::_scaled_dot_product_flash_attention_for_cpu_backward" in str(e.value)
    assert "second derivatives" in str(e.value) and "sdpa_kernel(SDPBackend.MATH)" in str(e.value)


def test_a_model_with_second_derivatives_stays_off_the_math_backend() -> None:
    model = load_model(ADAPTER)
    assert isinstance(model, ModuleModel) and not model.sdpa_math
    assert model.regime()["attention_kernel"] == OWN


@pytest.mark.parametrize("knob", ["beta", "n_layers", "qk_init"])
def test_a_declared_knob_that_changes_nothing_is_refused_naming_the_knob(tmp_path: Path, knob: str) -> None:
    body = BARE.replace("def build", f"Net.claim_honours = ({knob!r},)\n    def build")
    with pytest.raises(ConfigError, match=f"--claim-model .*claim_honours names '{knob}', but the output did not"):
        load_model(_module_file(tmp_path, body))


def test_a_knob_that_changes_the_output_is_honoured(tmp_path: Path) -> None:
    body = BARE.replace("self.w(torch.tanh(x))", "self.w(torch.tanh(self.beta * x))").replace(
        "super().__init__()", "super().__init__()\n            self.beta = cfg.beta"
    )
    model = load_model(
        _module_file(tmp_path, body.replace("def build", "Net.claim_honours = ('beta',)\n    def build"))
    )
    assert model.capabilities == {"beta"} and model.honours("beta") and not model.honours("qk_init")


def test_the_probe_catches_the_mutants_that_drop_the_residual_or_normalise_the_wrong_axis() -> None:
    with pytest.raises(ConfigError, match="claim_honours names 'beta', but the output did not change"):
        load_model(f"{EXAMPLE / 'mutants.py'}:no_residual")
    with pytest.raises(ConfigError, match=r"block 0's attention S is not row-stochastic .*sums to one"):
        load_model(f"{EXAMPLE / 'mutants.py'}:softmax_wrong_axis")


FACTFUL = BARE.replace(
    "def build",
    "Net.claim_facts = {'layernorm': 'post', 'logit_scale': '1/sqrt(d)', 'biases': True, 'd_qk': 'tied to d'}\n"
    "    def build",
)


def test_declared_facts_appear_in_the_regime_and_the_rest_is_the_models_own(tmp_path: Path) -> None:
    model = load_model(_module_file(tmp_path, FACTFUL))
    regime = model.regime(CFG)
    assert set(regime) == set(FACTS)
    assert (regime["layernorm"], regime["logit_scale"], regime["biases"]) == ("post", "1/sqrt(d)", "yes")
    assert regime["d_qk"] == "tied to d" and not model.honours("d_qk")
    assert regime["qk_init"] == regime["init"] == OWN


def test_premises_broken_names_layernorm_declared_or_found(tmp_path: Path) -> None:
    assert load_model(_module_file(tmp_path, FACTFUL)).premises_broken() == ["LayerNorm (post; Theorem 1 assumes none)"]
    found = load_model(
        _module_file(
            tmp_path,
            BARE.replace("torch.tanh(x)", "self.norm(x)").replace(
                "super().__init__()", "super().__init__()\n            self.norm = nn.LayerNorm(cfg.d)"
            ),
            "normed.py",
        )
    )
    assert found.premises_broken() == [
        "LayerNorm (LayerNorm found by the probe, placement not declared; Theorem 1 assumes none)"
    ]
    assert load_model(ADAPTER).premises_broken() == []


def test_the_papers_model_labels_its_own_regime() -> None:
    regime = PAPER.regime(ModelConfig(d=8, d_qk=4, qk_init="xavier", beta=0.5))
    assert set(regime) == set(FACTS) and PAPER.premises_broken() == []
    assert (regime["layernorm"], regime["logit_scale"], regime["d_qk"]) == ("none", "1/sqrt(d_qk)", "4")
    assert regime["qk_init"] == "xavier N(0, 2/(d + d_qk))" and regime["residual"].endswith("beta = 0.5")
    assert all(PAPER.honours(f) for f in ("d_qk", "beta", "n_layers", "qk_init", "logit_scale"))


def test_a_model_that_ignores_d_qk_is_not_labelled_with_it(tmp_path: Path) -> None:
    bare = load_model(_module_file(tmp_path, BARE))  # reads d and d_out only, declares nothing
    assert not bare.honours("d_qk") and "does not read ModelConfig.d_qk" in bare.regime(CFG)["d_qk"]
    example = load_model(ADAPTER)
    assert example.honours("d_qk") and example.regime(CFG)["d_qk"] == "4"


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ("{'dropout': 'none'}", "claim_facts names ['dropout']"),
        ("['layernorm']", "claim_facts is a list"),
        ("{'layernorm': [1]}", "claim_facts['layernorm'] is a list"),
    ],
)
def test_bad_claim_facts_are_refused(tmp_path: Path, facts: str, message: str) -> None:
    body = BARE.replace("def build", f"Net.claim_facts = {facts}\n    def build")
    with pytest.raises(ConfigError, match="--claim-model") as e:
        load_model(_module_file(tmp_path, body))
    assert message in str(e.value)


def test_declining_a_field_the_model_reads_is_refused(tmp_path: Path) -> None:
    body = (
        BARE.replace(
            "self.w = nn.Linear(cfg.d, cfg.d_out, bias=False)",
            "self.q = nn.Linear(cfg.d, cfg.d_qk, bias=False)\n"
            "            self.w = nn.Linear(cfg.d_qk, cfg.d_out, bias=False)",
        )
        .replace("self.w(torch.tanh(x))", "self.w(torch.tanh(self.q(x)))")
        .replace("def build", "Net.claim_facts = {'d_qk': 'tied to d'}\n    def build")
    )
    with pytest.raises(ConfigError, match=r"declares 'd_qk' .* but the model changed when d_qk went from 3 to 5"):
        load_model(_module_file(tmp_path, body))


def test_declaring_and_honouring_qk_init_is_refused(tmp_path: Path) -> None:
    body = BARE.replace(
        "def build", "Net.claim_honours = ('qk_init',)\n    Net.claim_facts = {'qk_init': 'x'}\n    def build"
    )
    with pytest.raises(ConfigError, match=r"claim_facts declares \['qk_init'\].*claim_honours names it too"):
        load_model(_module_file(tmp_path, body))


INPUT_WRITE = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.a = nn.Linear(cfg.d, cfg.d)
            self.u = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            x.mul_(2.0)  # writes into its input, differently at every call
            return self.u(torch.tanh(self.a(x)))

    def build(cfg):
        return Net(cfg)
"""


def test_a_forward_that_writes_into_its_input_changes_neither_the_callers_data_nor_the_fingerprint(
    tmp_path: Path,
) -> None:
    """The forward used to get the caller's tensor: an x.mul_ doubled the data at each step and for later runs."""
    model = load_model(_module_file(tmp_path, INPUT_WRITE))  # the probe's two calls now agree
    data = make_synthetic(3, 4, 8, 1, seed=0)
    before = data.x.clone()
    cfg = ModelConfig(d=8, d_qk=4, d_out=1)
    first = train(cfg, TrainConfig(steps=3), data, 0, model=model)
    Trainer(ResultCache(None), model=model).lambda_max(cfg, data, 0)
    assert torch.equal(data.x, before)
    again = train(cfg, TrainConfig(steps=3), data, 0, model=model)
    np.testing.assert_array_equal(first.loss, again.loss)  # the same run twice: the same data each time
    assert first.data_fingerprint == data.fingerprint
