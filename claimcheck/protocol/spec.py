"""State a claim's protocol before it runs: statistics, thresholds, units, seeds, decision rule, version.

A ``ClaimProtocol`` is data, declared by a claim module and passed to the ``claim`` marker: the plugin
draws the seeds from it, the recorder refuses what it does not state, the verdict is decided from it
(docs/protocols.md). Nothing here knows a paper or a model.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

from claimcheck.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

Direction = Literal["<=", ">=", "<", ">"]
Rule = Literal["pass-rate", "estimate", "mean"]
Multiplicity = Literal["holm", "bonferroni"]
Expect = Literal["pass", "fail", "zone"]
Origin = Literal["design", "challenge", "outside"]
EXPECTS: tuple[str, ...] = ("pass", "fail", "zone")
ORIGINS: tuple[str, ...] = ("design", "challenge", "outside")
ControlKind = Literal["discriminating", "sanity", "positive"]
CONTROL_KINDS: tuple[str, ...] = ("discriminating", "sanity", "positive")
DIRECTIONS: tuple[str, ...] = ("<=", ">=", "<", ">")
LEVEL = 0.90  # two-sided exact interval: each end is a one-sided 95% bound
ALPHA = 0.05  # each decision's error per direction: (1 - LEVEL) / 2
MULTIPLICITY: tuple[str, ...] = ("holm", "bonferroni")
# The seed layout: docs/protocols.md, "Seed blocks".
LATER = "added later"  # a field's metadata key: it enters a fingerprint only when it differs from its default
SPAN = 2**24
N_BUDGETS = 8  # budget positions a suite may declare (its list of budgets, in order)
EXPLORATORY_CAP = 1000  # offsets below this are the exploratory pool; a confirmatory start is at least this


def block_seed(base: int, budget_index: int, offset: int) -> int:
    """Return the seed at ``offset`` in the block of base seed ``base`` at the budget in position ``budget_index``."""
    if not 0 <= budget_index < N_BUDGETS:
        raise ConfigError(
            f"budget position {budget_index} is outside 0..{N_BUDGETS - 1}: a suite has at most {N_BUDGETS} budgets"
        )
    if not 0 <= offset < SPAN:
        raise ConfigError(f"seed offset {offset} is outside its block (0..{SPAN - 1})")
    return (base * N_BUDGETS + budget_index) * SPAN + offset


@dataclass(frozen=True)
class Stat:
    """A statistic, the direction it must go, its threshold, and the absolute tolerance of the comparison.

    ``margin`` is the regression gate's equivalence margin (docs/ci-recipe.md); it does not decide the
    verdict, so it is not part of the fingerprint.
    """

    name: str
    direction: Direction
    threshold: float
    tol: float = 0.0
    why: str = ""  # where the threshold comes from, in one line
    margin: float | None = None  # the gate's equivalence margin, in the statistic's units; None: derived
    # resolves: it settles what the part's other statistics only bound within the tested range (``Part.unresolved``)
    resolves: bool = field(default=False, metadata={LATER: True})

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ConfigError(f"statistic {self.name!r}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if not self.tol >= 0:
            raise ConfigError(f"statistic {self.name!r}: tol must be >= 0, got {self.tol}")
        if self.margin is not None and not (self.margin >= 0 and math.isfinite(self.margin)):
            raise ConfigError(f"statistic {self.name!r}: margin must be finite and >= 0, or None; got {self.margin}")

    def met(self, value: float) -> bool:
        """Return whether ``value`` meets the threshold within ``tol`` (never for NaN)."""
        if math.isnan(value):
            return False
        t, eps = self.threshold, self.tol
        if self.direction == "<=":
            return value <= t + eps
        if self.direction == "<":
            return value < t + eps
        if self.direction == ">=":
            return value >= t - eps
        return value > t - eps

    def describe(self) -> str:
        """Return e.g. ``R^2 >= 0.9`` (with the tolerance when there is one)."""
        tol = f" (tol {self.tol:g})" if self.tol else ""
        return f"{self.name} {self.direction} {self.threshold:g}{tol}"


@dataclass(frozen=True)
class Estimate:
    """An estimate with its interval: what the decision of an estimate-rule part returns per statistic."""

    value: float
    low: float
    high: float
    interval: str  # what the interval is, e.g. "Student-t 90% over 14 seeds"
    label: str = ""  # the configuration it is of, e.g. "beta=0.5" ("" : the recorder's label)


Decision = Callable[..., Mapping[str, "float | Estimate"]]


@dataclass(frozen=True)
class Case:
    """One calibration case: the parameters that made it and the measurements fed to the part's decision."""

    params: Mapping[str, float | str]  # shown when the decision gets the case wrong
    measurements: Mapping[str, Any]  # the decision's keyword arguments


