"""Smaller faults of the paper's suite: a NaN model, a model path that needs quoting, a training run past its limit."""

from __future__ import annotations

import shlex
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.deadline import UnitTimeout
from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer
from qin2025.engine.usermodel import load_model
from qin2025.plugin import USER_MODEL_KEY, pytest_claimcheck_rerun_options

NAN_MODEL = """
import torch


class Broken(torch.nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w = torch.nn.Linear(cfg.d, cfg.d_out, bias=False)

    def forward(self, x):
        return self.w(x) * float("{value}")


def build(cfg):
    return Broken(cfg)
"""


@pytest.mark.parametrize(("value", "named"), [("nan", "NaN"), ("inf", "inf")])
def test_a_model_whose_output_is_not_finite_is_refused_saying_so(tmp_path: Path, value: str, named: str) -> None:
    path = tmp_path / "user_model.py"
    path.write_text(textwrap.dedent(NAN_MODEL.format(value=value)))
    with pytest.raises(ConfigError) as caught:
        load_model(f"{path}:build")
    message = str(caught.value)
    assert f"output holds {named}" in message and "hidden state" not in message and "call counter" not in message


def test_the_rerun_line_quotes_the_model_path() -> None:
    config = SimpleNamespace(stash={USER_MODEL_KEY: "my models/it's.py:build"})
    options = pytest_claimcheck_rerun_options(config)  # type: ignore[arg-type]
    assert shlex.split(" ".join(options)) == ["--claim-model", "my models/it's.py:build"]


def test_a_training_run_past_the_limit_is_an_error_naming_it_and_the_limit(tmp_path: Path) -> None:
    trainer = Trainer(ResultCache(tmp_path), timeout=0.2)

    def slow() -> tuple[dict[str, np.ndarray], dict[str, float]]:
        time.sleep(5)
        return {}, {}

    start = time.monotonic()
    with pytest.raises(UnitTimeout, match=r"slow_kind.*--claim-timeout 0\.2 s"):
        trainer.memo({"kind": "slow_kind"}, slow)
    assert time.monotonic() - start < 2
    data = make_synthetic(2, 3, 8, 1, seed=0)
    fast = Trainer(ResultCache(tmp_path), timeout=60)
    assert fast(ModelConfig(d=8, d_qk=2), TrainConfig(steps=3, power_iters=10), data, 0).loss.shape == (4,)
