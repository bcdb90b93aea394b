"""The mutant table: which claims a broken model breaks, compared with a trusted run."""

from __future__ import annotations

import pytest

from claimcheck.commands.mutants import damage, render_mutants
from claimcheck.rundata import RunData, load
from claimcheck.verdicts import Verdict

# Two claims: T1 holds when the value is small; T2 holds either way but its second statistic can slip.
CLAIMS = """
import pytest

@pytest.mark.claim("T1", "value stays below one", "toy")
def test_t1(claim_record, claim_seed):
    claim_record.check("value", {t1}, "<=", 1.0, label="toy")

@pytest.mark.claim("T1", "value stays below one", "toy")
def test_t1_control(claim_record, claim_seed):
    claim_record.check("value", 5.0, "<=", 1.0, control="shifted", label="toy")

@pytest.mark.claim("T2", "two statistics", "toy")
def test_t2(claim_record, claim_seed):
    claim_record.check("main", 2.0, "<=", 1.0, label="toy")
    claim_record.check("side", {side}, "<=", 1.0, label="toy")

@pytest.mark.claim("T2", "two statistics", "toy")
def test_t2_control(claim_record, claim_seed):
    claim_record.check("main", 5.0, "<=", 1.0, control="shifted", label="toy")

@pytest.mark.claim("T3", "skipped here", "toy")
def test_t3(claim_record):
    pytest.skip("no data")
"""


def _run(pytester: pytest.Pytester, name: str, t1: float, side: float) -> RunData:
    pytester.makepyfile(test_toy=CLAIMS.format(t1=t1, side=side))
    pytester.runpytest(f"--claim-report={name}.md")
    return load(pytester.path / f"{name}.json")


def test_a_lost_verdict_and_a_lost_statistic_are_both_damage(pytester: pytest.Pytester) -> None:
    ref = _run(pytester, "ref", t1=0.5, side=0.5)
    broken = _run(pytester, "broken", t1=3.0, side=3.0)
    same = _run(pytester, "same", t1=0.5, side=0.5)
    by_claim = {d.claim_id: d for d in damage(ref, broken)}
    assert (by_claim["T1"].before, by_claim["T1"].after) == (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED)
    assert by_claim["T1"].broken and by_claim["T1"].lost == ["value"]
    assert by_claim["T2"].after is Verdict.NOT_REPRODUCED and by_claim["T2"].lost == ["side"]  # same verdict
    assert by_claim["T2"].broken
    assert not by_claim["T3"].broken  # skipped says nothing
    assert not any(d.broken for d in damage(ref, same))
    text = render_mutants(("ref:build", ref), [("broken:build", broken), ("same:build", same)])
    assert (
        "| `broken:build` | **NOT REPRODUCED** (lost: value) | **NOT REPRODUCED** (lost: side) | SKIPPED | T1, T2 |"
        in text
    )
    assert "| `same:build` | REPRODUCED | NOT REPRODUCED | SKIPPED | **none** |" in text
    assert "No mutant broke: T3." in text