ZONE = "zone"  # the key a decision returns (value 1.0, its statistics NaN) for a case in its declared zone


@dataclass(frozen=True)
class Family:
    """A family of calibration cases whose answer is known: every case must pass, must fail, or lies in the zone.

    ``generate`` draws one case from a numpy Generator seeded per case; ``origin`` says who wrote the family
    (docs/calibration.md, "Design and challenge families, and declared zones").
    """

    name: str  # e.g. "offset power law (1 + t/tau)^-p"
    expect: Expect  # "pass": the claim holds in every case; "fail": it does not; "zone": undecidable here
    generate: Callable[[np.random.Generator], Case]
    cases: int = 200
    grid: str = ""  # the parameter grid, in words
    why: str = ""  # why the answer is known
    origin: Origin = field(default="design", metadata={LATER: True})  # who wrote it: designer or challenger

    def __post_init__(self) -> None:
        if self.expect not in EXPECTS:
            raise ConfigError(f"calibration family {self.name!r}: expect must be one of {EXPECTS}, got {self.expect!r}")
        if self.origin not in ORIGINS:
            raise ConfigError(f"calibration family {self.name!r}: origin must be one of {ORIGINS}, got {self.origin!r}")
        if self.cases < 1:
            raise ConfigError(f"calibration family {self.name!r}: cases must be >= 1, got {self.cases}")


@dataclass(frozen=True)
class Part:
    """A sub-claim with a verdict of its own, decided under its ``rule`` (docs/decisions.md).

    "pass-rate": a unit passes when every statistic is met, and the pass rate is tested against ``bar``
    (bar 1: every admissible unit must pass). "mean": each unit records one value per statistic and each
    mean is tested against its threshold (with a schedule, under ``bounds`` or ``sigma``). "estimate": one
    estimate with its interval per statistic, decided by the interval. ``unresolved`` makes it a zone part,
    settled by its statistics marked ``resolves``. ``decision`` scores one unit's raw measurements, in a
    claim test and in ``claimcheck calibrate`` (``calibration``); ``decision_id`` fingerprints it
    (docs/calibration.md).
    """

    name: str  # short id, e.g. "collapse"; "" when the claim has one part
    statement: str  # the sub-claim in plain words
    stats: tuple[Stat, ...]
    rule: Rule = "pass-rate"
    bar: float = 0.8  # pi_0: the pass rate the claim must beat (pass-rate rule)
    unit: str = "seed"  # what one independent unit is
    premise: str = ""  # what excludes a unit (it left the claim's premise); "" when nothing does
    bounds: tuple[float, float] | None = None  # rule "mean": every unit's value lies in [lo, hi] (betting CS)
    sigma: float | None = None  # rule "mean": the units' standard deviation is at most this (normal-mixture CS)
    decision: Decision | None = field(default=None, compare=False, repr=False)  # not serialised
    calibration: tuple[Family, ...] = field(default=(), compare=False, repr=False)  # not serialised
    decision_id: str = ""  # filled from ``decision``: "module:name sha256"; kept when read back from JSON
    unresolved: str = field(default="", metadata={LATER: True})  # a zone part: what the range cannot resolve

    def __post_init__(self) -> None:
        if not 0 < self.bar <= 1:
            raise ConfigError(f"part {self.name!r}: bar must be in (0, 1], got {self.bar}")
        if not self.stats:
            raise ConfigError(f"part {self.name!r}: needs at least one statistic")
        resolving = [s.name for s in self.stats if s.resolves]
        if bool(resolving) != bool(self.unresolved) or (resolving and self.rule == "pass-rate"):
            raise ConfigError(
                f"part {self.name!r}: a zone part states what it cannot resolve (unresolved) and has statistics that "
                f"resolve it (Stat(resolves=True)), under the rule 'mean' or 'estimate'; got unresolved="
                f"{self.unresolved!r}, resolving {resolving}, rule {self.rule!r}"
            )
        if len(resolving) == len(self.stats):
            raise ConfigError(f"part {self.name!r}: a zone part needs a statistic that does not resolve it too")
        if self.bounds is not None and not (len(self.bounds) == 2 and self.bounds[0] < self.bounds[1]):
            raise ConfigError(f"part {self.name!r}: bounds must be (lo, hi) with lo < hi, got {self.bounds}")
        if self.sigma is not None and not self.sigma > 0:
            raise ConfigError(f"part {self.name!r}: sigma must be > 0, got {self.sigma}")
        if self.calibration and self.decision is None:
            raise ConfigError(f"part {self.name!r}: calibration families need a decision to run them on")
        if self.decision is not None and not self.decision_id:
            from claimcheck.provenance.fingerprint import (
                decision_identity,  # it reads protocols: imported here, not above
            )

            stats = [[s.name, s.direction, s.threshold, s.tol] for s in self.stats]
            object.__setattr__(self, "decision_id", decision_identity(self.decision, stats))

    def stat(self, name: str) -> Stat | None:
        """Return the statistic called ``name``, or None."""
        return next((s for s in self.stats if s.name == name), None)

    @property
    def bounding(self) -> tuple[Stat, ...]:
        """Return the statistics that do not resolve a zone part (all of them for any other part)."""
        return tuple(s for s in self.stats if not s.resolves)


