"""Render a run as markdown (the full report and a compact CI summary), and write files atomically."""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from tabulate import tabulate

from claimcheck.results import ClaimResult, StatSummary, TestOutcome, Verdict
from claimcheck.runfile import RunData

_ESCAPES = str.maketrans({"|": "\\|", "<": "&lt;", ">": "&gt;", "`": "\\`", "\n": " ", "\r": " "})
RERUN_KEY = "rerun options"  # env entry holding the options that reproduce this run


def md(text: object) -> str:
    """Escape text for markdown: pipes, angle brackets, backticks and newlines cannot break a table."""
    return str(text).translate(_ESCAPES)


def figure_name(claim_id: str, group: str) -> str:
    """Return the file name of the figure for ``group`` of ``claim_id`` (stable, filesystem-safe)."""
    slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-") or "curves"
    return f"{re.sub(r'[^A-Za-z0-9]+', '-', claim_id)}-{slug[:60]}.png"


def figure_dir(report: Path) -> Path:
    """Return the folder holding the figures of the report at ``report``."""
    return report.with_name(report.stem + "-figures")


def rerun_command(run: RunData, targets: Sequence[str]) -> str:
    """Return the command that reruns ``targets`` (node ids or files) with this run's settings."""
    opts = run.env.get(RERUN_KEY, "")
    return " ".join(["pytest", *(shlex.quote(t) for t in targets), opts, "--claim-report"]).replace("  ", " ")


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


def _summary_table(results: Sequence[ClaimResult], expected: dict[str, str]) -> str:
    header = "| id | claim | paper source | statistic | threshold | measured | verdict | negative control |"
    lines = [header, "|---|---|---|---|---|---|---|---|"]
    for r in results:
        names, thresholds, values = _stat_cells(r.claim_stats)
        lines.append(
            f"| [{md(r.claim_id)}](#{_anchor(r)}) | {md(r.title)} | {md(r.source)} | {names} | {thresholds} | "
            f"{values} | **{r.verdict.value}**{_known(r, expected)} | {_control_cell(r)} |"
        )
    return "\n".join(lines)


def _known(r: ClaimResult, expected: dict[str, str]) -> str:
    if r.claim_id not in expected or r.verdict is Verdict.SKIPPED:
        return ""  # a skip (no data or model) says nothing about the known verdict
    verdict = expected[r.claim_id].partition(":")[0]
    return " (known)" if verdict == r.verdict.value else f" (expected {md(verdict)})"


def _anchor(r: ClaimResult) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", r.claim_id.lower()).strip("-")


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
        seed = "" if t.record.seed is None else str(t.record.seed)
        for c in t.record.checks:
            role = "claim" if c.control is None else f"control: {c.control}"
            met = "yes" if c.met else "no"
            rows.append(
                [name, seed, c.label, role, c.statistic, f"{c.value:.6g}", f"{c.direction} {c.threshold:g}", met]
            )
    return _table(["test", "seed", "configuration", "role", "statistic", "value", "threshold", "met"], rows)


def _figures(r: ClaimResult, folder: str) -> list[str]:
    groups = dict.fromkeys(c.group for t in r.tests if t.record for c in t.record.curves)
    return [f"![{md(g)}]({folder}/{figure_name(r.claim_id, g)})" for g in groups]


def _files(tests: Sequence[TestOutcome]) -> list[str]:
    return list(dict.fromkeys(t.nodeid.split("::")[0] for t in tests))


