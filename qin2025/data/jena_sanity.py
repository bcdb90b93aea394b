"""Check that a loaded Jena record is physically plausible weather, in time order, before a claim trains on it.

A file can load cleanly and still be wrong: columns renamed or swapped in the header, values
replaced by noise, rows shuffled. ``check_jena`` tests what the station's physics and sampling
imply, on whichever of these columns the record has:

- every value lies in a plausible range for a weather station (``RANGES``);
- Tpot = (T + 273.15) * (1000 / p) ** 0.286 (potential temperature, K), within 0.5 K;
- VPdef = VPmax - VPact (vapour pressure deficit, mbar), within 0.1 mbar;
- H2OC = VPact / p * 1000 (water vapour concentration, mmol/mol), within 0.1;
- the lag-1 autocorrelation of T in file order is at least 0.9 (10-minute weather is smooth; the
  shared files give 0.999, shuffled rows about 0).

Values are rounded to 2 decimals in the files, so the relations hold to ~0.02 on the real data
(0 violations in SOURCES.md's checks); at most ``MAX_BAD_FRACTION`` of the rows may miss a range or
relation, for the odd logger glitch in a long record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qin2025.data.jena import JenaError, JenaRecord

# Plausible values at the Jena roof station (155 m above sea level), generous: the shared files stay
# well inside (p 945-1015 mbar, T -23 to 28 degC, rho 1133-1383 g/m3).
RANGES: dict[str, tuple[float, float]] = {
    "p (mbar)": (850.0, 1100.0),
    "T (degC)": (-40.0, 45.0),
    "Tpot (K)": (230.0, 330.0),
    "Tdew (degC)": (-50.0, 35.0),
    "rh (%)": (0.0, 100.5),
    "VPmax (mbar)": (0.0, 100.0),
    "VPact (mbar)": (0.0, 60.0),
    "VPdef (mbar)": (0.0, 100.0),
    "sh (g/kg)": (0.0, 40.0),
    "H2OC (mmol/mol)": (0.0, 60.0),
    "rho (g/m**3)": (1000.0, 1500.0),
    "wv (m/s)": (0.0, 60.0),
    "max. wv (m/s)": (0.0, 80.0),
    "wd (deg)": (0.0, 360.0),
}
TPOT_TOLERANCE = 0.5  # K
VP_TOLERANCE = 0.1  # mbar (VPdef) and mmol/mol (H2OC)
MIN_AUTOCORR = 0.9  # lag-1 autocorrelation of T in file order; real: 0.999, shuffled: ~0
MAX_BAD_FRACTION = 0.001  # of rows, per range or relation
FIX = (
    "Check the file's header and rows against its source (SOURCES.md lists the published sha256), "
    "or choose another file"
)
Columns = dict[str, np.ndarray]


class JenaSanityError(JenaError):
    """The record loads but is not plausible Jena weather: a range, a physical relation or the time order fails."""


@dataclass(frozen=True)
class JenaSanity:
    """What ``check_jena`` checked, one line per check, e.g. ``Tpot relation: 19,536/19,536 rows within 0.5 K``."""

    checks: tuple[str, ...]

    def describe(self) -> str:
        """Return the checks as one line."""
        return "; ".join(self.checks)


def _relation(name: str, residual: np.ndarray, tolerance: float, unit: str) -> tuple[str, str | None]:
    bad = ~(np.abs(residual) <= tolerance)  # NaN counts as bad
    rows = residual.size
    line = f"{name}: {rows - int(bad.sum()):,}/{rows:,} rows within {tolerance:g} {unit}"
    if bad.sum() > MAX_BAD_FRACTION * rows:
        worst = float(np.nanmax(np.abs(residual))) if np.isfinite(residual).any() else float("nan")
        return line, f"{name} fails on {int(bad.sum()):,} of {rows:,} rows (largest miss {worst:.3g} {unit})"
    return line, None


def check_jena(record: JenaRecord) -> JenaSanity:
    """Return the checks ``record`` passed; raise JenaSanityError naming the first that failed and why.

    Checks the ranges and relations of the module docstring on the columns ``record`` has (a relation
    is skipped when a column it needs is absent), and the lag-1 autocorrelation of T when T is there.
    """
    col = {name: record.values[:, j] for j, name in enumerate(record.columns)}
    rows = record.rows
    lines: list[str] = []
    problems: list[str] = []
    for name, (lo, hi) in RANGES.items():
        if name in col:
            bad = int(((col[name] < lo) | (col[name] > hi)).sum())
            if bad > MAX_BAD_FRACTION * rows:
                v = col[name]
                problems.append(
                    f"{name!r} lies outside its plausible range [{lo:g}, {hi:g}] on {bad:,} of {rows:,} rows "
                    f"(values {v.min():g} to {v.max():g})"
                )
    lines.append(f"ranges: {sum(n in col for n in RANGES)} columns inside plausible station ranges")
    relations: tuple[tuple[tuple[str, ...], str, float, str, Callable[[Columns], np.ndarray]], ...] = (
        (
            ("T (degC)", "p (mbar)", "Tpot (K)"),
            "Tpot = (T + 273.15)(1000/p)^0.286",
            TPOT_TOLERANCE,
            "K",
            lambda c: (c["T (degC)"] + 273.15) * (1000.0 / c["p (mbar)"]) ** 0.286 - c["Tpot (K)"],
        ),
        (
            ("VPmax (mbar)", "VPact (mbar)", "VPdef (mbar)"),
            "VPdef = VPmax - VPact",
            VP_TOLERANCE,
            "mbar",
            lambda c: c["VPmax (mbar)"] - c["VPact (mbar)"] - c["VPdef (mbar)"],
        ),
        (
            ("VPact (mbar)", "p (mbar)", "H2OC (mmol/mol)"),
            "H2OC = VPact / p * 1000",
            VP_TOLERANCE,
            "mmol/mol",
            lambda c: c["VPact (mbar)"] / c["p (mbar)"] * 1000.0 - c["H2OC (mmol/mol)"],
        ),
    )
    with np.errstate(all="ignore"):
        for needs, name, tolerance, unit, residual in relations:
            if all(n in col for n in needs):
                line, problem = _relation(name, residual(col), tolerance, unit)
                lines.append(line)
                if problem:
                    problems.append(problem)
    if "T (degC)" in col and rows >= 3:
        t = col["T (degC)"]
        r = float(np.corrcoef(t[:-1], t[1:])[0, 1]) if t.std() > 0 else float("nan")
        lines.append(f"lag-1 autocorrelation of T: {r:.4f} (at least {MIN_AUTOCORR})")
        if not r >= MIN_AUTOCORR:
            problems.append(
                f"the lag-1 autocorrelation of T in file order is {r:.3f}, below {MIN_AUTOCORR}: consecutive rows "
                "are not 10 minutes of weather apart (shuffled or noise rows)"
            )
    if problems:
        raise JenaSanityError(record.path, "not plausible Jena weather: " + "; ".join(problems), FIX)
    return JenaSanity(tuple(lines))
