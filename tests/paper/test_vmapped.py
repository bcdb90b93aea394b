"""qin2025.vmapped: a --claim-model's runs trained together by torch.func.vmap give what train gives run by run."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.errors import ConfigError
from claimcheck.store import ResultCache
from qin2025.batched import Run
from qin2025.data import make_synthetic
from qin2025.model import ModelConfig
from qin2025.train import TrainConfig, Trajectory, train
from qin2025.trainer import Trainer
from qin2025.usermodel import ModuleModel, load_model
from qin2025.vmapped import NotVmappable, check_same, module_lambdas, train_module_batch

EXAMPLE = Path(__file__).parents[2] / "examples" / "tinyformer"
ADAPTER = f"{EXAMPLE / 'claim_adapter.py'}:build"
CFG = ModelConfig(d=8, d_qk=4, d_out=1, n_layers=2)
TRAIN = TrainConfig(steps=12, lr_fraction=0.4, sigma_every=4)


def _model() -> ModuleModel:
    model = load_model(ADAPTER)
    assert isinstance(model, ModuleModel)
    return model


def _runs(seeds: tuple[int, ...] = (0, 1, 2, 3), train_cfg: TrainConfig = TRAIN) -> list[Run]:
    return [Run(CFG, train_cfg, make_synthetic(3, 4, 8, 1, seed=100 + s), s) for s in seeds]


def _close(got: Trajectory, want: Trajectory, rtol: float = 1e-9) -> None:
    assert len(got.loss) == len(want.loss) and got.diverged_at == want.diverged_at
    np.testing.assert_allclose(got.loss, want.loss, rtol=rtol)
    np.testing.assert_array_equal(got.sigma_steps, want.sigma_steps)
    np.testing.assert_allclose(got.sigma_min, want.sigma_min, rtol=rtol)
    np.testing.assert_allclose(got.sigma_max, want.sigma_max, rtol=rtol)
    assert got.lambda_max == pytest.approx(want.lambda_max, rel=rtol) and got.lr == pytest.approx(want.lr, rel=rtol)
    assert (got.model, got.train, got.seed, got.lr_rule) == (want.model, want.train, want.seed, want.lr_rule)


def test_a_vmapped_batch_gives_what_train_gives_each_run_to_rounding() -> None:
    model = _model()
    runs = _runs()
    for run, got in zip(runs, train_module_batch(runs, model), strict=True):
        _close(got, train(run.model, run.train, run.data, run.seed, model=model))
    lams = module_lambdas(runs, model)
    for run, lam in zip(runs, lams, strict=True):
        assert lam == pytest.approx(train(run.model, run.train, run.data, run.seed, model=model).lambda_max, rel=1e-9)


def test_a_run_gets_the_same_bits_alone_as_in_any_batch() -> None:
    """vmap maps a batch of one onto other kernels; the pad to two keeps a run's bits whatever it is batched with."""
    model = _model()
    runs = _runs((0, 1, 2, 3, 4))
    together = train_module_batch(runs, model)
    for batch in ([runs[2]], [runs[2], runs[0]], runs[1:4]):
        got = next(t for t in train_module_batch(batch, model) if t.seed == 2)
        np.testing.assert_array_equal(got.loss, together[2].loss)
        np.testing.assert_array_equal(got.sigma_min, together[2].sigma_min)
        assert got.lambda_max == together[2].lambda_max