@dataclass(frozen=True)
class Control:
    """A control: where the claim should not hold (or, ``kind="positive"``, where it holds by construction).

    A control unit "passes" when every statistic of its ``part`` is met there. A negative control fails as
    required when shown to pass less often than ``max_pass_rate`` (0: no unit may pass), and makes the claim
    ERROR when shown to pass more often (in the claim's Holm family). A "sanity" control (fails by
    construction) is shown but not counted; a "positive" one is decided as its part would be and makes the
    claim INCONCLUSIVE when shown to fail (docs/decisions.md, docs/calibration.md "Controls by kind").
    """

    name: str
    part: str  # the part whose statistics it runs
    why: str  # why the claim should not hold there (a positive control: why it holds by construction)
    max_pass_rate: float = 0.2
    kind: ControlKind = "discriminating"  # "sanity": fails by construction; "positive": must pass
    naive: str = ""  # discriminating: the naive check it would have fooled, and why

    def __post_init__(self) -> None:
        if self.kind not in CONTROL_KINDS:
            raise ConfigError(f"control {self.name!r}: kind must be one of {CONTROL_KINDS}, got {self.kind!r}")


@dataclass(frozen=True)
class Seeds:
    """Where a protocol version draws its units' seeds: the confirmatory block from ``start``, each budget's cap.

    ``exploratory`` names the seeds looked at while the check was designed; ``batch`` makes a budget
    sequential (docs/protocols.md "Seed blocks", docs/decisions.md "Running a claim in batches").
    """

    block: str
    start: int
    units: Mapping[str, int]  # budget name -> number of units (the cap when the budget is sequential)
    exploratory: str = ""
    batch: Mapping[str, int] = field(default_factory=dict)  # budget name -> units added per look

    def __post_init__(self) -> None:
        for budget, size in self.batch.items():
            if budget not in self.units:
                raise ConfigError(f"seeds {self.block!r}: batch names budget {budget!r}, which units does not cap")
            if not 1 <= int(size) <= int(self.units[budget]):
                raise ConfigError(
                    f"seeds {self.block!r}: batch at {budget!r} must be 1..{self.units[budget]} units, got {size}"
                )

    def count(self, budget: str, default: int) -> int:
        """Return the number of units at ``budget`` (``default`` when the protocol names none)."""
        return int(self.units.get(budget, default))

    def looks(self, budget: str, default: int) -> list[int]:
        """Return the units after each look at ``budget``: [b, 2b, ..., cap], or [cap] with no schedule."""
        cap = self.count(budget, default)
        size = int(self.batch.get(budget, cap)) or 1
        return sorted({min(cap, i) for i in range(size, cap + size, size)}) if cap else [0]


