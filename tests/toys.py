"""The toy claim module the fault tests run with pytester: a claim that holds, a control that fails, a curve."""

from __future__ import annotations

from claimcheck.keys import Key

TOY = """
import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("toy statistic", 0.5, "<=", 1.0)
    claim_record.curve("loss", [1.0, {last}], group="toy curve")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")
"""


def toy(last: str = "0.5") -> str:
    """Return the toy claim module, its curve ending at ``last``."""
    return TOY.format(last=last)


def K(inputs: dict[str, object]) -> Key:
    """Return a store key of ``inputs`` alone (no engine, model or function identity): for testing the store."""
    return Key(engine={}, model="", function={"name": "test"}, inputs=inputs)
