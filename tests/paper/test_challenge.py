"""The challenge families: every family draws valid cases for its part's decision, says why its answer is known,
and keeps its cases inside the band its label comes from."""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from claimcheck.decide.calibration import UNITS, case_rng
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import Family
from qin2025.c1 import challenge as world
from qin2025.c1.linear_rate import linear_rate_decision
from qin2025.c2.monotone import monotone_decision
from qin2025.c3.full_rank import floor_decision
from qin2025.c4.collapse import collapse_decision, slows_decision, stops_decision
from qin2025.c5.level_speed import lower_faster_decision, order_decision
from qin2025.c5.steeper import steeper_faster_decision, steeper_order_decision
from qin2025.c6.residual_depth import advantage_decision, trend_decision
from qin2025.c7 import challenge as c7
from qin2025.c7.conditioning import association_decision, governs_decision
from qin2025.challenge import OUTSIDE, ROLES, families, outside

DECISIONS = {
    ("C1", "rate"): (linear_rate_decision, False),
    ("C8", "L2"): (linear_rate_decision, False),
    ("C8", "L3"): (linear_rate_decision, False),
    ("C8", "L4"): (linear_rate_decision, False),
    ("C4", "stops"): (stops_decision, True),
    ("C4", "slows"): (slows_decision, True),
    ("C4", "collapse"): (collapse_decision, False),
    ("C5", "order"): (order_decision, False),
    ("C5", "faster"): (lower_faster_decision, True),
    ("C5", "lower: order"): (order_decision, False),
    ("C5", "lower: beta>0 vs beta=0"): (lower_faster_decision, True),
    ("C5", "steeper: order"): (steeper_order_decision, False),
    ("C5", "steeper: beta>0 vs beta=0"): (steeper_faster_decision, True),
    ("C5", "steeper-order"): (steeper_order_decision, False),
    ("C5", "steeper-faster"): (steeper_faster_decision, True),
    ("C2", "monotone"): (monotone_decision, False),
    ("C3", "floor"): (floor_decision, False),
    ("C6", "L=1"): (advantage_decision, True),
    ("C6", "L=6"): (advantage_decision, True),
    ("C6", "trend"): (trend_decision, True),
    ("C7", "association-input"): (association_decision, False),
    ("C7", "association-rotation"): (association_decision, False),
    ("C7", "governs"): (governs_decision, True),
    ("C7", "governs (rotation)"): (governs_decision, True),
}
DRAWS = 3  # cases drawn per family here (the calibration draws each family's own count)


def _draws_cases_its_decision_takes(key: tuple[str, str], fams: tuple[Family, ...], origin: str, draws: int) -> None:
    assert fams and len({f.name for f in fams}) == len(fams)
    decision, mean_rule = DECISIONS[key]
    wanted = set(inspect.signature(decision).parameters)
    for fam in fams:
        assert fam.origin == origin and len(fam.why) > 40 and fam.grid, fam.name
        for i in range(draws):
            case = fam.generate(case_rng(0, key[0], key[1], fam.name, i))
            units = case.measurements[UNITS] if mean_rule else [case.measurements]
            for unit in units:
                assert set(unit) == wanted, fam.name
                values = decision(**unit)
                assert values and all(isinstance(v, float) for v in values.values()), fam.name
            if mean_rule:
                assert len(units) >= 12, fam.name  # a sample of the claim's budget, not one seed


@pytest.mark.parametrize("key", list(ROLES), ids=[f"{c}:{r}" for c, r in ROLES])
def test_every_family_draws_cases_its_decision_takes_and_says_why(key: tuple[str, str]) -> None:
    _draws_cases_its_decision_takes(key, families(*key), "challenge", DRAWS)


@pytest.mark.parametrize("key", list(OUTSIDE), ids=[f"{c}:{r}" for c, r in OUTSIDE])
def test_every_outside_family_draws_cases_its_decision_takes_and_is_kept_apart(key: tuple[str, str]) -> None:
    _draws_cases_its_decision_takes(key, outside(*key), "outside", 1)
    with pytest.raises(ConfigError, match="no outside families for C2:monotone"):
        outside("C2", "monotone")


def test_an_unknown_role_names_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="no challenge families for C1:speed; known: C1:rate"):
        families("C1", "speed")


