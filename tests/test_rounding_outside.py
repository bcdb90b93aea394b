"""An outside referee's challenge cases for the rounding rule (docs/protocols.md, "The rounding spread").

Written from the rule's documented words alone, before the implementation was read. Each case states
its expected answer and the sentence it rests on. The three rules under test:

(a) CHAOTIC: "where its count (met or n) moved or could have: where rounding moved some unit's value
    by at least the distance of a unit from the edge where its check stops being met."
(b) SPREAD: "``rounding``, the largest relative move of its median or of any one unit's value,
    whichever is larger (a median of values each moved at most r can move r, though the reruns'
    happened not to)."
(c) MERGE: "Pinning the same run again with more reruns keeps the spread the earlier reruns measured
    (their numerics stay listed), so reruns on hosts no longer at hand still count."

Consequences checked on a run of the pinned block under other numerics ("On the pinned block under
other numerics"): a chaotic statistic is held at the verdict level; a median whose measured rounding
exceeds its tolerance has its count alone held; any other count that moved, or median beyond its
tolerance, is a deviation.

Every value below is a binary fraction, so "at least the distance" is tested at exact equality.
Statistics s and t are both ``<= 1.0``; the edge unit sits at 1 - 1/256 (distance 1/256 = EPS).
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest

from claimcheck.decide.record import ClaimRecorder
from claimcheck.decide.verdicts import ClaimResult, TestOutcome
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.provenance.expectations import (
    Expected,
    PinnedAt,
    deviations,
    merge_pins,
    parse_pins,
    pins_of,
    render_pins,
    with_rounding,
)
from claimcheck.report.rundata import RunData

DEVIATE, PASS = True, False
EPS = 1 / 256  # the edge unit's distance from the edge (1.0)
EDGE = 1.0 - EPS

# 16 low units, one at 0.5 (index 16), the edge unit (index 17), two misses at 2.0 (distance 1.0).
# met 18 of 20; median (0.390625 + 0.40625) / 2 = 0.3984375.
S0 = [0.25 + i / 64 for i in range(16)] + [0.5, EDGE, 2.0, 2.0]
T0 = [0.125 + i / 64 for i in range(16)] + [0.5, EDGE, 2.0, 2.0]
# No unit near the edge: the nearest met units sit at 0.5 (distance 0.5), the misses at 2.0.
FAR = [0.25 + i / 64 for i in range(16)] + [0.5, 0.5, 2.0, 2.0]


def _set(base: Sequence[float], **at: float) -> list[float]:
    """``base`` with unit i replaced where ``u{i}=value`` is given."""
    out = list(base)
    for k, v in at.items():
        out[int(k[1:])] = v
    return out


def _protocol() -> ClaimProtocol:
    part = Part("", "s and t stay small", (Stat("s", "<=", 1.0), Stat("t", "<=", 1.0)), bar=0.5)
    return ClaimProtocol("C1", 1, (part,), (Control("ctl", "", "shifted"),), Seeds("b", 1000, {"ci": 40}))


def _run(s: Sequence[float] = S0, t: Sequence[float] = T0) -> list[ClaimResult]:
    """One run of claim C1: unit i records s[i] and t[i]; the control records 5.0 for both."""
    proto = _protocol()
    tests = []
    for seed, (sv, tv) in enumerate(zip(s, t, strict=True)):
        rec = ClaimRecorder("C1", seed=seed, protocol=proto)
        rec.check("s", sv, unit=seed)
        rec.check("t", tv, unit=seed)
        rec.check("s", 5.0, control="ctl", unit=seed)
        rec.check("t", 5.0, control="ctl", unit=seed)
        tests.append(
            TestOutcome(f"t.py::test_C1[{seed}]", "C1", "title", "src", "passed", rec, protocol=proto.to_dict())
        )
    return RunData("r", {"cpu": "x"}, tests).results()


def _verdicts(rs: Sequence[ClaimResult]) -> tuple[str, ...]:
    (r,) = rs
    return (str(r.verdict), *(str(p.verdict) for p in r.parts), *(c.status for c in r.controls))


def _other_numerics(base: list[ClaimResult], now: list[ClaimResult], pins: Expected, expected: bool) -> list[str]:
    """Judge ``now`` on the pinned block under other numerics; its verdicts must equal ``base``'s (fixture)."""
    assert _verdicts(now) == _verdicts(base), f"fixture broken: {_verdicts(now)} vs {_verdicts(base)}"
    devs = deviations(now, pins, "the pins", same_block=True, same_numerics=False)
    assert bool(devs) is expected, f"expected {'a deviation' if expected else 'none'}, got {devs}"
    return devs