@dataclass(frozen=True)
class ClaimProtocol:
    """Everything that decides a claim's verdict, written down before the confirmatory run."""

    claim_id: str
    version: int
    parts: tuple[Part, ...]
    controls: tuple[Control, ...]
    seeds: Seeds
    regime: str = ""  # the setting the claim is checked in (init, scale, step size, dtype)
    horizon: str = ""  # how long each run is, per budget
    level: float = LEVEL
    declared: bool = True  # False: built by the plugin for a claim that declares no protocol
    alpha: float = ALPHA  # each decision's error per direction; level = 1 - 2 alpha (give either one)
    multiplicity: Multiplicity = "holm"  # how the claim's "fails" hypotheses share alpha
    prior: tuple[float, float] = (1.0, 1.0)  # Beta(a, b) of the pass-rate confidence sequence (several looks)

    def __post_init__(self) -> None:
        if self.alpha == ALPHA and self.level != LEVEL:  # an older protocol that states its level only
            object.__setattr__(self, "alpha", (1 - self.level) / 2)
        elif self.level == LEVEL and self.alpha != ALPHA:
            object.__setattr__(self, "level", 1 - 2 * self.alpha)
        if not 0 < self.alpha < 0.5 or abs(self.level - (1 - 2 * self.alpha)) > 1e-9:
            raise ConfigError(
                f"{self.claim_id}: alpha must be in (0, 0.5) and level = 1 - 2 alpha (the two-sided interval whose "
                f"ends are the one-sided tests); got alpha={self.alpha}, level={self.level}: give one of them"
            )
        if self.multiplicity not in MULTIPLICITY:
            raise ConfigError(f"{self.claim_id}: multiplicity must be one of {MULTIPLICITY}, got {self.multiplicity!r}")
        if not (len(self.prior) == 2 and min(self.prior) > 0):
            raise ConfigError(f"{self.claim_id}: prior must be Beta (a, b) with a, b > 0, got {self.prior}")
        for p in self.parts if self.seeds.batch else ():
            if p.rule == "estimate":
                raise ConfigError(
                    f"{self.claim_id}: part {p.name!r} has rule 'estimate', which one look computes; a protocol that "
                    "adds units in batches needs rule 'mean' (each unit records its value) with bounds or sigma"
                )
            if p.rule == "mean" and p.bounds is None and p.sigma is None:
                raise ConfigError(
                    f"{self.claim_id}: part {p.name!r} (rule 'mean') adds units in batches, so its confidence "
                    "sequence needs bounds=(lo, hi) on every unit's value or a variance bound sigma"
                )
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names):
            raise ConfigError(f"{self.claim_id}: part names must be unique, got {names}")
        for c in self.controls:
            if c.part not in names:
                raise ConfigError(f"{self.claim_id}: control {c.name!r} names part {c.part!r}; parts are {names}")
        if self.declared:
            self._check_seeds()

    def _check_seeds(self) -> None:
        """Refuse a block that could meet the exploratory pool or run past its span (the seed layout)."""
        s, most = self.seeds, max(self.seeds.units.values(), default=0)
        where = f"{self.claim_id} v{self.version}: seeds block {s.block!r}"
        if s.start < EXPLORATORY_CAP:
            raise ConfigError(
                f"{where} starts at {s.start}, inside the exploratory pool (offsets 0..{EXPLORATORY_CAP - 1}); "
                f"choose a start of at least {EXPLORATORY_CAP}"
            )
        if most > EXPLORATORY_CAP or s.start + most > SPAN:
            raise ConfigError(
                f"{where}: start {s.start} + {most} units must stay within a block of {SPAN} seeds, and {most} "
                f"units within the exploratory pool's {EXPLORATORY_CAP}; use fewer units or a smaller start"
            )

    def part(self, name: str) -> Part:
        """Return the part called ``name`` or raise ConfigError listing the parts."""
        for p in self.parts:
            if p.name == name:
                return p
        raise ConfigError(
            f"{self.claim_id}: no part {name!r} in its protocol; parts are {[p.name for p in self.parts]}"
        )

    def control(self, name: str) -> Control:
        """Return the control called ``name`` or raise ConfigError listing the controls."""
        for c in self.controls:
            if c.name == name:
                return c
        known = [c.name for c in self.controls]
        raise ConfigError(f"{self.claim_id}: no control {name!r} in its protocol; controls are {known}")

    def seed_list(
        self, base: int, budget: str, default_units: int, pool: str = "confirmatory", budget_index: int = 0
    ) -> list[int]:
        """Return the seeds of the units at ``budget`` (in position ``budget_index``) under base seed ``base``.

        ``pool`` "exploratory" draws from offset 0 of the block instead of the confirmatory start.
        """
        start = 0 if pool == "exploratory" else self.seeds.start
        n = self.seeds.count(budget, default_units)
        if pool == "exploratory" and n > EXPLORATORY_CAP:
            raise ConfigError(f"{self.claim_id}: {n} units at {budget} exceed the exploratory pool ({EXPLORATORY_CAP})")
        return [block_seed(base, budget_index, start + i) for i in range(n)]

    def to_dict(self) -> dict[str, Any]:
        """Return the protocol as plain data (JSON-ready); a part's decision travels as its ``decision_id``."""
        out = asdict(self, dict_factory=_plain_fields)
        out["seeds"]["units"] = dict(self.seeds.units)
        out["seeds"]["batch"] = dict(self.seeds.batch)
        return out

    def fingerprint(self) -> str:
        """Return a short sha256 of the values that decide the verdict, and of no prose.

        The settings added later (multiplicity, prior, batch, bounds, sigma) enter only when they differ
        from their defaults, so a protocol written before them keeps its fingerprint.
        """
        decides = {
            "claim": self.claim_id,
            "version": self.version,
            "level": self.level,
            "parts": [
                {
                    "name": p.name,
                    "rule": p.rule,
                    "bar": p.bar,
                    "unit": p.unit,
                    "stats": [[s.name, s.direction, s.threshold, s.tol] for s in p.stats],
                    "has_premise": bool(p.premise),
                }
                for p in self.parts
            ],
            "controls": [[c.name, c.part, c.max_pass_rate] for c in self.controls],
            "seeds": {"start": self.seeds.start, "units": dict(sorted(self.seeds.units.items()))},
        }
        decides.update(self._decision_settings())
        return hashlib.sha256(json.dumps(decides, sort_keys=True).encode()).hexdigest()[:12]

    def _decision_settings(self) -> dict[str, Any]:
        """Return the decision settings that differ from their defaults (for the fingerprint)."""
        out: dict[str, Any] = {}
        if self.multiplicity != "holm":
            out["multiplicity"] = self.multiplicity
        if tuple(self.prior) != (1.0, 1.0):
            out["prior"] = list(self.prior)
        if self.seeds.batch:
            out["batch"] = dict(sorted(self.seeds.batch.items()))
        spread = {p.name: [p.bounds and list(p.bounds), p.sigma] for p in self.parts if p.bounds or p.sigma}
        if spread:
            out["spread"] = spread
        return out


