"""The result cache under faults: an entry filed under another key, a full disk, a folder in the way."""

from __future__ import annotations

import errno
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from toys import K

import claimcheck.store.cache as store
from claimcheck.store.cache import ResultCache


def _compute(value: float, calls: list[float]):  # type: ignore[no-untyped-def]
    def compute() -> tuple[dict[str, np.ndarray], dict[str, float]]:
        calls.append(value)
        return {"v": np.full(3, value)}, {"value": value}

    return compute


def test_an_entry_filed_under_another_keys_name_is_recomputed_and_counted_corrupt(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    calls: list[float] = []
    cache.memo(K({"k": 1}), _compute(1.0, calls))
    cache.memo(K({"k": 2}), _compute(2.0, calls))
    shutil.copyfile(cache.path(K({"k": 1}).digest), cache.path(K({"k": 2}).digest))  # a valid entry, wrong name
    arrays, meta = cache.memo(K({"k": 2}), _compute(2.0, calls))
    assert meta == {"value": 2.0} and arrays["v"].tolist() == [2.0] * 3
    assert calls == [1.0, 2.0, 2.0] and cache.counts.corrupt == 1
    again = ResultCache(tmp_path)  # the recomputed entry is stored under its own key
    assert again.memo(K({"k": 2}), _compute(2.0, calls))[1] == {"value": 2.0} and again.counts.cached == 1


def test_a_batch_reading_an_entry_of_another_key_recomputes_it(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    parts = [K({"k": i}) for i in range(3)]

    def compute(missing: list[int]) -> list[tuple[dict[str, np.ndarray], dict[str, int]]]:
        return [({"v": np.array([i])}, {"i": i}) for i in missing]

    cache.memo_many(parts, compute)
    shutil.copyfile(cache.path(parts[0].digest), cache.path(parts[2].digest))
    out = cache.memo_many(parts, compute)
    assert [meta["i"] for _, meta in out] == [0, 1, 2]
    assert (cache.counts.corrupt, cache.counts.computed, cache.counts.cached) == (1, 4, 2)


def _full_disk(path: Path, data: bytes) -> None:
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


def test_a_full_disk_keeps_the_results_computed_and_warns_once_naming_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "write_atomic", _full_disk)
    cache = ResultCache(tmp_path)
    calls: list[float] = []
    with pytest.warns(store.CacheWriteWarning) as caught:
        first = cache.memo(K({"k": 1}), _compute(1.0, calls))
        second = cache.memo(K({"k": 2}), _compute(2.0, calls))
        batch = cache.memo_many([K({"k": 3})], lambda missing: [({"v": np.ones(1)}, {"value": 3.0})])
    assert first[1] == {"value": 1.0} and second[1] == {"value": 2.0} and batch[0][1] == {"value": 3.0}
    assert len(caught) == 1  # warned once
    message = str(caught[0].message)
    assert str(cache.path(K({"k": 1}).digest)) in message and "No space left on device" in message
    assert cache.counts.computed == 3 and cache.counts.unsaved == 3


def test_a_cache_folder_that_cannot_hold_an_entry_computes_without_it(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    key = K({"k": 1}).digest
    (tmp_path / key[:2]).write_text("a file where the entry's folder belongs")
    calls: list[float] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, meta = cache.memo(K({"k": 1}), _compute(1.0, calls))
    assert meta == {"value": 1.0} and calls == [1.0]
    assert any(key[:2] in str(w.message) for w in caught if issubclass(w.category, store.CacheWriteWarning))


CLAIM = """
import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


def expensive(x):
    return {"value": [x * 0.25]}


@CLAIM
def test_claim(claim_record, claim_seed, claim_cache):
    claim_record.check("toy statistic", float(claim_cache(expensive, x=claim_seed)["value"][0]), "<=", 100.0)


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 200.0, "<=", 100.0, control="toy control")
"""

FULL_DISK = """
import errno

import claimcheck.store.cache

REAL = claimcheck.store.cache.write_atomic


def full(path, data):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


def pytest_configure(config):
    claimcheck.store.cache.write_atomic = full


def pytest_unconfigure(config):
    claimcheck.store.cache.write_atomic = REAL
"""


def test_a_full_disk_under_the_cache_does_not_turn_a_claim_into_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=CLAIM)
    pytester.makeconftest(FULL_DISK)
    result = pytester.runpytest("--claim-report", f"--claim-cache-dir={pytester.path / 'cache'}")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*CacheWriteWarning: cannot write the cache entry*cache/*No space left on device*"])
    result.stdout.fnmatch_lines(["C9: REPRODUCED*"])
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "results not saved to the cache: 3" in text
