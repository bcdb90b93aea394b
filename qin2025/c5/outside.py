"""Outside calibration families for C5, "a larger residual coefficient beta converges (significantly) faster".

Written by an outside referee from the claim's words alone, without reading the project's C5 decisions,
its design or challenge families, its records or docs. The experiment: one seed = one initialisation
trained five times, beta in (0, 0.25, 0.5, 0.75, 1.0), full-batch GD, one loss curve L_0..L_T per run.

How a run is made (noise-free part): L(t) = F + A g(c t / T) + a_f exp(-t / tau_f), with
  - a fast phase a_f exp(-t / tau_f): tau_f in [1, 4] steps, a_f = (F + A) x log-U[2, 20] moved by beta
    (L_0 moves up to ~10x with beta, in either direction); it is over (< 3e-7 a_f) by step T_FAST = 60;
  - a slow phase A g(c t / T): g(0) = 1, decreasing; exponential, two exponentials, a slow mode surfacing
    late, stretched exponential exp(-(k u)^s) or offset power law (1 + u / nu)^-p; c is the run's speed;
  - a floor F > 0.
Measurement: L x exp(sigma m_t), m_t a moving average of white noise over ell U{1..20} steps (unit sd),
sigma log-U[1e-4, 1.5e-3] (one seed) or log-U[1e-4, 1e-3] (samples); in the zone families sigma is set
from the slow phase's fall per block (a block mean's noise = that fall / U[4, 8]). Every run descends (the
means of 8 equal blocks of [T/2, T] fall) except in the floor-reached families (params "descent"): a run
that fails is drawn again with sigma halved.

The readings (the project's; this file only calibrates them):
  lower   once the fast phase is over (t >= T_FAST), the faster run has the lower loss at equal steps,
          equivalently reaches a common level in fewer steps. rho(b) = (first step at which run b reaches
          run 0's loss at T) / T. Significant: rho <= 0.9 (>= 10 % fewer steps); effect = 1 - rho.
  steeper the slow phase nears its own floor at a higher rate: q(b) = r_b(t) / r_0(t), with
          r(t) = -d ln(L(t) - F) / dt at equal steps t >= T_FAST (floor subtracted, so a floor alone does
          not make a run steeper). Significant: q >= 1.1.
  A floor reached within T (my reading, stated): converging faster to a common floor means reaching it in
  fewer steps. Beyond the floor the runs are equal, which does not count against the claim; before it
  the two readings apply as above (the rate is read where the excess is above the noise). Reaching the
  floor at the same pace is not faster, even though the literal test "reaches beta=0's level at T
  within 0.9 T" is then met: beta=0's level at T is its floor, which both reach by 0.6 T.

The bands (noise-free values; every one-seed case is checked by rejection, every sample case by design):
  lower order      pass: every adjacent pair rho <= 0.9 and the larger beta strictly lower on [T_FAST, T];
                   fail: some pair i < j has rho >= 1.1 (j never reaches i's level at T by 1.1 T), or the
                   slow phases are exactly equal (a tie is not "lower"). Gap: adjacent rho in (0.9, 1.1)
                   without a clear reversal; adjacent time ratios 1.0-1.12 are never drawn.
  steeper order    pass: adjacent q >= 1.12 over the whole window; fail: some pair q <= 0.9 over the whole
                   window, or an exact tie (q = 1); zone: the slow phase has barely bent by T (kap = k T in
                   [0.005, 0.02]): the rate relative to the floor shows only in a curvature A kap^2 / 8 that
                   the noise hides, so "steeper" (speeds 1.2-1.4x per beta) and "tie" give the same curves.
                   Gap: adjacent q in (0.9, 1.12) without a tie.
  lower sample     pass: population effect >= 0.2 for every beta > 0 (time ratio c >= 1.3, or rho target
                   <= 0.75); fail: some beta > 0 has a population effect <= 0.03 (or negative). Gap:
                   effect in (0.03, 0.2), i.e. c in (1.03, 1.25), none drawn.
  steeper sample   pass: q >= 1.3 for every beta > 0; fail: some beta > 0 has q <= 1.03; zone: barely bent.
                   Gap: q in (1.03, 1.3).
Seed-to-seed scatter (sample parts): the seed's F, A, shape and a_f drawn around the case's values
(log-sd 0.1-0.3); per run speed log-sd s_c in [0.02, 0.06], amplitude log-sd s_A in [0.02, 0.05], floor
+- s_F A g(1) with s_F <= 0.05 (so a floor scatter moves rho by <~ 3 %), L_0 free.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from claimcheck.protocol.spec import Case, Expect, Family, Origin

Arr = npt.NDArray[np.float64]
BETAS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
NB = len(BETAS)
T_FAST = 60  # steps: the fast phase is over by then in every run
ORIGIN: Origin = "outside"
SHAPE_KEYS: dict[str, tuple[str, ...]] = {
    "exp": ("kap",),
    "mix": ("w", "k1", "k2"),
    "power": ("nu", "p"),
    "stretched": ("kap", "s"),
}
TRIES = 200
Runs = dict[str, Any]  # "kind": str, every other key an array of shape (n,)
Generate = Callable[[np.random.Generator], Case]


# --------------------------------------------------------------------------------------------- curves


def _lu(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Return a log-uniform draw from [lo, hi]."""
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _g(kind: str, sp: dict[str, Arr], u: Arr) -> Arr:
    """Return the slow-phase shape g(u), g(0) = 1 (parameters broadcast against u)."""
    if kind == "exp":
        return np.exp(-sp["kap"] * u)
    if kind == "mix":
        return sp["w"] * np.exp(-sp["k1"] * u) + (1 - sp["w"]) * np.exp(-sp["k2"] * u)
    if kind == "power":
        return (1 + u / sp["nu"]) ** (-sp["p"])
    if kind == "stretched":
        return np.exp(-((sp["kap"] * u) ** sp["s"]))
    raise ValueError(kind)


def _g_at(runs: Runs, u: float | Arr) -> Arr:
    """Return g at u (scalar or per run) for every run, with each run's own shape parameters (not its speed)."""
    sp = {k: np.asarray(runs[k], dtype=float) for k in SHAPE_KEYS[runs["kind"]]}
    return _g(runs["kind"], sp, np.asarray(u, dtype=float) + np.zeros(len(runs["F"])))


def _clean(steps: int, runs: Runs) -> tuple[Arr, Arr]:
    """Return the noise-free curves and their excess over the floor, both (n, steps + 1)."""
    t = np.arange(steps + 1, dtype=float)[None, :]
    u = runs["c"][:, None] * t / steps
    sp = {k: runs[k][:, None] for k in SHAPE_KEYS[runs["kind"]]}
    excess = runs["A"][:, None] * _g(runs["kind"], sp, u) + runs["fa"][:, None] * np.exp(-t / runs["ft"][:, None])
    return runs["F"][:, None] + excess, excess


