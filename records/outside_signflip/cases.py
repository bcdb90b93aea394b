"""Outside referee's challenge worlds for claimcheck.gate.paired.paired_test.

Run from the repository root:  .venv/bin/python records/outside_signflip/cases.py [FAMILY ...]
FAMILY is any of 1 2 3 4 5 6 7 (default: all; 7 holds rows 6l, 6m and 6n).  Every world is seeded;
each prints markdown rows "| family | law | n | margin | right answer | right/N | worse | better |
equivalent | undecided | error | t-only changed |".
The last column is what a one-sided paired t-test alone (alpha 0.05, same margin) would have called
changed (worse or better), to show what the sign-flip requirement adds or costs.

Outcomes are paired_test(...).movement() with no Holm (the function called alone, alpha 0.05).
sign = +1 (larger is worse) everywhere unless stated.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

from claimcheck.gate.paired import Movement, paired_test

N_INST = 500
NS = (4, 8, 20, 60)
HERE = Path(__file__).resolve().parent
LABEL = {
    Movement.WORSE: "worse",
    Movement.BETTER: "better",
    Movement.EQUIVALENT: "equivalent",
    Movement.UNDECIDED: "undecided",
}
OUTS = ("worse", "better", "equivalent", "undecided", "error")


def call(before, after, margin, sign=1, looks=1):
    """The function's outcome as a word; any exception is 'error'."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = paired_test(list(map(float, before)), list(map(float, after)), float(margin), sign, looks=looks)
            return LABEL[r.movement()]
    except Exception:
        return "error"


def call_full(before, after, margin, sign=1, looks=1):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = paired_test(list(map(float, before)), list(map(float, after)), float(margin), sign, looks=looks)
            return LABEL[r.movement()], r
    except Exception as e:
        return "error", f"{type(e).__name__}: {e}"


def t_only(before, after, margin, sign=1):
    """One-sided paired t-tests against the margin alone (the thing the sign-flip test guards)."""
    d = sign * (np.asarray(after, float) - np.asarray(before, float))
    d = d[np.isfinite(d)]
    n = d.size
    if n < 2 or not np.isfinite(margin) or margin <= 0:
        return False
    sd = d.std(ddof=1)
    if sd == 0:
        return abs(d.mean()) > margin
    se = sd / math.sqrt(n)
    pw = stats.t.sf((d.mean() - margin) / se, n - 1)
    pb = stats.t.cdf((d.mean() + margin) / se, n - 1)
    return pw < 0.05 or pb < 0.05


# ---------------------------------------------------------------- laws
def bimodal(rng, n):
    mode = rng.random(n) < 0.6
    return np.where(mode, rng.uniform(0.992, 0.998, n), rng.uniform(0.92, 0.98, n))


def discrete(rng, n):
    return rng.choice([0.90, 0.95, 1.00], size=n, p=[0.2, 0.3, 0.5])


LAWS = {
    "normal N(0,1)": lambda rng, n: rng.normal(0.0, 1.0, n),
    "bimodal 60% U(.992,.998)+40% U(.92,.98)": bimodal,
    "Student t(2)": lambda rng, n: rng.standard_t(2, n),
    "lognormal(0,1)": lambda rng, n: rng.lognormal(0.0, 1.0, n),
}


def law_scale(name):
    """The law's SD (t(2): its robust scale IQR/1.349, its SD being infinite)."""
    if name.startswith("normal"):
        return 1.0
    if name.startswith("lognormal"):
        return math.sqrt((math.e - 1) * math.e)
    if name.startswith("Student"):
        return (stats.t.ppf(0.75, 2) - stats.t.ppf(0.25, 2)) / 1.349
    if name.startswith("bimodal"):
        m = 0.6 * 0.995 + 0.4 * 0.95
        v = 0.6 * (0.006**2 / 12 + (0.995 - m) ** 2) + 0.4 * (0.06**2 / 12 + (0.95 - m) ** 2)
        return math.sqrt(v)
    if name.startswith("discrete"):
        x = np.array([0.90, 0.95, 1.0])
        p = np.array([0.2, 0.3, 0.5])
        return float(np.sqrt(p @ (x - p @ x) ** 2))
    raise KeyError(name)


