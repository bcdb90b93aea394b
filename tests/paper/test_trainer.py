"""The result cache: keys, round trips, corruption, concurrency, and the plugin's counts."""

from __future__ import annotations

import importlib
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from toys import K

from claimcheck.errors import ConfigError
from claimcheck.store.cache import ResultCache, decode, encode
from qin2025.data import make_synthetic
from qin2025.engine.batched import Run
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig, Trajectory, train
from qin2025.engine.trainer import Trainer, train_key

MODEL = ModelConfig(d=8, d_qk=2)
TRAIN = TrainConfig(steps=5, power_iters=20)


def test_key_changes_with_everything_that_decides_the_result() -> None:
    data = make_synthetic(2, 3, 8, 1, seed=0)
    trainer = Trainer(ResultCache(None))
    base = trainer.key(train_key(MODEL, TRAIN, data, 0), train).digest
    variants = [
        train_key(ModelConfig(d=8, d_qk=2, beta=0.5), TRAIN, data, 0),
        train_key(MODEL, TrainConfig(steps=6, power_iters=20), data, 0),
        train_key(MODEL, TrainConfig(steps=5, power_iters=20, dtype="float32"), data, 0),
        train_key(MODEL, TRAIN, make_synthetic(2, 3, 8, 1, seed=1), 0),
        train_key(MODEL, TRAIN, data, 1),
    ]
    keys = {trainer.key(v, train).digest for v in variants}
    assert len(keys) == len(variants) and base not in keys
    assert trainer.key(train_key(MODEL, TRAIN, data, 0), train).digest == base


