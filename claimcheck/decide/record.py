"""Record what a claim test measured: checks with thresholds, the regime, exclusions, notes and curves.

A ``ClaimRecorder`` lives for one test and travels as JSON on its report. Under a protocol it takes each
statistic's direction, threshold and tolerance from it, and refuses what the protocol does not state.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol, Direction, Estimate, Stat

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}

PROPERTY_KEY = "claimcheck"  # the user_properties key the plugin stores records under


class ProtocolDrift(ConfigError):
    """A test recorded a statistic or threshold its claim's protocol does not state."""


@dataclass(frozen=True)
class Check:
    """One statistic compared with a threshold; ``control`` names a negative-control group."""

    statistic: str
    value: float
    direction: Direction
    threshold: float
    control: str | None = None  # None: the claim itself; else the control group it belongs to
    label: str = ""  # the configuration it was measured on, e.g. "n=8 d=64"
    part: str = ""  # the sub-claim it belongs to ("" for a claim of one part)
    unit: str = ""  # the independent unit (normally the seed) it was measured on
    tol: float = 0.0  # the protocol's stated tolerance of the comparison
    low: float | None = None  # estimate rule: the interval around ``value``
    high: float | None = None
    interval: str = ""  # what the interval is, e.g. "Student-t 90% over 10 seeds"

    @property
    def met(self) -> bool:
        """Return True when ``value direction threshold`` holds within ``tol`` (never for NaN)."""
        return self.stat.met(self.value)

    @property
    def stat(self) -> Stat:
        """Return the statistic this check compared against."""
        return Stat(self.statistic, self.direction, self.threshold, self.tol)

    @property
    def defined(self) -> bool:
        """Return False for a NaN value (the statistic could not be computed)."""
        return not math.isnan(self.value)

    def describe(self) -> str:
        """Return e.g. ``worst-step orders = -9.06 (needs <= -2)``, with enough digits to show a near tie."""
        value = _near(self.value, self.threshold)
        interval = f" [{self.low:.4g}, {self.high:.4g}]" if self.low is not None and self.high is not None else ""
        return f"{self.statistic} = {value}{interval} (needs {self.direction} {self.threshold:g})"


@dataclass(frozen=True)
class Curve:
    """A named series (a loss curve, a sweep) kept for figures and the JSON sidecar."""

    name: str
    y: list[float]
    x: list[float] | None = None
    group: str = ""  # curves of one group share a figure; same (group, name) across seeds share a band
    xlabel: str = ""
    ylabel: str = ""


@dataclass(frozen=True)
class Exclusion:
    """A unit taken out of a part's count because it left the claim's premise; never silently."""

    unit: str
    part: str
    reason: str
    control: str | None = None


@dataclass(frozen=True)
class Look:
    """One look of a sequential claim test: the units run so far, the batch it added, and what was decided."""

    units: int  # units handed out so far
    added: list[str]  # the units of this look's batch, in order
    state: dict[str, str]  # "part a" / "control c" -> its verdict or status at this look