def _descends(curves: Arr, steps: int) -> npt.NDArray[np.bool_]:
    """Return per row whether the means of 8 equal blocks of [T/2, T] fall block after block."""
    blocks = np.array_split(curves[:, steps // 2 :], 8, axis=1)
    means = np.stack([b.mean(axis=1) for b in blocks], axis=1)
    return np.asarray(np.all(np.diff(means, axis=1) < 0, axis=1))


def _noisy(rng: np.random.Generator, clean: Arr, sigma: float, ell: int, descend: bool, steps: int) -> Arr:
    """Return clean x exp(sigma m), m a unit-sd moving average over ell steps; redraw non-descending rows."""
    m = clean.shape[1]

    def draw(rows: int, s: float) -> Arr:
        z = np.cumsum(rng.standard_normal((rows, m + ell), dtype=np.float32), axis=1, dtype=np.float64)
        ma = z[:, ell:] - z[:, :-ell]
        ma *= s / math.sqrt(ell)
        return np.exp(ma, out=ma)

    out = clean * draw(clean.shape[0], sigma)
    if not descend:
        return out
    todo = np.flatnonzero(~_descends(out, steps))
    s = sigma
    for _ in range(9):
        if todo.size == 0:
            return out
        s /= 2
        out[todo] = clean[todo] * draw(todo.size, s)
        todo = todo[~_descends(out[todo], steps)]
    out[todo] = clean[todo]
    return out


# --------------------------------------------------------------------------------------------- statistics


def _reach(curve: Arr, level: float, steps: int) -> float:
    """Return (first step >= T_FAST at which curve <= level, interpolated) / steps; inf if never."""
    idx = np.flatnonzero(curve[T_FAST:] <= level)
    if idx.size == 0:
        return math.inf
    i = int(idx[0]) + T_FAST
    if i == T_FAST:
        return T_FAST / steps
    frac = (curve[i - 1] - level) / (curve[i - 1] - curve[i])
    return float((i - 1 + frac) / steps)


def _rho(clean: Arr, i: int, j: int, steps: int) -> float:
    """Return rho of run j against run i: when j reaches i's loss at T, over T."""
    return _reach(clean[j], float(clean[i, -1]), steps)


def _ratio(excess: Arr, floors: Arr, i: int, j: int) -> tuple[float, float, float]:
    """Return (min, median, max) of r_j / r_i over [T_FAST, T) where both excesses are >= 1e-3 of the floor."""
    rates = -np.diff(np.log(excess[[i, j]]), axis=1)
    seen = (excess[i, 1:] >= 1e-3 * floors[i]) & (excess[j, 1:] >= 1e-3 * floors[j])
    seen[: T_FAST - 1] = False
    if not seen.any():
        return math.nan, math.nan, math.nan
    q = rates[1, seen] / rates[0, seen]
    return float(q.min()), float(np.median(q)), float(q.max())


# --------------------------------------------------------------------------------------------- drawing


def _shape(rng: np.random.Generator, kind: str, kap_max: float = 4.0) -> dict[str, float]:
    """Return slow-phase shape parameters for one seed (u = c t / T)."""
    if kind == "exp":
        return {"kap": rng.uniform(min(0.8, 0.5 * kap_max), kap_max)}
    if kind == "mix":  # two slow modes, the faster 3-8x faster and holding 40-80 % of the slow amplitude
        k2 = rng.uniform(0.3, min(1.2, kap_max / 2))
        return {"w": rng.uniform(0.4, 0.8), "k1": k2 * rng.uniform(3.0, 8.0), "k2": k2}
    if kind == "late":  # a slow mode (rate k2) surfacing at u_s in [0.35, 0.7] under a faster one (k1)
        k1, k2, us = rng.uniform(6.0, 12.0), rng.uniform(0.05, 0.4), rng.uniform(0.35, 0.7)
        return {"w": 1 - 1 / (1 + math.exp(us * (k1 - k2))), "k1": k1, "k2": k2}
    if kind == "power":
        return {"nu": _lu(rng, 0.01, 0.2), "p": rng.uniform(0.5, 2.0)}
    if kind == "stretched":
        return {"kap": rng.uniform(min(0.8, 0.5 * kap_max), kap_max), "s": rng.uniform(0.4, 0.8)}
    raise ValueError(kind)


def _base(rng: np.random.Generator, kind: str, kap_max: float = 4.0) -> dict[str, float]:
    """Return one seed's floor, slow amplitude, fast amplitude and shape."""
    floor = _lu(rng, 0.02, 0.3)
    amp = floor * _lu(rng, 0.3, 3.0)
    return {"F": floor, "A": amp, "fa": (floor + amp) * _lu(rng, 2.0, 20.0), **_shape(rng, kind, kap_max)}


def _jitter(rng: np.random.Generator, base: dict[str, float], spread: float) -> dict[str, float]:
    """Return a seed's values around a case's: every positive value x exp(spread z), w kept in (0, 1)."""
    out = {k: v * math.exp(spread * float(np.clip(rng.standard_normal(), -2, 2))) for k, v in base.items()}
    if "w" in base:
        out["w"] = min(out["w"], 0.95)
    if "s" in base:
        out["s"] = min(out["s"], 0.85)
    return out


def _runs(rng: np.random.Generator, kind: str, base: dict[str, float], lam: float | None = None) -> Runs:
    """Return five runs sharing a seed's base; the fast phase (L_0) moves with beta: a_f x exp(lam beta + 0.3 z)."""
    slope = rng.uniform(-2.3, 2.3) if lam is None else lam
    b = np.asarray(BETAS)
    runs: Runs = {"kind": "mix" if kind == "late" else kind}
    for key, value in base.items():
        runs[key] = np.full(NB, value, dtype=float)
    runs["fa"] = base["fa"] * np.exp(slope * b + 0.3 * rng.standard_normal(NB))
    runs["ft"] = rng.uniform(1.0, 4.0, NB)
    runs["c"] = np.ones(NB)
    return runs


def _ladder(rng: np.random.Generator, lo: float, hi: float) -> Arr:
    """Return speeds 1, r1, r1 r2, ... with each adjacent ratio U[lo, hi]."""
    return np.concatenate([[1.0], np.cumprod(rng.uniform(lo, hi, NB - 1))])


def _scatter(rng: np.random.Generator, runs: Runs, s_a: float, s_f: float) -> None:
    """Per-run scatter of what beta does not move: amplitude x exp(s_a z), floor +- s_f A g(1) z (|z| <= 2)."""
    z = np.clip(rng.standard_normal((2, NB)), -2, 2)
    g1 = _g_at(runs, runs["c"])
    runs["F"] = np.maximum(runs["F"] + s_f * runs["A"] * g1 * z[1], 0.5 * runs["F"])
    runs["A"] = runs["A"] * np.exp(s_a * z[0])


def _measure(
    rng: np.random.Generator,
    steps: int,
    runs_list: list[Runs],
    descend: bool,
    sigma: float | None = None,
    block_slope: float | None = None,
) -> tuple[list[dict[str, Any]], list[tuple[Arr, Arr]], dict[str, float]]:
    """Return per seed {"betas", "curves"}, the noise-free (curves, excess) per seed and the noise parameters.

    ``block_slope`` (zone families): the relative fall of the loss per block of T/16 steps; the noise is then
    set so that a block mean's noise sd is that fall / U[4, 8] (the descent shows, the curvature does not).
    """
    ell = int(rng.integers(1, 21))
    if block_slope is not None:
        sig = block_slope / rng.uniform(4.0, 8.0) * math.sqrt(steps / 16 / ell)
    else:
        sig = _lu(rng, 1e-4, 1.5e-3) if sigma is None else sigma
    merged: Runs = {"kind": runs_list[0]["kind"]}
    for key in runs_list[0]:
        if key != "kind":
            merged[key] = np.concatenate([r[key] for r in runs_list])
    curves, excess = _clean(steps, merged)
    clean = [(curves[k * NB : (k + 1) * NB], excess[k * NB : (k + 1) * NB]) for k in range(len(runs_list))]
    noisy = _noisy(rng, curves, sig, ell, descend, steps)
    units = [
        {"betas": list(BETAS), "curves": [np.ascontiguousarray(row) for row in noisy[k * NB : (k + 1) * NB]]}
        for k in range(len(runs_list))
    ]
    return units, clean, {"sigma": sig, "ell": float(ell)}


# --------------------------------------------------------------------------------------------- one-seed worlds

World = Callable[[np.random.Generator, int], tuple[Runs, dict[str, float | str]]]
Check = Callable[[Arr, Arr, Runs, int], bool]


def _lower_pass(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Adjacent rho <= 0.9 and the larger beta strictly lower on [T_FAST, T]."""
    del excess, runs
    lower = np.all(clean[1:, T_FAST:] < clean[:-1, T_FAST:])
    return bool(lower) and all(_rho(clean, i, i + 1, steps) <= 0.9 for i in range(NB - 1))


def _floor_pass(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Common floor: each larger beta reaches 1e-4 F above it in <= 0.9 of the steps, and is never higher."""
    del steps
    floor = float(runs["F"][0])
    reach = [int(np.argmax(e <= 1e-4 * floor)) for e in excess]
    never_higher = bool(np.all(clean[1:, T_FAST:] <= clean[:-1, T_FAST:]))
    return never_higher and all(reach[i + 1] <= 0.9 * reach[i] for i in range(NB - 1)) and min(reach) > T_FAST


def _lower_fail(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Some pair i < j with rho >= 1.1 (the larger beta does not reach the smaller's level at T by 1.1 T)."""
    del excess, runs
    return any(_rho(clean, i, j, steps) >= 1.1 for i in range(NB) for j in range(i + 1, NB))


def _steeper_pass(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Every adjacent pair: r_{i+1} / r_i >= 1.12 over the whole window."""
    del clean, steps
    return all(_ratio(excess, runs["F"], i, i + 1)[0] >= 1.12 for i in range(NB - 1))


def _steeper_fail(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Some pair i < j with r_j / r_i <= 0.9 over the whole window."""
    del clean, steps
    return any(_ratio(excess, runs["F"], i, j)[2] <= 0.9 for i in range(NB) for j in range(i + 1, NB))


def _tie(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """The slow phases and floors are the same in every run (a tie, in both readings)."""
    del clean, excess, steps
    keys = ("F", "A", "c", *SHAPE_KEYS[runs["kind"]])
    return all(bool(np.all(runs[k] == runs[k][0])) for k in keys)


def _rate_tie(clean: Arr, excess: Arr, runs: Runs, steps: int) -> bool:
    """Same speed and shape in every run (floors or amplitudes may differ): r_j / r_i = 1 after the fast phase."""
    del clean, steps
    same = all(bool(np.all(runs[k] == runs[k][0])) for k in ("c", *SHAPE_KEYS[runs["kind"]]))
    return same and all(abs(_ratio(excess, runs["F"], 0, j)[1] - 1) < 0.01 for j in range(1, NB))


def _one_seed(world: World, check: Check, steps: int, descend: bool = True) -> Generate:
    """Return a generator of one-seed cases: draw a world until its noise-free curves meet ``check``."""

    def generate(rng: np.random.Generator) -> Case:
        tries = 0
        while True:
            tries += 1
            runs, params = world(rng, steps)
            clean, excess = _clean(steps, runs)
            if check(clean, excess, runs, steps):
                break
            if tries >= TRIES:
                raise RuntimeError(f"no acceptable draw in {TRIES} tries")
        slope = params.get("block_slope")
        units, _, noise = _measure(rng, steps, [runs], descend, block_slope=None if slope is None else float(slope))
        rhos = [_rho(clean, i, i + 1, steps) for i in range(NB - 1)]
        qs = [_ratio(excess, runs["F"], i, i + 1)[1] for i in range(NB - 1)]
        stats: dict[str, float | str] = {
            "rho_adjacent": " ".join(f"{x:.3g}" for x in rhos),
            "q_adjacent": " ".join(f"{x:.3g}" for x in qs),
            "L0": " ".join(f"{float(x):.3g}" for x in clean[:, 0]),
            "tries": float(tries),
            "descent": "required" if descend else "not required",
        }
        return Case(params={**params, **noise, **stats}, measurements=units[0])

    return generate


def _w_rescaled(kinds: tuple[str, ...], lo: float, hi: float, lam: tuple[float, float] | None = None) -> World:
    """Slow phase time-rescaled: speeds a ladder with adjacent ratios U[lo, hi] (hi < 1: a falling ladder)."""

    def world(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
        del steps
        kind = str(rng.choice(kinds))
        speeds = _ladder(rng, lo, hi)
        kap_max = min(4.0, 6.0 / float(speeds.max()))
        slope = None if lam is None else rng.uniform(*lam)
        runs = _runs(rng, kind, _base(rng, kind, kap_max), slope)
        runs["c"] = speeds
        _scatter(rng, runs, rng.uniform(0.0, 0.03), rng.uniform(0.0, 0.03))
        return runs, {"kind": kind, "speeds": " ".join(f"{x:.3g}" for x in speeds)}

    return world


def _w_peak(kinds: tuple[str, ...], fastest: int, steep_drop: bool) -> World:
    """Non-monotone: speeds rise (adjacent U[1.12, 1.3]) up to beta index ``fastest``, then fall.

    After the peak each step down is U[1/1.3, 1/1.15] (steep_drop) so that a later beta is >= 15 % slower.
    """

    def world(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
        del steps
        kind = str(rng.choice(kinds))
        up = rng.uniform(1.12, 1.3, NB - 1)
        down = rng.uniform(1 / 1.3, 1 / 1.15 if steep_drop else 1.0, NB - 1)
        ratios = np.where(np.arange(NB - 1) < fastest, up, down)
        speeds = np.concatenate([[1.0], np.cumprod(ratios)])
        runs = _runs(rng, kind, _base(rng, kind, min(4.0, 6.0 / float(speeds.max()))))
        runs["c"] = speeds
        _scatter(rng, runs, rng.uniform(0.0, 0.03), rng.uniform(0.0, 0.03))
        return runs, {"kind": kind, "speeds": " ".join(f"{x:.3g}" for x in speeds)}

    return world


def _w_power_exponent(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Offset power law, same offset nu, exponent p x a ladder (adjacent U[1.13, 1.35])."""
    del steps
    runs = _runs(rng, "power", _base(rng, "power"))
    mult = _ladder(rng, 1.13, 1.35)
    runs["p"] = runs["p"] * mult
    _scatter(rng, runs, rng.uniform(0.0, 0.03), rng.uniform(0.0, 0.03))
    return runs, {"kind": "power", "p": " ".join(f"{x:.3g}" for x in runs["p"])}


def _w_floor_falls(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Same speed and shape in every run; each larger beta's floor lower by A (g(rho_i) - g(1)), rho_i U[0.5, 0.85]."""
    del steps
    kind = str(rng.choice(("exp", "power", "stretched", "mix")))
    base = _base(rng, kind, 3.0)
    runs = _runs(rng, kind, base)
    targets = rng.uniform(0.5, 0.85, NB - 1)
    drops = base["A"] * (_g_at(runs, np.append(targets, 1.0))[: NB - 1] - _g_at(runs, 1.0)[: NB - 1])
    floor_top = base["F"] + float(drops.sum())
    runs["F"] = floor_top - np.concatenate([[0.0], np.cumsum(drops)])
    return runs, {"kind": kind, "floors": " ".join(f"{x:.3g}" for x in runs["F"])}


def _w_cross(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Exponential, speeds adjacent U[1.15, 1.3]; each larger beta's floor lies above the smaller's loss at T.

    F_{i+1} = L_i(T) + U[0.2, 1] (L_i(T) - F_i): run i + 1 never gets down to run i's loss at T.
    """
    del steps
    speeds = _ladder(rng, 1.15, 1.3)
    base = _base(rng, "exp", min(4.0, 6.0 / float(speeds.max())))
    runs = _runs(rng, "exp", base)
    runs["c"] = speeds
    tail = base["A"] * np.exp(-base["kap"] * speeds)  # slow excess at T
    floors = [base["F"]]
    for i in range(NB - 1):
        floors.append(floors[i] + float(tail[i]) * (1 + rng.uniform(0.2, 1.0)))
    runs["F"] = np.asarray(floors)
    return runs, {"kind": "exp", "speeds": " ".join(f"{x:.3g}" for x in speeds)}


def _w_amplitude(direction: float) -> World:
    """Same speed, shape and floor; slow amplitude A x exp(direction lam beta), lam U[0.4, 1.2]."""

    def world(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
        del steps
        kind = str(rng.choice(("exp", "power", "stretched", "mix")))
        runs = _runs(rng, kind, _base(rng, kind, 3.0))
        lam = rng.uniform(0.4, 1.2)
        runs["A"] = runs["A"] * np.exp(direction * lam * np.asarray(BETAS))
        return runs, {"kind": kind, "amp_slope": direction * lam}

    return world


def _w_fast_only(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Only the fast phase moves with beta: a_f x exp(+-U[1.5, 2.3] beta), tau_f per run; slow phases identical."""
    del steps
    kind = str(rng.choice(("exp", "power", "stretched", "mix", "late")))
    lam = float(rng.choice((-1.0, 1.0))) * rng.uniform(1.5, 2.3)
    runs = _runs(rng, kind, _base(rng, kind, 4.0), lam)
    return runs, {"kind": kind, "L0_slope": lam}


def _w_floor_reached(lo: float, hi: float) -> World:
    """Exponential slow phase reaching a common floor: beta=0's excess is 1e-4 F at u_r in [0.45, 0.6].

    Speeds a ladder with adjacent ratios U[lo, hi] (1, 1: the same pace in every run).
    """

    def world(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
        del steps
        base = _base(rng, "exp")
        base["kap"] = math.log(base["A"] / (1e-4 * base["F"])) / rng.uniform(0.45, 0.6)
        runs = _runs(rng, "exp", base)
        runs["c"] = _ladder(rng, lo, hi)
        return runs, {"kind": "exp", "kap": base["kap"], "speeds": " ".join(f"{x:.3g}" for x in runs["c"])}

    return world


def _w_less_steep_lower(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Exponential; the rate falls with beta (adjacent U[0.75, 0.88]) while the floor falls by 1-3x A g(1) per step."""
    del steps
    speeds = _ladder(rng, 0.75, 0.88)
    base = _base(rng, "exp", 4.0)
    base["kap"] = rng.uniform(1.5, 4.0)
    runs = _runs(rng, "exp", base)
    runs["c"] = speeds
    g1 = np.exp(-base["kap"] * speeds)
    drops = base["A"] * g1[1:] * rng.uniform(1.0, 3.0, NB - 1)
    runs["F"] = base["F"] + float(drops.sum()) - np.concatenate([[0.0], np.cumsum(drops)])
    return runs, {"kind": "exp", "speeds": " ".join(f"{x:.3g}" for x in speeds)}


def _w_barely_bent(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
    """Exponential slow phase with kap in [0.005, 0.02]: it has bent by <= 2 % of its slope by T.

    World "steeper" (even odds): speeds a ladder U[1.2, 1.4]. World "tie": the same rate in every run,
    amplitude and floor set to match the steeper world's value and slope at T/2 (the curves then differ
    by <= A kap^2 (c - 1) c / 8 ~ 1e-4 A over the window, below the noise).
    """
    del steps
    base = _base(rng, "exp")
    base["kap"] = rng.uniform(0.005, 0.02)
    base["A"] = base["F"] * _lu(rng, 1.0, 3.0)
    runs = _runs(rng, "exp", base)
    speeds = _ladder(rng, 1.2, 1.4)
    kap, amp = base["kap"], base["A"]
    world = "steeper" if rng.uniform() < 0.5 else "tie"
    if world == "steeper":
        runs["c"] = speeds
    else:
        runs["A"] = amp * speeds * np.exp(-(speeds - 1) * kap / 2)
        runs["F"] = base["F"] + amp * np.exp(-speeds * kap / 2) - runs["A"] * np.exp(-kap / 2)
    slope = amp / (amp + base["F"]) * kap / 16
    return runs, {"kind": "exp", "kap": kap, "world": world, "block_slope": slope}


# --------------------------------------------------------------------------------------------- samples

SeedWorld = Callable[[np.random.Generator, dict[str, Any]], Runs]
Population = Callable[[np.random.Generator], dict[str, Any]]


def _effects(clean: Arr, excess: Arr, floors: Arr, steps: int) -> tuple[Arr, Arr]:
    """Return per seed and beta > 0 the effect 1 - min(rho, 1.5) and the rate ratio, against beta = 0.

    The rate ratio is the ratio of the log-excess drops over the steps where both excesses are >= 1e-3 F.

    ``clean`` and ``excess`` are (seeds, 5, steps + 1), ``floors`` (seeds, 5); both statistics (seeds, 4).
    """
    level = clean[:, :1, -1:]
    tail = clean[:, 1:, T_FAST:]
    below = tail <= level
    first = np.argmax(below, axis=2)
    hit = below.any(axis=2)
    i = first + T_FAST
    prev = np.take_along_axis(clean[:, 1:, :], np.maximum(i - 1, 0)[..., None], axis=2)[..., 0]
    here = np.take_along_axis(clean[:, 1:, :], i[..., None], axis=2)[..., 0]
    lv = level[..., 0]
    frac = np.where(first > 0, (prev - lv) / np.where(prev > here, prev - here, 1.0), 1.0)
    rho = np.where(hit, (i - 1 + frac) / steps, math.inf)
    eff = 1 - np.minimum(rho, 1.5)
    rates = -np.diff(np.log(excess), axis=2)
    seen = excess[:, :, 1:] >= 1e-3 * floors[:, :, None]
    seen[:, :, : T_FAST - 1] = False
    both = seen[:, 1:] & seen[:, :1]
    num = np.where(both, rates[:, 1:], 0.0).sum(axis=2)
    den = np.where(both, rates[:, :1], 0.0).sum(axis=2)
    with np.errstate(all="ignore"):
        return eff, np.where(both.any(axis=2), num / den, np.nan)


def _sample(units: int, steps: int, population: Population, seed: SeedWorld) -> Generate:
    """Return a generator of sample cases: a population drawn once, then ``units`` seeds from it."""

    def generate(rng: np.random.Generator) -> Case:
        pop = population(rng)
        spread = rng.uniform(0.1, 0.3)
        runs_list: list[Runs] = []
        for _ in range(units):
            base = _jitter(rng, pop["base"], spread)
            if "kap_fix" in pop:
                base["kap"] = pop["kap_fix"](base)
            runs = _runs(rng, pop["kind"], base)
            runs_list.append(seed(rng, {**pop, "seed_base": base, "runs": runs, "steps": steps}))
        descend = bool(pop.get("descend", True))
        slope = pop.get("block_slope")
        measured, clean, noise = _measure(rng, steps, runs_list, descend, _lu(rng, 1e-4, 1e-3), slope)
        floors = np.stack([r["F"] for r in runs_list])
        shape = (units, NB, steps + 1)
        curves = np.concatenate([c for c, _ in clean]).reshape(shape)
        effs, qs = _effects(curves, np.concatenate([e for _, e in clean]).reshape(shape), floors, steps)
        eff, q = np.mean(effs, axis=0), np.nanmean(qs, axis=0)
        params: dict[str, float | str] = {
            k: v for k, v in pop.items() if isinstance(v, (float, str)) and k not in ("base",)
        }
        params.update(noise)
        params.update(
            {
                "spread": spread,
                "effect_by_beta": " ".join(f"{x:.3f}" for x in eff),
                "q_by_beta": " ".join(f"{x:.3f}" for x in q),
                "effect_min": float(eff.min()),
                "q_min": float(np.nanmin(q)),
                "descent": "required" if descend else "not required",
            }
        )
        return Case(params=params, measurements={"units": measured})

    return generate


def _per_run_scatter(rng: np.random.Generator, runs: Runs, s_c: float) -> None:
    """Per-run speed jitter exp(s_c z), amplitude log-sd U[0.02, 0.05], floor +- U[0, 0.05] A g(1) (|z| <= 2)."""
    runs["c"] = runs["c"] * np.exp(s_c * np.clip(rng.standard_normal(NB), -2, 2))
    _scatter(rng, runs, rng.uniform(0.02, 0.05), rng.uniform(0.0, 0.05))


def _pop_speeds(
    kinds: tuple[str, ...], speeds: Callable[[np.random.Generator], Arr], descend: bool = True
) -> Population:
    """Population: a shape kind, case-level base values and population speeds per beta."""

    def population(rng: np.random.Generator) -> dict[str, Any]:
        kind = str(rng.choice(kinds))
        c = speeds(rng)
        return {
            "kind": kind,
            "base": _base(rng, kind, min(4.0, 5.0 / float(c.max()))),
            "c_pop": c,
            "speeds": " ".join(f"{x:.3g}" for x in c),
            "s_c": rng.uniform(0.02, 0.06),
            "descend": descend,
        }

    return population


def _seed_speeds(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    runs: Runs = ctx["runs"]
    runs["c"] = np.array(ctx["c_pop"], dtype=float)
    _per_run_scatter(rng, runs, ctx["s_c"])
    return runs


def _seed_exponent(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Power law: the exponent p x the population multiplier (per-run jitter s_c), speed 1."""
    runs: Runs = ctx["runs"]
    runs["p"] = runs["p"] * np.asarray(ctx["c_pop"]) * np.exp(ctx["s_c"] * np.clip(rng.standard_normal(NB), -2, 2))
    _scatter(rng, runs, rng.uniform(0.02, 0.05), rng.uniform(0.0, 0.05))
    return runs


def _seed_floors(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Floors of beta > 0 lower by A (g(rho_b) - g(1)), rho_b the population targets; same speed and shape."""
    runs: Runs = ctx["runs"]
    _per_run_scatter(rng, runs, 0.0)
    targets = np.concatenate([[1.0], ctx["rho_pop"]])
    g1 = _g_at(runs, 1.0)[0]
    runs["F"] = runs["F"][0] + runs["A"][0] * g1 - runs["A"] * _g_at(runs, targets)
    runs["F"] = runs["F"] + float(np.max(-runs["F"] + 0.2 * ctx["seed_base"]["F"], initial=0.0))
    return runs


def _seed_amplitude(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Slow amplitudes of beta > 0 at A g(1) / g(rho_b): lower (rho_b < 1) at the same rate, same floor."""
    runs: Runs = ctx["runs"]
    _per_run_scatter(rng, runs, 0.0)
    targets = np.concatenate([[1.0], ctx["rho_pop"]])
    runs["A"] = runs["A"] * _g_at(runs, 1.0) / _g_at(runs, targets)
    return runs


def _seed_cross(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Exponential; beta > 0 faster (population speeds) towards a floor above beta=0's loss at T.

    F_b = L_0(T) + U[0.2, 1] (L_0(T) - F_0) for every beta > 0: it never reaches beta=0's level at T.
    """
    runs: Runs = ctx["runs"]
    runs["c"] = np.array(ctx["c_pop"], dtype=float)
    _per_run_scatter(rng, runs, ctx["s_c"])
    tail0 = runs["A"][0] * math.exp(-runs["kap"][0] * runs["c"][0])
    runs["F"][1:] = runs["F"][0] + tail0 * (1 + rng.uniform(0.2, 1.0, NB - 1))
    return runs


def _seed_barely(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """As _w_barely_bent, with the case's world and population speeds (per-run jitter 0.02)."""
    runs: Runs = ctx["runs"]
    speeds = np.asarray(ctx["c_pop"]) * np.exp(0.02 * np.clip(rng.standard_normal(NB), -2, 2))
    speeds[0] = 1.0
    kap, amp, floor = runs["kap"][0], runs["A"][0], runs["F"][0]
    if ctx["world"] == "steeper":
        runs["c"] = speeds
    else:
        runs["A"] = amp * speeds * np.exp(-(speeds - 1) * kap / 2)
        runs["F"] = floor + amp * np.exp(-speeds * kap / 2) - runs["A"] * np.exp(-kap / 2)
    return runs


def _up(lo: float, hi: float, step: tuple[float, float] = (1.0, 1.15)) -> Callable[[np.random.Generator], Arr]:
    """Population speeds: beta=0.25 at U[lo, hi], then x U[step] per beta."""

    def speeds(rng: np.random.Generator) -> Arr:
        first = rng.uniform(lo, hi)
        return np.concatenate([[1.0, first], first * np.cumprod(rng.uniform(*step, NB - 2))])

    return speeds


def _peak(rng: np.random.Generator) -> Arr:
    """Population speeds all >= 1.3, highest at beta = 0.5."""
    top = rng.uniform(1.7, 2.2)
    return np.array([1.0, rng.uniform(1.3, 1.5), top, rng.uniform(1.3, top - 0.2), rng.uniform(1.3, 1.5)])


def _marginal(rng: np.random.Generator) -> Arr:
    """beta=0.25 at U[1.0, 1.03]; the others U[1.3, 1.5] x rising steps."""
    rest = rng.uniform(1.3, 1.5) * np.cumprod(rng.uniform(1.0, 1.15, NB - 2))
    return np.concatenate([[1.0, rng.uniform(1.0, 1.03)], rest])


def _one_slower(rng: np.random.Generator) -> Arr:
    """beta = 0.25-0.75 at >= 1.3; beta = 1 slower than beta = 0 (U[0.85, 0.97])."""
    mid = rng.uniform(1.3, 1.6) * np.cumprod(rng.uniform(1.0, 1.1, 3))
    return np.concatenate([[1.0], mid, [rng.uniform(0.85, 0.97)]])


def _flat(rng: np.random.Generator) -> Arr:
    del rng
    return np.ones(NB)


def _pop_with(extra: Population, base_pop: Population) -> Population:
    def population(rng: np.random.Generator) -> dict[str, Any]:
        pop = base_pop(rng)
        pop.update(extra(rng))
        return pop

    return population


def _rho_targets(lo: float, hi: float) -> Population:
    def extra(rng: np.random.Generator) -> dict[str, Any]:
        rho = np.sort(rng.uniform(lo, hi, NB - 1))[::-1]
        return {"rho_pop": rho, "rho_targets": " ".join(f"{x:.3g}" for x in rho)}

    return extra


def _floor_reached_pop(speeds: Callable[[np.random.Generator], Arr]) -> Population:
    """Exponential reaching a common floor by mid-run (beta=0 excess 1e-4 F at u U[0.45, 0.6]); descent not required."""
    inner = _pop_speeds(("exp",), speeds, descend=False)

    def population(rng: np.random.Generator) -> dict[str, Any]:
        pop = inner(rng)
        u_r = rng.uniform(0.45, 0.6)
        pop["kap_fix"] = lambda b: math.log(b["A"] / (1e-4 * b["F"])) / u_r
        pop["s_c"] = 0.0
        return pop

    return population


def _seed_common_floor(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Population speeds; a common floor and amplitude (no floor scatter: the floor is common by construction)."""
    runs: Runs = ctx["runs"]
    runs["c"] = np.array(ctx["c_pop"], dtype=float) * np.exp(0.02 * np.clip(rng.standard_normal(NB), -2, 2))
    runs["c"][0] = 1.0
    return runs


def _no_effect_seed(rng: np.random.Generator, ctx: dict[str, Any]) -> Runs:
    """Every run's speed exp(0.1 z): seed-to-seed scatter of speed with no population effect."""
    runs: Runs = ctx["runs"]
    _per_run_scatter(rng, runs, 0.1)
    return runs


def _barely_pop(rng: np.random.Generator) -> dict[str, Any]:
    base = _base(rng, "exp")
    base["kap"] = rng.uniform(0.005, 0.02)
    base["A"] = base["F"] * _lu(rng, 1.0, 3.0)
    c = _up(1.3, 1.5, (1.05, 1.2))(rng)
    world = "steeper" if rng.uniform() < 0.5 else "tie"
    slope = base["A"] / (base["A"] + base["F"]) * base["kap"] / 16
    speeds = " ".join(f"{x:.3g}" for x in c)
    return {"kind": "exp", "base": base, "c_pop": c, "world": world, "speeds": speeds, "block_slope": slope}


# --------------------------------------------------------------------------------------------- families


def _fam(name: str, expect: Expect, gen: Generate, cases: int, grid: str, why: str) -> Family:
    return Family(f"outside: {name}", expect, gen, cases=cases, grid=grid, why=why, origin=ORIGIN)


SMOOTH = ("exp", "stretched", "mix")
SMOOTH_P = (*SMOOTH, "power")
ONE = 100
MANY = 30
NOISE = "; noise sigma log-U[1e-4, 1.5e-3] over ell U{1..20} steps; L_0 slope in beta U[-2.3, 2.3]"


def lower_order_outside(steps: int) -> tuple[Family, ...]:
    """Return the outside families for 'lower: order' (one seed per case) at horizon ``steps``."""
    s = steps

    def one(world: World, check: Check, descend: bool = True) -> Generate:
        return _one_seed(world, check, s, descend)

    return (
        _fam(
            "time-rescaled slow phase rising with beta, L_0 in any order",
            "pass",
            one(_w_rescaled(SMOOTH, 1.12, 1.3), _lower_pass),
            ONE,
            "g exp / stretched (s U[0.4, 0.8]) / two modes; speeds adjacent U[1.12, 1.3]; kap <= 6 / c_max; "
            "amplitude and floor scatter <= 3 %" + NOISE,
            "L_b(t) = L_0run(c t) after the fast phase: lower at every step, adjacent rho <= 0.9 (checked)",
        ),
        _fam(
            "offset power-law tail, time-rescaled",
            "pass",
            one(_w_rescaled(("power",), 1.12, 1.3), _lower_pass),
            ONE,
            "(1 + u / nu)^-p, nu log-U[0.01, 0.2], p U[0.5, 2]; speeds adjacent U[1.12, 1.3]" + NOISE,
            "time rescaling of a power law: lower at equal steps, adjacent rho <= 0.9 (checked)",
        ),
        _fam(
            "slow mode surfacing late, time-rescaled",
            "pass",
            one(_w_rescaled(("late",), 1.12, 1.3), _lower_pass),
            ONE,
            "w e^{-k1 u} + (1 - w) e^{-k2 u}, k1 U[6, 12], k2 U[0.05, 0.4], surfacing at u U[0.35, 0.7]; "
            "speeds adjacent U[1.12, 1.3]" + NOISE,
            "the whole slow phase, its late mode included, runs c times faster: lower at equal steps (checked)",
        ),
        _fam(
            "power-law exponent rising with beta",
            "pass",
            one(_w_power_exponent, _lower_pass),
            ONE,
            "(1 + u / nu)^-p_b, same nu, p_b = p x ladder (adjacent U[1.13, 1.35])" + NOISE,
            "same start of the slow phase, faster decay for larger beta: lower at equal steps (checked)",
        ),
        _fam(
            "floor falling with beta, rate fixed",
            "pass",
            one(_w_floor_falls, _lower_pass),
            ONE,
            "same speed and shape; F_{i+1} = F_i - A (g(rho_i) - g(1)), rho_i U[0.5, 0.85]" + NOISE,
            "the lower reading counts a lower loss at equal steps, whatever makes it; adjacent rho = rho_i",
        ),
        _fam(
            "common floor reached by 0.6 T, sooner for larger beta",
            "pass",
            one(_w_floor_reached(1.12, 1.2), _floor_pass, descend=False),
            ONE,
            "exponential, beta=0 excess 1e-4 F at u U[0.45, 0.6]; speeds adjacent U[1.12, 1.2]" + NOISE,
            "converging faster to a common floor = reaching it in >= 11 % fewer steps; equal at the floor "
            "does not count against (my reading of a floor reached within T)",
        ),
        _fam(
            "only L_0 and the fast phase move with beta",
            "fail",
            one(_w_fast_only, _tie),
            ONE,
            "a_f x exp(+-U[1.5, 2.3] beta) (L_0 up to 10x apart), tau_f U[1, 4] per run; slow phase and floor "
            "identical; all shapes" + NOISE,
            "the starting loss is not the speed: after the fast phase the curves are equal (a tie is not lower)",
        ),
        _fam(
            "beta = 0.5 fastest, larger beta slower again",
            "fail",
            one(_w_peak(SMOOTH_P, 2, True), _lower_fail),
            ONE,
            "speeds rise U[1.12, 1.3] per beta to 0.5, then fall by U[1/1.3, 1/1.15] per beta" + NOISE,
            "beta = 0.75 and 1 are >= 15 % slower than 0.5: a pair with rho >= 1.1 (checked)",
        ),
        _fam(
            "larger beta slower while L_0 falls steeply with beta",
            "fail",
            one(_w_rescaled(SMOOTH_P, 1 / 1.3, 1 / 1.12, (-2.3, -1.5)), _lower_fail),
            ONE,
            "speeds adjacent U[1/1.3, 1/1.12]; a_f x exp(-U[1.5, 2.3] beta)" + NOISE,
            "the larger beta starts lower but is slower after the fast phase: rho >= 1.1 (checked)",
        ),
        _fam(
            "faster approach to a floor above the smaller beta's loss at T",
            "fail",
            one(_w_cross, _lower_fail),
            ONE,
            "exponential, speeds adjacent U[1.15, 1.3]; F_{i+1} = L_i(T) + U[0.2, 1] (L_i(T) - F_i)" + NOISE,
            "the larger beta never gets down to the smaller's loss at T (rho = inf): not lower at the end",
        ),
        _fam(
            "common floor reached by 0.6 T at the same pace",
            "fail",
            one(_w_floor_reached(1.0, 1.0), _tie, descend=False),
            ONE,
            "exponential, excess 1e-4 F at u U[0.45, 0.6] in every run, same speed; L_0 moves" + NOISE,
            "the same approach and the same floor: equal after the fast phase, not faster",
        ),
        _fam(
            "slow-phase amplitude rising with beta, rate fixed",
            "fail",
            one(_w_amplitude(+1.0), _lower_fail),
            ONE,
            "A x exp(lam beta), lam U[0.4, 1.2]; same speed, shape and floor" + NOISE,
            "the larger beta is higher at every step after the fast phase (rho >= 1.1, checked)",
        ),
    )


def steeper_order_outside(steps: int) -> tuple[Family, ...]:
    """Return the outside families for 'steeper: order' (one seed per case) at horizon ``steps``."""
    s = steps

    def one(world: World, check: Check, descend: bool = True) -> Generate:
        return _one_seed(world, check, s, descend)

    def scattered(world: World) -> World:
        def inner(rng: np.random.Generator, steps: int) -> tuple[Runs, dict[str, float | str]]:
            runs, params = world(rng, steps)
            runs["F"] = runs["F"] * np.exp(0.3 * rng.standard_normal(NB))
            runs["A"] = runs["A"] * np.exp(0.2 * rng.standard_normal(NB))
            return runs, params

        return inner

    return (
        _fam(
            "exponential rate rising with beta; floor and amplitude scattered per run",
            "pass",
            one(scattered(_w_rescaled(("exp",), 1.13, 1.35)), _steeper_pass),
            ONE,
            "exponential, speeds adjacent U[1.13, 1.35]; per run F x exp(0.3 z), A x exp(0.2 z)" + NOISE,
            "r = c kap / T exactly: adjacent ratio >= 1.13 whatever the floors and amplitudes",
        ),
        _fam(
            "power-law exponent rising with beta",
            "pass",
            one(_w_power_exponent, _steeper_pass),
            ONE,
            "(1 + u / nu)^-p_b, same nu, p_b = p x ladder (adjacent U[1.13, 1.35])" + NOISE,
            "r(t) = p_b / (nu T + t): the ratio at equal steps is the exponent ratio, >= 1.13",
        ),
        _fam(
            "faster approach to a floor above the smaller beta's loss at T",
            "pass",
            one(_w_cross, _steeper_pass),
            ONE,
            "exponential, speeds adjacent U[1.15, 1.3]; F_{i+1} = L_i(T) + U[0.2, 1] (L_i(T) - F_i)" + NOISE,
            "each run nears its own floor 1.2-1.4x faster; the higher floor is not the rate",
        ),
        _fam(
            "two slow modes, both time-rescaled",
            "pass",
            one(_w_rescaled(("mix",), 1.25, 1.5), _steeper_pass),
            ONE,
            "w e^{-k1 u} + (1 - w) e^{-k2 u}, k1 = 3-8 k2; speeds adjacent U[1.25, 1.5]; accepted when the "
            "local rate ratio is >= 1.12 at every step of the window" + NOISE,
            "every step of the slow phase nears the floor >= 12 % faster for the larger beta (checked)",
        ),
        _fam(
            "stretched exponential, time-rescaled",
            "pass",
            one(_w_rescaled(("stretched",), 1.25, 1.6), _steeper_pass),
            ONE,
            "exp(-(kap u)^s), s U[0.4, 0.8]; speeds adjacent U[1.25, 1.6] (rate ratio c^s)" + NOISE,
            "rate ratio at equal steps c^s >= 1.12 (checked)",
        ),
        _fam(
            "common floor reached by 0.6 T, faster for larger beta",
            "pass",
            one(_w_floor_reached(1.13, 1.2), _steeper_pass, descend=False),
            ONE,
            "exponential, beta=0 excess 1e-4 F at u U[0.45, 0.6]; speeds adjacent U[1.13, 1.2]" + NOISE,
            "the rate is read while the excess is above noise: c kap / T, ratio >= 1.13",
        ),
        _fam(
            "floor falling with beta, rate fixed",
            "fail",
            one(_w_floor_falls, _rate_tie),
            ONE,
            "same speed and shape; F_{i+1} = F_i - A (g(rho_i) - g(1)), rho_i U[0.5, 0.85]" + NOISE,
            "lower but not steeper: a floor alone does not make a run steeper (rate ratio 1)",
        ),
        _fam(
            "only L_0 and the fast phase move with beta",
            "fail",
            one(_w_fast_only, _tie),
            ONE,
            "a_f x exp(+-U[1.5, 2.3] beta), tau_f per run; slow phase and floor identical" + NOISE,
            "after the fast phase every run has the same rate (a tie is not steeper)",
        ),
        _fam(
            "beta = 0.5 steepest, larger beta less steep",
            "fail",
            one(_w_peak(("exp", "power", "stretched"), 2, True), _steeper_fail),
            ONE,
            "speeds rise U[1.12, 1.3] per beta to 0.5, then fall by U[1/1.3, 1/1.15] per beta" + NOISE,
            "a pair (0.5, 0.75 or 1) with rate ratio <= 0.9 at every step (checked)",
        ),
        _fam(
            "slow-phase amplitude shrinking with beta, rate fixed",
            "fail",
            one(_w_amplitude(-1.0), _rate_tie),
            ONE,
            "A x exp(-lam beta), lam U[0.4, 1.2]; same speed, shape and floor" + NOISE,
            "lower at equal steps but the same rate relative to the floor",
        ),
        _fam(
            "lower but less steep: floor falls while the rate falls with beta",
            "fail",
            one(_w_less_steep_lower, _steeper_fail),
            ONE,
            "exponential, speeds adjacent U[0.75, 0.88]; floor drop 1-3x A g(1) per beta" + NOISE,
            "the larger beta ends lower but nears its floor more slowly (ratio <= 0.88)",
        ),
        _fam(
            "slow phase barely bent by T (steeper or tie, even odds)",
            "zone",
            one(_w_barely_bent, lambda *a: True),
            ONE,
            "exponential, kap U[0.005, 0.02], A/F log-U[1, 3]; world steeper: speeds adjacent U[1.2, 1.4]; "
            "world tie: same rate, amplitude and floor matched at T/2; noise from the fall per block (block-mean sd = "
            "fall / U[4, 8])",
            "the rate relative to the floor shows only in the curvature, A kap^2 / 8 <= 5e-5 A; the two "
            "worlds differ by <= 1e-4 A, below the noise: T cannot tell them apart",
        ),
    )


def lower_faster_outside(steps: int, seeds: int) -> tuple[Family, ...]:
    """Return the outside families for 'lower: beta>0 vs beta=0' (a sample of ``seeds`` seeds per case)."""

    def sample(pop: Population, seed: SeedWorld) -> Generate:
        return _sample(seeds, steps, pop, seed)

    all_kinds = ("exp", "stretched", "mix", "late", "power")
    scat = "; seed spread log-sd U[0.1, 0.3]; per run speed s_c U[0.02, 0.06], amplitude 2-5 %, floor <= 5 % A g(1)"
    return (
        _fam(
            "every beta > 0 time-rescaled by >= 1.3, rising",
            "pass",
            sample(_pop_speeds(all_kinds, _up(1.3, 1.5)), _seed_speeds),
            MANY,
            "population speeds 1, U[1.3, 1.5], then x U[1, 1.15] per beta; all shapes" + scat,
            "rho = 1 / c <= 0.77 per beta: effect >= 23 % (jitter lowers it by < 1 %)",
        ),
        _fam(
            "floors of beta > 0 lower, rate fixed",
            "pass",
            sample(_pop_with(_rho_targets(0.45, 0.75), _pop_speeds(SMOOTH_P, _flat)), _seed_floors),
            MANY,
            "same speed; floor lower by A (g(rho_b) - g(1)), rho_b U[0.45, 0.75] sorted" + scat,
            "lower at equal steps; beta=0's level at T reached at rho_b T <= 0.75 T: effect >= 25 %",
        ),
        _fam(
            "beta = 0.5 fastest, every beta > 0 still >= 1.3",
            "pass",
            sample(_pop_speeds(all_kinds, _peak), _seed_speeds),
            MANY,
            "population speeds 1, U[1.3, 1.5], U[1.7, 2.2], U[1.3, top - 0.2], U[1.3, 1.5]" + scat,
            "this part asks beta > 0 against beta = 0 only: every effect >= 23 % (not monotone, not asked)",
        ),
        _fam(
            "slow amplitude of beta > 0 smaller, same rate and floor",
            "pass",
            sample(_pop_with(_rho_targets(0.45, 0.75), _pop_speeds(SMOOTH_P, _flat)), _seed_amplitude),
            MANY,
            "A_b = A g(1) / g(rho_b), rho_b U[0.45, 0.75] sorted; same speed and floor" + scat,
            "lower at equal steps by construction: beta=0's level at T reached at rho_b T: effect >= 25 %",
        ),
        _fam(
            "common floor reached by 0.6 T, beta > 0 >= 1.3x sooner",
            "pass",
            sample(_floor_reached_pop(_up(1.3, 1.5)), _seed_common_floor),
            MANY,
            "exponential, beta=0 excess 1e-4 F at u U[0.45, 0.6]; population speeds as the first family; common floor "
            "and amplitude; per run speed jitter 2 %; seed spread log-sd U[0.1, 0.3]",
            "reaching the common floor in <= 77 % of the steps (my floor reading); descent not required",
        ),
        _fam(
            "beta = 0.25 only marginally faster",
            "fail",
            sample(_pop_speeds(all_kinds, _marginal), _seed_speeds),
            MANY,
            "population speeds 1, U[1.0, 1.03], U[1.3, 1.5] x U[1, 1.15] steps" + scat,
            "beta = 0.25's population effect is 1 - 1/c <= 3 %: not >= 10 % fewer steps",
        ),
        _fam(
            "only L_0 and the fast phase move",
            "fail",
            sample(_pop_speeds(all_kinds, _flat), _seed_speeds),
            MANY,
            "population speeds all 1; a_f x exp(lam beta), lam U[-2.3, 2.3]" + scat,
            "no population effect (per-run jitter only): effect ~ 0",
        ),
        _fam(
            "common floor reached by 0.6 T at the same pace",
            "fail",
            sample(_floor_reached_pop(_flat), _seed_common_floor),
            MANY,
            "exponential, excess 1e-4 F at u U[0.45, 0.6], all speeds 1 (jitter 2 %), common floor and amplitude; "
            "seed spread log-sd U[0.1, 0.3]",
            "not faster, although beta=0's level at T (its floor) is met by mid-run: the literal test misleads",
        ),
        _fam(
            "beta > 0 faster towards a floor above beta=0's loss at T",
            "fail",
            sample(_pop_speeds(("exp",), _up(1.3, 1.5)), _seed_cross),
            MANY,
            "exponential, speeds as the first family; F_b = L_0(T) + U[0.2, 1] (L_0(T) - F_0)" + scat,
            "beta > 0 never reaches beta=0's level at T (its floor is above it): effect < 0",
        ),
        _fam(
            "no population effect, 10 % per-run speed scatter",
            "fail",
            sample(_pop_speeds(all_kinds, _flat), _no_effect_seed),
            MANY,
            "every run's speed exp(0.1 z), |z| <= 2; no beta effect" + scat,
            "population effect ~ 0 (seed sd ~ 0.14, mean over 24 seeds within +-0.05)",
        ),
        _fam(
            "beta = 1 slower than beta = 0, the others >= 1.3",
            "fail",
            sample(_pop_speeds(all_kinds, _one_slower), _seed_speeds),
            MANY,
            "population speeds 1, U[1.3, 1.6] x U[1, 1.1] steps, beta = 1 at U[0.85, 0.97]" + scat,
            "beta = 1 needs more steps than beta = 0 (effect <= -3 %)",
        ),
    )


def steeper_faster_outside(steps: int, seeds: int) -> tuple[Family, ...]:
    """Return the outside families for 'steeper: beta>0 vs beta=0' (a sample of ``seeds`` seeds per case)."""

    def sample(pop: Population, seed: SeedWorld) -> Generate:
        return _sample(seeds, steps, pop, seed)

    scat = "; seed spread log-sd U[0.1, 0.3]; per run speed s_c U[0.02, 0.06], amplitude 2-5 %, floor <= 5 % A g(1)"
    return (
        _fam(
            "exponential rate of every beta > 0 >= 1.3x",
            "pass",
            sample(_pop_speeds(("exp",), _up(1.3, 1.5)), _seed_speeds),
            MANY,
            "exponential; population speeds 1, U[1.3, 1.5], then x U[1, 1.15] per beta" + scat,
            "for an exponential the rate ratio is the speed ratio, >= 1.3 per beta",
        ),
        _fam(
            "power-law exponent of every beta > 0 >= 1.3x",
            "pass",
            sample(_pop_speeds(("power",), _up(1.3, 1.5)), _seed_exponent),
            MANY,
            "(1 + u / nu)^-p_b, p_b = p x population multiplier (1, U[1.3, 1.5], rising)" + scat,
            "r(t) = p_b / (nu T + t): ratio at equal steps = exponent ratio >= 1.3",
        ),
        _fam(
            "beta > 0 faster towards a floor above beta=0's loss at T",
            "pass",
            sample(_pop_speeds(("exp",), _up(1.3, 1.5)), _seed_cross),
            MANY,
            "exponential, speeds >= 1.3; F_b = L_0(T) + U[0.2, 1] (L_0(T) - F_0)" + scat,
            "steeper relative to its own floor by >= 1.3x although higher at T",
        ),
        _fam(
            "beta = 0.5 steepest, every beta > 0 still >= 1.3x",
            "pass",
            sample(_pop_speeds(("exp",), _peak), _seed_speeds),
            MANY,
            "exponential; population speeds 1, U[1.3, 1.5], U[1.7, 2.2], U[1.3, top - 0.2], U[1.3, 1.5]" + scat,
            "ratio = speed ratio >= 1.3 for every beta > 0; this part does not ask for a monotone order",
        ),
        _fam(
            "floors of beta > 0 lower, rate fixed",
            "fail",
            sample(_pop_with(_rho_targets(0.45, 0.75), _pop_speeds(SMOOTH_P, _flat)), _seed_floors),
            MANY,
            "same speed and shape; floor lower by A (g(rho_b) - g(1))" + scat,
            "lower but not steeper: rate ratio 1 (per-run jitter only)",
        ),
        _fam(
            "beta = 0.25 only marginally steeper",
            "fail",
            sample(_pop_speeds(("exp",), _marginal), _seed_speeds),
            MANY,
            "exponential; population speeds 1, U[1.0, 1.03], the others U[1.3, 1.5] rising" + scat,
            "beta = 0.25's slow-phase rate ratio is <= 1.03, below 1.1",
        ),
        _fam(
            "only L_0 and the fast phase move",
            "fail",
            sample(_pop_speeds(("exp", "power", "stretched", "mix"), _flat), _seed_speeds),
            MANY,
            "population speeds all 1; a_f x exp(lam beta), lam U[-2.3, 2.3]" + scat,
            "the same slow-phase rate in every run (ratio ~ 1)",
        ),
        _fam(
            "slow amplitude of beta > 0 smaller, same rate and floor",
            "fail",
            sample(_pop_with(_rho_targets(0.45, 0.75), _pop_speeds(("exp", "power"), _flat)), _seed_amplitude),
            MANY,
            "A_b = A g(1) / g(rho_b), rho_b U[0.45, 0.75]; same speed and floor" + scat,
            "lower at equal steps, but the same rate relative to the floor (ratio ~ 1)",
        ),
        _fam(
            "no population effect, 10 % per-run rate scatter",
            "fail",
            sample(_pop_speeds(("exp",), _flat), _no_effect_seed),
            MANY,
            "exponential; every run's speed exp(0.1 z), |z| <= 2" + scat,
            "no population effect: the population rate ratio is about 1.01 (e^{s^2})",
        ),
        _fam(
            "slow phase barely bent by T (steeper or tie, even odds)",
            "zone",
            sample(_barely_pop, _seed_barely),
            MANY,
            "exponential, kap U[0.005, 0.02], A/F log-U[1, 3]; world steeper: speeds 1, U[1.3, 1.5], rising; "
            "world tie: same rate, amplitude and floor matched at T/2; noise from the fall per block (block-mean sd = "
            "fall / U[4, 8])",
            "curvature A kap^2 / 8 <= 5e-5 A: the worlds differ by <= 1.5e-4 A per run, below the noise",
        ),
    )