def _pinned_again(first: Expected, second: Expected, tmp_path: Path) -> Expected:
    """Write ``first`` as an expectations file, pin ``second`` into it again, and read the result back."""
    path = tmp_path / "expectations.toml"
    text = merge_pins(render_pins("ci", first, at=PinnedAt()), path, "ci", second, "pinned again", at=PinnedAt())
    return parse_pins(tomllib.loads(text), "--claim-expectations", path)["ci"]


BASE = _run()


def test_00_fixture() -> None:
    st = pins_of(BASE)["C1"].stats["claim / s"]
    assert (st.met, st.n, st.median) == (18, 20, 0.3984375)
    assert str(BASE[0].verdict) == "REPRODUCED"
    # flipping the edge unit (met 18 -> 17) keeps every verdict: counts, not verdicts, are at stake below
    assert _verdicts(_run(s=_set(S0, u17=1.0 + EPS))) == _verdicts(BASE)


def test_01_edge_unit_moved_by_exactly_its_distance_is_chaotic() -> None:
    """(a) PASS: a rerun moved the edge unit AWAY from the edge by exactly its distance (count unchanged).

    "moved some unit's value by at least the distance of a unit from the edge" (equality counts): s is
    chaotic, so a later run under other numerics where that unit crosses the edge is held at the
    verdict level and passes.
    """
    pins = with_rounding(BASE, [("cpu A", _run(s=_set(S0, u17=EDGE - EPS)))])
    assert pins["C1"].stats["claim / s"].chaotic
    assert not pins["C1"].stats["claim / t"].chaotic
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, PASS)


def test_02_edge_unit_moved_by_half_its_distance_is_not_chaotic() -> None:
    """(a) DEVIATE: a rerun moved the edge unit toward the edge by half its distance, nothing else moved.

    No unit moved by as much as any unit's distance (smallest: EPS), and the count did not move: s is
    not chaotic. "A count that moved where no rerun moved it ... is a deviation": the later crossing
    deviates.
    """
    pins = with_rounding(BASE, [("cpu A", _run(s=_set(S0, u17=EDGE + EPS / 2)))])
    assert not pins["C1"].stats["claim / s"].chaotic
    devs = _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, DEVIATE)
    assert any("s" in d for d in devs)


def test_03_far_unit_moved_by_the_edge_units_distance_is_chaotic() -> None:
    """(a) PASS: a rerun moved a FAR unit (0.5, distance 0.5) by EPS; the edge unit did not move at all.

    "rounding moved SOME unit's value by at least the distance of A unit from the edge": the moved unit
    and the near unit need not be the same one -- a rounding of EPS seen anywhere could carry the edge
    unit across, so the count "could have" moved: chaotic; the later crossing passes.
    (Reading of the words: "some unit" / "a unit", not "its own distance".)
    """
    pins = with_rounding(BASE, [("cpu A", _run(s=_set(S0, u16=0.5 + EPS)))])
    assert pins["C1"].stats["claim / s"].chaotic
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, PASS)


def test_04_far_moves_smaller_than_every_distance_are_not_chaotic() -> None:
    """(a) DEVIATE: a rerun moved every unit but the edge one by EPS/2 (relative up to 1.6%), counts fixed.

    Each move is below the smallest distance (EPS): s is not chaotic however many units moved, and its
    rounding is a few percent (within rtol 5%). The later crossing of the edge unit deviates.
    """
    moved = [v + EPS / 2 if i != 17 else v for i, v in enumerate(S0)]
    pins = with_rounding(BASE, [("cpu A", _run(s=moved))])
    sp = pins["C1"].stats["claim / s"]
    assert not sp.chaotic
    assert 0 < sp.rounding < 0.05
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, DEVIATE)


def test_05_a_missed_unit_just_past_the_edge_makes_it_chaotic() -> None:
    """(a) PASS: no met unit near the edge; a MISSED unit sits at 1 + EPS and a rerun moves it EPS further out.

    Its check is one EPS from being met: a move of EPS could have changed the count ("moved or could
    have"), so s is chaotic; a later run where that unit comes back inside (met 17 -> 18) passes.
    """
    s0 = _set(FAR, u17=1.0 + EPS)
    base = _run(s=s0)
    pins = with_rounding(base, [("cpu A", _run(s=_set(s0, u17=1.0 + 2 * EPS)))])
    assert pins["C1"].stats["claim / s"].chaotic
    _other_numerics(base, _run(s=_set(s0, u17=EDGE)), pins, PASS)


