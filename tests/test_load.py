"""Loading the plugin costs a session without claims nothing: no torch, no controller, no statistics library.

Each session runs in a fresh interpreter (``runpytest_subprocess``): in this process torch is already
imported. A conftest writes, at the end of the session, which of the heavy modules it finds loaded.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

HEAVY = ("torch", "numpy", "scipy", "statsmodels", "matplotlib", "claimcheck.pytest.session", "claimcheck.store.cache")

SPY = """
import gc, json, sys

def pytest_unconfigure(config):
    loaded = [m for m in {heavy!r} if m in sys.modules]
    with open("loaded.json", "w") as f:
        plugin = "claimcheck.pytest.plugin" in sys.modules
        json.dump({{"loaded": loaded, "plugin": plugin, "frozen": gc.get_freeze_count()}}, f)
"""

CLAIM = """
import pytest

@pytest.mark.claim("C9", "toy", "Sec. 9")
def test_claim(claim_record, claim_seed):
    claim_record.check("toy statistic", 0.5, "<=", 1.0, label="toy")
"""


def _spy(pytester: pytest.Pytester, *args: str) -> dict[str, Any]:
    pytester.makeconftest(SPY.format(heavy=HEAVY))
    result = pytester.runpytest_subprocess(*args)
    assert result.ret in (0, 1), result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    raw: dict[str, Any] = json.loads((pytester.path / "loaded.json").read_text())
    return raw


def _loaded(pytester: pytest.Pytester, *args: str) -> tuple[list[str], bool]:
    raw = _spy(pytester, *args)
    assert raw["frozen"] == 0  # a session without claims leaves the garbage collector as it found it
    return raw["loaded"], raw["plugin"]


def test_a_session_without_claims_imports_no_torch_and_no_controller(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    loaded, plugin = _loaded(pytester)
    assert plugin  # the plugin was loaded (through its entry point) ...
    assert loaded == []  # ... and left the claim core alone


def test_claim_options_alone_start_no_core(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.makeini("[pytest]\nclaim_seed = 3\nclaim_budget = standard\n")
    loaded, _ = _loaded(pytester, "--claim-seed", "5", "--claim-report")
    assert loaded == []  # options are validated (light), but nothing runs a claim


def test_a_bad_option_is_refused_without_claims_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess("--claim-seed", "minus one")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-seed*"])


def test_the_spy_sees_a_heavy_module_a_test_imports(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="import numpy\n\ndef test_one():\n    assert numpy.int64(2) == 2\n")
    loaded, _ = _loaded(pytester)
    assert loaded == ["numpy"]  # the check above can fail


def test_a_collected_claim_starts_the_core(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_claim=CLAIM)
    result = pytester.runpytest_inprocess()  # in this process torch is loaded already: watch the controller start
    result.assert_outcomes(passed=3)  # one test per unit seed of the ci budget
    result.stdout.fnmatch_lines(["*claim verdicts*", "C9: *"])


def test_a_claim_session_freezes_what_it_imported_so_collections_skip_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_claim=CLAIM)
    raw = _spy(pytester, f"--claim-cache-dir={pytester.path / 'cache'}")
    assert raw["frozen"] > 100_000  # torch, numpy and the core: objects that live as long as the process


def test_a_session_without_claims_registers_no_controller(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.makeconftest(
        "def pytest_sessionfinish(session):\n"
        "    names = [n for n, _ in session.config.pluginmanager.list_name_plugin()]\n"
        "    assert 'claimcheck-controller' not in names and 'claimcheck-progress' not in names\n"
    )
    pytester.runpytest_inprocess().assert_outcomes(passed=1)
