"""State a claim's protocol before it runs: statistics, thresholds, units, seeds, decision rule, version.

A ``ClaimProtocol`` is data: a claim module declares one (one screen) and passes it to the
``claim`` marker; the plugin draws the seeds from it, the recorder refuses a statistic or threshold
the protocol does not state, and the verdict is decided from it. Its ``fingerprint`` is what the
ledger (``claimcheck.ledger``) registers, so code and protocol cannot drift apart unnoticed.

Nothing here knows a paper or a model: any suite written on claimcheck declares its claims this way.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from claimcheck.errors import ConfigError

Direction = Literal["<=", ">=", "<", ">"]
Rule = Literal["pass-rate", "estimate"]
DIRECTIONS: tuple[str, ...] = ("<=", ">=", "<", ">")
LEVEL = 0.90  # two-sided exact interval: each end is a one-sided 95% bound
EXPLORATORY_START = 0  # the exploratory pool: seeds 0, 1, 2, ... (shifted by the base seed)


@dataclass(frozen=True)
class Stat:
    """A statistic, the direction it must go, its threshold, and the tolerance of the comparison.

    ``tol`` is absolute and stated in the protocol: ``value <= threshold`` is met when
    ``value <= threshold + tol`` (float noise such as rho = -0.8999999999999998 against -0.9).
    ``margin`` is the regression gate's equivalence margin (``claimcheck.baseline``): the largest
    mean change per unit, against a baseline on the same seeds, that counts as no change. None:
    the gate derives one from the baseline's seed-to-seed spread. It does not decide the verdict,
    so it is not part of the fingerprint.
    """

    name: str
    direction: Direction
    threshold: float
    tol: float = 0.0
    why: str = ""  # where the threshold comes from, in one line
    margin: float | None = None  # the gate's equivalence margin, in the statistic's units; None: derived

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
class Part:
    """A sub-claim with a verdict of its own.

    ``rule`` "pass-rate": every unit (normally a seed) is scored pass (all ``stats`` met) or fail,
    and the exact interval of the pass rate is compared with ``bar``: REPRODUCED when its lower
    end is above the bar, NOT REPRODUCED when its upper end is below, INCONCLUSIVE otherwise. With
    ``bar`` = 1 the part is theorem-style: it is REPRODUCED when every admissible unit passed, and
    a failing unit is a counterexample.

    ``rule`` "estimate": the part records one estimate with an interval per statistic (an effect
    size over seeds); REPRODUCED when the whole interval meets the threshold, NOT REPRODUCED when
    none of it does, INCONCLUSIVE otherwise.
    """

    name: str  # short id, e.g. "collapse"; "" when the claim has one part
    statement: str  # the sub-claim in plain words
    stats: tuple[Stat, ...]
    rule: Rule = "pass-rate"
    bar: float = 0.8  # pi_0: the pass rate the claim must beat (pass-rate rule)
    unit: str = "seed"  # what one independent unit is
    premise: str = ""  # what excludes a unit (it left the claim's premise); "" when nothing does

    def __post_init__(self) -> None:
        if not 0 < self.bar <= 1:
            raise ConfigError(f"part {self.name!r}: bar must be in (0, 1], got {self.bar}")
        if not self.stats:
            raise ConfigError(f"part {self.name!r}: needs at least one statistic")

    def stat(self, name: str) -> Stat | None:
        """Return the statistic called ``name``, or None."""
        return next((s for s in self.stats if s.name == name), None)


@dataclass(frozen=True)
class Control:
    """A negative control: where the claim should not hold, and how often it may pass anyway.

    A control unit "passes" when every statistic of its ``part`` is met there (the check failed
    to tell the control from the claim). The control fails as required when the exact upper end of
    its pass rate is below ``max_pass_rate``; it makes the claim ERROR when the lower end is above,
    and leaves the claim INCONCLUSIVE in between. ``max_pass_rate`` 0 means every unit must fail.
    """

    name: str
    part: str  # the part whose statistics it runs
    why: str  # why the claim should not hold there
    max_pass_rate: float = 0.2


@dataclass(frozen=True)
class Seeds:
    """Where a protocol version draws its units' seeds.

    ``exploratory`` says which seeds were looked at while the check was designed. ``block`` names
    the confirmatory block: ``start``, start + 1, ... were never looked at before this version was
    committed. Unit i under base seed b uses seed start + b + i: the base seed only shifts the pool.
    """

    block: str
    start: int
    units: Mapping[str, int]  # budget name -> number of units
    exploratory: str = ""

    def count(self, budget: str, default: int) -> int:
        """Return the number of units at ``budget`` (``default`` when the protocol names none)."""
        return int(self.units.get(budget, default))


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

    def __post_init__(self) -> None:
        names = [p.name for p in self.parts]
        if len(set(names)) != len(names):
            raise ConfigError(f"{self.claim_id}: part names must be unique, got {names}")
        for c in self.controls:
            if c.part not in names:
                raise ConfigError(f"{self.claim_id}: control {c.name!r} names part {c.part!r}; parts are {names}")

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

    def seed_list(self, base: int, budget: str, default_units: int, pool: str = "confirmatory") -> list[int]:
        """Return the seeds of the units at ``budget`` under base seed ``base``.

        ``pool`` "exploratory" draws from seed 0 up instead of the confirmatory block (for design
        work; the report marks such a run).
        """
        start = EXPLORATORY_START if pool == "exploratory" else self.seeds.start
        return [start + base + i for i in range(self.seeds.count(budget, default_units))]

    def to_dict(self) -> dict[str, Any]:
        """Return the protocol as plain data (JSON-ready)."""
        out = asdict(self)
        out["seeds"]["units"] = dict(self.seeds.units)
        return out

    def fingerprint(self) -> str:
        """Return a short sha256 of everything that decides the verdict, and of nothing else.

        It covers the claim, the version, each part's statistics (name, direction, threshold,
        tolerance), rule, bar and unit, each control's part and cap, the seed block's start and units,
        and the interval's level. Prose (statements, reasons, regime, horizon) is left out, so
        rewording it is not a new version; changing a number or a name is.
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
        return hashlib.sha256(json.dumps(decides, sort_keys=True).encode()).hexdigest()[:12]


def from_dict(raw: Mapping[str, Any]) -> ClaimProtocol:
    """Rebuild a protocol from ``to_dict`` output (as carried on test reports and in run JSON)."""
    parts = tuple(Part(**{**p, "stats": tuple(Stat(**s) for s in p["stats"])}) for p in raw["parts"])
    controls = tuple(Control(**c) for c in raw["controls"])
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
    )


def implicit(claim_id: str, stats: Mapping[str, Stat], controls: Mapping[str, Control], units: int) -> ClaimProtocol:
    """Return the protocol of a claim that declares none: every unit must pass (bar 1), exploratory.

    This keeps the rule claimcheck had before protocols: every run meets every threshold.
    """
    part = Part("", "every unit meets every threshold (no protocol declared)", tuple(stats.values()), bar=1.0)
    return ClaimProtocol(
        claim_id,
        0,
        (part,),
        tuple(controls.values()),
        Seeds("none", 0, {}, "every seed (no protocol declared)"),
        declared=False,
    )