def test_06_a_rerun_that_moved_nothing_excuses_nothing() -> None:
    """(a)+(b) DEVIATE twice: the rerun reproduced every value exactly.

    rounding 0, not chaotic, the numerics listed. Under other numerics the edge crossing deviates
    (count), and so does a median moved 7% (beyond rtol 5%, and rounding 0 does not exceed it).
    """
    pins = with_rounding(BASE, [("cpu A", _run())])
    sp = pins["C1"].stats["claim / s"]
    assert (sp.rounding, sp.chaotic) == (0.0, "")
    assert "cpu A" in pins["C1"].rounding
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, DEVIATE)
    _other_numerics(BASE, _run(s=[v * 1.07 for v in S0[:17]] + S0[17:]), pins, DEVIATE)


def test_07_a_rerun_that_moved_t_only_frees_t_not_s() -> None:
    """(a) t crossing: PASS; s crossing: DEVIATE. The rerun moved t's edge unit across; s did not move.

    Chaotic is per statistic: t's count moved, s's did not and no s unit moved at all.
    """
    pins = with_rounding(BASE, [("cpu A", _run(t=_set(T0, u17=1.0 + EPS)))])
    assert pins["C1"].stats["claim / t"].chaotic
    assert not pins["C1"].stats["claim / s"].chaotic
    _other_numerics(BASE, _run(t=_set(T0, u17=1.0 + EPS)), pins, PASS)
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, DEVIATE)


def test_08_units_moved_8pct_median_not_at_all_frees_the_median() -> None:
    """(b) PASS: units below the median moved -8%, above +8%, the middle two not at all (median fixed).

    "the largest relative move of its median or of any one unit's value, whichever is larger": past
    rtol 5%, so the median is held "by its count alone" and a later run whose median moved 7% (counts
    unchanged) passes. No unit is within 0.5 of the edge and no move exceeds 0.16: not chaotic.

    CORRECTED after reading the code: a unit's move is relative to the MEDIAN, not to the unit's own
    value (the parenthetical's bound: a median of values each moved at most r*|median| moves at most
    that). First expected 0.08; the spread is 0.16 (a miss at 2.0 moved 8%) / 0.3984375 = 0.4016.
    """
    base = _run(s=FAR)
    rerun = [v * 0.92 if i < 9 else v if i < 11 else v * 1.08 for i, v in enumerate(FAR)]
    pins = with_rounding(base, [("cpu A", _run(s=rerun))])
    sp = pins["C1"].stats["claim / s"]
    assert sp.median == pins_of(_run(s=rerun))["C1"].stats["claim / s"].median  # the fixture: median unmoved
    assert not sp.chaotic
    assert sp.rounding == pytest.approx(0.16 / 0.3984375)
    _other_numerics(base, _run(s=[v * 1.07 for v in FAR]), pins, PASS)


# A median tiny beside its units: 9 negative units, two at 2**-10 (the median), five small positive
# ones, 0.40625 (index 16), 0.9375 (index 17, distance 1/16), two misses at 2.0.
TINY = [-0.25 - i / 64 for i in range(9)] + [2**-10, 2**-10] + [0.25 + i / 64 for i in range(5)]
TINY += [0.40625, 0.9375, 2.0, 2.0]


def test_09_tiny_median_one_unit_moved_10pct() -> None:
    """(b)+(a) median 8%: PASS; edge crossing: DEVIATE. A rerun moved unit 16 by 10% (0.040625); median fixed.

    The unit's move, larger than the median's 0, sets the spread, past rtol: the median is held by its
    count alone. The move 0.040625 is below the nearest unit's distance 1/16: not chaotic, so the count
    is still held and the crossing of the 0.9375 unit deviates.

    CORRECTED after reading the code: first expected rounding 0.1 (the unit's move relative to itself);
    it is relative to the median, 0.040625 / 2**-10 = 41.6. The verdicts on later runs are unchanged.
    """
    base = _run(s=TINY)
    pins = with_rounding(base, [("cpu A", _run(s=_set(TINY, u16=0.40625 * 1.1)))])
    sp = pins["C1"].stats["claim / s"]
    assert sp.median == 2**-10
    assert not sp.chaotic
    assert sp.rounding == pytest.approx(0.040625 * 2**10)
    _other_numerics(base, _run(s=_set(TINY, u9=2**-10 * 1.08, u10=2**-10 * 1.08)), pins, PASS)
    _other_numerics(base, _run(s=_set(TINY, u17=1.0625)), pins, DEVIATE)


