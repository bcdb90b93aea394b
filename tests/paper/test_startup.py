"""Start-up checks: a bad seed, cache folder or model stops the session with a usage error, not a traceback."""

from __future__ import annotations

import os
import stat
import textwrap
from pathlib import Path

import pytest

from claimcheck.errors import ConfigError
from claimcheck.pytest.options import MAX_SEED, check_cache_dir, parse_cache_dir, parse_seed
from qin2025.engine.usermodel import load_model

CLAIM = """
import pytest

@pytest.mark.claim("T1", "a toy value stays below one", "toy")
def test_value(claim_record, claim_seed):
    claim_record.check("value", 0.5, "<=", 1.0, label="toy")
    claim_record.check("value", 2.0, "<=", 1.0, control="shifted", label="toy")
"""


def _usage_error(pytester: pytest.Pytester, *args: str) -> str:
    pytester.makepyfile(test_toy=CLAIM)
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    return result.stderr.str()


def _model_file(tmp_path: Path, body: str) -> str:
    path = tmp_path / "user_model.py"
    path.write_text(textwrap.dedent(body))
    return f"{path}:build"


# --- seeds -------------------------------------------------------------------------------------------


def test_a_seed_must_fit_in_32_bits() -> None:
    assert parse_seed("0", "--claim-seed") == 0 and parse_seed(str(MAX_SEED), "--claim-seed") == 2**32 - 1
    for bad in (2**32, 2**64 - 1, 2**70):
        with pytest.raises(ConfigError, match=r"--claim-seed: seed \d+ is too large; use a seed from 0 to 4294967295"):
            parse_seed(str(bad), "--claim-seed")


def test_a_huge_seed_is_a_usage_error_not_a_traceback(pytester: pytest.Pytester) -> None:
    err = _usage_error(pytester, "--claim-seed", str(2**64 - 1))
    assert "--claim-seed: seed 18446744073709551615 is too large" in err


# --- the cache folder -----------------------------------------------------------------------------


def _unwritable(tmp_path: Path) -> Path:
    """Return a folder this process cannot write in, or skip (root writes anywhere but /sys)."""
    if os.geteuid() != 0:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        return folder
    if os.path.isdir("/sys") and not os.access("/sys", os.W_OK | os.X_OK):
        return Path("/sys")
    try:
        check_cache_dir(Path("/sys/claimcheck-probe"), "probe")
    except ConfigError:
        return Path("/sys")
    pytest.skip("running as root with a writable /sys: no unwritable folder to test with")


def test_a_cache_folder_that_is_a_file_is_refused_naming_the_option(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match=r"--claim-cache-dir: .*cache is a file, not a folder; .*--claim-cache off"):
        parse_cache_dir(str(blocker), "--claim-cache-dir", tmp_path)
    with pytest.raises(ConfigError, match=r"ini claim_cache_dir: .*cache is a file, so the cache folder"):
        parse_cache_dir("cache/results", "ini claim_cache_dir", tmp_path)
    assert parse_cache_dir(str(blocker), "--claim-cache-dir", tmp_path, mode="off") == blocker  # no cache, no check


def test_an_unwritable_cache_folder_is_refused(tmp_path: Path) -> None:
    folder = _unwritable(tmp_path)
    with pytest.raises(ConfigError, match=r"--claim-cache-dir: cannot write in the cache folder .*; make it writable"):
        parse_cache_dir(str(folder / "results"), "--claim-cache-dir", tmp_path)


def test_a_new_cache_folder_is_created_and_an_unset_one_is_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parse_cache_dir("a/b", "--claim-cache-dir", tmp_path) == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir() and list((tmp_path / "a" / "b").iterdir()) == []  # probe removed
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg").write_text("a file where the user cache should be")
    assert parse_cache_dir("", "ini claim_cache_dir", tmp_path, mode="off") is None
    with pytest.raises(ConfigError, match=r"the default cache folder \(--claim-cache-dir is not set\): "):
        parse_cache_dir("", "ini claim_cache_dir", tmp_path)


@pytest.mark.parametrize("where", ["option", "ini"])
def test_a_bad_cache_folder_stops_the_session_at_start(pytester: pytest.Pytester, where: str) -> None:
    (pytester.path / "blocker").write_text("a file")
    if where == "ini":
        pytester.makeini("[pytest]\nclaim_cache_dir = blocker\n")
        assert "ini claim_cache_dir: " in _usage_error(pytester)
    else:
        assert "--claim-cache-dir: " in _usage_error(pytester, "--claim-cache-dir=blocker")


# --- the model ------------------------------------------------------------------------------------


def test_a_factory_that_raises_is_a_usage_error_showing_its_message(tmp_path: Path) -> None:
    spec = _model_file(tmp_path, "def build(cfg):\n    raise RuntimeError('weights file missing')\n")
    with pytest.raises(ConfigError, match=r"--claim-model: .*raised RuntimeError: weights file missing"):
        load_model(spec)


def test_a_function_that_is_not_a_factory_is_a_usage_error() -> None:
    with pytest.raises(ConfigError, match=r"--claim-model: os:getcwd: calling the factory .*raised TypeError"):
        load_model("os:getcwd")


def test_a_model_that_fails_on_the_probe_batch_names_the_option(tmp_path: Path) -> None:
    spec = _model_file(
        tmp_path,
        """
        import torch
        def build(cfg):
            return torch.nn.Linear(cfg.d + 1, cfg.d_out)  # the wrong input width
        """,
    )
    with pytest.raises(ConfigError, match=r"--claim-model: .*probe batch raised RuntimeError: .*"):
        load_model(spec)


def test_a_model_with_hidden_state_is_refused(tmp_path: Path) -> None:
    spec = _model_file(
        tmp_path,
        """
        import torch
        class Counting(torch.nn.Module):
            def __init__(self, cfg):
                super().__init__()
                self.w = torch.nn.Linear(cfg.d, cfg.d_out, bias=False)
                self.calls = 0
            def forward(self, x):
                self.calls += 1
                return self.w(x) * self.calls
        def build(cfg):
            return Counting(cfg)
        """,
    )
    with pytest.raises(ConfigError, match=r"two calls with the same parameters and input gave different outputs"):
        load_model(spec)


def test_a_raising_factory_stops_the_session_at_start(pytester: pytest.Pytester, tmp_path: Path) -> None:
    spec = _model_file(tmp_path, "def build(cfg):\n    raise RuntimeError('weights file missing')\n")
    assert "RuntimeError: weights file missing" in _usage_error(pytester, "--claim-model", spec)