def test_a_run_that_stops_early_changes_no_other_run() -> None:
    model = _model()
    wild = Run(CFG, TrainConfig(steps=12, lr=50.0, lr_fraction=None), make_synthetic(3, 4, 8, 1, seed=7), 9)  # diverges
    floor = Run(CFG, TrainConfig(steps=12, lr_fraction=0.4, rel_floor=0.9), make_synthetic(3, 4, 8, 1, seed=8), 8)
    calm = _runs((0, 1, 2))
    alone = train_module_batch(calm, model)
    mixed = train_module_batch([wild, calm[0], floor, calm[1], calm[2]], model)
    assert mixed[0].diverged_at is not None and len(mixed[2].loss) < TRAIN.steps + 1
    for got, want in zip([mixed[1], mixed[3], mixed[4]], alone, strict=True):
        np.testing.assert_array_equal(got.loss, want.loss)
    _close(mixed[0], train(wild.model, wild.train, wild.data, wild.seed, model=model))
    _close(mixed[2], train(floor.model, floor.train, floor.data, floor.seed, model=model))


def test_runs_of_another_configuration_are_refused_naming_the_run() -> None:
    runs = [*_runs((0,)), Run(ModelConfig(d=8, d_qk=4, d_out=1, n_layers=1), TRAIN, make_synthetic(3, 4, 8, 1, 0), 5)]
    with pytest.raises(ConfigError, match=r"run 1 \(seed 5\)"):
        check_same(runs)


ITEM = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.w = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            if x.abs().max().item() > 1e9:  # a Python branch on a value: vmap cannot map it
                x = x / 2
            return self.w(torch.tanh(x))

    def build(cfg):
        return Net(cfg)
"""


def test_a_module_vmap_cannot_map_trains_one_run_at_a_time_with_one_warning(tmp_path: Path) -> None:
    path = tmp_path / "item_model.py"
    path.write_text(textwrap.dedent(ITEM))
    model = load_model(f"{path}:build")
    assert isinstance(model, ModuleModel)
    runs = [Run(ModelConfig(d=8, d_qk=4, d_out=1), TrainConfig(steps=4), make_synthetic(2, 3, 8, 1, seed=s), s)
            for s in (0, 1)]  # fmt: skip
    with pytest.raises(NotVmappable, match="--claim-model"):
        train_module_batch(runs, model)
    trainer = Trainer(ResultCache(tmp_path / "cache"), model=model)
    with pytest.warns(UserWarning, match="one at a time"):
        got = trainer.batch(runs)
    assert model.name in trainer.not_vmappable
    for run, traj in zip(runs, got, strict=True):  # train's own bits, under train's keys
        np.testing.assert_array_equal(traj.loss, train(run.model, run.train, run.data, run.seed, model=model).loss)
    again = Trainer(ResultCache(tmp_path / "cache"), model=model, not_vmappable=dict(trainer.not_vmappable))
    again(runs[0].model, runs[0].train, runs[0].data, runs[0].seed)
    assert (again.counts.computed, again.counts.cached) == (0, 1)


BARE_INPUT_WRITE = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.a = nn.Linear(cfg.d, cfg.d)
            self.u = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            x.clamp_(-0.5, 0.5)  # writes into its input
            return self.u(torch.tanh(self.a(x)))

    def build(cfg):
        return Net(cfg)
"""
HOOK = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.a = nn.Linear(cfg.d, cfg.d)
            self.u = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            h = self.a(x)
            if h.requires_grad:  # False for every tensor inside vmap: the hook would be skipped there
                h.register_hook(lambda g: 0.25 * g)
            return self.u(torch.tanh(h))

    def build(cfg):
        return Net(cfg)
"""
MAX_NORM = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.a = nn.Linear(cfg.d, cfg.d, bias=False)
            self.u = nn.Linear(cfg.d, cfg.d_out, bias=False)

        def forward(self, x):
            with torch.no_grad():  # a max-norm constraint: the forward writes to its own weight
                self.a.weight.clamp_(-0.3, 0.3)
            return self.u(torch.tanh(self.a(x)))

    def build(cfg):
        return Net(cfg)
"""


