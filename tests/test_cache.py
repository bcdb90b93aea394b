"""The result cache: keys, round trips, corruption, concurrency, and the plugin's counts."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import numpy as np
import pytest

from claimcheck.cache import ResultCache, Trainer, cache_key, decode, encode, train_key
from claimcheck.data import make_synthetic
from claimcheck.model import ModelConfig
from claimcheck.train import TrainConfig, train

MODEL = ModelConfig(d=8, d_qk=2)
TRAIN = TrainConfig(steps=5, power_iters=20)


def test_key_changes_with_everything_that_decides_the_result() -> None:
    data = make_synthetic(2, 3, 8, 1, seed=0)
    base = cache_key(train_key(MODEL, TRAIN, data, 0))
    variants = [
        train_key(ModelConfig(d=8, d_qk=2, beta=0.5), TRAIN, data, 0),
        train_key(MODEL, TrainConfig(steps=6, power_iters=20), data, 0),
        train_key(MODEL, TrainConfig(steps=5, power_iters=20, dtype="float32"), data, 0),
        train_key(MODEL, TRAIN, make_synthetic(2, 3, 8, 1, seed=1), 0),
        train_key(MODEL, TRAIN, data, 1),
    ]
    keys = {cache_key(v) for v in variants}
    assert len(keys) == len(variants) and base not in keys
    assert cache_key(train_key(MODEL, TRAIN, data, 0)) == base


def test_a_cached_trajectory_equals_the_computed_one(tmp_path: Path) -> None:
    data = make_synthetic(2, 3, 8, 1, seed=0)
    trainer = Trainer(ResultCache(tmp_path))
    first = trainer(MODEL, TRAIN, data, 3)
    second = trainer(MODEL, TRAIN, data, 3)
    direct = train(MODEL, TRAIN, data, 3)
    for t in (first, second):
        np.testing.assert_array_equal(t.loss, direct.loss)
        np.testing.assert_array_equal(t.sigma_min, direct.sigma_min)
        assert (t.lr, t.lambda_max, t.model, t.diverged_at) == (direct.lr, direct.lambda_max, direct.model, None)
    assert (trainer.counts.computed, trainer.counts.cached) == (1, 1)


def test_entries_round_trip_and_reject_tampering() -> None:
    blob = encode({"a": np.arange(3.0)}, {"x": 1})
    arrays, meta = decode(blob)  # type: ignore[misc]
    assert meta == {"x": 1} and arrays["a"].tolist() == [0.0, 1.0, 2.0]
    assert decode(blob.replace(b"\x00\x00\x00\x00\x00\x00\xf0?", b"\x00\x00\x00\x00\x00\x00\x00@")) is None
    assert decode(b"not an npz") is None


def test_an_entry_holding_pickled_objects_is_not_loaded() -> None:
    import io

    buf = io.BytesIO()
    np.savez(buf, a_x=np.array([{"evil": 1}], dtype=object), meta=np.array("{}"), checksum=np.array(""))
    assert decode(buf.getvalue()) is None


def test_a_corrupt_entry_is_recomputed(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    calls = []

    def compute() -> tuple[dict[str, np.ndarray], dict[str, int]]:
        calls.append(1)
        return {"v": np.ones(2)}, {"n": len(calls)}

    cache.memo({"k": 1}, compute)
    path = next(tmp_path.rglob("*.npz"))
    path.write_bytes(path.read_bytes()[:40])
    _, meta = cache.memo({"k": 1}, compute)
    assert meta == {"n": 2} and cache.counts.corrupt == 1 and cache.counts.computed == 2


def _slow_memo(root: str, out: str) -> None:
    def compute() -> tuple[dict[str, np.ndarray], dict[str, str]]:
        with open(out, "a") as f:
            f.write("computed\n")
        time.sleep(0.5)
        return {"v": np.ones(1)}, {}

    ResultCache(Path(root)).memo({"shared": True}, compute)


def test_concurrent_processes_compute_a_result_once(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_slow_memo, args=(str(tmp_path / "c"), str(log))) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    assert log.read_text() == "computed\n"


def test_disabled_cache_always_computes() -> None:
    cache = ResultCache(None)
    cache.memo({"k": 1}, lambda: ({}, {}))
    cache.memo({"k": 1}, lambda: ({}, {}))
    assert cache.counts.computed == 2 and cache.clear() == 0


CLAIM = """
import pytest
from claimcheck.checks import record_linear_rate
from claimcheck.data import make_synthetic
from claimcheck.model import ModelConfig
from claimcheck.train import TrainConfig


@pytest.mark.claim("T1", "toy", "toy")
def test_rate(claim_record, claim_seed, claim_train):
    data = make_synthetic(2, 4, 16, 1, 0)
    traj = claim_train(ModelConfig(d=16, d_qk=4), TrainConfig(steps=20, power_iters=20), data, claim_seed)
    claim_record.check("final loss", traj.loss[-1], ">=", 0.0)
"""


def test_report_counts_computed_and_cached_results(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_t=CLAIM)
    pytester.runpytest("--claim-report", "--claim-cache-dir=cc")
    assert "training results computed: 3" in (pytester.path / "reports" / "claim-report.md").read_text()
    pytester.runpytest("--claim-report", "--claim-cache-dir=cc")
    assert "read from the cache: 3" in (pytester.path / "reports" / "claim-report.md").read_text()
    pytester.runpytest("--claim-report", "--claim-cache-dir=cc", "--claim-cache=off")
    assert "training results computed: 3" in (pytester.path / "reports" / "claim-report.md").read_text()
    pytester.runpytest("--claim-report", "--claim-cache-dir=cc", "--claim-cache=clear")
    assert "training results computed: 3" in (pytester.path / "reports" / "claim-report.md").read_text()


def test_bad_cache_mode_names_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_t=CLAIM)
    result = pytester.runpytest("--claim-cache=maybe")
    result.stderr.fnmatch_lines(["*--claim-cache: expected one of on, off, clear, got 'maybe'*"])
