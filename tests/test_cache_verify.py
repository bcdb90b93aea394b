"""--claim-cache-verify: a seeded fraction of the cache's hits is recomputed and compared with what was read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from toys import K

from claimcheck.store.cache import SEAL, CacheMismatch, ResultCache, encode
from claimcheck.store.cachefile import seal


def _compute(value: float, calls: list[float]):  # type: ignore[no-untyped-def]
    def compute() -> tuple[dict[str, np.ndarray], dict[str, float]]:
        calls.append(value)
        return {"loss": np.full(3, value)}, {"value": value}

    return compute


def _plant(cache: ResultCache, inputs: dict[str, object], value: float) -> Path:
    """Write a forged entry under ``inputs``' key with the store's own encoder and the cache's own secret.

    Right name, checksum, key and seal: what a user who holds the cache's key (or a bug in the
    code that wrote it) can leave; only a recompute can tell it from an honest one.
    """
    key = K(inputs)
    path = cache.path(key.digest)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(seal(SEAL, encode({"loss": np.full(3, value)}, {"value": value}, key.digest), cache.secret()))
    return path


def test_without_verify_a_forged_entry_is_read_as_it_stands(tmp_path: Path) -> None:
    cache, calls = ResultCache(tmp_path), []
    _plant(cache, {"k": 1}, 9.0)
    arrays, _ = cache.memo(K({"k": 1}), _compute(1.0, calls))
    assert arrays["loss"][0] == 9.0 and calls == []  # what verify exists for


def test_a_forged_entry_is_an_error_naming_the_entry_and_its_key_and_is_dropped(tmp_path: Path) -> None:
    path = _plant(ResultCache(tmp_path), {"claim": "C2", "seed": 7}, 9.0)
    cache, calls = ResultCache(tmp_path, verify=1.0), []
    with pytest.raises(CacheMismatch) as err:
        cache.memo(K({"claim": "C2", "seed": 7}), _compute(1.0, calls))
    text = str(err.value)
    assert str(path) in text and '"seed": 7' in text and "'loss' differs" in text and "9.0" in text
    assert not path.exists() and calls == [1.0]
    again = ResultCache(tmp_path)
    assert again.memo(K({"claim": "C2", "seed": 7}), _compute(1.0, calls))[0]["loss"][0] == 1.0
    assert again.counts.computed == 1  # the next run recomputes it


def test_an_honest_entry_verifies_bit_for_bit_and_is_counted(tmp_path: Path) -> None:
    calls: list[float] = []
    ResultCache(tmp_path).memo(K({"k": 1}), _compute(1.0, calls))
    cache = ResultCache(tmp_path, verify=1.0)
    cache.memo(K({"k": 1}), _compute(1.0, calls))
    assert (cache.counts.cached, cache.counts.verified, calls) == (1, 1, [1.0, 1.0])


def test_a_batch_verifies_its_chosen_hits_in_one_more_call(tmp_path: Path) -> None:
    calls: list[list[int]] = []

    def compute(missing: list[int]) -> list[tuple[dict[str, np.ndarray], dict[str, int]]]:
        calls.append(missing)
        return [({"v": np.array([i])}, {"i": i}) for i in missing]

    keys = [K({"k": i}) for i in range(4)]
    ResultCache(tmp_path).memo_many(keys[:2], compute)
    cache = ResultCache(tmp_path, verify=1.0)
    cache.memo_many(keys, compute)
    assert calls == [[0, 1], [2, 3], [0, 1]] and cache.counts.verified == 2
    _plant(cache, {"k": 3}, 5.0)
    with pytest.raises(CacheMismatch, match="differs from its recompute"):
        ResultCache(tmp_path, verify=1.0).memo_many(keys, compute)


def test_the_fraction_verified_is_seeded_and_near_its_value(tmp_path: Path) -> None:
    digests = [K({"k": i}).digest for i in range(2000)]
    tenth = ResultCache(tmp_path, verify=0.1, verify_seed=0)
    chosen = {d for d in digests if tenth._chosen(d)}
    assert 150 <= len(chosen) <= 250
    assert chosen == {d for d in digests if ResultCache(tmp_path, verify=0.1, verify_seed=0)._chosen(d)}
    assert chosen != {d for d in digests if ResultCache(tmp_path, verify=0.1, verify_seed=1)._chosen(d)}
    assert not any(ResultCache(tmp_path)._chosen(d) for d in digests[:50])


def test_a_bad_fraction_names_the_option(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--claim-cache-verify=1.5")
    result.stderr.fnmatch_lines(["*--claim-cache-verify: expected a fraction from 0 to 1*got '1.5'*"])


def test_the_libraries_own_kernel_choice_is_part_of_the_numerics_a_key_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    """MKL picks its kernels by itself (MKL_ENABLE_INSTRUCTIONS): a rerun under it must not read the plain run's
    entries as its own, and a run that sets none of the variables keeps the line (and keys) it had."""
    from claimcheck.provenance.environment import KERNEL_VARIABLES, key_numerics

    for v in KERNEL_VARIABLES:
        monkeypatch.delenv(v, raising=False)
    plain = key_numerics()
    monkeypatch.setenv("MKL_ENABLE_INSTRUCTIONS", "AVX2")
    chosen = key_numerics()
    assert "; MKL_ENABLE_INSTRUCTIONS=AVX2" in chosen and chosen.replace("; MKL_ENABLE_INSTRUCTIONS=AVX2", "") == plain