def _section(run: RunData, r: ClaimResult, figure_folder: str) -> str:
    parts = [
        f'<a id="{_anchor(r)}"></a>',
        f"## {md(r.claim_id)}: {md(r.title)}",
        "",
        f"**Verdict: {r.verdict.value}**: {md(r.reason)}",
        "",
        f"Paper source: {md(r.source)}",
    ]
    if r.claim_id in run.expected:
        parts += ["", f"Known result at this budget: {md(run.expected[r.claim_id])}"]
    if r.verdict in (Verdict.NOT_REPRODUCED, Verdict.ERROR):
        parts += ["", f"Rerun this claim: `{rerun_command(run, _files(r.tests))}`"]
    parts += ["", "**Regime tested**", "", _regimes(r.tests)]
    notes = [n for t in r.tests if t.record for n in t.record.notes]
    if notes:
        parts += ["", "**Notes**", ""] + [f"- {md(n)}" for n in dict.fromkeys(notes)]
    if r.control_stats:
        parts += ["", "**Negative controls** (each must miss the claim's threshold)", ""]
        rows = [
            [s.control, s.statistic, f"{s.direction} {s.threshold:g}", s.values.format(), f"{s.met}/{s.values.n}"]
            for s in r.control_stats
        ]
        parts.append(_table(["control", "statistic", "threshold", "measured", "met (should not)"], rows))
    figures = _figures(r, figure_folder)
    if figures:
        parts += ["", "**Figures**", "", *figures]
    parts += ["", "**Per run**", "", _per_run(r.tests)]
    failed = [t for t in r.tests if t.outcome not in ("passed", "skipped")]
    if failed:
        parts += ["", "**Rerun what failed**", ""]
        parts += [f"- `{rerun_command(run, [t.nodeid])}`: {md(t.message[:300])}" for t in failed]
    skipped = [t for t in r.tests if t.outcome == "skipped"]
    if skipped:
        parts += ["", "**Skipped**", ""] + [f"- {md(t.nodeid)}: {md(t.message)}" for t in skipped]
    return "\n".join(parts)


def _counts(results: Sequence[ClaimResult]) -> str:
    counts = Counter(r.verdict for r in results)
    return ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v]) or "no claims ran"


def render(run: RunData, *, figure_folder: str = "figures", extra: Sequence[str] = ()) -> str:
    """Return the whole markdown report: header, one row per claim, one section per claim.

    ``figure_folder`` is the figures' folder relative to the report; ``extra`` are sections
    (e.g. a baseline comparison) placed after the claims table.
    """
    results = run.results()
    parts = [f"# {md(run.title)}", "", f"**{_counts(results)}**", ""]
    if run.incomplete:
        parts += ["**INCOMPLETE RUN**: these did not finish:", ""]
        parts += [f"- {md(i)}" for i in run.incomplete] + [""]
    parts += ["## Environment", "", _table(["setting", "value"], list(run.env.items())), ""]
    if run.counters:
        parts += [", ".join(f"{k}: {v}" for k, v in run.counters.items()), ""]
    parts += ["## Claims", "", _summary_table(results, run.expected) if results else "_no claim tests ran_", ""]
    if run.expected:
        parts += [
            "(known): the verdict this budget is known to give, listed with its reason in the expectations file.",
            "",
        ]
    parts += [*extra]
    for r in results:
        parts += [_section(run, r, figure_folder), ""]
    return "\n".join(parts)


STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub's limit for one step summary


def render_compact(run: RunData, limit: int = STEP_SUMMARY_LIMIT // 2) -> str:
    """Return a short summary for a CI job page: verdict table, then folded details, under ``limit`` bytes."""
    results = run.results()
    head = [f"### {md(run.title)}", "", f"**{_counts(results)}**", ""]
    if run.incomplete:
        head += ["**INCOMPLETE RUN**", ""]
    head += ["| id | verdict | claim |", "|---|---|---|"]
    head += [f"| {md(r.claim_id)} | **{r.verdict.value}** | {md(r.title)} |" for r in results]
    body = ["", "<details><summary>Why, and how to rerun</summary>", ""]
    for r in results:
        body.append(f"- **{md(r.claim_id)}** {r.verdict.value}: {md(r.reason)}")
        if r.verdict in (Verdict.NOT_REPRODUCED, Verdict.ERROR):
            body.append(f"  - rerun: `{rerun_command(run, _files(r.tests))}`")
    tail = ["", "</details>", ""]
    text = "\n".join(head + body + tail)
    if len(text.encode()) <= limit:
        return text
    cut = "\n".join(head) + "\n\n_details left out: the summary would exceed its size limit_\n"
    return cut.encode()[:limit].decode(errors="ignore")
