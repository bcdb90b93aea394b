"""An INCONCLUSIVE claim says what is undecided and the budget that would decide it (claimcheck.decide.undecided)."""

from __future__ import annotations

import pytest

from claimcheck.decide.record import Check
from claimcheck.decide.undecided import budget_for, mean_units, rate_units

UNDECIDED = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

PROTOCOL = ClaimProtocol(
    "C9",
    1,
    parts=(Part("small", "the value stays small", (Stat("value", "<=", 1.0),), bar=0.8),),
    controls=(Control("large", "small", "a large value: the check must fail it", max_pass_rate=0.3),),
    seeds=Seeds("C9-v1", 1000, {"ci": 4, "standard": 20}),
)
CLAIM = pytest.mark.claim("C9", "a toy claim", "Sec. 9", protocol=PROTOCOL)


@CLAIM
def test_value(claim_record, claim_units):
    for seeds in claim_units.batches():
        for seed in seeds:
            claim_record.check("value", 0.5, unit=seed, part="small")


@CLAIM
def test_control(claim_record, claim_units):
    for seeds in claim_units.batches():
        for seed in seeds:
            claim_record.check("value", 5.0, unit=seed, part="small", control="large")
"""


def test_an_all_pass_rate_needs_the_units_worked_by_hand() -> None:
    assert rate_units(4, 4, 0.8, 0.05) == 14  # 0.8^13 = 0.055 > 0.05 >= 0.8^14 = 0.044
    assert rate_units(0, 4, 0.3, 0.05) == 9  # a control that never passes: 0.7^8 = 0.058, 0.7^9 = 0.040


def test_a_rate_on_its_bar_is_decided_by_no_number_of_units() -> None:
    assert rate_units(4, 5, 0.8, 0.05) is None
    assert rate_units(0, 0, 0.8, 0.05) is None


def test_a_mean_needs_its_interval_narrowed_past_the_threshold() -> None:
    c = Check("s", -0.876, "<=", -1.0, low=-1.031, high=-0.721, interval="Student-t, 14 units")
    assert mean_units([c], 14) == 22  # 14 x (0.155 / 0.124)^2 = 21.9
    decided = Check("t", -0.355, "<=", -0.1667, low=-0.499, high=-0.211)
    assert mean_units([decided], 14) == 14  # already clear of its threshold: needs no more
    assert mean_units([Check("u", float("nan"), "<=", 1.0, low=0.0, high=1.0)], 14) is None


def test_the_budget_named_is_the_smallest_that_runs_enough() -> None:
    units = {"ci": 4, "standard": 30, "paper": 60}
    assert budget_for(units, 22, 14) == "budget standard runs 30 (--claim-budget standard)"
    assert budget_for(units, 61, 14) == (
        "that many only if the effect stays as measured on these 14 units, past every budget's cap (ci 4, standard 30, "
        "paper 60); the effect may move as units come, and a larger budget can still decide it (--claim-budget paper)"
    )
    assert "10 at a time" in budget_for(units, 22, 4, {"standard": 10})


def test_a_run_that_admitted_fewer_units_than_it_ran_never_sends_you_back_to_its_own_budget() -> None:
    # C7 at ci: 40 units run, 18 admitted, about 30 admitted would decide it: ci reruns the same 40 seeds
    units = {"ci": 40, "standard": 120, "paper": 460}
    assert budget_for(units, 30, 18, current="ci") == "budget standard runs 120 (--claim-budget standard)"
    # 30 admitted at 18 of 40 is about 67 run: more than ci's 40, within standard's 120
    assert budget_for({"ci": 40, "standard": 60}, 30, 18, current="ci").startswith("that many only if")


def test_the_terminal_and_first_screen_name_the_undecided_part_and_the_budget(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=UNDECIDED)
    result = pytester.runpytest_inprocess("--claim-report")
    result.stdout.fnmatch_lines(
        [
            "C9: INCONCLUSIVE*",
            "    why: undecided at 4 units: part small, control 'large' (part small); about 14 units would decide "
            "them, more than ci gives: budget standard runs 20 (--claim-budget standard)",
        ]
    )
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    assert "- **C9 INCONCLUSIVE**: undecided at 4 units: part small" in text


def test_a_premise_the_model_breaks_is_on_the_terminal_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_toy=UNDECIDED.replace(
            'claim_record.check("value", 0.5, unit=seed, part="small")',
            'claim_record.check("value", 0.5, unit=seed, part="small")\n'
            '            claim_record.set_regime("model", **{"premises broken": "no residual connection"})',
        )
    )
    result = pytester.runpytest_inprocess()
    result.stdout.fnmatch_lines(["C9: INCONCLUSIVE*", "    model outside the claim's premises: no residual connection"])


def test_past_every_cap_the_advice_names_the_first_budget_at_the_largest_cap() -> None:
    # C4: standard and paper both cap at 60 units; the why line named paper
    text = budget_for({"ci": 30, "standard": 60, "paper": 60}, 500, 30, current="ci")
    assert text.endswith("(--claim-budget standard)")


@pytest.mark.parametrize("edge", [1, 2, 3, 5, 17, 1000, 524_288, 524_289, 700_000, 999_999, 1_000_000])
@pytest.mark.parametrize("after", [0, 1, 2, 4, 100])
def test_fewest_units_finds_the_edge_of_a_monotone_rule(edge: int, after: int) -> None:
    """The doubling-halving search answers what a scan would, past 2^19 too (it answered None there once)."""
    from claimcheck.decide.stats import MAX_UNITS, fewest_units

    calls: list[int] = []

    def decided(m: int) -> bool:
        calls.append(m)
        return m >= edge

    assert fewest_units(decided, after) == max(edge, after + 1, 2)
    assert len(calls) <= 2 * MAX_UNITS.bit_length() + 2


def test_fewest_units_past_the_cap_is_none() -> None:
    from claimcheck.decide.stats import MAX_UNITS, fewest_units

    assert fewest_units(lambda m: m > MAX_UNITS, 10) is None
    assert fewest_units(lambda m: False, 0) is None
