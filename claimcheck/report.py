"""Render the markdown claim report from aggregated results, and write it atomically."""

from __future__ import annotations

import os
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from tabulate import tabulate

from claimcheck.results import ClaimResult, StatSummary, TestOutcome, Verdict

_ESCAPES = str.maketrans({"|": "\\|", "<": "&lt;", ">": "&gt;", "`": "\\`", "\n": " ", "\r": " "})


def md(text: object) -> str:
    """Escape text for a markdown table cell: pipes, angle brackets, backticks, newlines."""
    return str(text).translate(_ESCAPES)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[md(c) for c in row] for row in rows]
    return str(tabulate(cells, headers=[md(h) for h in headers], tablefmt="github", disable_numparse=True))


def _stat_cells(stats: Sequence[StatSummary]) -> tuple[str, str, str]:
    names = "<br>".join(md(s.statistic) for s in stats) or "n/a"
    thresholds = "<br>".join(md(f"{s.direction} {s.threshold:g}") for s in stats) or "n/a"
    values = "<br>".join(f"{s.values.format()}, met {s.met}/{s.values.n}" for s in stats) or "n/a"
    return names, thresholds, values


def _control_cell(r: ClaimResult) -> str:
    if r.controls_total == 0:
        return "none ran"
    names = sorted({md(s.control) for s in r.control_stats if s.control})
    return f"failed as required {r.controls_failed}/{r.controls_total}: " + ", ".join(names)


def _summary_table(results: Sequence[ClaimResult]) -> str:
    header = "| id | claim | paper source | statistic | threshold | measured | verdict | negative control |"
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    for r in results:
        names, thresholds, values = _stat_cells(r.claim_stats)
        verdict = f"**{r.verdict.value}**"
        lines.append(
            f"| {md(r.claim_id)} | {md(r.title)} | {md(r.source)} | {names} | {thresholds} | "
            f"{values} | {verdict} | {_control_cell(r)} |"
        )
    return "\n".join(lines)


def _regimes(tests: Sequence[TestOutcome]) -> str:
    seen: dict[str, int] = {}
    for t in tests:
        for label, items in t.record.regime.items() if t.record else ():
            key = (f"{label}: " if label else "") + "; ".join(f"{k}={v}" for k, v in items.items())
            seen[key] = seen.get(key, 0) + 1
    if not seen:
        return "_no regime recorded_"
    return "\n".join(f"- {md(k)} (runs: {n})" for k, n in seen.items())


def _per_run(tests: Sequence[TestOutcome]) -> str:
    rows: list[list[str]] = []
    for t in tests:
        name = t.nodeid.split("::")[-1]
        if t.record is None or not t.record.checks:
            rows.append([name, "", "", "", t.outcome, "", "", t.message[:200]])
            continue
        for c in t.record.checks:
            role = "claim" if c.control is None else f"control: {c.control}"
            rows.append(
                [
                    name,
                    "" if t.record.seed is None else str(t.record.seed),
                    c.label,
                    role,
                    c.statistic,
                    f"{c.value:.6g}",
                    f"{c.direction} {c.threshold:g}",
                    "yes" if c.met else "no",
                ]
            )
    return _table(["test", "seed", "configuration", "role", "statistic", "value", "threshold", "met"], rows)


def _section(r: ClaimResult) -> str:
    parts = [
        f"## {md(r.claim_id)}: {md(r.title)}",
        "",
        f"**Verdict: {r.verdict.value}**: {md(r.reason)}",
        "",
        f"Paper source: {md(r.source)}",
        "",
        "**Regime tested**",
        "",
        _regimes(r.tests),
    ]
    notes = [n for t in r.tests if t.record for n in t.record.notes]
    if notes:
        parts += ["", "**Notes**", ""] + [f"- {md(n)}" for n in dict.fromkeys(notes)]
    if r.control_stats:
        parts += ["", "**Negative controls** (each must miss the claim's threshold)", ""]
        parts.append(
            _table(
                ["control", "statistic", "threshold", "measured", "met (should not)"],
                [
                    [
                        s.control,
                        s.statistic,
                        f"{s.direction} {s.threshold:g}",
                        s.values.format(),
                        f"{s.met}/{s.values.n}",
                    ]
                    for s in r.control_stats
                ],
            )
        )
    parts += ["", "**Per run**", "", _per_run(r.tests)]
    reruns = [t for t in r.tests if t.outcome not in ("passed", "skipped") and t.rerun]
    if reruns:
        parts += ["", "**Rerun what failed**", ""]
        parts += [f"- `{t.rerun}`: {md(t.message[:300])}" for t in reruns]
    skipped = [t for t in r.tests if t.outcome == "skipped"]
    if skipped:
        parts += ["", "**Skipped**", ""] + [f"- {md(t.nodeid)}: {md(t.message)}" for t in skipped]
    return "\n".join(parts)


def render(
    results: Sequence[ClaimResult],
    env: Mapping[str, str],
    *,
    title: str = "Claim report",
    incomplete: Sequence[str] = (),
) -> str:
    """Return the whole markdown report: header, one row per claim, one section per claim."""
    counts = Counter(r.verdict for r in results)
    summary = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v]) or "no claims ran"
    parts = [f"# {md(title)}", "", f"**{summary}**", ""]
    if incomplete:
        parts += ["**INCOMPLETE RUN**: these did not finish:", ""] + [f"- {md(i)}" for i in incomplete] + [""]
    parts += ["## Environment", "", _table(["setting", "value"], list(env.items())), ""]
    parts += ["## Claims", "", _summary_table(results) if results else "_no claim tests ran_", ""]
    for r in results:
        parts += [_section(r), ""]
    return "\n".join(parts)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