def test_a_stretched_exponentials_fall_over_the_last_half_is_two_to_the_k_minus_one() -> None:
    rng = np.random.default_rng(3)
    for _ in range(5):
        rates, params = world.stretched(rng, 1000, 0.3, 0.95)
        steps = min(world.scored(rates), rates.size)
        assert world.fall(rates, steps) == pytest.approx(2 ** (params["k"] - 1), rel=0.03)


def test_a_power_laws_fall_is_tau_plus_half_over_tau_plus_the_horizon() -> None:
    rng = np.random.default_rng(4)
    for _ in range(5):
        rates, params = world.power_law(rng, 1000, 0.01, 20.0)
        tau = params["tau/T"] * 1000
        assert world.fall(rates, 1000) == pytest.approx((tau + 500) / (tau + 1000), rel=0.05)


def test_every_run_of_the_linear_rate_world_contracts_at_every_step_and_stops_at_the_floor() -> None:
    for fam in families("C1", "rate"):
        loss = fam.generate(case_rng(0, "C1", "rate", fam.name, 0)).measurements["loss"]
        assert np.all(np.diff(loss) <= 0) and loss[-1] >= 0, fam.name
        assert loss[-2] / loss[0] > world.FLOOR or loss.size == 1001, fam.name
        assert math.isfinite(float(loss[-1]))


def test_the_far_end_of_the_grid_tells_a_fast_decay_from_a_floor_and_not_a_slow_one() -> None:
    from qin2025.c4 import challenge as c4

    q, eta = c4.Q[c4.STOPS], c4.precision(0.1, 14)
    assert eta == pytest.approx(1.22 * math.sqrt(2) * 0.1 / math.sqrt(14), rel=0.01)
    assert not c4.decays_told_apart(c4.World(1.0, 0.4), eta, q, c4.STOP_FLOORS)  # 0.33, 0.19, 0.11: a floor fits
    assert c4.decays_told_apart(c4.World(1.0, 0.6), eta, q, c4.STOP_FLOORS)  # 0.19, 0.082, 0.036: none does
    assert c4.levels_told_apart(c4.World(1.0, 1.0, 0.05), eta, q)  # 0.11, 0.065, 0.054: flattened
    assert not c4.levels_told_apart(c4.World(1.0, 0.5, 0.05), eta, q)  # 0.29, 0.17, 0.11: still falling


def test_a_faster_c5_seed_is_lower_at_every_late_step_and_an_l0_only_seed_is_not_faster_on_average() -> None:
    from qin2025.c5 import challenge as c5

    rng = np.random.default_rng(7)
    fast = [c5.seed(rng, c5.FASTER) for _ in range(50)]
    assert sum(c5.ordered(s) for s in fast) >= 5  # g^0.25 = 1.1-1.3 between neighbours: 5% scatter often crosses them
    slow = [c5.seed(rng, c5.L0_ONLY) for _ in range(200)]
    assert sum(c5.ordered(s) for s in slow) <= 6  # ordered by chance: 1/120 of seeds, and scatter-made ties
    starts = np.array([[c[0] for c in s.curves] for s in slow])
    assert np.all(np.diff(starts, axis=1) > -0.5)  # L_0 rises with beta (within the offset scatter)


def _log_rates(s: Any) -> np.ndarray:
    """Return each run's rate -d log(L - F)/dt from its curve and realised floor, by finite differences (5 x T).

    Independent of the module's terms-based rates; NaN where L - F is within 1e-9 of L (float's floor).
    """
    from qin2025.c5 import challenge as c5

    assert isinstance(s, c5.Seed)
    out = []
    for curve, run in zip(s.curves, s.runs, strict=True):
        excess = curve - run.floor
        ok = excess > 1e-9 * curve
        logs = np.where(ok, np.log(np.where(ok, excess, 1.0)), np.nan)
        out.append(-np.diff(logs))
    return np.array(out)