def half_sd(before):
    """The user's margin: half the baseline's SD over its own units."""
    return 0.5 * float(np.std(before, ddof=1))


# ---------------------------------------------------------------- bookkeeping
ROWS: list[dict] = []


def tally(family, law, n, margin_desc, right_desc, is_right, worlds, note=""):
    """worlds: iterable of (before, after, margin[, sign[, looks]]); is_right(outcome) -> bool."""
    counts = dict.fromkeys(OUTS, 0)
    right = tonly = total = 0
    for w in worlds:
        b, a, m, *rest = w
        sign = rest[0] if rest else 1
        looks = rest[1] if len(rest) > 1 else 1
        out = call(b, a, m, sign, looks)
        counts[out] += 1
        right += bool(is_right(out))
        tonly += bool(t_only(b, a, m, sign))
        total += 1
    row = dict(
        family=family,
        law=law,
        n=n,
        margin=margin_desc,
        right_answer=right_desc,
        right=right,
        total=total,
        **counts,
        t_only_changed=tonly,
        note=note,
    )
    ROWS.append(row)
    print(
        f"| {family} | {law} | {n} | {margin_desc} | {right_desc} | {right}/{total} | "
        + " | ".join(str(counts[o]) for o in OUTS)
        + f" | {tonly} |"
        + (f" {note}" if note else ""),
        flush=True,
    )
    return row


def not_changed(o):
    return o in ("equivalent", "undecided")


def rng_for(family, law_i, n, sub=0):
    return np.random.default_rng([family, law_i, n, sub, 20240607])


# ---------------------------------------------------------------- families
def family1():
    """Same law, new draws (a reseed). Right: never worse/better."""
    laws = dict(LAWS)
    laws["discrete {.90:.2,.95:.3,1.0:.5}"] = discrete
    for li, (name, draw) in enumerate(laws.items()):
        for n in NS:
            # (a) margin from the before sample, as a user would
            rng = rng_for(1, li, n, 0)
            worlds = []
            for _ in range(N_INST):
                b, a = draw(rng, n), draw(rng, n)
                worlds.append((b, a, half_sd(b)))
            tally("1 reseed", name, n, "0.5*SD(before)", "not changed", not_changed, worlds)
            # (b) the same worlds against a margin fixed from the law
            m = 0.5 * law_scale(name)
            tally(
                "1 reseed",
                name,
                n,
                f"0.5*law SD = {m:.4g}",
                "not changed",
                not_changed,
                [(b, a, m) for b, a, _ in worlds],
            )


def family2():
    """Same draws, rounding-level change. Right: equivalent."""
    for li, (name, draw) in enumerate(LAWS.items()):
        for n in NS:
            rng = rng_for(2, li, n)
            worlds = []
            for _ in range(N_INST):
                b = draw(rng, n)
                a = b * (1 + 1e-12 * rng.standard_normal(n))
                worlds.append((b, a, half_sd(b)))
            tally("2 rounding", name, n, "0.5*SD(before)", "equivalent", lambda o: o == "equivalent", worlds)


def family3():
    """Same draws, uniform shift 2-5x the margin plus noise of SD margin/2. Right: worse."""
    for li, (name, draw) in enumerate(LAWS.items()):
        for n in NS:
            rng = rng_for(3, li, n)
            worlds = []
            for _ in range(N_INST):
                b = draw(rng, n)
                m = half_sd(b)
                k = rng.uniform(2, 5)
                a = b + k * m + rng.normal(0, 0.5 * m, n)
                worlds.append((b, a, m))
            tally(
                "3 same-draw shift 2-5x margin (+noise sd m/2)",
                name,
                n,
                "0.5*SD(before)",
                "worse",
                lambda o: o == "worse",
                worlds,
            )


