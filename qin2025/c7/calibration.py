"""Calibration families of C7's decisions: one lever's rate table in worlds whose answer is known.

A case is one unit of one lever, as the claim measures it (``qin2025.c7.conditioning``, v6): its 5
settings and 4 lambda runs, with kinv(Z) read over the fitted window, lambda_max, sigma_min(Z) and
the step size mu. ``skeleton`` draws them from the structure measured on exploratory seeds 0-15 at
T = 200 (records/claims/c7.md, v5 design, V3): per lever the profile of log kinv(Z) over its 5
settings (scaled per unit by a factor f, sd measured), of log lambda_max, the lambda runs' shifts
of both, each with its seed-to-seed sd. It also draws W_V's own sigma_min over the fitted window
per run as measured (v6, records/claims/c7.md, W1, seeds 0-39): the draw's value, a per-unit
slope against log kinv(Z) resampled from the 40 measured ones (median -0.003, heavy-tailed) and a
per-run wander (sd 0.184), since GD moves W_V after the lever set it. A unit is redrawn until it
is out of the declared zone (kinv(Z) spans ``MIN_SPAN`` over the settings and, on the rotation
lever, W_V's sigma_min over the window spans less than ``WV_HELD``), since a real unit in the zone
is excluded, not scored. A world then sets each run's log rate, with Gaussian noise of sd
0.15..0.4; over a 10-40x span that alone gives a seed-to-seed sd of b of 0.16 with W_V held
(0.13-0.14 without), the sd the real rotation units show (0.16, W_V held, 23 admitted of seeds 0-39).

Grid, by what each part's statement says (association: along the lever the better-conditioned
runs are faster; governs, v8: with lambda_max and W_V's sigma_min over the window held, the rate
moves with kinv(Z) in the claimed direction, its elasticity b above the floor 0.1 that stands for
"none"; v7 asked b >= 0.5, a bar the paper does not give):

- must pass, every part: the rate follows kinv(Z), log rate = b log kinv + c log lambda_max,
  b 0.75..2, c -0.3..0; the bound form rate = mu sigma_min(Z)^2 (Theorem 1's shape at a fixed
  fraction of the curvature bound); Theorem 1's alpha, kinv(Z) x sigma_min(W_V), with W_V's
  sigma_min over the fitted window as GD moves it (drift and wander as measured);
- must pass, governs: samples whose mean elasticity is 0.6..0.75, or 0.25..0.4 (v7's "just below
  the bar": the claimed direction, a weaker strength), with a per-seed scatter of sd 0.1 on top of
  the run noise (a seed-to-seed sd of b of 0.19, more than the real units' 0.16); b = 0.5 and a
  weak b = 0.25 (each the claimed direction);
- must pass, association only: association (input) also where the rate follows X's conditioning
  alone (along the input lever it does follow kinv(Z));
- must fail, governs (the rotation lever): no effect, mean elasticity -0.02..0.02, and the wrong
  direction, mean -0.4..-0.2, each with the same per-seed scatter; lambda_max alone,
  log rate = -g log lambda_max, g 0.3..3; a curved function of lambda_max alone; beta alone
  (fixed within a unit); the scale alone (X -> s X); X's conditioning alone (fixed along the
  rotation lever); W_V's own sigma_min alone (fixed along it at init; over the fitted steps it
  drifts and wanders as measured, W1);
- must fail, association: beta alone; the scale alone; on the rotation lever also X alone and
  W_V alone.

Not scored, and why: association in the weak (b = 0.25) and lambda-alone worlds (lambda_max moves
with the lever, so a rate that follows it is associated with kinv(Z) along the lever; the
association part states an association, the governs part the mechanism); association (input) in
the W_V-alone world (not a competitor there: the input lever is not the one that tells W_V from
Z). No governs part on the input lever: there the X-alone world follows kinv(Z) too, so no
decision on that lever can tell X from Z (v4's governs (input) accepted it 1000/1000).

Between the no-effect family and the weakest must-pass one lies the zone the horizon cannot
resolve: a true mean elasticity within (t_0.95 + z_0.95) x sd / sqrt(n) of the floor 0.1, about
0.12 with the real sd 0.16 and the 19-26 seeds a ci run admits (0.08 at standard; 0.09 with these
families' 40 units and seed sd 0.19), may leave the mean rule's interval straddling it: the part is
INCONCLUSIVE there, and no family sits in it (no effect, 0 +- 0.02, is 0.08-0.12 below it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from claimcheck.protocol.spec import Case, Expect, Family
from qin2025.c7.conditioning import INPUT, LEVERS, Lever, in_zone


@dataclass(frozen=True)
class Structure:
    """What a lever's unit looks like, measured on exploratory seeds 0-15 (means, and sds over seeds)."""

    k0: tuple[float, float]  # log kinv(Z) (fitted window) at the best-conditioned setting
    k_profile: tuple[float, ...]  # mean log kinv(Z) at each setting minus the first
    k_scale_sd: float  # sd over seeds of the factor f on the profile
    l0: tuple[float, float]  # log lambda_max at the best-conditioned setting
    l_profile: tuple[float, ...]  # mean log lambda_max at each setting minus the first
    l_profile_sd: tuple[float, ...]
    run_dk: tuple[tuple[float, float], ...]  # lambda runs: log kinv(Z) minus the middle setting's
    run_dl: tuple[tuple[float, float], ...]  # lambda runs: log lambda_max minus the middle setting's
    log_smax: tuple[float, ...]  # log sigma_max(Z) at init of each of the 9 runs (medians)