def _steeper_worlds() -> dict[str, tuple[Callable[[np.random.Generator], Any], Callable[[Any], bool], str]]:
    from qin2025.c5 import challenge as c5

    def exp(spec: c5.SteepSpec) -> Callable[[np.random.Generator], c5.Seed]:
        return lambda r: c5.steep_seed(r, spec)

    def power(spec: c5.WorldSpec) -> Callable[[np.random.Generator], c5.Seed]:
        return lambda r: c5.seed(r, spec)

    return {
        "steep": (exp(c5.STEEP), c5.steeper_ordered, "pass"),
        "steep L0": (exp(c5.STEEP_L0), c5.steeper_ordered, "pass"),
        "higher": (exp(c5.STEEP_HIGHER), lambda s: c5.steeper_ordered(s) and c5.crosses(s), "pass"),
        "scatter": (exp(c5.STEEP_SCATTER), c5.steeper_ordered, "pass"),
        "swapped": (exp(c5.STEEP_SWAPPED), c5.swapped, "swap"),
        "same lower": (exp(c5.SAME_LOWER), lambda s: c5.ordered(s) and c5.steeper_disordered(s), "fail"),
        "shallower": (exp(c5.SHALLOWER), lambda s: c5.ordered(s) and c5.swapped(s), "swap"),
        "fast grows": (exp(c5.FAST_GROWS), c5.steeper_disordered, "fail"),
        "slow weight": (exp(c5.SLOW_WEIGHT), c5.steeper_disordered, "fail"),
        "rescaled": (power(c5.FASTER), c5.steeper_disordered, "fail"),
        "rescaled 15%": (power(c5.FASTER_SCATTER), c5.steeper_disordered, "fail"),
        "L0 only": (power(c5.L0_ONLY), c5.steeper_disordered, "fail"),
        "floor reached": (power(c5.FLOOR_REACHED), lambda s: c5.floors_reached(s) and c5.steeper_disordered(s), "fail"),
        "floor unreached": (
            power(c5.FLOOR_UNREACHED),
            lambda s: c5.floors_unreached(s) and c5.steeper_disordered(s),
            "fail",
        ),
    }


@pytest.mark.parametrize("world", list(_steeper_worlds()))
def test_a_kept_steeper_seed_has_the_rate_order_its_answer_rests_on_read_from_its_own_curves(world: str) -> None:
    """Pass: every larger beta >= 4% steeper at every slow step; fail: the same two pairs out of order at every step;
    swap: one pair reversed by >= 9% at every step -- each read by finite differences of log(L - F_b)."""
    from qin2025.c5 import challenge as c5
    from qin2025.challenge.draw import until

    make, keep, answer = _steeper_worlds()[world]
    rng = np.random.default_rng(21)
    for _ in range(15):
        s = until(rng, make, keep)
        window = c5.slow_window(s)
        assert window is not None and window[0] <= c5.STEPS // 4
        rates = _log_rates(s)[:, int(window[0]) : -1]
        rates = rates[:, ~np.isnan(rates).any(axis=0)]
        assert rates.shape[1] >= 50, world  # the approach is readable over most of the slow window
        if answer == "pass":
            assert np.all(rates[1:] >= 1.04 * rates[:-1]), world
        elif answer == "fail":
            pairs = [np.all(rates[j] < rates[i]) for i in range(5) for j in range(i + 1, 5)]
            assert sum(pairs) >= 2, world
        else:
            assert any(np.all(rates[i] >= 1.09 * rates[j]) for i in range(5) for j in range(i + 1, 5)), world
        for curve in s.curves:
            assert np.all(curve > 0) and np.all(np.diff(curve) <= 0), world  # GD below its stability bound descends


def test_a_time_rescaled_power_law_is_steeper_by_g_at_equal_excess_and_barely_at_equal_steps() -> None:
    """Without scatter: at equal excess beta = 1's rate is g times beta = 0's; at step T, (T + tau)/(T + tau/g)."""
    from dataclasses import replace

    from qin2025.c5 import challenge as c5

    rng = np.random.default_rng(22)
    for _ in range(20):
        s = c5.seed(rng, replace(c5.FASTER, scatter=0.0))
        window = c5.slow_window(s)
        if window is None:
            continue
        g, tau = float(s.params["g"]), float(s.params["tau"])
        at_steps, at_levels = c5.step_rates(s, window), c5.level_rates(s, window)
        assert at_levels is not None
        # the fast phase's residue (<= 1% of the descent) is what separates the level ratio from g
        assert at_levels[-1] / at_levels[0] == pytest.approx(g, rel=0.03)
        end = at_steps[-1, -1] / at_steps[0, -1]
        assert end == pytest.approx((c5.STEPS + tau) / (c5.STEPS + tau / g), rel=1e-3)
        assert end <= 430 / 410 + 1e-3