def family4():
    """New draws from the law shifted by 1-2 SDs. Right: worse."""
    for li, (name, draw) in enumerate(LAWS.items()):
        s = law_scale(name)
        for n in NS:
            rng = rng_for(4, li, n)
            w_law, w_smp = [], []
            for _ in range(N_INST):
                b = draw(rng, n)
                a0 = draw(rng, n)
                k = rng.uniform(1, 2)
                w_law.append((b, a0 + k * s, 0.5 * s))  # law SD: shift 2-4x the margin
                w_smp.append((b, a0 + k * 2 * half_sd(b), half_sd(b)))  # sample SD: shift 2-4x the margin
            tally(
                "4 new-draw shift 1-2 law SD",
                name,
                n,
                f"0.5*law SD = {0.5 * s:.4g}",
                "worse",
                lambda o: o == "worse",
                w_law,
            )
            tally("4 new-draw shift 1-2 SD(before)", name, n, "0.5*SD(before)", "worse", lambda o: o == "worse", w_smp)


def family5():
    """Same draws, k of 20 units pushed P SDs the bad way; the others get noise (0.1 SD, or 1e-12 relative).
    The mean moves by k/20 * P SDs (the note gives it in margins); right answer by the documented estimand
    (the mean paired change): worse wherever that exceeds the margin (every row but '3/20 +3 SD', 0.9x)."""
    for li, name in enumerate(["normal N(0,1)", "bimodal 60% U(.992,.998)+40% U(.92,.98)"]):
        draw = LAWS[name]
        for k, P, noise in [
            (3, 10, 0.1),
            (3, 10, 1e-12),
            (3, 100, 0.1),
            (3, 3, 0.1),
            (1, 30, 0.1),
            (4, 10, 0.1),
            (4, 100, 1e-12),
            (5, 10, 0.1),
            (8, 10, 0.1),
        ]:
            rng = rng_for(5, li, k * 1000 + P, int(noise > 1e-6))
            worlds = []
            for _ in range(N_INST):
                b = draw(rng, 20)
                sd = float(np.std(b, ddof=1))
                a = b + rng.normal(0, noise * sd, 20) if noise > 1e-6 else b * (1 + 1e-12 * rng.standard_normal(20))
                bad = rng.choice(20, k, replace=False)
                a[bad] += P * sd
                worlds.append((b, a, 0.5 * sd))
            mean_shift = k / 20 * P
            beyond = mean_shift > 0.5
            tally(
                f"5 {k}/20 units +{P} SD (others noise {noise:g} SD)",
                name,
                20,
                "0.5*SD(before)",
                "worse" if beyond else "not worse",
                (lambda o: o == "worse") if beyond else (lambda o: o != "worse"),
                worlds,
                note=f"true mean shift {mean_shift:g} SD = {2 * mean_shift:g}x margin",
            )


