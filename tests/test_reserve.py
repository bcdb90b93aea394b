"""The gate decides by adding units: its looks, its error rate over them, and a baseline with a reserve end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from toys import gate_toy

from claimcheck.gate.decision import EXIT_WORSE
from claimcheck.gate.paired import ALPHA, paired_test
from claimcheck.gate.reserve import gate_looks, outcome

LOOKS = gate_looks([12], 16)  # the ci cap of a 12-unit claim test: 12, 24, 48, 96, 192


def test_the_gate_looks_at_the_claims_looks_then_at_its_cap_doubled() -> None:
    assert LOOKS == [12, 24, 48, 96, 192]
    assert gate_looks([10, 20, 30], 16) == [10, 20, 30, 60, 120, 240, 480]
    assert gate_looks([460], 2) == [460, 920]
    assert gate_looks([4], 3) == [4, 8, 12]
    assert gate_looks([12], 1) == [12]


def test_bonferroni_over_the_looks_multiplies_each_p_value_and_widens_the_interval() -> None:
    rng = np.random.default_rng(3)
    before, after = rng.normal(0, 1, 20), rng.normal(0.2, 1, 20)
    one, five = paired_test(before, after, 0.5, 1), paired_test(before, after, 0.5, 1, looks=5)
    assert five.p_worse == pytest.approx(min(1.0, 5 * one.p_worse))
    assert five.p_equivalent == pytest.approx(min(1.0, 5 * one.p_equivalent))
    assert five.mean == one.mean and five.low < one.low and five.high > one.high
    with pytest.raises(ValueError, match="looks must be >= 1"):
        paired_test(before, after, 0.5, 1, looks=0)


def _sequential_errors(mu: float, runs: int, seed: int, margin: float = 0.5) -> dict[str, int]:
    """Run the gate's rule on ``runs`` paths of N(mu, 1) differences: stop at the first decided look, or the cap."""
    rng = np.random.default_rng(seed)
    counts: dict[str, int] = {}
    for _ in range(runs):
        d = rng.normal(mu, 1.0, LOOKS[-1])
        for n in LOOKS:
            said = outcome(paired_test(np.zeros(n), d[:n], margin, 1, looks=len(LOOKS)), ALPHA)
            if said != "undecided":
                break
        counts[said] = counts.get(said, 0) + 1
    return counts


def test_at_the_margin_the_gate_errs_at_most_five_percent_each_way_across_all_its_looks() -> None:
    # the true change sits on the margin (+0.5 of an SD of the differences): "equivalent" and "worse" are both wrong
    runs = 600
    counts = _sequential_errors(0.5, runs, seed=11)
    # 5% is 30 of 600; the binomial's 99.9% upper quantile at 5% is 47: a rule that errs more fails this test
    assert counts.get("equivalent", 0) <= 47, counts
    assert counts.get("worse", 0) <= 47, counts


def test_with_no_change_the_gate_decides_equivalent_and_never_changed() -> None:
    counts = _sequential_errors(0.0, 200, seed=12)
    assert counts.get("worse", 0) + counts.get("better", 0) <= 10 + 5, counts  # at most 5% (10 of 200), with slack
    assert counts.get("equivalent", 0) >= 190, counts  # margin 0.5 SD: shown by 96 units 9 times in 10


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("--claim-cache=off", "-p", "no:randomly", *args)


def _gate_units(pytester: pytest.Pytester, name: str) -> dict[str, dict]:
    return json.loads((pytester.path / name).read_text())["gate_units"]


def _baseline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=gate_toy())
    result = _run(pytester, "--claim-gate-cap=16", "--claim-report=base.md")
    result.assert_outcomes(passed=2)
    reserve = _gate_units(pytester, "base.json")
    assert {r["stopped"] for r in reserve.values()} == {"reserve recorded to the cap (192 units)"}
    assert all(len(r["checks"]) == 180 for r in reserve.values())  # every unit past the budget's 12
    claim = json.loads((pytester.path / "base.json").read_text())["claims"][0]
    assert claim["parts"][0]["units"] and len(claim["parts"][0]["units"]) == 12  # the verdict: the budget's units


def test_a_baseline_with_a_reserve_lets_a_reseeded_edit_be_decided_equivalent_with_added_units(
    pytester: pytest.Pytester,
) -> None:
    _baseline(pytester)
    pytester.makepyfile(test_toy=gate_toy(reseed=1))  # every value redrawn from the same distribution
    without = pytester.path / "base12.json"
    raw = json.loads((pytester.path / "base.json").read_text())
    without.write_text(json.dumps({**raw, "gate_units": {}}))
    result = _run(pytester, f"--claim-baseline={without}", "--claim-baseline-fail", "--claim-report=old.md")
    assert result.ret == 14, "at the budget's 12 units the comparison is undecided"
    result.stdout.fnmatch_lines(["claim baseline: UNDECIDED — *; draws changed in G2", "*--claim-gate-cap *"])
    result = _run(pytester, "--claim-baseline=base.json", "--claim-baseline-fail", "--claim-report=now.md")
    assert result.ret == 0, (pytester.path / "now.md").read_text()
    result.stdout.fnmatch_lines(
        ["claim baseline: PASS — 2 equivalent, 0 changed (worse 0, better 0), 0 undecided; draws changed in G2"]
    )
    gate = json.loads((pytester.path / "now.json").read_text())["gate"]
    assert all(s["units"] > 12 and s["looks"] == 5 for s in gate["statistics"]), gate["statistics"]
    stopped = {r["stopped"] for r in _gate_units(pytester, "now.json").values()}
    assert all(s.startswith("decided at look ") for s in stopped), stopped
    claim = json.loads((pytester.path / "now.json").read_text())["claims"][0]
    assert len(claim["parts"][0]["units"]) == 12, "the added units are the gate's: the verdict keeps the budget's"


def test_a_shifted_edit_is_decided_changed_with_added_units(pytester: pytest.Pytester) -> None:
    _baseline(pytester)
    pytester.makepyfile(test_toy=gate_toy(shift=1.5, reseed=1))  # 1.5 against a margin of 0.8, redrawn: undecided at 12
    result = _run(pytester, "--claim-baseline=base.json", "--claim-baseline-fail", "--claim-report=now.md")
    assert result.ret == EXIT_WORSE, (pytester.path / "now.md").read_text()
    result.stdout.fnmatch_lines(["claim baseline: FAIL — 0 equivalent, 2 changed (worse 1, better 1), 0 undecided*"])
    gate = json.loads((pytester.path / "now.json").read_text())["gate"]
    assert all(s["units"] > 12 for s in gate["statistics"]), gate["statistics"]


def test_a_gate_cap_that_is_not_a_whole_multiple_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=gate_toy())
    result = _run(pytester, "--claim-gate-cap=1.5")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claim-gate-cap: expected a whole multiple >= 1*got '1.5'*"])


def test_a_run_without_a_reserve_records_no_gate_units(pytester: pytest.Pytester, tmp_path: Path) -> None:
    pytester.makepyfile(test_toy=gate_toy())
    _run(pytester, "--claim-report=plain.md").assert_outcomes(passed=2)
    assert _gate_units(pytester, "plain.json") == {}