def test_key_changes_with_numpys_version(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = train_key(MODEL, TRAIN, make_synthetic(2, 3, 8, 1, seed=0), 0)
    base = Trainer(ResultCache(None)).key(parts, train).digest
    monkeypatch.setattr(np, "__version__", "0.0.1")  # cached measurements are numpy's numbers (C3, C7)
    assert Trainer(ResultCache(None)).key(parts, train).digest != base


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

    cache.memo(K({"k": 1}), compute)
    path = next(tmp_path.rglob("*.npz"))
    path.write_bytes(path.read_bytes()[:40])
    _, meta = cache.memo(K({"k": 1}), compute)
    assert meta == {"n": 2} and cache.counts.corrupt == 1 and cache.counts.computed == 2


def _slow_memo(root: str, out: str) -> None:
    def compute() -> tuple[dict[str, np.ndarray], dict[str, str]]:
        with open(out, "a") as f:
            f.write("computed\n")
        time.sleep(0.5)
        return {"v": np.ones(1)}, {}

    ResultCache(Path(root)).memo(K({"shared": True}), compute)


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
    cache.memo(K({"k": 1}), lambda: ({}, {}))
    cache.memo(K({"k": 1}), lambda: ({}, {}))
    assert cache.counts.computed == 2 and cache.clear() == 0


def _runs(seeds: tuple[int, ...] = (0, 1, 2)) -> list[Run]:
    data = make_synthetic(2, 3, 8, 1, seed=0)
    return [Run(ModelConfig(d=8, d_qk=2, beta=0.5 * s), TRAIN, data, s) for s in seeds]


def _assert_same(got: Trajectory, want: Trajectory) -> None:
    for name in ("loss", "sigma_steps", "sigma_min", "sigma_max"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert (got.lr, got.lambda_max, got.model, got.train, got.seed) == (
        want.lr,
        want.lambda_max,
        want.model,
        want.train,
        want.seed,
    )


def test_a_batch_fills_the_entries_one_at_a_time_training_reads(tmp_path: Path) -> None:
    runs = _runs()
    batched = Trainer(ResultCache(tmp_path)).batch(runs)
    alone = Trainer(ResultCache(tmp_path))
    for run, got in zip(runs, batched, strict=True):
        _assert_same(alone(run.model, run.train, run.data, run.seed), got)
        want = train(run.model, run.train, run.data, run.seed)
        np.testing.assert_allclose(got.loss, want.loss, rtol=1e-10, atol=0)  # bits at the claims' shapes
    assert (alone.counts.computed, alone.counts.cached) == (0, len(runs))


def test_a_batch_stores_each_run_under_the_key_a_single_call_uses(tmp_path: Path) -> None:
    runs = _runs()
    Trainer(ResultCache(tmp_path / "batch")).batch(runs)
    for run in runs:
        Trainer(ResultCache(tmp_path / "alone"))(run.model, run.train, run.data, run.seed)
    names = [{p.name for p in (tmp_path / d).rglob("*.npz")} for d in ("batch", "alone")]
    assert names[0] == names[1] and len(names[0]) == len(runs)


def test_a_batch_trains_only_the_runs_missing_from_the_cache(tmp_path: Path) -> None:
    runs = _runs((0, 1, 2, 3))
    trainer = Trainer(ResultCache(tmp_path))
    first = trainer(runs[1].model, runs[1].train, runs[1].data, runs[1].seed)
    batched = trainer.batch(runs)
    _assert_same(batched[1], first)
    assert (trainer.counts.computed, trainer.counts.cached) == (1 + 3, 1)
    again = Trainer(ResultCache(tmp_path))
    for got, want in zip(again.batch(runs), batched, strict=True):
        _assert_same(got, want)
    assert (again.counts.computed, again.counts.cached, again.counts.corrupt) == (0, 4, 0)


def test_a_run_repeated_in_a_batch_is_trained_once(tmp_path: Path) -> None:
    run = _runs((0,))[0]
    trainer = Trainer(ResultCache(tmp_path))
    twice = trainer.batch([run, run])
    _assert_same(twice[0], twice[1])
    assert (trainer.counts.computed, trainer.counts.cached) == (1, 1)


def test_a_corrupt_entry_in_a_batch_is_retrained(tmp_path: Path) -> None:
    runs = _runs()
    Trainer(ResultCache(tmp_path)).batch(runs)
    key = Trainer(ResultCache(None)).key(train_key(runs[2].model, runs[2].train, runs[2].data, 2), train)
    path = ResultCache(tmp_path).path(key.digest)
    path.write_bytes(path.read_bytes()[:40])
    trainer = Trainer(ResultCache(tmp_path))
    assert np.isfinite(trainer.batch(runs)[2].loss).all()
    assert (trainer.counts.computed, trainer.counts.cached, trainer.counts.corrupt) == (1, 2, 1)


def test_a_batch_without_a_cache_trains_every_run() -> None:
    trainer = Trainer(ResultCache(None))
    trainer.batch(_runs())
    assert (trainer.counts.computed, trainer.counts.cached) == (3, 0)


def test_a_batch_of_different_shapes_is_refused_even_when_cached(tmp_path: Path) -> None:
    runs = _runs((0,))
    other = Run(ModelConfig(d=8, d_qk=4), TRAIN, runs[0].data, 1)
    trainer = Trainer(ResultCache(tmp_path))
    trainer.batch(runs)
    trainer(other.model, other.train, other.data, other.seed)
    with pytest.raises(ConfigError, match=r"ModelConfig\.d_qk"):
        trainer.batch([*runs, other])


def test_batched_lambda_max_shares_the_entries_of_lambda_max(tmp_path: Path) -> None:
    runs = _runs()
    trainer = Trainer(ResultCache(tmp_path))
    alone = trainer.lambda_max(runs[0].model, runs[0].data, runs[0].seed)
    lambdas = trainer.lambda_maxes(runs)
    assert lambdas[0] == alone
    assert lambdas == [Trainer(ResultCache(None)).lambda_max(r.model, r.data, r.seed) for r in runs]
    assert (trainer.counts.computed, trainer.counts.cached) == (1 + 2, 1)


def _slow_batch(root: str, out: str, names: list[str]) -> None:
    def compute(missing: list[int]) -> list[tuple[dict[str, np.ndarray], dict[str, str]]]:
        with open(out, "a") as f:
            f.writelines(f"{names[i]}\n" for i in missing)
        time.sleep(0.3)
        return [({"v": np.ones(1)}, {"name": names[i]}) for i in missing]

    results = ResultCache(Path(root)).memo_many([K({"name": n}) for n in names], compute)
    assert [meta["name"] for _, meta in results] == names


def test_concurrent_overlapping_batches_compute_each_result_once(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    ctx = multiprocessing.get_context("fork")
    batches = [["a", "b"], ["b", "c"], ["c", "a"], ["c", "b", "a"]]
    procs = [ctx.Process(target=_slow_batch, args=(str(tmp_path / "c"), str(log), b)) for b in batches]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0] * len(batches)
    assert sorted(log.read_text().split()) == ["a", "b", "c"]


CLAIM = """
import pytest
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig


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


CALLED = """
import numpy as np

CALLS = []


def measure(model, size):
    CALLS.append(size)
    return {"values": np.arange(float(size))}
"""


def _claim_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Write two claim-like modules, each with its own ``measure``, and import them afresh."""
    monkeypatch.syspath_prepend(str(tmp_path))
    modules = []
    for name in ("claim_a", "claim_b"):
        (tmp_path / f"{name}.py").write_text(CALLED)
        monkeypatch.delitem(sys.modules, name, raising=False)
        modules.append(importlib.import_module(name))
    return modules


def test_a_call_is_computed_once_per_code_and_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = _claim_modules(tmp_path, monkeypatch)
    trainer = Trainer(ResultCache(tmp_path / "cache"))
    first = trainer.call(a.measure, size=3)
    again = trainer.call(a.measure, size=3)
    other = trainer.call(a.measure, size=4)
    np.testing.assert_array_equal(first["values"], again["values"])
    assert other["values"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert a.CALLS == [3, 4]
    assert (trainer.counts.computed, trainer.counts.cached) == (2, 1)


def test_editing_one_claim_module_recomputes_only_its_own_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from qin2025.engine.codeid import module_identity

    a, b = _claim_modules(tmp_path, monkeypatch)
    Trainer(ResultCache(tmp_path / "cache")).call(a.measure, size=3)
    Trainer(ResultCache(tmp_path / "cache")).call(b.measure, size=3)
    (tmp_path / "claim_a.py").write_text(CALLED + "\n# edited\n")
    module_identity.cache_clear()  # a new process reads the edited file
    again = Trainer(ResultCache(tmp_path / "cache"))
    again.call(a.measure, size=3)
    again.call(b.measure, size=3)
    assert (again.counts.computed, again.counts.cached) == (1, 1)
    assert a.CALLS == [3, 3] and b.CALLS == [3]


def test_a_call_is_keyed_by_the_engine_and_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qin2025.engine import trainer as trainer_module

    a, _ = _claim_modules(tmp_path, monkeypatch)
    Trainer(ResultCache(tmp_path / "cache")).call(a.measure, size=2)
    monkeypatch.setattr(trainer_module, "engine_identity", lambda: {"engine": "other", "code": "other"})
    moved = Trainer(ResultCache(tmp_path / "cache"))
    moved.call(a.measure, size=2)
    assert moved.counts.computed == 1


# --- the GPU path on the CPU: a device string other than "cpu" that resolves to the CPU --------------

DEVICE = "cpu:0"


@pytest.fixture
def moves(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every device a tensor is moved to with ``Tensor.to`` (as written by the caller)."""
    seen: list[str] = []
    real = torch.Tensor.to

    def to(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        for a in (*args, kwargs.get("device")):
            if isinstance(a, (str, torch.device)):
                seen.append(str(a))
        return real(self, *args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(torch.Tensor, "to", to)
    return seen


def test_every_entry_point_of_the_engine_moves_its_tensors_to_the_configured_device(moves: list[str]) -> None:
    from qin2025.c1.linear_rate import sharpness_along

    runs = _runs()
    on, plain = Trainer(ResultCache(None), device=DEVICE), Trainer(ResultCache(None))
    alone = on(runs[0].model, runs[0].train, runs[0].data, runs[0].seed)
    assert DEVICE in moves and alone.train["device"] == DEVICE
    _assert_same_numbers(alone, plain(runs[0].model, runs[0].train, runs[0].data, runs[0].seed))
    moves.clear()
    batched = on.batch(runs)
    assert DEVICE in moves and {t.train["device"] for t in batched} == {DEVICE}
    for got, want in zip(batched, plain.batch(runs), strict=True):
        _assert_same_numbers(got, want)
    for name, measure in {
        "lambda_max": lambda t: t.lambda_max(runs[0].model, runs[0].data, runs[0].seed),
        "lambda_maxes": lambda t: t.lambda_maxes(runs),
        "sharpness": lambda t: sharpness_along(t, alone, runs[0].model, runs[0].data, (2, 4)),
    }.items():
        moves.clear()
        assert measure(on) == measure(plain), name
        assert DEVICE in moves, name


def _assert_same_numbers(got: Trajectory, want: Trajectory) -> None:
    for name in ("loss", "sigma_min", "sigma_max"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert (got.lr, got.lambda_max) == (want.lr, want.lambda_max)


def test_a_device_of_the_same_type_reads_the_same_entries(tmp_path: Path) -> None:
    runs = _runs()
    Trainer(ResultCache(tmp_path)).batch(runs)
    other = Trainer(ResultCache(tmp_path), device=DEVICE)
    other.batch(runs)
    assert (other.counts.computed, other.counts.cached) == (0, len(runs))