def family6():
    # 6a. size at the margin's edge (normal differences, mean exactly +margin): worse must be <= 5%
    for n in (8, 20, 60):
        r = np.random.default_rng([6, 1, n])
        worlds = []
        for _ in range(N_INST):
            b = r.normal(0, 1, n)
            m = half_sd(b)
            a = b + m + r.normal(0, m, n)
            worlds.append((b, a, m))
        tally(
            "6a size at edge: d ~ N(+m, m)",
            "normal",
            n,
            "0.5*SD(before)",
            "not worse (<=5% worse)",
            lambda o: o != "worse",
            worlds,
        )
    # 6b. skewed differences whose mean is inside the margin (0.5 m): 95% of units +1.5m, 5% at -18.5m
    for n in (8, 20, 60):
        r = np.random.default_rng([6, 2, n])
        worlds = []
        for _ in range(N_INST):
            b = r.normal(0, 1, n)
            m = half_sd(b)
            tail = r.random(n) < 0.05
            a = b + np.where(tail, -18.5 * m, 1.5 * m) + r.normal(0, 0.05 * m, n)
            worlds.append((b, a, m))
        tally(
            "6b skewed d, mean +0.5m (95%: +1.5m, 5%: -18.5m)",
            "normal",
            n,
            "0.5*SD(before)",
            "not worse",
            lambda o: o != "worse",
            worlds,
            note="inherent: a tail not drawn cannot be seen",
        )
    # 6c. rare breakage on new seeds: 5% of units +30 SD (mean shift 1.5 SD = 3x margin); right: not equivalent
    for n in (8, 20, 60):
        r = np.random.default_rng([6, 3, n])
        worlds = []
        for _ in range(N_INST):
            b = r.normal(0, 1, n)
            m = half_sd(b)
            a = b + r.normal(0, 0.1, n) + np.where(r.random(n) < 0.05, 30.0, 0.0)
            worlds.append((b, a, m))
        tally(
            "6c 5% of units break +30 SD (same draws)",
            "normal",
            n,
            "0.5*SD(before)",
            "worse (at least not equivalent)",
            lambda o: o != "equivalent",
            worlds,
            note="inherent: a tail not drawn cannot be seen",
        )
    # 6d. identical values, constant shifts without noise
    for n in (4, 8, 20):
        r = np.random.default_rng([6, 4, n])
        W = [(b := r.normal(0, 1, n), b.copy(), half_sd(b)) for _ in range(N_INST)]
        tally("6d after == before exactly", "normal", n, "0.5*SD(before)", "equivalent", lambda o: o == "equivalent", W)
        W = [(b := r.normal(0, 1, n), b + 2 * half_sd(b), half_sd(b)) for _ in range(N_INST)]
        tally(
            "6d constant shift 2m, no noise",
            "normal",
            n,
            "0.5*SD(before)",
            "worse",
            lambda o: o == "worse",
            W,
            note="n=4 cannot be shown (2^-4 > 0.05)",
        )
        W = [(b := r.normal(0, 1, n), b + 0.5 * half_sd(b), half_sd(b)) for _ in range(N_INST)]
        tally(
            "6d constant shift 0.5m, no noise",
            "normal",
            n,
            "0.5*SD(before)",
            "equivalent",
            lambda o: o == "equivalent",
            W,
        )
        W = [(b := r.normal(0, 1, n), b - 2 * half_sd(b), half_sd(b)) for _ in range(N_INST)]
        tally("6d constant shift -2m, no noise", "normal", n, "0.5*SD(before)", "better", lambda o: o == "better", W)
    # 6e. sign symmetry and swap symmetry, on bimodal reseeds and normal shifts (n = 8, 20)
    mism_sign = mism_swap = mism_scale = mism_perm = nondet = total = 0
    examples = []
    flip = {
        "worse": "better",
        "better": "worse",
        "equivalent": "equivalent",
        "undecided": "undecided",
        "error": "error",
    }
    for n in (8, 17, 20):
        r = np.random.default_rng([6, 5, n])
        for i in range(150):
            b = bimodal(r, n) if i % 2 else r.normal(0, 1, n)
            a = (bimodal(r, n) if i % 2 else r.normal(0, 1, n)) + (0 if i % 3 else 2 * half_sd(b))
            m = half_sd(b)
            o = call(b, a, m, 1)
            total += 1
            if call(-b, -a, m, -1) != o:
                mism_sign += 1
                examples.append(("sign", n, i))
            if call(a, b, m, 1) != flip[o]:
                mism_swap += 1
                examples.append(("swap", n, i))
            if call(b * 1e6, a * 1e6, m * 1e6, 1) != o or call(b * 1e-6, a * 1e-6, m * 1e-6, 1) != o:
                mism_scale += 1
                examples.append(("scale", n, i))
            p = r.permutation(n)
            if call(b[p], a[p], m, 1) != o:
                mism_perm += 1
                examples.append(("perm", n, i))
            if call(b, a, m, 1) != o:
                nondet += 1
                examples.append(("repeat", n, i))
    line = (
        f"6e invariances over {total} worlds (n=8,17,20): sign-mirror mismatches {mism_sign}, swap "
        f"mismatches {mism_swap}, scale x1e+-6 mismatches {mism_scale}, unit-permutation mismatches "
        f"{mism_perm}, repeat-call mismatches {nondet}; first: {examples[:5]}"
    )
    print(line, flush=True)
    ROWS.append(dict(family="6e invariances", text=line))
    # 6f. looks = 3 on reseeds (bimodal, normal) and shifts
    for n in (8, 20, 60):
        r = np.random.default_rng([6, 6, n])
        W = [(b := bimodal(r, n), bimodal(r, n), half_sd(b), 1, 3) for _ in range(N_INST)]
        tally("6f looks=3 reseed", "bimodal", n, "0.5*SD(before)", "not changed", not_changed, W)
        W = [
            (b := r.normal(0, 1, n), b + 3 * half_sd(b) + r.normal(0, 0.5 * half_sd(b), n), half_sd(b), 1, 3)
            for _ in range(N_INST)
        ]
        tally(
            "6f looks=3 same-draw shift 3m",
            "normal",
            n,
            "0.5*SD(before)",
            "worse",
            lambda o: o == "worse",
            W,
            note="n=8 under looks=3 needs 2^-n*3 < .05",
        )
    # 6g. discrete reseed at n=4 often has SD(before)=0 -> margin 0; recorded in family 1. Here: margin 0 given
    # 6h. single cases: non-finite values, extreme magnitudes, bad arguments
    base = np.random.default_rng([6, 7]).normal(0, 1, 20)
    mb = half_sd(base)
    tiny = base * (1 + 1e-12)
    single = []

    def one(desc, b, a, m, sign=1, looks=1, expect=""):
        out, r = call_full(b, a, m, sign, looks)
        short = (
            r
            if isinstance(r, str)
            else (
                f"n={r.n} mean={r.mean:.4g} p_worse={r.p_worse:.3g} "
                f"p_better={r.p_better:.3g} p_eq={r.p_equivalent:.3g} "
                f"left_out={r.left_out} unfinite={r.unfinite}"
            )
        )
        single.append(dict(case=desc, expect=expect, outcome=out, detail=short))
        print(f"| 6h | {desc} | expect: {expect} | got: {out} | {short} |", flush=True)

    nan, inf = float("nan"), float("inf")
    one("20 equal pairs + (nan, nan)", np.r_[base, nan], np.r_[tiny, nan], mb, expect="equivalent (agrees)")
    one("20 equal pairs + (inf, inf)", np.r_[base, inf], np.r_[tiny, inf], mb, expect="equivalent (agrees)")
    one(
        "20 equal pairs + (nan, inf)",
        np.r_[base, nan],
        np.r_[tiny, inf],
        mb,
        expect="equivalent per doc ('not finite on both sides' agrees)",
    )
    one("20 equal pairs + (1.0, nan)", np.r_[base, 1.0], np.r_[tiny, nan], mb, expect="not equivalent")
    one(
        "20 equal pairs + (1.0, +inf), sign +1",
        np.r_[base, 1.0],
        np.r_[tiny, inf],
        mb,
        expect="worse (a diverged run) or at least not equivalent",
    )
    one("20 equal pairs + (1.0, -inf), sign +1", np.r_[base, 1.0], np.r_[tiny, -inf], mb, expect="not equivalent")
    one("20 equal pairs + (+inf, -inf)", np.r_[base, inf], np.r_[tiny, -inf], mb, expect="not equivalent")
    one("10 equal pairs + 10 (x, nan)", base, np.r_[tiny[:10], [nan] * 10], mb, expect="not equivalent")
    one("all 20 (x, +inf), sign +1", base, np.full(20, inf), mb, expect="worse")
    one("all 20 (nan, nan)", np.full(20, nan), np.full(20, nan), mb, expect="equivalent (documented)")
    one(
        "3 equal pairs + 17 (nan, nan)",
        np.r_[base[:3], [nan] * 17],
        np.r_[tiny[:3], [nan] * 17],
        mb,
        expect="undecided or equivalent",
    )
    one("margin 0, identical values", base, base.copy(), 0.0, expect="error or equivalent")
    one("margin 0, shifted by 1", base, base + 1, 0.0, expect="worse or error")
    one("margin nan (np.std overflow)", base, tiny, nan, expect="error")
    one("margin -0.5", base, base + 1, -0.5, expect="error")
    one("sign 0", base, base + 1, mb, sign=0, expect="error")
    one("sign 2", base, base + 1, mb, sign=2, expect="error")
    one("lengths 20 vs 19", base, base[:19] + 1, mb, expect="error")
    one("n = 1, no halfwidths", base[:1], base[:1] + 1, mb, expect="error or undecided")
    one("n = 0", [], [], mb, expect="error or undecided")
    one("n = 2, shift 10m", base[:2], base[:2] + 10 * mb, mb, expect="undecided (2^-2 > .05)")
    one("n = 3, shift 10m", base[:3], base[:3] + 10 * mb, mb, expect="undecided")
    one("n = 5, constant shift 10m", base[:5], base[:5] + 10 * mb, mb, expect="worse (2^-5 < .05)")
    one("looks = 0", base, base + 10 * mb, mb, looks=0, expect="error")
    big = 1e308 * (0.5 + 0.1 * np.random.default_rng([6, 8]).standard_normal(20))
    mbig = 0.5 * float(np.std(big / 1e300, ddof=1)) * 1e300
    one("values ~1e308, after = before*(1+1e-12)", big, big * (1 + 1e-12), mbig, expect="equivalent")
    one(
        "values ~1e308, after = before + 3m (overflow-free)",
        big * 0.25,
        big * 0.25 + 3 * mbig * 0.25,
        mbig * 0.25,
        expect="worse",
    )
    one(
        "values ~1e308, reseed (new draws)",
        big,
        1e308 * (0.5 + 0.1 * np.random.default_rng([6, 9]).standard_normal(20)),
        mbig,
        expect="not changed",
    )
    one(
        "values ~+-1.5e308 (diff overflows to inf), sign +1",
        np.full(20, -1.5e308) + 0,
        np.full(20, 1.5e308),
        1e300,
        expect="worse",
    )
    sub = base * 1e-310
    one("subnormal values ~1e-310, after = before*(1+1e-12)", sub, sub * (1 + 1e-12), mb * 1e-310, expect="equivalent")
    off = 1e15 + base
    one(
        "offset 1e15 + N(0,1), after = before (rounding at 0.125)",
        off,
        off + np.random.default_rng(1).choice([-0.125, 0, 0.125], 20),
        mb,
        expect="equivalent",
    )
    one(
        "ties: 20 pairs with d in {0,0,...} and two d=+1e-3",
        base,
        np.r_[base[:18], base[18:] + 1e-3],
        mb,
        expect="equivalent",
    )
    ROWS.append(dict(family="6h singles", cases=single))

    # 6i. the C8 world: n=4 bimodal reseed, what t alone would do vs the function (also n = 5..8)
    for n in (4, 5, 6, 7, 8, 10, 12, 16):
        r = np.random.default_rng([6, 10, n])
        W = [(b := bimodal(r, n), bimodal(r, n), half_sd(b)) for _ in range(N_INST)]
        tally("6i C8-like bimodal reseed", "bimodal", n, "0.5*SD(before)", "not changed", not_changed, W)
    # 6j. discrete (ties) reseed with the user's margin: often SD(before) = 0 -> margin 0
    for n in (4, 8, 20):
        r = np.random.default_rng([6, 11, n])
        W = [(b := discrete(r, n), discrete(r, n), half_sd(b)) for _ in range(N_INST)]
        tally(
            "6j discrete reseed (ties)",
            "discrete",
            n,
            "0.5*SD(before)",
            "not changed",
            not_changed,
            W,
            note=f"SD(before)=0 in {sum(half_sd(w[0]) == 0 for w in W)}",
        )
    # 6k. a real shift near the sign-flip's floor: n = 5..8, same-draw shift 3m with noise sd m
    for n in (5, 6, 7, 8, 10):
        r = np.random.default_rng([6, 12, n])
        W = []
        for _ in range(N_INST):
            b = r.normal(0, 1, n)
            m = half_sd(b)
            W.append((b, b + 3 * m + r.normal(0, m, n), m))
        tally(
            "6k same-draw shift 3m, noise sd m (power vs t alone)",
            "normal",
            n,
            "0.5*SD(before)",
            "worse",
            lambda o: o == "worse",
            W,
        )