@dataclass
class ClaimRecorder:
    """Collect the checks, exclusions, regime, notes and curves of one claim test (and a batched test's looks)."""

    claim_id: str
    seed: int | None = None
    checks: list[Check] = field(default_factory=list)
    regime: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> settings
    notes: list[str] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    exclusions: list[Exclusion] = field(default_factory=list)
    schedule: list[int] = field(default_factory=list)  # units after each planned look; [] for one look
    looks: list[Look] = field(default_factory=list)
    stopped: str = ""  # why a sequential test stopped: decided, the cap, or the test's own rule
    protocol: ClaimProtocol | None = field(default=None, repr=False, compare=False)  # not serialised

    def _unit(self, unit: object | None) -> str:
        if unit is not None:
            return str(unit)
        return "" if self.seed is None else str(self.seed)

    def _stat(
        self, statistic: str, direction: Direction | None, threshold: float | None, part: str, control: str | None
    ) -> Stat:
        """Return the statistic as the protocol states it; refuse one it does not state."""
        if self.protocol is None:
            if direction is None or threshold is None:
                raise ProtocolDrift(
                    f"{self.claim_id}: {statistic!r} needs a direction and threshold, or a protocol that states them"
                )
            if direction not in _OPS:
                raise ValueError(f"direction must be one of {sorted(_OPS)}, got {direction!r}")
            return Stat(statistic, direction, float(threshold))
        p = self.protocol
        if control is not None:
            part = p.control(control).part
        stat = p.part(part).stat(statistic)
        if stat is None:
            known = [s.name for s in p.part(part).stats]
            raise ProtocolDrift(
                f"{self.claim_id} v{p.version}: statistic {statistic!r} is not in the protocol of part {part!r} "
                f"(it states {known}); add it to the protocol as a new version, or record it as a note"
            )
        if (direction is not None and direction != stat.direction) or (
            threshold is not None and float(threshold) != stat.threshold
        ):
            raise ProtocolDrift(
                f"{self.claim_id} v{p.version}: {statistic!r} recorded with {direction} {threshold} but the protocol "
                f"states {stat.direction} {stat.threshold:g}; change the protocol (a new version), not the test"
            )
        return stat

    def check(
        self,
        statistic: str,
        value: float,
        direction: Direction | None = None,
        threshold: float | None = None,
        *,
        control: str | None = None,
        label: str = "",
        part: str = "",
        unit: object | None = None,
    ) -> bool:
        """Record ``statistic`` on ``unit`` (default: the test's seed) and whether it is met; return that.

        With a protocol, ``direction`` and ``threshold`` may be left out and must match it when given.
        """
        stat = self._stat(statistic, direction, threshold, part, control)
        if control is not None and self.protocol is not None:
            part = self.protocol.control(control).part
        c = Check(
            statistic, float(value), stat.direction, stat.threshold, control, label, part, self._unit(unit), stat.tol
        )
        self._one_value_per_unit(c)
        self.checks.append(c)
        return c.met

    def _one_value_per_unit(self, c: Check) -> None:
        """Refuse, for a part under the mean rule, a second value of one unit or a value outside the stated bounds."""
        p = self.protocol.part(c.part) if self.protocol is not None else None
        if p is None or p.rule != "mean":
            return
        where = f"{self.claim_id} v{self.protocol.version if self.protocol else 0}: part {p.name!r} (rule 'mean')"
        if p.bounds is not None and not math.isnan(c.value) and not p.bounds[0] <= c.value <= p.bounds[1]:
            raise ProtocolDrift(f"{where}: {c.statistic} = {c.value} on unit {c.unit} lies outside bounds {p.bounds}")
        key = (c.statistic, c.control, c.unit)
        if any((o.statistic, o.control, o.unit) == key and o.part == c.part for o in self.checks):
            raise ProtocolDrift(
                f"{where}: unit {c.unit!r} already has a value of {c.statistic!r}; the mean rule takes one per unit"
            )

    def estimate(
        self,
        statistic: str,
        value: float,
        low: float,
        high: float,
        interval: str,
        *,
        control: str | None = None,
        label: str = "",
        part: str = "",
    ) -> bool:
        """Record an estimate with its interval (a part under the estimate rule); return whether all of it meets."""
        if self.protocol is None:
            raise ProtocolDrift(f"{self.claim_id}: an estimate needs a protocol with a part under the estimate rule")
        stat = self._stat(statistic, None, None, part, control)
        if control is not None:
            part = self.protocol.control(control).part
        c = Check(
            statistic,
            float(value),
            stat.direction,
            stat.threshold,
            control,
            label,
            part,
            "pooled",
            stat.tol,
            float(low),
            float(high),
            interval,
        )
        self.checks.append(c)
        return stat.met(float(low) if stat.direction in (">=", ">") else float(high))

    def score(
        self,
        measurements: Mapping[str, Any],
        *,
        part: str = "",
        unit: object | None = None,
        label: str = "",
        control: str | None = None,
    ) -> dict[str, float | Estimate]:
        """Score one unit with its part's declared decision and record every statistic it returns; return them.

        ``measurements`` are the decision's keyword arguments; a control is scored with its part's decision.
        """
        if self.protocol is None:
            raise ProtocolDrift(f"{self.claim_id}: score() needs a protocol whose part declares a decision")
        name = self.protocol.control(control).part if control is not None else part
        p = self.protocol.part(name)
        if p.decision is None:
            raise ProtocolDrift(
                f"{self.claim_id} v{self.protocol.version}: part {name!r} declares no decision; give it "
                "Part(decision=...) or record its statistics with check()"
            )
        values = dict(p.decision(**measurements))
        for stat, value in values.items():
            if isinstance(value, Estimate):
                v = value
                self.estimate(
                    stat, v.value, v.low, v.high, v.interval, control=control, label=v.label or label, part=part
                )
            else:
                self.check(stat, value, control=control, label=label, part=part, unit=unit)
        return values

    def exclude(self, reason: str, *, unit: object | None = None, part: str = "", control: str | None = None) -> None:
        """Take ``unit`` out of ``part``'s count (it left the claim's premise), with the reason shown."""
        if self.protocol is not None:
            p = self.protocol.part(self.protocol.control(control).part if control else part)
            if not p.premise:
                raise ProtocolDrift(
                    f"{self.claim_id} v{self.protocol.version}: part {p.name!r} states no premise, so no unit may be "
                    "excluded from it; state the premise in the protocol (a new version)"
                )
        self.exclusions.append(Exclusion(self._unit(unit), part, reason, control))

    def set_regime(self, label: str = "", **items: Any) -> None:
        """Record the regime ``label`` ran in (init, scale, mu relative to the bound, dtype, ...)."""
        self.regime.setdefault(label, {}).update({k: _plain(v) for k, v in items.items()})

    def note(self, text: str) -> None:
        """Add a sentence the report shows in the claim's section."""
        self.notes.append(text)

    def curve(
        self,
        name: str,
        y: Sequence[float],
        x: Sequence[float] | None = None,
        group: str = "",
        *,
        xlabel: str = "",
        ylabel: str = "",
    ) -> None:
        """Keep a series for figures and the JSON sidecar (x defaults to 0, 1, 2, ...)."""
        xs = None if x is None else [float(v) for v in x]
        self.curves.append(Curve(name, [float(v) for v in y], xs, group or self.claim_id, xlabel, ylabel))

    def to_json(self) -> str:
        """Return the record as a JSON string (NaN and inf kept as JSON extensions); the protocol travels apart."""
        d = asdict(self)
        d.pop("protocol")
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> ClaimRecorder:
        """Rebuild a record from ``to_json`` output."""
        raw = json.loads(text)
        raw.pop("protocol", None)
        raw["checks"] = [Check(**c) for c in raw["checks"]]
        raw["curves"] = [Curve(**c) for c in raw["curves"]]
        raw["exclusions"] = [Exclusion(**e) for e in raw.get("exclusions", [])]
        raw["looks"] = [Look(**v) for v in raw.get("looks", [])]
        return cls(**raw)


def _near(value: float, threshold: float) -> str:
    """Return ``value`` with 4 significant digits, or with as many as it takes to differ from ``threshold``."""
    for digits in (4, 6, 9, 12, 17):
        text = f"{value:.{digits}g}"
        if value == threshold or float(text) != threshold:
            return text
    return repr(value)


def _plain(v: Any) -> Any:
    """Make numpy scalars and tuples JSON-friendly."""
    if hasattr(v, "item") and callable(v.item):
        return v.item()
    if isinstance(v, tuple):
        return list(v)
    return v