STRUCTURE = {
    "input": Structure(
        (-0.664, 0.058), (0.0, -0.619, -1.699, -2.681, -3.648), 0.063,
        (6.109, 0.268), (0.0, 0.138, 0.486, 0.759, 0.952), (0.0, 0.15, 0.22, 0.224, 0.208),
        ((-0.006, 0.077), (-0.014, 0.094), (0.001, 0.098), (-0.01, 0.057)),
        ((-1.502, 0.113), (1.767, 0.197), (-0.531, 0.099), (0.978, 0.099)),
        (2.21, 2.35, 2.59, 2.72, 2.81, 1.9, 3.28, 2.59, 2.59),
    ),
    "rotation": Structure(
        (-1.148, 0.141), (0.0, -0.429, -0.99, -1.704, -2.482), 0.173,
        (6.231, 0.304), (0.0, 0.234, 0.485, 0.661, 0.719), (0.0, 0.16, 0.261, 0.297, 0.292),
        ((-0.024, 0.059), (0.043, 0.073), (0.007, 0.044), (-0.003, 0.045)),
        ((-1.447, 0.071), (1.646, 0.221), (-0.46, 0.09), (0.908, 0.113)),
        (2.3, 2.55, 2.74, 2.84, 2.88, 2.04, 3.43, 2.74, 2.74),
    ),
}  # fmt: skip
NOISE = (0.15, 0.4)  # sd of the log rate
LOG_SMIN_WV = (-4.14, 1.09)  # log sigma_min(W_V) of the Gaussian 32 x 32 draw at N(0, 1/d), seeds 0-39 (W1)
# per seed: d log sigma_min(W_V, fitted window) / d log kinv(Z, window) over the rotation lever's 5 settings,
# seeds 0-39 (W1, records/claims/c7.md): median -0.003, heavy-tailed where W_V's draw is nearly singular
WV_SLOPES = (
    0.017, -0.006, -0.064, -0.058, 0.047, 0.056, -0.023, 0.082, -0.028, 0.020, 0.016, 0.070, 0.488, -0.059,
    -0.148, -0.057, 0.275, 0.070, -0.019, -0.028, -0.076, 0.005, -0.015, 0.033, 0.179, -0.090, -0.069, -0.264,
    -0.119, -0.199, -0.016, 1.154, 0.000, 0.159, -0.040, 0.008, 0.064, 0.137, 0.855, -0.052,
)  # fmt: skip
WV_WANDER = 0.184  # per run: sd of log sigma_min(W_V, window) about each seed's line, seeds 0-39 (W1)
SEED_SD = 0.1  # the near-bar worlds' per-seed scatter of the elasticity, on top of the run noise


@dataclass(frozen=True)
class Skeleton:
    """One unit of one lever before its rates: what the claim measures, and each run's setting."""

    lever: Lever
    kinv: np.ndarray  # (9,), over the fitted window
    lam: np.ndarray
    smin: np.ndarray
    mu: np.ndarray  # 1 / lambda_max: mu = 0.5 * 2 / lambda_max
    s: np.ndarray  # the scale of X of each run
    log_kx: np.ndarray  # log condition number of X (0 on the rotation lever, where X is the Gaussian draw)
    log_smin_wv: np.ndarray  # log sigma_min(W_V) over the fitted window: the draw's, drifting with GD (W1)
    reference: list[bool]


