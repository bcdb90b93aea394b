"""Compare two claim runs' JSON sidecars: verdicts, pass counts, and how far each statistic moved.

``python benchmarks/compare_runs.py before.json after.json`` prints, per claim, the verdict and the
reason in both runs, then per (claim, statistic, control) the median of its values over units in
both runs, the median and largest relative change of a unit's value (units matched by unit, label and
position), and how many checks changed from met to missed or back. It is how docs/performance.md
reports what a new ENGINE_VERSION moved.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

Key = tuple[str, str, str]  # claim, statistic, control


def _checks(run: dict[str, Any]) -> dict[Key, dict[tuple[str, str, int], dict[str, Any]]]:
    """Return every check of the run, grouped by (claim, statistic, control) and keyed by (unit, label, n-th)."""
    out: dict[Key, dict[tuple[str, str, int], dict[str, Any]]] = defaultdict(dict)
    for test in run["tests"]:
        record = test.get("record") or {}
        for check in record.get("checks", []):
            key = (test["claim_id"], check["statistic"], check.get("control") or "")
            seen = out[key]
            n = sum(1 for u, lab, _ in seen if (u, lab) == (check["unit"], check["label"]))
            seen[(check["unit"], check["label"], n)] = check
    return out


def _median(values: list[float]) -> float:
    finite = sorted(v for v in values if math.isfinite(v))
    if not finite:
        return math.nan
    mid = len(finite) // 2
    return finite[mid] if len(finite) % 2 else (finite[mid - 1] + finite[mid]) / 2


def _met(check: dict[str, Any]) -> bool:
    value, threshold, tol = check["value"], check["threshold"], check.get("tol", 0.0)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    ops = {
        "<=": value <= threshold + tol,
        ">=": value >= threshold - tol,
        "<": value < threshold,
        ">": value > threshold,
    }
    return bool(ops[check["direction"]])


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Return the comparison as lines of text."""
    lines = ["verdicts:"]
    old = {c["id"]: c for c in before["claims"]}
    for claim in after["claims"]:
        was = old.get(claim["id"], {})
        same = "same" if was.get("verdict") == claim["verdict"] else "CHANGED"
        lines.append(f"  {claim['id']}: {was.get('verdict')} -> {claim['verdict']} ({same})")
        if was.get("reason") != claim["reason"]:
            lines.append(f"      before: {was.get('reason')}")
            lines.append(f"      after:  {claim['reason']}")
    lines.append("statistics (median over units before -> after; relative change per unit: median, max; met flips):")
    a, b = _checks(before), _checks(after)
    for key in sorted(set(a) | set(b)):
        x, y = a.get(key, {}), b.get(key, {})
        common = sorted(set(x) & set(y))
        rel = []
        flips = 0
        for k in common:
            u, v = x[k]["value"], y[k]["value"]
            if isinstance(u, (int, float)) and isinstance(v, (int, float)) and math.isfinite(u) and math.isfinite(v):
                rel.append(abs(v - u) / max(abs(u), 1e-300))
            flips += _met(x[k]) != _met(y[k])
        med_x, med_y = _median([c["value"] for c in x.values()]), _median([c["value"] for c in y.values()])
        claim, stat, control = key
        where = f"{claim} {stat}" + (f" [control: {control}]" if control else "")
        change = f"rel. change median {_median(rel):.2g}, max {max(rel):.2g}" if rel else "no common units"
        lines.append(f"  {where}: {med_x:.6g} -> {med_y:.6g}; {change}; met flips {flips}/{len(common)}")
    return lines


def main(argv: list[str]) -> int:
    """Print the comparison of the two JSON sidecars named in ``argv``."""
    if len(argv) != 2:
        print("usage: python benchmarks/compare_runs.py BEFORE.json AFTER.json", file=sys.stderr)
        return 2
    before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv)
    print("\n".join(compare(before, after)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
