"""The toy claim module the fault tests run with pytester: a claim that holds, a control that fails, a curve."""

from __future__ import annotations

from claimcheck.store.keys import Key

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


GATE_TOY = """
import numpy as np
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "G2",
    1,
    parts=(Part("", "the value stays small", (Stat("value", "<=", 10.0, margin=0.8),), bar=0.5),),
    controls=(Control("a large draw", "", "drawn about 20: the check must fail it", max_pass_rate=0.3),),
    seeds=Seeds("G2-v1", 1000, {{"ci": 12}}),
)
CLAIM = pytest.mark.claim("G2", "a value drawn per seed", "toy", protocol=PROTOCOL)


@CLAIM
def test_value(claim_record, claim_units):
    for seeds in claim_units.batches():
        for seed in seeds:
            draw = np.random.default_rng([seed, {reseed}]).normal({shift}, 1.0)
            claim_record.check("value", float(draw), unit=seed)


@CLAIM
def test_control(claim_record, claim_units):
    for seeds in claim_units.batches():
        for seed in seeds:
            draw = np.random.default_rng([seed, {reseed}, 1]).normal(20.0 + {shift}, 1.0)
            claim_record.check("value", float(draw), unit=seed, control="a large draw")
"""


def gate_toy(shift: float = 0.0, reseed: int = 0) -> str:
    """Return a claim of 12 units drawing N(shift, 1) per seed (its control N(20 + shift, 1)); ``reseed`` redraws them.

    Its margin is 0.8: against a baseline of reseed 0, another reseed differs by N(0, 2) per unit, so 12
    units leave it undecided and about 50 decide it equivalent.
    """
    return GATE_TOY.format(shift=shift, reseed=reseed)