def family7():
    """More of family 6 (rows labelled 6l, 6m)."""
    # 6l. the C8 mirror: an edit moves 30% of units (same draws) from the mode into the tail, +5m each
    # (mean change 1.5m, beyond the margin); the other units are bitwise-equal up to 1e-12 noise.
    # Right answer: worse; at the least never 'equivalent'. Equivalence is the t-test's alone.
    for n in (4, 6, 8, 20):
        for frac, label in ((0.3, "30%"), (0.5, "50%")):
            r = np.random.default_rng([7, 1, n, int(frac * 10)])
            W = []
            for _ in range(N_INST):
                b = bimodal(r, n)
                m = half_sd(b)
                if m == 0:
                    m = 1e-3
                hit = r.random(n) < frac
                a = b * (1 + 1e-12 * r.standard_normal(n)) + np.where(hit, 5 * m, 0.0)
                W.append((b, a, m))
            tally(
                f"6l {label} of units jump +5m, rest unchanged (mean +{frac * 5:g}m)",
                "bimodal",
                n,
                "0.5*SD(before)",
                "worse (never equivalent)",
                lambda o: o != "equivalent",
                W,
                note="right/N counts 'not equivalent'; 'worse' column is the hit rate",
            )
    # 6m. a statistic measured once per run (n = 1), with each run's 90% halfwidth h = 1.645 sigma
    for shift, right, label in ((0.0, not_changed, "not changed"), (3.0, lambda o: o == "worse", "worse")):
        r = np.random.default_rng([7, 2, int(shift)])
        counts = dict.fromkeys(OUTS, 0)
        ok = 0
        for _ in range(N_INST):
            b = r.normal(0, 1)
            a = r.normal(shift, 1)
            h = 1.645
            try:
                res = paired_test([b], [a], 0.5, 1, halfwidths=(h, h))
                out = LABEL[res.movement()]
            except Exception:
                out = "error"
            counts[out] += 1
            ok += bool(right(out))
        line = (
            f"| 6m n=1 with halfwidths 1.645 sd, shift {shift:g} sd | normal | 1 | 0.5 sd | {label} | "
            f"{ok}/{N_INST} | " + " | ".join(str(counts[o]) for o in OUTS) + " | - |"
        )
        print(line, flush=True)
        ROWS.append(dict(family="6m", shift=shift, right=ok, **counts))
    # 6n. the documented power claim: "about the t-test's on one unit fewer". New draws, normal,
    # shift 1.5 law SD, margin 0.5 law SD (and same-draw shift 2m with noise sd m). Compare the
    # function's hit rate with a t-test alone on the n pairs and on n-1 of them.
    for world in ("new draws +1.5 SD", "same draws +2m, noise sd m"):
        for n in (5, 6, 8, 12, 20, 30):
            r = np.random.default_rng([7, 3, n, len(world)])
            f = t_n = t_n1 = 0
            for _ in range(N_INST):
                b = r.normal(0, 1, n)
                if world.startswith("new"):
                    a, m = r.normal(1.5, 1, n), 0.5
                else:
                    m = half_sd(b)
                    a = b + 2 * m + r.normal(0, m, n)
                f += call(b, a, m) == "worse"
                t_n += t_only(b, a, m)
                t_n1 += t_only(b[:-1], a[:-1], m)
            line = (
                f"| 6n power, {world} | normal | {n} | function {f}/{N_INST} | t alone on n {t_n}/{N_INST} "
                f"| t alone on n-1 {t_n1}/{N_INST} |"
            )
            print(line, flush=True)
            ROWS.append(dict(family="6n", world=world, n=n, function=f, t_n=t_n, t_n_minus_1=t_n1))


FAMILIES = {"1": family1, "2": family2, "3": family3, "4": family4, "5": family5, "6": family6, "7": family7}

if __name__ == "__main__":
    chosen = sys.argv[1:] or list(FAMILIES)
    print(
        "| family | law | n | margin | right answer | right/N | worse | better | equivalent | undecided | error "
        "| t-only changed |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for f in chosen:
        FAMILIES[f]()
        (HERE / f"results_family{f}.json").write_text(json.dumps(ROWS, indent=1, default=str))
        ROWS.clear()