@pytest.mark.parametrize(("body", "why"), [(HOOK, "computes another function"), (MAX_NORM, "writes to its own")])
def test_a_forward_that_vmap_would_silently_change_is_refused_alone_and_in_a_batch(
    tmp_path: Path, body: str, why: str
) -> None:
    """The referee's two silent cases: a requires_grad branch (a gradient hook) and a parameter written in place."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(body))
    model = load_model(f"{path}:build")
    assert isinstance(model, ModuleModel)
    runs = [Run(ModelConfig(d=8, d_qk=4, d_out=1), TrainConfig(steps=6), make_synthetic(3, 4, 8, 1, seed=s), s)
            for s in (0, 1)]  # fmt: skip
    for batch in (runs, runs[:1]):
        with pytest.raises(NotVmappable, match=why):
            train_module_batch(batch, model)
        with pytest.raises(NotVmappable, match=why):
            module_lambdas(batch, model)
    trainer = Trainer(ResultCache(None), model=model)
    with pytest.warns(UserWarning, match=why):
        alone = trainer(runs[0].model, runs[0].train, runs[0].data, runs[0].seed)
    want = train(runs[0].model, runs[0].train, runs[0].data, runs[0].seed, model=model)
    np.testing.assert_array_equal(alone.loss, want.loss)  # train's own numbers, hook and clamp applied


def test_a_forward_that_writes_into_its_input_changes_neither_the_callers_data_nor_the_fingerprint(
    tmp_path: Path,
) -> None:
    """train used to hand the forward the caller's tensor: an x.mul_ would have changed every later run's data."""
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(BARE_INPUT_WRITE))
    model = load_model(f"{path}:build")
    data = make_synthetic(3, 4, 8, 1, seed=0)
    before = data.x.clone()
    run = Run(ModelConfig(d=8, d_qk=4, d_out=1), TrainConfig(steps=3), data, 0)
    one = train(run.model, run.train, run.data, run.seed, model=model)
    Trainer(ResultCache(None), model=model, not_vmappable={model.name: "told so"}).lambda_max(run.model, data, 0)
    torch.testing.assert_close(data.x, before, rtol=0, atol=0)
    got = train_module_batch([run], model)[0]
    assert one.data_fingerprint == got.data_fingerprint == data.fingerprint
    _close(got, one)


def test_the_trainer_batches_a_user_model_by_configuration_and_reads_back_alone(tmp_path: Path) -> None:
    model = _model()
    trainer = Trainer(ResultCache(tmp_path), model=model)
    other = ModelConfig(d=8, d_qk=4, d_out=1, n_layers=2, beta=0.0)
    runs = [*_runs((0, 1)), *[Run(other, r.train, r.data, r.seed) for r in _runs((0, 1))], *_runs((2,))]
    got = trainer.batch(runs)
    assert [t.model["beta"] for t in got] == [1.0, 1.0, 0.0, 0.0, 1.0] and [t.seed for t in got] == [0, 1, 0, 1, 2]
    assert trainer.counts.computed == 5
    alone = Trainer(ResultCache(tmp_path), model=model)
    for run, traj in zip(runs, got, strict=True):
        np.testing.assert_array_equal(alone(run.model, run.train, run.data, run.seed).loss, traj.loss)
    assert (alone.counts.computed, alone.counts.cached) == (0, 5)  # a run alone is the entry its batch stored
    lams = trainer.lambda_maxes(runs)
    assert [alone.lambda_max(r.model, r.data, r.seed) for r in runs] == lams
    assert alone.counts.computed == 0


def test_vmap_and_one_at_a_time_keep_separate_entries(tmp_path: Path) -> None:
    """The numbers agree to rounding, not bits: a cache never mixes the two."""
    model = _model()
    run = _runs((0,))[0]
    vmapped = Trainer(ResultCache(tmp_path), model=model)
    one = Trainer(ResultCache(tmp_path), model=model, not_vmappable={model.name: "told so"})
    a = vmapped(run.model, run.train, run.data, run.seed)
    b = one(run.model, run.train, run.data, run.seed)
    assert (vmapped.counts.computed, one.counts.computed) == (1, 1)
    _close(a, b)
