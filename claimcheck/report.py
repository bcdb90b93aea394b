"""Render a run as markdown: a first screen that answers what reproduced, how sure, why not and how to rerun,
then one detail section per claim (protocol, parts, controls, statistics, regime, notes, figures).

Per-unit rows live in the JSON sidecar; the markdown lists only the units that failed or were
excluded, each with its rerun command. Ordering follows claim ids and seeds, never execution order.

A report must fit a pull-request comment: when the whole markdown would exceed ``MAX_CHARS``, the
per-claim sections go to a details file beside it (``details_path``; ``render(..., details=...)``
and ``render_details``), and the first screen links there.

What a suite tells the first screen about its subject (the model under test) comes through the run's
environment and records: ``SUBJECT_KEY`` (one line of facts about it), ``CONFIRMED_ON_KEY`` (what
the protocols' ledger status was confirmed on, when that is not the subject) and, in a claim's
records, a regime entry ``PREMISES_KEY`` (the claim's premises the subject breaks, shown in its row).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from claimcheck.expectations import known_label
from claimcheck.protocol import ClaimProtocol
from claimcheck.rundata import RunData
from claimcheck.verdicts import ClaimResult, ControlResult, PartResult, StatSummary, TestOutcome, UnitScore, Verdict

_ESCAPES = str.maketrans(
    {"|": "\\|", "<": "&lt;", ">": "&gt;", "`": "\\`", "[": "\\[", "]": "\\]", "\n": " ", "\r": " "}
)
RERUN_KEY = "rerun options"  # env entry holding the options that reproduce this run
SUBJECT_KEY = "model facts"  # env entry: what the subject under test is (shown on the first screen)
CONFIRMED_ON_KEY = "protocols confirmed on"  # env entry: set when the ledger's confirmations are not of the subject
PREMISES_KEY = "premises broken"  # regime entry: the claim's premises its subject breaks (in the claim's row)
MAX_CHARS = 60_000  # a GitHub pull-request comment holds 65,536 characters; leave room for a comparison
RERUN_REPORT = "reports/claim-rerun.md"  # where a printed rerun command writes, so it never replaces the full report
VERDICT_ORDER = tuple(Verdict)


def md(text: object) -> str:
    """Escape text for markdown: pipes, angle brackets, backticks, brackets and newlines cannot break out."""
    return str(text).translate(_ESCAPES)


def figure_name(claim_id: str, group: str) -> str:
    """Return the file name of the figure for ``group`` of ``claim_id`` (stable, filesystem-safe)."""
    slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-") or "curves"
    return f"{re.sub(r'[^A-Za-z0-9]+', '-', claim_id)}-{slug[:60]}.png"


def figure_dir(report: Path) -> Path:
    """Return the folder holding the figures of the report at ``report``."""
    return report.with_name(report.stem + "-figures")


def rerun_command(run: RunData, targets: Sequence[str]) -> str:
    """Return the command that reruns ``targets`` (node ids or files) with this run's settings.

    It writes its own report (``RERUN_REPORT``), so the full report it came from is kept.
    """
    opts = run.env.get(RERUN_KEY, "")
    parts = ["pytest", *(shlex.quote(t) for t in targets), opts, f"--claim-report={RERUN_REPORT}"]
    return " ".join(p for p in parts if p)


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Return a markdown table, cells escaped and not padded (padding to the widest cell only adds bytes)."""
    lines = ["| " + " | ".join(md(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _anchor(r: ClaimResult) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", r.claim_id.lower()).strip("-")


def _files(tests: Sequence[TestOutcome]) -> list[str]:
    return list(dict.fromkeys(t.nodeid.split("::")[0] for t in tests))


def counts(results: Sequence[ClaimResult]) -> str:
    """Return the headline: how many claims got each verdict value, every value named."""
    c = Counter(r.verdict for r in results)
    return ", ".join(f"{c[v]} {v.value}" for v in VERDICT_ORDER)


def _short_status(status: str) -> str:
    return status.split(":", 1)[0] if status else "n/a"


def _rate_cell(p: PartResult) -> str:
    if p.rate is not None:
        return p.rate.format()
    return "; ".join(f"{c.value:.3g} [{c.low:.3g}, {c.high:.3g}]" for c in p.estimates if c.low is not None) or "n/a"


def _bar_cell(p: PartResult, proto: ClaimProtocol | None) -> str:
    if p.rule == "estimate":
        stats = proto.part(p.name).stats if proto is not None else ()
        return ", ".join(f"{s.direction} {s.threshold:g}" for s in stats) or "n/a"
    return f"> {p.bar:g}" if p.bar < 1 else "every unit"


def _excluded(p: PartResult) -> int:
    return sum(bool(u.excluded) for u in p.units)


def _controls_cell(r: ClaimResult) -> str:
    if not r.controls:
        return "none ran"
    return f"{r.controls_failed}/{r.controls_total} fail as required"


def _known(r: ClaimResult, expected: dict[str, object]) -> str:
    pin = expected.get(r.claim_id)
    return md(known_label(r.verdict.value, str(pin.get("verdict")) if isinstance(pin, dict) else None))


def premises(r: ClaimResult) -> list[str]:
    """Return the premises of the claim that its subject breaks, as its records state them (``PREMISES_KEY``)."""
    found = [
        str(items[PREMISES_KEY])
        for t in r.tests
        if t.record
        for items in t.record.regime.values()
        if items.get(PREMISES_KEY)
    ]
    return list(dict.fromkeys(found))


def _what(r: ClaimResult) -> str:
    broken = premises(r)
    if not broken:
        return md(r.title)
    return f"{md(r.title)} **Model outside the claim's premises:** {md('; '.join(broken))}"


def _version(run: RunData, r: ClaimResult) -> str:
    proto = r.protocol
    if proto is None:
        return "n/a"
    status = _short_status(run.ledger.get(r.claim_id, ""))
    on = run.env.get(CONFIRMED_ON_KEY, "")
    return md(f"v{proto.version}, {status}" + (f" on {on}" if on and status != "n/a" else ""))


def _first_screen(run: RunData, results: Sequence[ClaimResult], details: str = "") -> list[str]:
    rows = []
    for r in results:
        proto = r.protocol
        version = _version(run, r)
        link = f"[{md(r.claim_id)}]({details}#{_anchor(r)})"
        if len(r.parts) <= 1:
            p = r.parts[0] if r.parts else None
            rows.append(
                f"| {link} | {_what(r)} | **{r.verdict.value}**{_known(r, run.expected)} | "
                f"{_rate_cell(p) if p else 'n/a'} | {_bar_cell(p, proto) if p else 'n/a'} | "
                f"{_excluded(p) if p else 0} | {_controls_cell(r)} | {version} |"
            )
            continue
        rows.append(
            f"| {link} | {_what(r)} | **{r.verdict.value}**{_known(r, run.expected)} | | | | "
            f"{_controls_cell(r)} | {version} |"
        )
        for p in r.parts:
            rows.append(
                f"| {md(r.claim_id)}.{md(p.name)} | {md(p.statement)} | {p.verdict.value} | {_rate_cell(p)} | "
                f"{_bar_cell(p, proto)} | {_excluded(p)} | | |"
            )
    head = [
        "| claim | what it says | verdict | units passed, rate [90% exact] | bar | excluded | controls | protocol |",
        "|---|---|---|---|---|---|---|---|",
    ]
    out = _subject(run) + head + rows
    why = [r for r in results if r.verdict not in (Verdict.REPRODUCED, Verdict.SKIPPED)]
    if why:
        out += ["", "**Why not, and how to rerun**", ""]
        for r in why:
            out.append(f"- **{md(r.claim_id)} {r.verdict.value}**: {md(_trim(r.reason, 400))}")
            out.append(f"  rerun: `{rerun_command(run, _files(r.tests))}`")
    skipped = [r for r in results if r.verdict is Verdict.SKIPPED]
    if skipped:
        out += ["", "**Skipped**", ""] + [f"- {md(r.claim_id)}: {md(r.reason)}" for r in skipped]
    return out


def _subject(run: RunData) -> list[str]:
    """Return the line on the model under test, when the suite describes it, and whose protocols were confirmed."""
    facts = run.env.get(SUBJECT_KEY, "")
    if not facts:
        return []
    name = run.env.get("model", "")
    line = f"**Model under test**: `{md(name)}`: {md(facts)}." if name else f"**Model under test**: {md(facts)}."
    on = run.env.get(CONFIRMED_ON_KEY, "")
    if on:
        line += (
            f" A protocol's ledger status (confirmed or exploratory) was earned on {md(on)}; it says nothing yet "
            "about this model, whose verdicts are the ones below."
        )
    return [line, ""]


def _trim(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " ..."


def _protocol_block(proto: ClaimProtocol, status: str) -> list[str]:
    lines = [f"**Protocol v{proto.version}** ({md(status or 'no ledger')}; fingerprint {proto.fingerprint()})", ""]
    if not proto.declared:
        return [
            *lines,
            "No protocol declared: every unit must meet every threshold, and every control unit must fail.",
            "",
        ]
    for p in proto.parts:
        rule = (
            f"pass rate of {md(p.unit)}s, exact {proto.level:.0%} interval vs bar {p.bar:g}"
            if p.rule == "pass-rate" and p.bar < 1
            else "every admissible unit must pass (a failure is a counterexample)"
            if p.rule == "pass-rate"
            else "estimate with its interval vs the threshold"
        )
        name = f"`{md(p.name)}`: " if p.name else ""
        lines.append(f"- {name}{md(p.statement)}; rule: {rule}")
        for s in p.stats:
            why = f" ({md(s.why)})" if s.why else ""
            lines.append(f"  - {md(s.describe())}{why}")
        if p.premise:
            lines.append(f"  - premise (a unit outside it is excluded and listed): {md(p.premise)}")
    rules = {p.name: p.rule for p in proto.parts}
    for c in proto.controls:
        if rules.get(c.part) == "estimate":
            limit = "its interval must not show the claimed effect"
        else:
            limit = (
                "may pass on no unit" if c.max_pass_rate <= 0 else f"may pass on at most {c.max_pass_rate:g} of units"
            )
        lines.append(f"- control `{md(c.name)}` (on {md(c.part or 'the claim')}): {md(c.why)}; {limit}")
    seeds = proto.seeds
    units = ", ".join(f"{k} {v}" for k, v in seeds.units.items())
    lines.append(f"- seeds: block {md(seeds.block)} from seed {seeds.start} (+ base seed); units {md(units)}")
    if seeds.exploratory:
        lines.append(f"- exploratory seeds (looked at while designing): {md(seeds.exploratory)}")
    if proto.regime:
        lines.append(f"- regime: {md(proto.regime)}")
    if proto.horizon:
        lines.append(f"- horizon: {md(proto.horizon)}")
    return [*lines, ""]


def _unit_lines(run: RunData, title: str, units: Sequence[UnitScore], what: str) -> list[str]:
    if not units:
        return []
    out = [f"**{title}**", ""]
    for u in units:
        detail = u.excluded or "; ".join(u.misses)
        rerun = f" rerun: `{rerun_command(run, list(u.nodeids))}`" if u.nodeids else ""
        out.append(f"- {what} {md(u.unit)}: {md(_trim(detail, 300))}.{rerun}")
    return [*out, ""]


def _part_block(run: RunData, p: PartResult) -> list[str]:
    name = f"Part `{md(p.name)}`" if p.name else "Claim"
    out = [f"{name}: **{p.verdict.value}**: {md(p.reason)}", ""]
    failed = [u for u in p.units if not u.passed and not u.excluded]
    excluded = [u for u in p.units if u.excluded]
    out += _unit_lines(run, "Units that failed", failed, p.unit_name)
    out += _unit_lines(run, "Units excluded (outside the premise; not counted)", excluded, p.unit_name)
    for c in p.estimates:
        out.append(f"- estimate: {md(c.describe())} ({md(c.interval)})")
    return out


def _controls_table(controls: Sequence[ControlResult]) -> str:
    rows = [
        [
            c.name,
            c.why,
            c.rate.format() if c.rate else "; ".join(f"{e.value:.3g} [{e.low:.3g}, {e.high:.3g}]" for e in c.estimates),
            "interval must not meet"
            if c.rate is None
            else "none"
            if c.max_pass_rate <= 0
            else f"< {c.max_pass_rate:g}",
            c.status,
        ]
        for c in controls
    ]
    return _table(
        ["control", "why the claim should not hold there", "passed (as if the claim held)", "may pass", "status"], rows
    )


def _stats_table(stats: Sequence[StatSummary]) -> str:
    rows = [
        [
            (f"control: {s.control}" if s.control else s.part or "claim"),
            s.statistic,
            f"{s.direction} {s.threshold:g}",
            s.values.format(),
            f"{s.met}/{s.values.n}",
        ]
        for s in stats
    ]
    return _table(["part", "statistic", "threshold", "median [min, max] (n)", "met"], rows)


SHOWN_CHARS = 400  # longer notes and regimes are cut in the markdown; the JSON sidecar has them whole
SHOWN_ROWS = 8  # notes or regimes shown per claim; the rest are counted and left to the JSON


def _capped(rows: list[str], what: str) -> list[str]:
    if len(rows) <= SHOWN_ROWS:
        return rows
    return [*rows[:SHOWN_ROWS], f"- ... and {len(rows) - SHOWN_ROWS} more {what} in the JSON sidecar"]


def _regimes(tests: Sequence[TestOutcome]) -> str:
    seen: dict[str, int] = {}
    for t in tests:
        for label, items in t.record.regime.items() if t.record else ():
            key = (f"{label}: " if label else "") + "; ".join(f"{k}={v}" for k, v in items.items())
            seen[key] = seen.get(key, 0) + 1
    if not seen:
        return "_no regime recorded_"
    rows = [f"- {md(_trim(k, SHOWN_CHARS))} (tests: {n})" for k, n in sorted(seen.items())]
    return "\n".join(_capped(rows, "regimes"))


def _figures(r: ClaimResult, folder: str, shown: set[str] | None) -> list[str]:
    """Return image links for the claim's figures (only those in ``shown``, when it is given)."""
    groups = dict.fromkeys(c.group for t in r.tests if t.record for c in t.record.curves)
    names = {g: figure_name(r.claim_id, g) for g in groups}
    return [f"![{md(g)}]({folder}/{n})" for g, n in names.items() if shown is None or n in shown]


def _section(run: RunData, r: ClaimResult, figure_folder: str, shown: set[str] | None) -> str:
    parts = [
        f'<a id="{_anchor(r)}"></a>',
        f"## {md(r.claim_id)}: {md(r.title)}",
        "",
        f"**Verdict: {r.verdict.value}**. Paper source: {md(r.source)}",
        "",
    ]
    if r.verdict is Verdict.SKIPPED:
        return "\n".join([*parts, f"Skipped: {md(r.reason)}"])
    if r.protocol is not None:
        parts += _protocol_block(r.protocol, run.ledger.get(r.claim_id, ""))
    for p in r.parts:
        parts += _part_block(run, p)
    if r.verdict is Verdict.ERROR:
        parts += [f"Error: {md(_trim(r.reason, 600))}", ""]
    errors = [t for t in r.tests if t.outcome == "error"]
    if errors:
        parts += ["**Tests that raised**", ""]
        parts += [f"- `{md(t.nodeid)}`: {md(_trim(t.message, 300))}" for t in errors] + [""]
    if r.controls:
        parts += ["**Negative controls**", "", _controls_table(r.controls), ""]
    stats = r.claim_stats + r.control_stats
    if stats:
        parts += ["**Statistics** (every check of every unit)", "", _stats_table(stats), ""]
    parts += ["**Regime tested**", "", _regimes(r.tests), ""]
    notes = [n for t in r.tests if t.record for n in t.record.notes]
    if notes:
        listed = _capped([f"- {md(_trim(n, SHOWN_CHARS))}" for n in dict.fromkeys(notes)], "notes")
        parts += ["<details><summary>Notes</summary>", "", *listed, "", "</details>", ""]
    figures = _figures(r, figure_folder, shown)
    if figures:
        parts += ["**Figures**", "", *figures, ""]
    skipped = [t for t in r.tests if t.outcome == "skipped"]
    if skipped:
        parts += ["**Skipped tests**", ""] + [f"- {md(t.nodeid)}: {md(t.message)}" for t in skipped]
    return "\n".join(parts).rstrip() + "\n"


RULE_TEXT = (
    "How a verdict is decided: each unit (normally a seed) of a part passes when it meets every "
    "threshold; units outside the claim's premise are excluded and listed. The exact (Clopper-Pearson) "
    "90% interval of the pass rate is compared with the protocol's bar: REPRODUCED when its lower end "
    "(a one-sided 95% bound) is above, NOT REPRODUCED when its upper end is below, INCONCLUSIVE when it "
    "straddles. A control may pass at most at its stated rate; one that passes more makes the claim ERROR."
)


def details_path(report: Path) -> Path:
    """Return the file that holds the per-claim sections when the report at ``report`` is split."""
    return report.with_name(report.stem + "-details.md")


def render(
    run: RunData,
    *,
    figure_folder: str = "figures",
    extra: Sequence[str] = (),
    figures: set[str] | None = None,
    details: str = "",
) -> str:
    """Return the markdown report: the first screen, the environment, then one section per claim.

    ``figure_folder`` is the figures' folder relative to the report; ``extra`` are sections
    (e.g. a baseline comparison) placed after the environment; ``figures`` names the figure files
    that exist (None: link every figure the run recorded). ``details`` names the details file
    (``render_details``) that holds the per-claim sections instead: the first screen links there.
    """
    results = run.results()
    parts = [f"# {md(run.title)}", "", f"**{counts(results)}**", ""]
    if run.incomplete:
        parts += ["**INCOMPLETE RUN**: no claim of it is REPRODUCED; these did not finish:", ""]
        parts += [f"- {md(i)}" for i in run.incomplete] + [""]
    parts += _first_screen(run, results, details) if results else ["_no claim tests ran_"]
    if details:
        parts += ["", f"Per-claim details (protocol, parts, controls, statistics, regime, notes, figures): [{details}]"
                  f"({details}); every value is in the JSON sidecar."]  # fmt: skip
    parts += ["", RULE_TEXT, ""]
    parts += ["## Environment", "", _table(["setting", "value"], list(run.env.items())), ""]
    if run.counters:
        parts += [", ".join(f"{k}: {v}" for k, v in run.counters.items()), ""]
    if run.data_files:
        rows = [[d["file"], d["size"], d["sha256"][:16], d["status"]] for d in run.data_files]
        parts += ["**Data files** (sha256 against the published copies)", ""]
        parts += [_table(["file", "bytes", "sha256 (first 16)", "status"], rows), ""]
    parts += [*extra]
    if not details:
        parts += [_section(run, r, figure_folder, figures) for r in results]
    return "\n".join(parts)


def render_details(run: RunData, *, figure_folder: str = "figures", figures: set[str] | None = None) -> str:
    """Return the per-claim sections of ``render`` as a file of their own, headed by the run's title and id."""
    head = [f"# {md(run.title)}: per-claim details", "", f"Run {md(run.env.get('run id', ''))}.", ""]
    return "\n".join(head + [_section(run, r, figure_folder, figures) for r in run.results()])


def terminal_lines(run: RunData, results: Sequence[ClaimResult]) -> list[tuple[str, bool]]:
    """Return the terminal summary: one line per claim and part, known non-reproductions said plainly."""
    out: list[tuple[str, bool]] = []
    for r in results:
        tag = _known(r, run.expected)
        status = _short_status(run.ledger.get(r.claim_id, "")) if r.protocol and r.protocol.declared else "no protocol"
        version = f"v{r.protocol.version} {status}" if r.protocol else ""
        line = f"{r.claim_id}: {r.verdict.value}{tag} [{version}]: {r.title}"
        if r.verdict is Verdict.SKIPPED:
            line = f"{r.claim_id}: SKIPPED: {r.reason}"
        out.append((line, r.verdict not in (Verdict.REPRODUCED, Verdict.SKIPPED)))
        if r.verdict is Verdict.SKIPPED:
            continue
        for p in r.parts:
            name = p.name or "claim"
            out.append((f"    {name}: {p.verdict.value}: {_rate_cell(p)} vs bar {_bar_cell(p, r.protocol)}", False))
        if r.verdict is Verdict.ERROR:
            out.append((f"    {_trim(r.reason, 300)}", True))
    not_holding = [r.claim_id for r in results if r.verdict not in (Verdict.REPRODUCED, Verdict.SKIPPED)]
    if not_holding:
        out.append((f"claims that do not hold as REPRODUCED in this run: {', '.join(not_holding)}", True))
    return out


STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub's limit for one step summary


def render_compact(run: RunData, limit: int = STEP_SUMMARY_LIMIT // 2) -> str:
    """Return a short summary for a CI job page: the first screen, under ``limit`` bytes."""
    results = run.results()
    head = [f"### {md(run.title)}", "", f"**{counts(results)}**", ""]
    if run.incomplete:
        head += ["**INCOMPLETE RUN**", ""]
    text = "\n".join(head + _first_screen(run, results)) + "\n"
    if len(text.encode()) <= limit:
        return text
    cut = "\n".join(head) + "\n\n_details left out: the summary would exceed its size limit_\n"
    return cut.encode()[:limit].decode(errors="ignore")