def test_10_pinned_again_with_a_rerun_that_moved_nothing_keeps_the_earlier_chaos(tmp_path: Path) -> None:
    """(c) PASS: first pin: rerun "cpu A" carried s's edge unit across (chaotic). Pinned again from the
    same run with rerun "cpu B" that moved nothing.

    "keeps the spread the earlier reruns measured (their numerics stay listed)": s stays chaotic, both
    numerics listed; the edge crossing under other numerics passes -- only the earlier spread excuses it.
    """
    first = with_rounding(BASE, [("cpu A", _run(s=_set(S0, u17=1.0 + EPS)))])
    second = with_rounding(BASE, [("cpu B", _run())])
    assert not second["C1"].stats["claim / s"].chaotic  # the fixture: cpu B alone would not excuse it
    pins = _pinned_again(first, second, tmp_path)
    assert {"cpu A", "cpu B"} <= set(pins["C1"].rounding)
    assert pins["C1"].stats["claim / s"].chaotic
    _other_numerics(BASE, _run(s=_set(S0, u17=1.0 + EPS)), pins, PASS)


def test_11_pinned_again_keeps_the_earlier_unit_spread(tmp_path: Path) -> None:
    """(c)+(b) PASS: first pin's rerun moved units 8% with the median fixed (rounding 0.08); the second
    pin's rerun moved nothing (rounding 0).

    The merged spread is the larger (the earlier reruns' spread is kept), so a median moved 7% under
    other numerics is held by its count alone and passes.

    CORRECTED after reading the code: the earlier spread is 0.16 / 0.3984375 (see case 08), not 0.08;
    the file keeps it to 3 significant digits (0.402).
    """
    base = _run(s=FAR)
    rerun = [v * 0.92 if i < 9 else v if i < 11 else v * 1.08 for i, v in enumerate(FAR)]
    first = with_rounding(base, [("cpu A", _run(s=rerun))])
    second = with_rounding(base, [("cpu B", _run(s=FAR))])
    pins = _pinned_again(first, second, tmp_path)
    assert pins["C1"].stats["claim / s"].rounding == pytest.approx(0.16 / 0.3984375, rel=5e-3)
    _other_numerics(base, _run(s=[v * 1.07 for v in FAR]), pins, PASS)


def test_12_pinning_a_different_run_does_not_keep_the_old_spread(tmp_path: Path) -> None:
    """(c) DEVIATE: the first pin (chaotic s, from "cpu A") is replaced by pins of a DIFFERENT run
    (t's median moved 6%), measured with a rerun that moved nothing.

    The rule keeps the spread when "the same run" is pinned again; a different run's pins carry their
    own spread, so s is no longer chaotic and its edge crossing under other numerics deviates.
    """
    first = with_rounding(BASE, [("cpu A", _run(s=_set(S0, u17=1.0 + EPS)))])
    t1 = [v * 1.0625 for v in T0[:17]] + T0[17:]
    other = _run(t=t1)
    second = with_rounding(other, [("cpu B", _run(t=t1))])
    pins = _pinned_again(first, second, tmp_path)
    assert not pins["C1"].stats["claim / s"].chaotic
    _other_numerics(other, _run(s=_set(S0, u17=1.0 + EPS), t=t1), pins, DEVIATE)


def test_13_the_filed_spread_is_the_measured_spread() -> None:
    """(b) PASS. Added AFTER reading the code (render_pins), not from the words alone; it failed until the
    file wrote the spread rounded up (it wrote 3 significant digits, rounded to nearest).

    "each statistic gets ``rounding``, the largest relative move ...": the spread the file pins should be
    the one measured. A miss far from the edge moved by 5.004% of the median (not chaotic); measured
    spread 0.05004 > rtol 0.05, so in memory a median moved 5.002% under other numerics is not held.
    Written to the expectations file and read back, the same run must pass too.
    """
    rerun = _set(FAR, u18=2.0 + 0.05004 * 0.3984375)
    base = _run(s=FAR)
    pins = with_rounding(base, [("cpu A", _run(s=rerun))])
    assert pins["C1"].stats["claim / s"].rounding > 0.05
    now = _run(s=[v * 1.05002 for v in FAR])
    _other_numerics(base, now, pins, PASS)  # in memory
    filed = parse_pins(tomllib.loads(render_pins("ci", pins)), "--claim-expectations", "f.toml")["ci"]
    _other_numerics(base, now, filed, PASS)  # as the file pins it
