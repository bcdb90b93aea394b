"""The batched engine gives, run for run, what one-at-a-time training gives."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from claimcheck.errors import ConfigError
from qin2025.data import make_synthetic
from qin2025.data.synthetic import TensorData
from qin2025.engine.batched import Run, check_batchable, train_batch, train_batch_from
from qin2025.engine.model import ModelConfig, init_params
from qin2025.engine.train import TrainConfig, Trajectory, train

RTOL = 1e-10  # the contract: every recorded number agrees to 1e-10, relative, in float64
BETAS = (0.0, 0.25, 0.5, 0.75, 1.0)
SEEDS = (0, 1, 2)
MODEL = ModelConfig(d=8, d_qk=4, d_out=1)  # N n = 6 <= d: overparameterised, so runs converge
STEPS = 40


def _data(seed: int) -> TensorData:
    return make_synthetic(2, 3, 8, 1, seed=seed)


def _sweep(model: ModelConfig, train_cfg: TrainConfig) -> list[Run]:
    """Return the runs of a beta x seed sweep, each on its own data."""
    return [
        Run(replace(model, beta=b), train_cfg, make_synthetic(2, 3, 8, model.d_out, seed=s), s)
        for b in BETAS
        for s in SEEDS
    ]


def _assert_same_runs(runs: list[Run]) -> list[Trajectory]:
    """Assert train_batch agrees with train on every field of every run; return the batched ones."""
    batched = train_batch(runs)
    assert len(batched) == len(runs)
    for run, got in zip(runs, batched, strict=True):
        want = train(run.model, run.train, run.data, run.seed)
        for name in ("loss", "sigma_min", "sigma_max"):
            np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=RTOL, atol=0, err_msg=name)
        np.testing.assert_array_equal(got.sigma_steps, want.sigma_steps)
        assert got.lambda_max == pytest.approx(want.lambda_max, rel=RTOL, abs=0)
        assert got.lr == pytest.approx(want.lr, rel=RTOL, abs=0)
        assert (got.lr_rule, got.diverged_at, got.seed) == (want.lr_rule, want.diverged_at, want.seed)
        assert (got.model, got.train) == (want.model, want.train)
        assert (got.data, got.data_fingerprint) == (want.data, want.data_fingerprint)
    return batched


def test_beta_by_seed_sweep_with_lr_fraction_matches_one_at_a_time() -> None:
    batched = _assert_same_runs(_sweep(MODEL, TrainConfig(steps=STEPS, lr_fraction=0.5, sigma_every=10)))
    assert len({t.lr for t in batched}) == len(batched)  # each run found its own lambda_max and step size


def test_beta_by_seed_sweep_with_absolute_lr_matches_one_at_a_time() -> None:
    _assert_same_runs(_sweep(MODEL, TrainConfig(steps=STEPS, lr=1e-2, lr_fraction=None)))


def test_two_layer_sweep_matches_one_at_a_time() -> None:
    _assert_same_runs(_sweep(replace(MODEL, n_layers=2), TrainConfig(steps=STEPS, lr_fraction=0.5, sigma_every=7)))


def test_diverging_and_floored_runs_leave_the_batch_without_touching_the_others() -> None:
    runs = [
        Run(MODEL, TrainConfig(steps=300, lr_fraction=0.5), _data(0), 0),
        Run(MODEL, TrainConfig(steps=300, lr_fraction=50.0), _data(0), 1),  # far above the bound: diverges
        Run(MODEL, TrainConfig(steps=300, lr_fraction=0.5, rel_floor=1e-12), _data(0), 2),  # reaches its floor
        Run(replace(MODEL, beta=0.0), TrainConfig(steps=120, lr_fraction=0.9, sigma_every=25), _data(1), 3),
    ]
    normal, diverged, floored, other = _assert_same_runs(runs)
    assert diverged.diverged_at is not None and not np.isfinite(diverged.loss[-1])
    assert floored.diverged_at is None and len(floored.loss) < 301
    assert floored.loss[-1] <= 1e-12 * floored.loss[0]
    assert len(normal.loss) == 301 and len(other.loss) == 121


def test_second_power_pass_and_per_run_iteration_caps_match() -> None:
    # After one power step, seeds 12 and 38 see a negative Rayleigh quotient and iterate again on H + |lambda| I.
    caps = {12: 1, 38: 1, 0: 200, 5: 3}
    cfgs = {s: TrainConfig(steps=5, lr=1e-3, lr_fraction=None, power_iters=c) for s, c in caps.items()}
    _assert_same_runs([Run(MODEL, cfg, _data(0), s) for s, cfg in cfgs.items()])


def test_other_model_options_match() -> None:
    model = ModelConfig(d=6, d_qk=3, d_out=2, ffn_matrices=1, logit_scale="one", qk_init="xavier")
    runs = [
        Run(replace(model, beta=b, ffn_residual=g), TrainConfig(steps=20), make_synthetic(4, 5, 6, 2, seed=s), s)
        for b, g, s in ((0.0, 1.0, 0), (1.0, 0.0, 1), (0.5, 0.5, 2))
    ]
    _assert_same_runs(runs)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"model": replace(MODEL, d_qk=2)}, "ModelConfig.d_qk"),
        ({"model": replace(MODEL, n_layers=2)}, "ModelConfig.n_layers"),
        ({"model": replace(MODEL, half_loss=False)}, "ModelConfig.half_loss"),
        ({"train": TrainConfig(dtype="float32")}, "TrainConfig.dtype"),
        ({"data": make_synthetic(3, 3, 8, 1, seed=0)}, r"data.x shape"),
        ({"data": make_synthetic(2, 3, 8, 2, seed=0)}, r"data.y shape"),
    ],
)
def test_runs_of_different_shapes_are_refused_naming_the_field(change: dict[str, object], needle: str) -> None:
    first = Run(MODEL, TrainConfig(steps=3), _data(0), 0)
    with pytest.raises(ConfigError, match=needle):
        check_batchable([first, replace(first, **change)])  # type: ignore[arg-type]


def test_a_run_without_a_positive_lambda_max_is_named() -> None:
    flat = TensorData(torch.zeros(2, 3, 8, dtype=torch.float64), torch.zeros(2, 3, 1, dtype=torch.float64), "zeros")
    runs = [Run(MODEL, TrainConfig(steps=3), _data(0), 0), Run(MODEL, TrainConfig(steps=3), flat, 7)]
    with pytest.raises(ConfigError, match=r"run 1 \(seed 7\): lr_fraction needs a positive"):
        train_batch(runs)


def test_an_empty_batch_is_refused() -> None:
    with pytest.raises(ConfigError, match="at least one run"):
        train_batch([])


def test_training_from_given_parameters_is_training_from_the_seeds_draw_when_they_are_that_draw() -> None:
    runs = _sweep(MODEL, TrainConfig(steps=STEPS, lr_fraction=0.5, sigma_every=10))[:6]
    drawn = [init_params(r.model, torch.Generator().manual_seed(r.seed), torch.float64) for r in runs]
    for got, want in zip(train_batch_from(runs, drawn), train_batch(runs), strict=True):
        np.testing.assert_array_equal(got.loss, want.loss)
        assert (got.lambda_max, got.lr) == (want.lambda_max, want.lr)


def test_training_from_given_parameters_starts_there_and_leaves_them_unchanged() -> None:
    run = Run(MODEL, TrainConfig(steps=STEPS, lr_fraction=0.5), _data(0), 0)
    params = init_params(MODEL, torch.Generator().manual_seed(0), torch.float64)
    moved = {**params, "W_U": 2 * params["W_U"]}
    kept = {k: v.clone() for k, v in moved.items()}
    (other,) = train_batch_from([run], [moved])
    (own,) = train_batch([run])
    assert other.loss[0] != own.loss[0] and other.lambda_max != own.lambda_max
    assert all(torch.equal(moved[k], kept[k]) for k in kept)


def test_training_from_given_parameters_needs_one_dict_per_run() -> None:
    run = Run(MODEL, TrainConfig(steps=STEPS, lr_fraction=0.5), _data(0), 0)
    with pytest.raises(ConfigError, match="one parameter dict per run"):
        train_batch_from([run, run], [init_params(MODEL, torch.Generator().manual_seed(0), torch.float64)])
