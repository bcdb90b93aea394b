"""The statistics lean on scipy.stats and still give the numbers they gave when they were written by hand.

``tests/fixtures/stats-recorded.json`` holds the outputs of every public function of
``claimcheck.decide.stats`` recorded at commit 0c3dc6a, before ``clopper_pearson``, ``t_interval``,
``binomial_p`` and ``t_test_p`` became calls of ``scipy.stats.binomtest`` and ``ttest_1samp``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from claimcheck.decide import stats

RECORDED: dict[str, Any] = json.loads((Path(__file__).parent / "fixtures" / "stats-recorded.json").read_text())
TOL = 1e-12  # absolute, on values in [0, 1] or of the order of the sample's values


def _value(v: float | str | None) -> float:
    return math.nan if v is None else float(v)


def _close(got: float, want: float | None) -> bool:
    if want is None:
        return math.isnan(got)
    return got == want or abs(got - want) <= TOL * max(1.0, abs(want))


def _rows(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = RECORDED[name]
    assert len(rows) >= 6, f"the fixture has too few {name} rows"
    return rows


def test_clopper_pearson_gives_the_recorded_ends() -> None:
    for r in _rows("clopper_pearson"):
        p = stats.clopper_pearson(r["passed"], r["n"], r["level"])
        assert _close(p.low, r["low"]) and _close(p.high, r["high"]), (r, p)


def test_binomial_p_gives_the_recorded_p_values() -> None:
    for r in _rows("binomial_p"):
        got = stats.binomial_p(r["passed"], r["n"], r["p0"], r["alternative"])
        assert _close(got, r["p"]), (r, got)


def test_t_interval_gives_the_recorded_intervals() -> None:
    for r in _rows("t_interval"):
        iv = stats.t_interval([_value(v) for v in r["values"]], r["level"])
        got = (iv.estimate, iv.low, iv.high)
        assert all(_close(g, r[k]) for g, k in zip(got, ("estimate", "low", "high"), strict=True)), (r, iv)


def test_t_test_p_gives_the_recorded_p_values() -> None:
    for r in _rows("t_test_p"):
        got = stats.t_test_p([_value(v) for v in r["values"]], r["null"], r["alternative"])
        assert _close(got, r["p"]), (r, got)


def test_spread_and_spearman_give_the_recorded_values() -> None:
    for r in _rows("spread"):
        s = stats.spread([_value(v) for v in r["values"]])
        got = (s.median, s.low, s.high)
        assert s.n == r["n"] and all(_close(g, r[k]) for g, k in zip(got, ("median", "low", "high"), strict=True)), r
    for r in RECORDED["spearman"]:
        c = stats.spearman(r["x"], r["y"])
        assert c.n == r["n"] and _close(c.rho, r["rho"]) and _close(c.p_value, r["p_value"]), (r, c)


@pytest.mark.parametrize("name", ["holm", "bonferroni"])
def test_the_multiplicity_rules_give_the_recorded_rejections(name: str) -> None:
    rule = getattr(stats, name)
    for r in _rows(name):
        assert rule(r["p_values"], r["alpha"]) == r["rejected"], r


def test_the_recorded_intervals_and_tests_agree_with_each_other() -> None:
    # the exact lower end at level 1 - 2a is above p0 exactly when the "greater" p-value is below a
    for r in _rows("clopper_pearson"):
        if r["n"] and 0 < r["low"] < 1 and r["passed"]:
            a = (1 - r["level"]) / 2
            for p0 in (r["low"] * 0.999, r["low"] * 1.001):
                assert (stats.binomial_p(r["passed"], r["n"], p0, "greater") < a) == (p0 < r["low"]), (r, p0)