def _draw(lever: Lever, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    st = STRUCTURE[lever.name]
    middle = lever.values.index(lever.middle)
    f = rng.normal(1.0, st.k_scale_sd)
    log_kinv = rng.normal(*st.k0) + f * np.array(st.k_profile)
    log_lam = rng.normal(*st.l0) + np.array(st.l_profile) + rng.normal(0, 1, 5) * np.array(st.l_profile_sd)
    run_k = [log_kinv[middle] + rng.normal(*dk) for dk in st.run_dk]
    run_l = [log_lam[middle] + rng.normal(*dl) for dl in st.run_dl]
    return np.concatenate([log_kinv, run_k]), np.concatenate([log_lam, run_l])


def skeleton(lever: Lever, rng: np.random.Generator) -> Skeleton:
    """Draw one unit's 9 runs of ``lever`` outside the declared zone (``in_zone``), as the claim scores its units."""
    runs = lever.settings()
    reference = [run.reference for run in runs]
    while True:
        log_kinv, log_lam = _draw(lever, rng)
        slope = float(rng.choice(WV_SLOPES))
        wander = rng.normal(0.0, WV_WANDER, log_kinv.size)
        log_smin_wv = rng.normal(*LOG_SMIN_WV) + slope * (log_kinv - log_kinv[0]) + wander
        if not in_zone(np.exp(log_kinv), reference, np.exp(log_smin_wv) if lever.holds_w_v else None):
            break
    s = np.array([run.s for run in runs])
    moved = np.array([getattr(run, lever.field) for run in runs])
    log_kx = np.log(moved) if lever is INPUT else np.zeros(moved.size)
    lam = np.exp(log_lam)
    smin = np.exp(log_kinv + np.array(STRUCTURE[lever.name].log_smax))
    return Skeleton(lever, np.exp(log_kinv), lam, smin, 1.0 / lam, s, log_kx, log_smin_wv, reference)


World = Callable[[Skeleton, np.random.Generator], tuple[np.ndarray, dict[str, float]]]  # log rate, parameters


def _noise(rng: np.random.Generator) -> float:
    return float(rng.uniform(*NOISE))


def follows_kinv(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows kinv(Z): log rate = b log kinv + c log lambda_max, b 0.75..2, c -0.3..0."""
    b, c, sd = float(rng.uniform(0.75, 2.0)), float(rng.uniform(-0.3, 0.0)), _noise(rng)
    return -3.0 + b * np.log(sk.kinv) + c * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"b": b, "c": c, "sd": sd}


def bound_form(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate is mu sigma_min(Z)^2: Theorem 1's shape at a fixed fraction of the curvature bound."""
    sd = _noise(rng)
    return np.log(sk.mu) + 2 * np.log(sk.smin) + rng.normal(0, sd, sk.kinv.size), {"sd": sd}


def elasticity_world(b: float) -> World:
    """Return the world whose rate follows kinv(Z) with elasticity exactly ``b`` (on the bar, or weak)."""

    def world(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
        sd = _noise(rng)
        return -3.0 + b * np.log(sk.kinv) + rng.normal(0, sd, sk.kinv.size), {"b": b, "sd": sd}

    return world


def lambda_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows lambda_max alone (the step size): log rate = -g log lambda_max, g 0.3..3."""
    g, sd = float(rng.uniform(0.3, 3.0)), _noise(rng)
    return -g * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"g": g, "sd": sd}


def curved_lambda(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows a curved function of lambda_max alone: -g (log lambda - 6.2)^2 - log lambda, g 0.1..0.5."""
    g, sd = float(rng.uniform(0.1, 0.5)), _noise(rng)
    log_lam = np.log(sk.lam)
    return -g * (log_lam - 6.2) ** 2 - log_lam + rng.normal(0, sd, sk.kinv.size), {"g": g, "sd": sd}


def beta_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows beta alone: beta is the same in every run of a unit, so the rate does not move."""
    sd = _noise(rng)
    return -3.0 + rng.normal(0, sd, sk.kinv.size), {"sd": sd}


def theorem_alpha(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """Theorem 1's alpha: the rate follows kinv(Z) x sigma_min(W_V), b log kinv + e log sigma_min(W_V), b, e 0.75..2."""
    b, e, sd = float(rng.uniform(0.75, 2.0)), float(rng.uniform(0.75, 2.0)), _noise(rng)
    log_rate = b * np.log(sk.kinv) + e * sk.log_smin_wv - 0.1 * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size)
    return log_rate, {"b": b, "e": e, "sd": sd}


def w_v_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows W_V's own sigma_min over the fitted window alone, e 0.5..2.

    The rotation keeps W_V's singular values at init; over the fitted steps GD moves them: the
    skeleton's per-unit drift against kinv(Z) and per-run wander are the ones measured (W1).
    """
    e, sd = float(rng.uniform(0.5, 2.0)), _noise(rng)
    log_rate = e * sk.log_smin_wv - 0.1 * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size)
    return log_rate, {"e": e, "sd": sd}


@dataclass(frozen=True)
class NearBar:
    """A sample whose mean elasticity in kinv(Z) is drawn in [lo, hi], each seed's drawn about it (sd ``SEED_SD``)."""

    lo: float
    hi: float

    def sample(self, rng: np.random.Generator) -> World:
        """Return the world of one sample: its mean elasticity drawn once, each unit's scattered about it."""
        mean = float(rng.uniform(self.lo, self.hi))

        def world(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
            b, sd = float(rng.normal(mean, SEED_SD)), _noise(rng)
            log_rate = -3.0 + b * np.log(sk.kinv) - 0.1 * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size)
            return log_rate, {"mean b": mean, "b": b, "sd": sd}

        return world


def input_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows X's conditioning alone: log rate = -bx log kx - 0.1 log lambda_max, bx 0.5..0.8."""
    bx, sd = float(rng.uniform(0.5, 0.8)), _noise(rng)
    return -3.0 - bx * sk.log_kx - 0.1 * np.log(sk.lam) + rng.normal(0, sd, sk.kinv.size), {"bx": bx, "sd": sd}


def scale_alone(sk: Skeleton, rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """The rate follows the scale of X alone (so does sigma_min(Z)): log rate = -e log s, e 0.2..0.6."""
    e, sd = float(rng.uniform(0.2, 0.6)), _noise(rng)
    return -3.0 - e * np.log(sk.s) + rng.normal(0, sd, sk.kinv.size), {"e": e, "sd": sd}


def unit_case(lever: Lever, world: World) -> Callable[[np.random.Generator], Case]:
    """Return a generator of one unit of ``lever`` in ``world``: the measurements and the world's parameters."""

    def generate(rng: np.random.Generator) -> Case:
        sk = skeleton(lever, rng)
        log_rate, params = world(sk, rng)
        measurements = {
            "rate": np.exp(log_rate).tolist(),
            "kinv": sk.kinv.tolist(),
            "lam": sk.lam.tolist(),
            "reference": sk.reference,
        } | ({"wv": np.exp(sk.log_smin_wv).tolist()} if lever.holds_w_v else {})
        return Case({"lever": lever.name, **params}, measurements)

    return generate


def sample_case(lever: Lever, world: World | NearBar, units: int) -> Callable[[np.random.Generator], Case]:
    """Return a generator of a whole sample of ``units`` units of ``lever`` in ``world`` (a mean-rule part's case).

    Each unit draws its own skeleton, world parameters within the world's grid, and noise, so the
    sample's mean elasticity lies within the grid: the answer the part must give is the world's. A
    ``NearBar`` world draws its mean elasticity once per sample, and each unit's about it.
    """

    def generate(rng: np.random.Generator) -> Case:
        one = unit_case(lever, world.sample(rng) if isinstance(world, NearBar) else world)
        drawn = [one(rng) for _ in range(units)]
        params: dict[str, float | str] = {"lever": lever.name, "units": units}
        if "mean b" in drawn[0].params:
            params["mean b"] = drawn[0].params["mean b"]
        return Case(params, {"units": [c.measurements for c in drawn]})

    return generate


# name, world, grid in words, why the answer is known, and what each kind of part must say there
# ("pass", "fail", or None: not scored, for the reason the module docstring gives).
Row = tuple[str, World | NearBar, str, str, dict[str, Expect | None]]


def _rows(lever: Lever) -> list[Row]:
    x_alone: dict[str, Expect | None] = {
        "association": "pass" if lever is INPUT else "fail",
        "governs": None if lever is INPUT else "fail",
    }
    wv_alone: dict[str, Expect | None] = {"association": None if lever is INPUT else "fail", "governs": "fail"}
    return [
        ("rate follows kinv(Z)", follows_kinv, "b 0.75..2, c -0.3..0", "the conditioning of Z sets the rate",
         {"association": "pass", "governs": "pass"}),
        ("bound form mu sigma_min(Z)^2", bound_form, "", "Theorem 1's rate at a fixed fraction of the bound",
         {"association": "pass", "governs": "pass"}),
        ("Theorem 1's alpha, kinv(Z) x sigma_min(W_V)", theorem_alpha, "b, e 0.75..2, -0.1 log lambda_max, W_V's "
         "window drift and wander as measured", "alpha reads both; the lever holds W_V's singular values at init and "
         "GD moves them little, so Z's conditioning sets the rate along it",
         {"association": "pass", "governs": "pass"}),
        ("b = 0.5", elasticity_world(0.5), "b = 0.5", "an association in the claimed direction",
         {"association": "pass", "governs": "pass"}),
        ("weak, b = 0.25", elasticity_world(0.25), "b = 0.25", "the claimed direction, a quarter of the bound's "
         "strength: kinv(Z) still sets the rate beyond lambda_max", {"association": None, "governs": "pass"}),
        ("mean b 0.6..0.75", NearBar(0.6, 0.75), f"mean b 0.6..0.75 per sample, per-seed sd {SEED_SD:g}",
         "the claimed direction, with more seed-to-seed scatter than the real units", {"association": None,
         "governs": "pass"}),
        ("mean b 0.25..0.4", NearBar(0.25, 0.4), f"mean b 0.25..0.4 per sample, per-seed sd {SEED_SD:g}",
         "the claimed direction, weaker (v7's 'just below the bar'), outside the zone the horizon cannot resolve",
         {"association": None, "governs": "pass"}),
        ("no effect", NearBar(-0.02, 0.02), f"mean b -0.02..0.02 per sample, per-seed sd {SEED_SD:g}",
         "kinv(Z) does not move the rate once lambda_max and W_V are held", {"association": None,
         "governs": "fail"}),
        ("wrong direction", NearBar(-0.4, -0.2), f"mean b -0.4..-0.2 per sample, per-seed sd {SEED_SD:g}",
         "a better-conditioned Z goes with a slower rate", {"association": None, "governs": "fail"}),
        ("lambda_max alone", lambda_alone, "-g log lambda_max, g 0.3..3", "the step size sets the rate",
         {"association": None, "governs": "fail"}),
        ("curved lambda_max alone", curved_lambda, "-g (log lambda - 6.2)^2 - log lambda, g 0.1..0.5",
         "a nonlinear function of the step size sets the rate", {"association": None, "governs": "fail"}),
        ("beta alone", beta_alone, "beta fixed in the unit: no rate change", "beta, not Z, sets the rate",
         {"association": "fail", "governs": "fail"}),
        ("X's conditioning alone", input_alone, "-bx log kx - 0.1 log lambda_max, bx 0.5..0.8",
         "the input's conditioning sets the rate; Z's follows it only on the input lever", x_alone),
        ("W_V's sigma_min alone", w_v_alone, "e 0.5..2, W_V's window drift and wander as measured, -0.1 log "
         "lambda_max", "W_V's own conditioning sets the rate; the rotation lever holds it at init", wv_alone),
        ("scale of X alone", scale_alone, "-e log s, e 0.2..0.6", "the scale moves sigma(Z), not kinv(Z)",
         {"association": "fail", "governs": "fail"}),
    ]  # fmt: skip


def conditioning_families(kind: str, lever: Lever, cases: int = 200, units: int = 0) -> tuple[Family, ...]:
    """Return the families of the ``kind`` ("association" or "governs") part of ``lever``: every scored world.

    ``units`` > 0 makes each case a sample of that many units (a mean-rule part decides a sample);
    the near-bar worlds, whose per-seed scatter sits about a sample's mean, come only with samples.
    """
    if kind not in ("association", "governs") or lever not in LEVERS:
        raise ValueError(f"conditioning_families: kind association or governs, lever INPUT or ROTATION; got {kind!r}")
    what = f"a sample of {units} units" if units else "one unit"
    grid = f"{what} of the {lever.name} lever (9 runs each); noise sd {NOISE[0]:g}..{NOISE[1]:g} in log rate"

    def gen(world: World | NearBar) -> Callable[[np.random.Generator], Case]:
        if units:
            return sample_case(lever, world, units)
        assert not isinstance(world, NearBar)  # filtered below: a near-bar world is a sample's
        return unit_case(lever, world)

    return tuple(
        Family(name, expect, gen(world), cases, f"{text}; {grid}" if text else grid, why)
        for name, world, text, why, expects in _rows(lever)
        if (expect := expects[kind]) is not None and (units or not isinstance(world, NearBar))
    )
