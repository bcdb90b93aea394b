"""The result store reads back only what it can vouch for: intact, sealed with its key, a regular file of bounded size.

A damaged entry never raises out of the decoder: it is recomputed, counted and named. An entry
written by someone without the cache's key (re-encoded with the store's own encoder) fails
authentication and is recomputed and counted. Figures cached in the same way cannot be swapped.
"""

from __future__ import annotations

import io
import os
import stat
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from toys import K

from claimcheck.decide.record import Curve
from claimcheck.report.figures import cached_group, figure_key
from claimcheck.store import cachefile
from claimcheck.store.cache import ResultCache, decode, encode, open_entry

PARTS = {"claim": "C2", "seed": 3, "d": 8, "steps": 200}


def _trajectory() -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """Return a result shaped like a training run's: a loss curve, step sizes, a rank, and its config."""
    steps = np.arange(200)
    arrays: dict[str, np.ndarray] = {
        "loss": np.exp(-steps / 50.0) + 0.01,
        "lr": np.full(4, 0.05, dtype=np.float32),
        "rank": np.array([8, 8, 7, 7], dtype=np.int64),
    }
    return arrays, {"config": {"d": 8, "d_qk": 2, "beta": 0.5, "steps": 200}, "seed": 3, "diverged": False}


def _entry(tmp_path: Path) -> tuple[ResultCache, str, bytes]:
    cache = ResultCache(tmp_path / "cache")
    cache.memo(K(PARTS), _trajectory)
    key = K(PARTS).digest
    return cache, key, cache.path(key).read_bytes()


