"""Record what a claim test measured: checks with thresholds, the regime, notes and curves.

A ``ClaimRecorder`` lives for one test. It serialises to plain JSON so that the plugin can put it
on the test report (``user_properties``) and pytest-xdist can carry it to the controller.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Direction = Literal["<=", ">=", "<", ">"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}

PROPERTY_KEY = "claimcheck"  # the user_properties key the plugin stores records under


@dataclass(frozen=True)
class Check:
    """One statistic compared with a threshold; ``control`` names a negative-control group."""

    statistic: str
    value: float
    direction: Direction
    threshold: float
    control: str | None = None  # None: the claim itself; else the control group it belongs to
    label: str = ""  # the configuration it was measured on, e.g. "n=8 d=64"

    @property
    def met(self) -> bool:
        """Return True when ``value direction threshold`` holds (never for NaN)."""
        return _OPS[self.direction](self.value, self.threshold)

    @property
    def defined(self) -> bool:
        """Return False for a NaN value (the statistic could not be computed)."""
        return not math.isnan(self.value)

    def describe(self) -> str:
        """Return e.g. ``worst-step orders = -9.06 (needs <= -2)``."""
        return f"{self.statistic} = {self.value:.4g} (needs {self.direction} {self.threshold:g})"


@dataclass(frozen=True)
class Curve:
    """A named series (a loss curve, a sweep) kept for figures and the JSON sidecar."""

    name: str
    y: list[float]
    x: list[float] | None = None
    group: str = ""  # curves of one group share a figure; same (group, name) across seeds share a band
    xlabel: str = ""
    ylabel: str = ""


@dataclass
class ClaimRecorder:
    """Collect the checks of one claim test; ``verdict_problems`` says what failed."""

    claim_id: str
    seed: int | None = None
    checks: list[Check] = field(default_factory=list)
    regime: dict[str, dict[str, Any]] = field(default_factory=dict)  # label -> settings
    notes: list[str] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)

    def check(
        self,
        statistic: str,
        value: float,
        direction: Direction,
        threshold: float,
        *,
        control: str | None = None,
        label: str = "",
    ) -> bool:
        """Record ``statistic`` and whether it meets ``direction threshold``; return that."""
        if direction not in _OPS:
            raise ValueError(f"direction must be one of {sorted(_OPS)}, got {direction!r}")
        c = Check(statistic, float(value), direction, float(threshold), control, label)
        self.checks.append(c)
        return c.met

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

    def verdict_problems(self) -> tuple[list[str], list[str]]:
        """Return (claim checks not met, control groups that did not fail), as sentences.

        A control group fails as required when at least one of its checks is not met; a control
        with an undefined (NaN) statistic counts as not having failed, since it showed nothing.
        """
        unmet = [c.describe() + _at(c.label) for c in self.checks if c.control is None and not c.met]
        groups: dict[tuple[str, str], list[Check]] = {}
        for c in self.checks:
            if c.control is not None:
                groups.setdefault((c.control, c.label), []).append(c)
        passed_controls = []
        for (name, label), cs in groups.items():
            if not any(c.defined and not c.met for c in cs):
                what = "; ".join(c.describe() for c in cs)
                passed_controls.append(f"negative control '{name}'{_at(label)} did not fail: {what}")
        return unmet, passed_controls

    def to_json(self) -> str:
        """Return the record as a JSON string (NaN and inf kept as JSON extensions)."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ClaimRecorder:
        """Rebuild a record from ``to_json`` output."""
        raw = json.loads(text)
        raw["checks"] = [Check(**c) for c in raw["checks"]]
        raw["curves"] = [Curve(**c) for c in raw["curves"]]
        return cls(**raw)


def _at(label: str) -> str:
    return f" at {label}" if label else ""


def _plain(v: Any) -> Any:
    """Make numpy scalars and tuples JSON-friendly."""
    if hasattr(v, "item") and callable(v.item):
        return v.item()
    if isinstance(v, tuple):
        return list(v)
    return v
