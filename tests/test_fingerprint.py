"""The fingerprints over the code that decides (a claim's, and one decision's for its calibration): they move with a
constant or a decision, not with prose or a move."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import linecache
import sys
from pathlib import Path
from typing import Any

import pytest

from claimcheck.errors import ConfigError
from claimcheck.provenance.fingerprint import Engine, code_fingerprint, decision_identity, definition_fingerprint

CHECKS = '''
"""Decision functions of the toy suite."""

FLOOR = 1e-12  # losses below this are not scored


def rate(loss):
    """Return the last loss over the first (floored)."""
    # the ratio, floored
    return max(loss[-1], FLOOR) / loss[0]
'''
ENGINE = """
def train(seed):
    return [1.0, 0.25 + 0 * seed]
"""
CLAIM = '''
"""T1: the toy rate is below a bar."""

import pytest

from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from toydecide.checks import rate
from toydecide.engine import train

BELOW = 0.5
PROTOCOL = ClaimProtocol(
    "T1",
    1,
    (Part("", "the toy rate is below the bar", (Stat("rate", "<=", 0.9, why="a reason"),)),),
    (Control("big", "", "a step past the bar"),),
    Seeds("T1-v1", 1000, {"ci": 3}),
    regime="a toy regime",
)
CLAIM = pytest.mark.claim("T1", "the toy rate", "Sec. 1", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("rate", rate(train(claim_seed)) / BELOW * 0.5)
'''
TOY_ENGINE = Engine(packages=("toydecide",), modules=("toydecide.engine",), identity="e1")


def _toy(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (root / "toydecide").mkdir(parents=True)
    (root / "toydecide" / "__init__.py").write_text("")
    (root / "toydecide" / "checks.py").write_text(CHECKS)
    (root / "toydecide" / "engine.py").write_text(ENGINE)
    (root / "claims").mkdir()
    (root / "claims" / "test_toy.py").write_text(CLAIM)
    monkeypatch.syspath_prepend(str(root))
    for name in [m for m in sys.modules if m.split(".")[0] == "toydecide"]:
        monkeypatch.delitem(sys.modules, name)
    return root


def _fingerprint(root: Path, namespace: bool = False) -> str:
    path = root / "claims" / "test_toy.py"
    values = None
    if namespace:
        spec = importlib.util.spec_from_file_location("test_toy", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # no .pyc: an edit of the same size within the same second (1000 -> 2000) would read the stale one back
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(sys, "dont_write_bytecode", True)
            spec.loader.exec_module(module)
        values = vars(module)
    return code_fingerprint(path, "test_toy", values, TOY_ENGINE).digest


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _toy(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("claims/test_toy.py", "BELOW = 0.5", "BELOW = 0.9"),  # a constant of the claim module
        ("toydecide/checks.py", "FLOOR = 1e-12", "FLOOR = 1e-9"),  # a constant the decision function reads
        ("toydecide/checks.py", "max(loss[-1], FLOOR)", "min(loss[-1], FLOOR)"),  # the decision function itself
        ("claims/test_toy.py", '"rate", "<=", 0.9', '"rate", "<=", 0.8'),  # a threshold of the protocol
    ],
)
def test_the_fingerprint_changes_when_what_decides_changes(toy: Path, file: str, old: str, new: str) -> None:
    before = _fingerprint(toy)
    _edit(toy / file, old, new)
    assert _fingerprint(toy) != before


@pytest.mark.parametrize(
    ("file", "old", "new"),
    [
        ("toydecide/checks.py", '"""Return the last loss over the first (floored)."""', '"""Say it otherwise."""'),
        ("claims/test_toy.py", '"""T1: the toy rate is below a bar."""', '"""T1, reworded."""'),
        ("toydecide/checks.py", "# the ratio, floored", "# another comment"),
        (
            "toydecide/checks.py",
            "return max(loss[-1], FLOOR) / loss[0]",
            "return (max(loss[-1],\n        FLOOR) / loss[0])",
        ),
        ("claims/test_toy.py", "    claim_record.check(", "    # a comment\n    claim_record.check("),
        ("toydecide/engine.py", "0.25", "0.35"),  # the engine has an identity of its own, not this fingerprint
        ("claims/test_toy.py", "def test_claim(", "def test_claim_renamed("),
    ],
)
def test_the_fingerprint_ignores_docstrings_comments_formatting_and_the_engine(
    toy: Path, file: str, old: str, new: str
) -> None:
    before = _fingerprint(toy)
    _edit(toy / file, old, new)
    assert _fingerprint(toy) == before


def test_moving_a_decision_function_to_another_module_changes_nothing(toy: Path) -> None:
    before = _fingerprint(toy)
    moved = toy / "toydecide" / "rates.py"
    moved.write_text(CHECKS.replace("def rate(", "def rate_of("))  # moved and renamed
    (toy / "toydecide" / "checks.py").write_text('"""Nothing left here."""\n')
    _edit(
        toy / "claims" / "test_toy.py", "from toydecide.checks import rate\n", "from toydecide.rates import rate_of\n"
    )
    _edit(toy / "claims" / "test_toy.py", "rate(train(", "rate_of(train(")
    assert _fingerprint(toy) == before
    _edit(moved, "FLOOR = 1e-12", "FLOOR = 1e-6")  # and it still follows the function to its new home
    assert _fingerprint(toy) != before


def test_a_re_export_is_followed_to_the_definition(toy: Path) -> None:
    before = _fingerprint(toy)
    (toy / "toydecide" / "__init__.py").write_text("from toydecide.checks import rate\n")
    _edit(toy / "claims" / "test_toy.py", "from toydecide.checks import rate\n", "from toydecide import rate\n")
    assert _fingerprint(toy) == before


def test_rewording_the_protocol_is_not_a_new_version_but_a_number_is(toy: Path) -> None:
    before = _fingerprint(toy, namespace=True)
    _edit(toy / "claims" / "test_toy.py", '"the toy rate is below the bar"', '"reworded statement"')
    _edit(toy / "claims" / "test_toy.py", 'why="a reason"', 'why="another reason"')
    _edit(toy / "claims" / "test_toy.py", '"the toy rate", "Sec. 1"', '"a new title", "Sec. 2"')
    assert _fingerprint(toy, namespace=True) == before
    _edit(toy / "claims" / "test_toy.py", 'Seeds("T1-v1", 1000,', 'Seeds("T1-v1", 2000,')
    assert _fingerprint(toy, namespace=True) != before


def test_the_core_decision_rule_is_covered_and_the_engine_is_named_not_followed(toy: Path) -> None:
    fp = code_fingerprint(toy / "claims" / "test_toy.py", "test_toy", None, TOY_ENGINE)
    assert {
        "claimcheck.decide.verdicts.decide",
        "claimcheck.decide.stats.clopper_pearson",
        "toydecide.checks.rate",
    } <= set(fp.covers)
    assert "toydecide.checks.FLOOR" in fp.covers and not any(c.startswith("toydecide.engine") for c in fp.covers)
    assert fp.stops == ("engine:train",)


def test_fingerprinting_the_paper_suite_takes_well_under_a_second() -> None:
    """Collecting the eight claims computes eight distinct fingerprints from a cold parse cache (speed: a benchmark)."""
    from claimcheck.provenance import fingerprint as fpmod

    root = Path(__file__).resolve().parents[1]
    engine = Engine(packages=("qin2025",), modules=("qin2025.engine.trainer", "qin2025.engine.model"), identity="x")
    fpmod._PARSED.clear()
    fpmod._TEXTS.clear()
    digests = {code_fingerprint(p, p.stem, None, engine).digest for p in sorted((root / "claims").glob("test_c*.py"))}
    assert len(digests) == 8


def _rate_of(root: Path, module: str = "toydecide.checks") -> Any:
    """Import the toy decision afresh from ``root`` and return it (a live function, as ``Part(decision=...)`` holds)."""
    for name in [m for m in sys.modules if m.split(".")[0] == "toydecide"]:
        del sys.modules[name]
    return importlib.import_module(module).rate


def test_one_decision_has_a_fingerprint_of_its_own_for_calibration_entries(toy: Path) -> None:
    rate = _rate_of(toy)
    before = definition_fingerprint(rate)
    assert before.covers == ("toydecide.checks.rate", "toydecide.checks.FLOOR")
    _edit(toy / "toydecide" / "checks.py", "# the ratio, floored", "# reworded")
    assert definition_fingerprint(rate) == before
    _edit(toy / "toydecide" / "checks.py", "FLOOR = 1e-12", "FLOOR = 1e-6")
    assert definition_fingerprint(rate).digest != before.digest


def test_a_decisions_identity_moves_with_its_code_and_statistics_not_with_prose_or_a_move(toy: Path) -> None:
    stats = [["rate", "<=", 0.9, 0.0]]
    checks = toy / "toydecide" / "checks.py"
    before = decision_identity(_rate_of(toy), stats)
    assert before.startswith("toydecide.checks:rate ")
    digest = before.split()[1]
    assert decision_identity(_rate_of(toy), [["rate", "<=", 0.8, 0.0]]).split()[1] != digest  # a threshold
    _edit(checks, '"""Return the last loss over the first (floored)."""', '"""Reworded."""')
    _edit(checks, "# the ratio, floored", "# another comment")
    assert decision_identity(_rate_of(toy), stats) == before
    (toy / "toydecide" / "rates.py").write_text(checks.read_text())  # the same code in another module
    moved = decision_identity(_rate_of(toy, "toydecide.rates"), stats)
    assert moved == f"toydecide.rates:rate {digest}"  # named where it lives, the same digest
    _edit(checks, "FLOOR = 1e-12", "FLOOR = 1e-9")  # a constant the decision reads
    assert decision_identity(_rate_of(toy), stats).split()[1] != digest


def test_a_nested_decision_or_a_lambda_is_covered_by_the_statement_that_holds_it(toy: Path) -> None:
    checks = toy / "toydecide" / "checks.py"
    nested = "def make():\n    def rate(loss):\n        return loss[-1] < FLOOR\n\n    return rate\n"
    checks.write_text(f"{CHECKS}\n\n{nested}\n\nlate = lambda loss: loss[-1] * 2  # noqa: E731\n")
    importlib.invalidate_caches()
    for name in [m for m in sys.modules if m.split(".")[0] == "toydecide"]:
        del sys.modules[name]
    module = importlib.import_module("toydecide.checks")
    inner = definition_fingerprint(module.make())
    assert inner.covers == ("toydecide.checks.make", "toydecide.checks.FLOOR")
    late = definition_fingerprint(module.late)
    assert late.covers == ("toydecide.checks.late",)
    _edit(checks, "loss[-1] * 2", "loss[-1] * 3")
    assert definition_fingerprint(module.make()) == inner  # the lambda's edit is not the nested function's
    assert definition_fingerprint(module.late).digest != late.digest


def _cell(name: str, source: str) -> Any:
    """Define ``decide`` as a notebook cell does: no file, the source kept in ``linecache``."""
    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(source, name, "exec"), namespace)
    return namespace["decide"]


def test_a_decision_defined_in_a_notebook_cell_is_read_from_the_source_python_keeps() -> None:
    cell = "LIMIT = {}\n\n\ndef decide(value):\n    return {{'x': value - LIMIT}}\n"
    try:
        one, same, other = (_cell(f"<cell-{i}>", cell.format(v)) for i, v in enumerate((1, 1, 2)))
        assert definition_fingerprint(one).covers == ("__main__.decide", "__main__.LIMIT")
        assert definition_fingerprint(one).digest == definition_fingerprint(same).digest
        assert definition_fingerprint(other).digest != definition_fingerprint(one).digest
    finally:
        for i in range(3):
            linecache.cache.pop(f"<cell-{i}>", None)


def test_a_decision_without_python_source_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"cannot fingerprint the decision <built-in function len>: it has no Python"):
        definition_fingerprint(len)
    with pytest.raises(ConfigError, match=r"no Python source"):
        definition_fingerprint(functools.partial(max, 0))
    namespace: dict[str, Any] = {}
    exec(compile("def decide(v):\n    return {'x': v}\n", "<string>", "exec"), namespace)
    with pytest.raises(ConfigError, match=r"no Python source"):
        definition_fingerprint(namespace["decide"])


def test_a_definition_made_under_a_condition_is_followed(toy: Path) -> None:
    checks = toy / "toydecide" / "checks.py"
    _edit(checks, "def rate(loss):", "if FLOOR > 0:\n\n  def rate(loss):")
    _edit(checks, '    """Return the last loss', '      """Return the last loss')
    _edit(checks, "    # the ratio, floored\n    return", "      # the ratio, floored\n      return")
    before = _fingerprint(toy)
    _edit(checks, "max(loss[-1], FLOOR)", "min(loss[-1], FLOOR)")
    assert _fingerprint(toy) != before


def test_a_parts_decision_moved_or_renamed_keeps_the_claims_fingerprint_and_its_code_does_not(toy: Path) -> None:
    # the protocol names its decision (Part(decision=...)): scheme 2 hashes the decision's code, not where it lives
    claim = toy / "claims" / "test_toy.py"
    _edit(
        claim,
        '(Stat("rate", "<=", 0.9, why="a reason"),))',
        '(Stat("rate", "<=", 0.9, why="a reason"),), decision=rate)',
    )
    before = _fingerprint(toy, namespace=True)
    moved = toy / "toydecide" / "rates.py"
    moved.write_text(CHECKS.replace("def rate(", "def rate_of("))
    (toy / "toydecide" / "checks.py").write_text('"""Nothing left here."""\n')
    _edit(claim, "from toydecide.checks import rate\n", "from toydecide.rates import rate_of as rate\n")
    for name in [m for m in sys.modules if m.split(".")[0] == "toydecide"]:
        del sys.modules[name]
    assert _fingerprint(toy, namespace=True) == before
    _edit(moved, "FLOOR = 1e-12", "FLOOR = 1e-6")
    for name in [m for m in sys.modules if m.split(".")[0] == "toydecide"]:
        del sys.modules[name]
    assert _fingerprint(toy, namespace=True) != before