def _flips(data: bytes) -> list[bytes]:
    out = []
    for i in range(len(data) * 8):
        b = bytearray(data)
        b[i // 8] ^= 1 << (i % 8)
        out.append(bytes(b))
    return out


def test_every_single_bit_flip_and_truncation_of_an_entry_decodes_to_none_or_the_result() -> None:
    arrays, meta = _trajectory()
    key = K(PARTS).digest
    payload = encode(arrays, meta, key)
    start = time.monotonic()
    damaged = _flips(payload) + [payload[:n] for n in range(len(payload))]
    wrong = 0
    for data in damaged:
        hit = decode(data, key)  # must not raise
        if hit is not None and (hit[1] != meta or any(not np.array_equal(hit[0][k], arrays[k]) for k in arrays)):
            wrong += 1
    assert wrong == 0
    print(
        f"{len(payload) * 8} flips and {len(payload)} truncations of a {len(payload)} byte entry decoded in "
        f"{time.monotonic() - start:.1f} s"
    )


def test_every_single_bit_flip_of_a_sealed_entry_is_refused_or_intact(tmp_path: Path) -> None:
    _, key, sealed = _entry(tmp_path)
    secret = cachefile.cache_secret(tmp_path / "cache")
    meta = _trajectory()[1]
    statuses: dict[str, int] = {}
    for data in _flips(sealed) + [sealed[:n] for n in range(0, len(sealed), 7)]:
        hit, status = open_entry(data, key, secret)
        statuses[status] = statuses.get(status, 0) + 1
        assert (hit is None) == (status != "ok")
        assert hit is None or hit[1] == meta
    assert statuses.get("ok", 0) == 0, statuses  # the seal covers every byte


def test_a_damaged_entry_is_recomputed_counted_and_named(tmp_path: Path) -> None:
    cache, key, data = _entry(tmp_path)
    path = cache.path(key)
    path.write_bytes(data[: len(data) // 2])
    calls = []

    def compute() -> tuple[dict[str, np.ndarray], dict[str, object]]:
        calls.append(1)
        return _trajectory()

    again = ResultCache(tmp_path / "cache")
    with pytest.warns(UserWarning, match=str(path)):
        again.memo(K(PARTS), compute)
    assert calls == [1] and again.counts.corrupt == 1


def test_an_entry_re_encoded_without_the_caches_key_is_recomputed_and_counted_unauthenticated(tmp_path: Path) -> None:
    cache, key, _ = _entry(tmp_path)
    arrays, meta = _trajectory()
    forged = {**arrays, "loss": arrays["loss"] * 50}
    cache.path(key).write_bytes(encode(forged, meta, key))  # the right key and checksum, altered losses
    again = ResultCache(tmp_path / "cache")
    with pytest.warns(UserWarning, match="authenticat"):
        out, _ = again.memo(K(PARTS), _trajectory)
    assert np.array_equal(out["loss"], arrays["loss"])
    assert again.counts.unauthenticated == 1 and again.counts.cached == 0 and again.counts.computed == 1


def test_the_caches_key_is_made_once_and_readable_by_its_owner_only(tmp_path: Path) -> None:
    _entry(tmp_path)
    key_file = tmp_path / "cache" / cachefile.KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    before = key_file.read_bytes()
    _entry(tmp_path)
    assert key_file.read_bytes() == before


def test_a_fifo_in_place_of_an_entry_is_not_read_and_is_replaced(tmp_path: Path) -> None:
    cache, key, _ = _entry(tmp_path)
    path = cache.path(key)
    path.unlink()
    os.mkfifo(path)
    again = ResultCache(tmp_path / "cache")
    with pytest.warns(UserWarning, match="not a regular file"):
        again.memo(K(PARTS), _trajectory)  # a blocking read would hang here
    assert again.counts.corrupt == 1 and path.is_file()


def test_a_symbolic_link_to_dev_zero_in_place_of_an_entry_is_not_followed(tmp_path: Path) -> None:
    cache, key, _ = _entry(tmp_path)
    path = cache.path(key)
    path.unlink()
    path.symlink_to("/dev/zero")
    again = ResultCache(tmp_path / "cache")
    with pytest.warns(UserWarning, match="symbolic link"):
        again.memo(K(PARTS), _trajectory)
    assert again.counts.corrupt == 1 and not path.is_symlink()


def test_a_file_past_the_size_cap_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.npz"
    with open(big, "wb") as f:
        f.truncate(cachefile.MAX_BYTES + 1)  # sparse: no disk used
    with pytest.raises(cachefile.NotReadable, match="256 MiB"):
        cachefile.read_regular(big)


def test_another_figures_png_copied_under_a_figures_name_is_drawn_again(tmp_path: Path) -> None:
    folder = tmp_path / "figures"
    a = [Curve(name="loss", y=[1.0, 0.5, 0.25])]
    b = [Curve(name="loss", y=[1.0, 2.0, 4.0])]
    png_a, _ = cached_group("C1 figure", a, cache=folder)
    png_b, _ = cached_group("C2 figure", b, cache=folder)
    entry_a, entry_b = (folder / f"{figure_key(t, c, None)}.png" for t, c in (("C1 figure", a), ("C2 figure", b)))
    entry_b.write_bytes(entry_a.read_bytes())  # C1's figure filed under C2's name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again, _ = cached_group("C2 figure", b, cache=folder)
    assert again == png_b != png_a


def test_the_decoder_reads_every_array_as_np_load_does() -> None:
    """The fast header path (no literal_eval) and numpy's own reader (structured dtypes) give np.load's arrays."""
    arrays: dict[str, np.ndarray] = {
        "f8": np.linspace(0, 1, 7),
        "f32_2d": np.arange(12, dtype=np.float32).reshape(3, 4),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "big_endian": np.arange(5, dtype=">i4"),
        "bool": np.array([True, False]),
        "complex": np.array([1 + 2j]),
        "empty": np.zeros((0, 3)),
        "scalar": np.array(2.5),
        "text": np.array("naïve"),
        "structured": np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
    }
    key = K(PARTS).digest
    hit = decode(encode(arrays, {"m": 1}, key), key)
    assert hit is not None
    with np.load(io.BytesIO(encode(arrays, {"m": 1}, key)), allow_pickle=False) as z:
        for name, want in arrays.items():
            got, ref = hit[0][name], z[f"a_{name}"]
            assert got.dtype == ref.dtype == want.dtype and got.shape == ref.shape, name
            assert got.tobytes(order="A") == ref.tobytes(order="A") and got.flags.f_contiguous == ref.flags.f_contiguous
            assert got.flags.writeable, name


def test_an_entry_holding_an_object_array_is_not_read() -> None:
    """An archive whose member needs pickle (written by someone else) decodes to None, never unpickled."""
    buf = io.BytesIO()
    np.savez(buf, a_x=np.array([{"a": 1}], dtype=object), meta=np.array("{}"), key=np.array("k"), checksum=np.array(""))
    assert decode(buf.getvalue(), "k") is None