_CODE_FIELDS = {f.name for f in fields(Part) if f.name in ("decision", "calibration")}


def _plain_fields(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build a dict for ``asdict`` without a part's code fields (its decision and calibration families)."""
    return {k: v for k, v in items if k not in _CODE_FIELDS}


def from_dict(raw: Mapping[str, Any]) -> ClaimProtocol:
    """Rebuild a protocol from ``to_dict`` output (as carried on test reports and in run JSON)."""
    parts = tuple(
        Part(
            **{
                **p,
                "stats": tuple(Stat(**s) for s in p["stats"]),
                "bounds": None if p.get("bounds") is None else tuple(p["bounds"]),
            }
        )
        for p in raw["parts"]
    )
    controls = tuple(Control(**c) for c in raw["controls"])
    prior = raw.get("prior", (1.0, 1.0))
    return ClaimProtocol(
        claim_id=raw["claim_id"],
        version=int(raw["version"]),
        parts=parts,
        controls=controls,
        seeds=Seeds(**raw["seeds"]),
        regime=raw.get("regime", ""),
        horizon=raw.get("horizon", ""),
        level=float(raw.get("level", LEVEL)),
        declared=bool(raw.get("declared", True)),
        alpha=float(raw.get("alpha", ALPHA)),
        multiplicity=raw.get("multiplicity", "holm"),
        prior=(float(prior[0]), float(prior[1])),
    )


def implicit(claim_id: str, stats: Mapping[str, Stat], controls: Mapping[str, Control], units: int) -> ClaimProtocol:
    """Return the protocol of a claim that declares none: every unit must pass (bar 1), exploratory."""
    part = Part("", "every unit meets every threshold (no protocol declared)", tuple(stats.values()), bar=1.0)
    return ClaimProtocol(
        claim_id,
        0,
        (part,),
        tuple(controls.values()),
        Seeds("none", 0, {}, "every seed (no protocol declared)"),
        declared=False,
    )