@pytest.mark.parametrize(
    ("spec", "answer"),
    [
        ("STEEP", "pass"),
        ("STEEP_JUST", "pass"),
        ("STEEP_HIGHER", "pass"),
        ("STEEP_SMALL", "fail"),
        ("STEEP_LATE", "fail"),
        ("SAME_LOWER", "fail"),
        ("SHALLOWER", "fail"),
        ("FAST_GROWS", "fail"),
        ("SLOW_WEIGHT", "fail"),
    ],
)
def test_a_steeper_samples_mean_rate_ratio_sits_on_its_side_of_one_over_point_nine(spec: str, answer: str) -> None:
    """Over 24 seeds, by finite differences at steps T/4..T: pass, every beta > 0 >= 1.02/0.9; fail, some <= 1/0.9."""
    from qin2025.c5 import challenge as c5
    from qin2025.challenge.draw import until

    rng = np.random.default_rng(23)
    world = getattr(c5, spec)
    seeds = [until(rng, lambda r: c5.steep_seed(r, world), c5.has_window) for _ in range(c5.UNITS)]
    ratios = []
    for s in seeds:
        rates = _log_rates(s)[:, c5.STEPS // 4 : c5.STEPS // 4 + 100]  # before beta = 1 can reach float's floor
        ratios.append(rates[1:] / rates[0])
    mean = np.nanmean(ratios, axis=0)  # 4 betas x steps
    if answer == "pass":
        assert np.all(mean >= 1.02 * c5.MARGIN), spec
    else:
        assert np.any(np.all(mean <= c5.MARGIN, axis=1)), spec


def test_every_steeper_family_draws_five_descending_curves_of_the_ci_horizon() -> None:
    for role in ("steeper-order", "steeper-faster"):
        fams = families("C5", role)
        assert len(fams) >= 14 and {f.expect for f in fams} == {"pass", "fail", "zone"}
        for fam in fams:
            case = fam.generate(case_rng(0, "C5", role, fam.name, 0))
            units = case.measurements[UNITS] if role == "steeper-faster" else [case.measurements]
            assert len(units) == (24 if role == "steeper-faster" else 1)
            for unit in units:
                assert unit["betas"] == [0.0, 0.25, 0.5, 0.75, 1.0] and len(unit["curves"]) == 5
                for curve in unit["curves"]:
                    assert curve.shape == (401,) and np.all(curve > 0) and np.all(np.diff(curve) <= 0), fam.name


def _c7_seeds(world: c7.World, n: int, b: float | None = None) -> list[c7.Seed]:
    from qin2025.challenge.draw import until

    rng = np.random.default_rng(11)
    return [until(rng, lambda r: c7.seed(r, world, b), c7.separated) for _ in range(n)]


def test_a_noiseless_c7_z_world_has_rho_one_and_b_its_exponent() -> None:
    from dataclasses import replace

    for lever in ("input", "rotation"):
        world = replace(c7.Z_LAW, lever=lever, scatter=(0.0, 0.0), g=(0.0, 0.0))
        for s in _c7_seeds(world, 10):
            unit = c7.adapt(s)
            assert association_decision(**unit) == {c7_rho(): pytest.approx(1.0)}
            (b,) = governs_decision(**unit).values()
            assert b == pytest.approx(float(s.params["b"]), abs=1e-9)
    # the step size's residue and the lambda runs do not move b once lambda_max is held
    for s in _c7_seeds(replace(c7.Z_LAW, scatter=(0.0, 0.0), g=(-1.0, -0.5), lam_track=(0.5, 1.0)), 10):
        (b,) = governs_decision(**c7.adapt(s)).values()
        assert b == pytest.approx(float(s.params["b"]), abs=1e-9)


def c7_rho() -> str:
    from qin2025.c7.conditioning import ASSOCIATION

    return ASSOCIATION


def test_a_c7_w_v_or_lambda_only_world_has_b_zero_once_held_but_a_naive_elasticity_above_the_bar() -> None:
    from dataclasses import replace

    from qin2025.c7.conditioning import WV_HELD, elasticity

    for s in _c7_seeds(replace(c7.W_V_ONLY, scatter=(0.0, 0.0), g=(0.0, 0.0)), 10):
        unit = c7.adapt(s)
        (b,) = governs_decision(**unit).values()
        assert b == pytest.approx(0.0, abs=1e-9)
        assert 1.3 / 1.1 < c7.wv_span(s) < WV_HELD  # inside the held band, tracking kinv
        naive = elasticity(unit["rate"], unit["kinv"])  # W_V not held: the rate seems to follow kinv(Z)
        assert naive == pytest.approx(2 * float(s.params["w"]), rel=0.2) and naive > 0
    for s in _c7_seeds(replace(c7.FLAT, scatter=(0.0, 0.0), g=(0.5, 1.5), lam_track=(0.5, 1.5), lam_wander=0.0), 10):
        unit = c7.adapt(s)
        (b,) = governs_decision(**unit).values()
        assert b == pytest.approx(0.0, abs=1e-9)
        ref = list(c7.REFERENCE)
        naive = elasticity(np.array(unit["rate"])[ref], np.array(unit["kinv"])[ref])
        assert naive == pytest.approx(float(s.params["g"]) * float(s.params["c"]), abs=1e-9)


def test_the_c7_x_only_world_is_flat_on_the_rotation_lever_and_follows_kinv_on_the_input_lever() -> None:
    from dataclasses import replace

    quiet = replace(c7.X_ONLY, scatter=(0.0, 0.0), g=(0.0, 0.0))
    for s in _c7_seeds(quiet, 5):
        assert np.ptp(np.log(s.rate)) == pytest.approx(0.0, abs=1e-12)  # X's spectrum held: nothing moves the rate
    for s in _c7_seeds(replace(quiet, lever="input", span=(15.0, 100.0)), 20):
        (rho,) = association_decision(**c7.adapt(s)).values()
        assert rho >= 0.7  # kinv(Z) follows kx within 0.15 in log: the association the input part states


def test_every_c7_case_sits_on_its_side_of_the_declared_zone() -> None:
    from qin2025.c7.conditioning import MIN_SPAN, WV_HELD, in_zone

    for role in ("association-input", "association-rotation", "governs"):
        for fam in families("C7", role):
            for i in range(DRAWS):
                case = fam.generate(case_rng(0, "C7", role, fam.name, i))
                units = case.measurements[UNITS] if role == "governs" else [case.measurements]
                for u in units:
                    zoned = in_zone(u["kinv"], u["reference"], u["wv"])
                    assert zoned == (fam.expect == "zone" and "0.45-0.55" not in fam.name), fam.name
                    k = np.array(u["kinv"])[: len(c7.KX)]
                    if fam.expect != "zone":
                        assert k.max() / k.min() >= MIN_SPAN and (u["wv"] is None) == (role == "association-input")
                    if u["wv"] is not None and fam.expect != "zone":
                        wv = np.array(u["wv"])[: len(c7.KX)]
                        assert wv.max() / wv.min() < WV_HELD


def test_c7s_outside_worlds_draw_what_the_referees_script_draws() -> None:
    """qin2025/c7/outside.py is the referee's records/outside_c7/worlds.py law, drawn in the same order."""
    import importlib.util
    import sys
    from pathlib import Path

    from qin2025.c7 import outside as port

    path = Path(__file__).resolve().parents[2] / "records" / "outside_c7" / "worlds.py"
    spec = importlib.util.spec_from_file_location("outside_c7_worlds", path)
    assert spec is not None and spec.loader is not None
    ref = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = ref  # its dataclass looks its module up
    try:
        spec.loader.exec_module(ref)
    finally:
        del sys.modules[spec.name]
    ported = port.governs_outside(3)
    assert len(ported) == len(ref.WORLDS) == 10
    for i, (fam, law) in enumerate(zip(ported, ref.WORLDS, strict=True)):
        assert fam.name.startswith(f"outside: {law.name.split()[0]} ")
        expect = {"REPRODUCED": "pass", "NOT REPRODUCED": "fail", "INCONCLUSIVE": "zone"}[law.answer]
        assert fam.expect == expect
        case = fam.generate(np.random.default_rng([7, i]))
        rng = np.random.default_rng([7, i])
        for unit in case.measurements["units"]:
            rate, kinv, lam, wv = ref.unit(law, rng)
            assert unit["rate"] == rate.tolist() and unit["kinv"] == kinv.tolist()
            assert unit["lam"] == lam.tolist() and unit["wv"] == wv.tolist()
            assert unit["reference"] == ref.REFERENCE
