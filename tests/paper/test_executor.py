"""Where the engine computes: the options that choose it, and the local executor (Ray itself: test_ray.py)."""

from __future__ import annotations

import sys

import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.executor import INSTALL, LOCAL, Executor, split
from claimcheck.pytest.options import parse_executor, resolve_ray_address
from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig
from qin2025.engine.trainer import Trainer

CLAIM = """
import pytest

@pytest.mark.claim("T1", "a toy value stays below one", "toy")
def test_value(claim_record, claim_seed):
    claim_record.check("value", 0.5, "<=", 1.0, label="toy")
    claim_record.check("value", 2.0, "<=", 1.0, control="shifted", label="toy")
"""


def test_split_cuts_positions_into_near_equal_consecutive_chunks() -> None:
    assert split(range(7), 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert split([4, 9], 5) == [[4], [9]]  # never an empty chunk
    assert split(range(3), 1) == [[0, 1, 2]]


def test_the_local_executor_runs_tasks_here_in_order() -> None:
    assert LOCAL.map([lambda: 1, lambda: 2]) == [1, 2]
    assert LOCAL.slots == 1 and LOCAL.address == "" and LOCAL.describe() == "local (this process)"


class Recording(Executor):
    """Run tasks here, but say it has three slots and remember every batch of tasks it was given."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    @property
    def slots(self) -> int:
        return 3

    def map(self, tasks, name="task"):  # type: ignore[no-untyped-def]
        self.batches.append(len(tasks))
        return super().map(tasks, name)


def test_a_batch_is_spread_over_the_executors_slots_and_gives_one_batchs_numbers() -> None:
    cfg = ModelConfig(d=16, d_qk=4, d_out=1)
    runs = [Run(cfg, TrainConfig(steps=20), make_synthetic(2, 4, 16, 1, s), s) for s in range(5)]
    spread = Recording()
    got = Trainer(ResultCache(None), executor=spread).batch(runs)
    want = Trainer(ResultCache(None)).batch(runs)
    assert spread.batches == [3]  # five runs as three batches, submitted together
    for a, b in zip(got, want, strict=True):
        assert a.loss.tobytes() == b.loss.tobytes() and a.lambda_max == b.lambda_max


def test_an_unknown_executor_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigError, match=r"--claim-executor: expected one of local, ray, got 'dask'"):
        parse_executor("dask", "--claim-executor")


def test_ray_without_ray_installed_is_a_usage_error_naming_the_install(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    pytester.makepyfile(test_toy=CLAIM)
    result = pytester.runpytest("--claim-executor", "ray")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--claim-executor ray: Ray is not installed" in result.stderr.str()
    assert INSTALL in result.stderr.str()


def test_the_ray_address_comes_from_the_option_then_ray_address(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "head:6379")
    assert resolve_ray_address("other:6379", "--claim-ray-address") == ("other:6379", "--claim-ray-address")
    assert resolve_ray_address("", "ini claim_ray_address") == ("head:6379", "$RAY_ADDRESS")
    monkeypatch.delenv("RAY_ADDRESS")
    assert resolve_ray_address(None, "--claim-ray-address") == ("", "")  # an embedded local Ray
