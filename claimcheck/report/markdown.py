"""Render a run as markdown: a first screen (what reproduced, how sure, why not, how to rerun), then one section
per claim (protocol, parts, controls, statistics, regime, notes, figures); when the whole would exceed ``MAX_CHARS``
the sections go to a details file (``render(..., details=...)``, ``render_details``) that the first screen links.
The suite describes its subject in the run's env (``SUBJECT_KEY``, ``CONFIRMED_ON_KEY``) and regimes (``PREMISES_KEY``).
"""

from __future__ import annotations

import math
import re
import shlex
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from claimcheck.decide.calibration import entry_of, part_mark
from claimcheck.decide.record import Check
from claimcheck.decide.undecided import undecided_line
from claimcheck.decide.verdicts import ClaimResult, ControlResult, PartResult, StatSummary, UnitScore, Verdict
from claimcheck.protocol.spec import N_BUDGETS, SPAN, ClaimProtocol
from claimcheck.provenance.expectations import known_label
from claimcheck.report.rundata import RunData

_ESCAPES = str.maketrans(
    {"|": "\\|", "<": "&lt;", ">": "&gt;", "`": "\\`", "[": "\\[", "]": "\\]", "\n": " ", "\r": " "}
)
RERUN_KEY = "rerun options"  # env entry holding the options that reproduce this run
SUBJECT_KEY = "model facts"  # env entry: what the subject under test is (shown on the first screen)
CONFIRMED_ON_KEY = "protocols confirmed on"  # env entry: set when the ledger's confirmations are not of the subject
PREMISES_KEY = "premises broken"  # regime entry: the claim's premises its subject breaks (in the claim's row)
MAX_CHARS = 60_000  # a GitHub pull-request comment holds 65,536 characters; leave room for a comparison
RERUN_REPORT = "reports/claim-rerun.md"  # where a printed rerun command writes, so it never replaces the full report
_URL_SCHEME = re.compile(r"(?<=[A-Za-z0-9])://")  # http://, https://, ftp://: GFM links them bare
_WWW = re.compile(r"(?i)\b(www)\.")  # www.host: GFM links it bare
WORD_JOINER = "\u2060"  # invisible; before an @ it keeps GFM from reading an email address (no escape does)
_ABSOLUTE = re.compile(r"(?<![\w.$~/:-])/(?:[^\s/'\"=]+/)*([^\s/'\"=]+)")
FIRST_SCREEN_HEAD = (
    "claim|what it says|verdict|units passed, rate [interval]|bar|excluded|controls|protocol|calibration"
)
STATE_WORDS = {"confirmed": "confirmed", "registered": "registered, not confirmed", "changed": "changed"}
_CONTROL_KINDS = {
    "sanity": "sanity: fails by construction, not counted",
    "positive": "positive: the claim holds there by construction",
}
_UNDECLARED = "No protocol declared: every unit must meet every threshold, and every control unit must fail."
_KIND_NOTE = {
    "sanity": " (sanity: fails by construction, not counted)",
    "positive": " (positive: holds by construction, must pass)",
}
SHOWN_CHARS = 400  # longer notes and regimes are cut in the markdown; the JSON sidecar has them whole
SHOWN_ROWS = 8  # notes or regimes shown per claim; the rest are counted and left to the JSON
RULE_TEXT = (
    "How a verdict is decided: each unit (normally a seed) of a part passes when it meets every "
    "threshold; units outside the claim's premise are excluded and listed. Each part's pass rate (or mean) "
    "is tested against the protocol's bar in both directions: with exact tests when its units ran in one "
    "look (the interval shown is Clopper-Pearson at 1 - 2 alpha, 90% by default), with anytime-valid "
    "confidence sequences when they were added in batches (marked 'anytime'). REPRODUCED needs every part "
    "shown above its bar and every discriminating control shown below its allowed rate, each at alpha; a part "
    "shown below its bar (NOT REPRODUCED) or a control shown passing too often (ERROR) must pass Holm's "
    "correction over the claim's family. Anything else is INCONCLUSIVE (docs/decisions.md). Only "
    "discriminating controls (ones a naive check could have been fooled by) count as failing as required; "
    "sanity controls (a shuffle, an algebraic impossibility) are shown but not counted. A part's calibration "
    "is its decision run on cases whose answer is known (claimcheck calibrate): calibrated when the one-sided "
    "95% lower bounds of its sensitivity and specificity both reach 0.9."
)
STEP_SUMMARY_LIMIT = 1024 * 1024  # GitHub's limit for one step summary


def md(text: object) -> str:
    """Escape outside text so that it makes no link, image, HTML, table break or heading (docs/reliability.md)."""
    escaped = _WWW.sub(r"\1\\.", _URL_SCHEME.sub(r"\\://", str(text).translate(_ESCAPES)))
    return escaped.replace("@", WORD_JOINER + "@")


def code(text: object) -> str:
    """Return ``text`` as an inline code span that no backtick in it can end (nothing in it renders as markdown)."""
    body = " ".join(str(text).splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def figure_name(claim_id: str, group: str) -> str:
    """Return the file name of the figure for ``group`` of ``claim_id`` (stable, filesystem-safe)."""
    slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-") or "curves"
    return f"{re.sub(r'[^A-Za-z0-9]+', '-', claim_id)}-{slug[:60]}.png"


def rerun_command(run: RunData, targets: Sequence[str]) -> str:
    """Return the command that reruns ``targets`` with this run's settings into ``RERUN_REPORT``."""
    opts = run.env.get(RERUN_KEY, "")
    parts = ["pytest", *(shlex.quote(t) for t in targets), opts, f"--claim-report={RERUN_REPORT}"]
    return " ".join(p for p in parts if p)


def table_lines(headers: Sequence[object], rows: Sequence[Sequence[object]], cell: Any = str) -> list[str]:
    """Return a markdown table's lines, each cell written by ``cell``; unpadded, to keep a report small."""
    line = [_row(*(cell(c) for c in row)) for row in (headers, *rows)]
    return [line[0], "|" + "---|" * len(headers), *line[1:]]


def _row(*cells: object) -> str:
    """Return one table row, unpadded; a None cell is left empty (``| |``)."""
    return "|" + "|".join(" " if c is None else f" {c} " for c in cells) + "|"


def portable(text: str) -> str:
    """Return ``text`` with each absolute path shortened to ``…/<its last part>`` (the JSON keeps it whole)."""
    return _ABSOLUTE.sub(r"…/\1", text)


def _anchor(r: ClaimResult) -> str:
    return "claim-" + re.sub(r"[^a-z0-9]+", "-", r.claim_id.lower()).strip("-")


def counts(results: Sequence[ClaimResult]) -> str:
    """Return the headline (markdown): the count of each verdict value, every value named, and each split claim."""
    c = Counter(r.verdict for r in results)
    text = ", ".join(f"{c[v]} {v.value}" for v in Verdict)
    splits = [f"{md(r.claim_id)} {md(split(r))}" for r in results if split(r)]
    return text + (f" ({'; '.join(splits)})" if splits else "")


def split(r: ClaimResult) -> str:
    """Return which parts of a claim held and which did not, where their verdicts differ, else "": an unresolved
    zone part first, then the claim's own verdict (``INCONCLUSIVE at stops (...); REPRODUCED at collapse, slows``)."""
    if len(r.parts) <= 1 or r.verdict is Verdict.SKIPPED:
        return ""
    unresolved = [f"{p.verdict.value} at {p.name or 'claim'} ({p.unresolved})" for p in r.parts if p.unresolved]
    groups: dict[str, list[str]] = {}
    for p in r.parts:
        if not p.unresolved:
            groups.setdefault(p.verdict.value, []).append(p.name or "claim")
    if not unresolved and len(groups) == 1:
        return ""
    order = sorted(groups, key=lambda v: v != r.verdict.value)  # the claim's own verdict first (a stable sort)
    return "; ".join([*unresolved, *(f"{v} at {', '.join(groups[v])}" for v in order)])


def _short_status(status: str) -> str:
    return status.split(":", 1)[0] if status else "n/a"


def _rate_cell(p: PartResult | ControlResult) -> str:
    return p.rate.format() if p.rate is not None else _intervals(p.estimates)


def _intervals(estimates: Sequence[Check]) -> str:
    """Each estimate with its interval; one without an interval is left out ("n/a" when none has one)."""
    return "; ".join(f"{c.value:.3g} [{c.low:.3g}, {c.high:.3g}]" for c in estimates if c.low is not None) or "n/a"


def _bar_cell(p: PartResult, proto: ClaimProtocol | None) -> str:
    if p.rule in ("estimate", "mean"):
        stats = proto.part(p.name).stats if proto is not None else ()
        return ", ".join(f"{s.direction} {s.threshold:g}" for s in stats) or "n/a"
    return f"> {p.bar:g}" if p.bar < 1 else "every unit"


def _part_cells(run: RunData, r: ClaimResult, p: PartResult) -> tuple[str, str, int, str]:
    """Return a part's first-screen cells: its rate, its bar, how many units were excluded, its calibration."""
    excluded = sum(bool(u.excluded) for u in p.units)
    return _rate_cell(p), _bar_cell(p, r.protocol), excluded, _calibration_cell(run, r, p.name)


def _controls_cell(r: ClaimResult) -> str:
    if not r.controls:
        return "none ran"
    sanity, positive = len(r.sanity_controls), r.positive_controls
    passing = sum(c.status == "passes as required" for c in positive)
    extra = f" (+{sanity} sanity, not counted)" if sanity else ""
    extra += f"; positive: {passing}/{len(positive)} pass as required" if positive else ""
    if r.controls_total == 0:
        return f"**no discriminating control**{extra}"
    return f"{r.controls_failed}/{r.controls_total} fail as required{extra}"


def _calibration_cell(run: RunData, r: ClaimResult, name: str) -> str:
    if r.protocol is None or not r.protocol.declared:
        return "uncalibrated (no protocol)"
    return md(part_mark(run.calibration, r.claim_id, r.protocol.part(name)))


def _known(r: ClaimResult, run: RunData) -> str:
    """Return " (known)" and the like against the pin; nothing for a claim that did not finish (no finding)."""
    if r.claim_id in run.not_run:
        return ""
    pin = run.expected.get(r.claim_id)
    return md(known_label(r.verdict.value, str(pin.get("verdict")) if isinstance(pin, dict) else None))


def premises(r: ClaimResult) -> list[str]:
    """Return the premises of the claim that its subject breaks, as its records state them (``PREMISES_KEY``)."""
    regimes = [items for t in r.tests if t.record for items in t.record.regime.values()]
    return list(dict.fromkeys(str(items[PREMISES_KEY]) for items in regimes if items.get(PREMISES_KEY)))


def _first_screen(run: RunData, results: Sequence[ClaimResult], details: str = "") -> list[str]:
    rows = []
    on = run.env.get(CONFIRMED_ON_KEY, "")
    for r in results:
        proto = r.protocol
        status = _short_status(run.ledger.get(r.claim_id, ""))
        version = (
            md(f"v{proto.version}, {status}" + (f" on {on}" if on and status != "n/a" else "")) if proto else "n/a"
        )
        broken = premises(r)
        what = md(r.title) + (f" **Model outside the claim's premises:** {md('; '.join(broken))}" if broken else "")
        head = [f"[{md(r.claim_id)}]({details}#{_anchor(r)})", what, f"**{r.verdict.value}**{_known(r, run)}"]
        taken, controls = looks_taken(r), _controls_cell(r)
        if len(r.parts) > 1:
            head[-1] += f" ({md(split(r))})" if split(r) else ""
            rows.append(_row(*head, md(taken), None, None, controls, version, None))
            for p in r.parts:
                rate, bar, excluded, calibration = _part_cells(run, r, p)
                claim = f"{md(r.claim_id)}.{md(p.name)}"
                rows.append(_row(claim, md(p.statement), p.verdict.value, rate, bar, excluded, None, None, calibration))
            continue
        rate, bar, excluded, calibration = _part_cells(run, r, r.parts[0]) if r.parts else ("n/a", "n/a", 0, "n/a")
        rows.append(
            _row(*head, rate + md(f" ({taken})" if taken else ""), bar, excluded, controls, version, calibration)
        )
    out = _subject(run) + table_lines(FIRST_SCREEN_HEAD.split("|"), []) + rows + _ledger_lines(run, results)
    if why := [r for r in results if r.verdict not in (Verdict.REPRODUCED, Verdict.SKIPPED)]:
        out += ["", "**Why not, and how to rerun**", ""]
        for r in why:
            text = why_inconclusive(run, r) if r.verdict is Verdict.INCONCLUSIVE else _trim(r.reason, 400)
            out.append(f"- **{md(r.claim_id)} {r.verdict.value}**: {md(text)}")
            nodeids = [t.nodeid for t in r.tests] or run.not_run.get(r.claim_id, [])  # or a claim that did not run
            out.append(f"  rerun: {code(rerun_command(run, list(dict.fromkeys(n.split('::')[0] for n in nodeids))))}")
    if skipped := [r for r in results if r.verdict is Verdict.SKIPPED]:
        out += ["", "**Skipped**", ""] + [f"- {md(r.claim_id)}: {md(r.reason)}" for r in skipped]
    return out


def why_inconclusive(run: RunData, r: ClaimResult) -> str:
    """Return the line that says what keeps ``r`` INCONCLUSIVE and the budget that would decide it (never cut)."""
    if r.claim_id in run.not_run:  # the run stopped before the claim finished: its reason says so
        return r.reason
    return undecided_line(r, run.drawn()[0])


def _subject(run: RunData) -> list[str]:
    """Return the line on the model under test, when the suite describes it, and whose protocols were confirmed."""
    facts = run.env.get(SUBJECT_KEY, "")
    if not facts:
        return []
    name = run.env.get("model", "")
    line = f"**Model under test**: `{md(name)}`: {md(facts)}." if name else f"**Model under test**: {md(facts)}."
    if on := run.env.get(CONFIRMED_ON_KEY, ""):
        line += (
            f" A protocol's ledger status (confirmed or exploratory) was earned on {md(on)}; it says nothing yet "
            "about this model, whose verdicts are the ones below."
        )
    return [line, ""]


def _ledger_lines(run: RunData, results: Sequence[ClaimResult]) -> list[str]:
    """Return the first screen's ledger line: which claims are confirmed, registered or changed, and on which engine."""
    groups: dict[str, list[str]] = {}
    for r in results:
        if state := run.code.get(r.claim_id, {}).get("state"):
            groups.setdefault(state, []).append(r.claim_id)
    if not groups:
        return []
    parts = [f"{STATE_WORDS.get(k, k)}: {', '.join(v)}" for k, v in groups.items()]
    engines = {c.get("engine", "") for c in run.code.values()} - {""}
    confirmed = {c.get("confirmed on", "") for c in run.code.values()} - {""}
    if engines:
        on = f"confirmed on engine {', '.join(sorted(confirmed))}; " if confirmed else ""
        parts.append(f"{on}this run: engine {', '.join(sorted(engines))}")
    return ["", f"**Ledger**: {md('; '.join(parts))}"]


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def _protocol_block(proto: ClaimProtocol, status: str, identity: dict[str, str]) -> list[str]:
    fp = f"code fingerprint {identity['fingerprint'][:12]}" if identity.get("fingerprint") else "no code fingerprint"
    lines = [f"**Protocol v{proto.version}** ({md(status or 'no ledger')}; {fp})", ""]
    if not proto.declared:
        return [*lines, _UNDECLARED, ""]
    batched = bool(proto.seeds.batch)
    for p in proto.parts:
        if p.rule == "pass-rate" and p.bar < 1:
            sequence = f", beta-binomial confidence sequence (prior Beta{tuple(proto.prior)}) over looks"
            rule = f"pass rate of {md(p.unit)}s vs bar {p.bar:g}: exact test at one look{sequence if batched else ''}"
        elif p.rule == "pass-rate":
            rule = "every admissible unit must pass (a failure is a counterexample)"
        elif p.rule == "mean":
            rule = "mean over units vs the threshold: Student-t at one look"
            if batched and p.bounds is not None:
                rule += f", betting confidence sequence on {list(p.bounds)} over looks"
            elif batched and p.sigma is not None:
                rule += f", normal-mixture confidence sequence (sigma <= {p.sigma:g}) over looks"
        else:
            rule = "estimate with its interval vs the threshold (interval only: outside the family-wise level)"
        name = f"{code(p.name)}: " if p.name else ""
        lines.append(f"- {name}{md(p.statement)}; rule: {rule}")
        lines += [f"  - {md(s.describe())}" + (f" ({md(s.why)})" if s.why else "") for s in p.stats]
        if p.premise:
            lines.append(f"  - premise (a unit outside it is excluded and listed): {md(p.premise)}")
    rules = {p.name: p.rule for p in proto.parts}
    for c in proto.controls:
        if c.kind == "positive":
            limit = (
                "must be shown to hold as its part would; "
                "shown failing makes the claim INCONCLUSIVE (the check is blind)"
            )
        elif rules.get(c.part) in ("estimate", "mean"):
            limit = "its interval must not show the claimed effect"
        else:
            limit = (
                "may pass on no unit" if c.max_pass_rate <= 0 else f"may pass on at most {c.max_pass_rate:g} of units"
            )
        kind = _CONTROL_KINDS.get(c.kind) or (f"discriminating: {c.naive}" if c.naive else "discriminating")
        lines.append(f"- control {code(c.name)} (on {md(c.part or 'the claim')}; {md(kind)}): {md(c.why)}; {limit}")
    seeds = proto.seeds
    units = ", ".join(f"{k} {v}" for k, v in seeds.units.items())
    lines.append(
        f"- seeds: block {md(seeds.block)} from offset {seeds.start} of each (base seed, budget) block "
        f"(seed = (base x {N_BUDGETS} + budget position) x {SPAN} + offset); units {md(units)}"
    )
    if seeds.batch:
        steps = ", ".join(f"{k}: {v} at a time up to {seeds.units[k]}" for k, v in seeds.batch.items())
        lines.append(f"- units added in batches, decided after each, stopped when decided or at the cap: {md(steps)}")
    lines.append(f"- decision: family-wise alpha {proto.alpha:g} per direction, {proto.multiplicity.capitalize()}")
    if seeds.exploratory:
        lines.append(f"- exploratory seeds (looked at while designing): {md(seeds.exploratory)}")
    if proto.regime:
        lines.append(f"- regime: {md(proto.regime)}")
    if proto.horizon:
        lines.append(f"- horizon: {md(proto.horizon)}")
    return [*lines, ""]


def _claim_level(r: ClaimResult) -> str:
    if math.isnan(r.alpha):
        return ""
    return (
        f"Decided at family-wise alpha = {r.alpha:g} per direction: REPRODUCED needs every part to hold and every "
        f"control to fail as required, each shown at {r.alpha:g} (an intersection-union test), so the chance of "
        f"REPRODUCED while any of them is in truth otherwise is at most {r.alpha:g}; a part that fails or a control "
        f"that passes too often is found by {r.multiplicity.capitalize()} at {r.alpha:g} over the claim's "
        f"{r.family} such hypothes{'is' if r.family == 1 else 'es'}, so the chance that any it names is wrong is at "
        f"most {r.alpha:g} too."
        + (
            " Parts under the rule 'estimate' carry only their interval: the test's own interval decides them, "
            "outside that family."
            if any(p.rule == "estimate" for p in r.parts)
            else ""
        )
    )


def looks_taken(r: ClaimResult) -> str:
    """Return e.g. ``units run 20/30, 15/30`` (one figure per batched test) for a claim run in batches, else ""."""
    runs = [t.record for t in r.tests if t.record is not None and t.record.schedule]
    if not runs:
        return ""
    return "units run " + ", ".join(f"{rec.looks[-1].units if rec.looks else 0}/{rec.schedule[-1]}" for rec in runs)


def session_level(results: Sequence[ClaimResult]) -> str:
    """Return the session's level: a union bound over its decided claims, stated as one."""
    decided = [r for r in results if r.verdict is not Verdict.SKIPPED and not math.isnan(r.alpha)]
    if not decided:
        return ""
    total = min(1.0, sum(r.alpha for r in decided))
    return (
        f"Each claim is decided at its own family-wise alpha (stated in its section); across the {len(decided)} "
        f"claim{'s' if len(decided) != 1 else ''} of this session no further correction is made, so by a union "
        f"bound the chance that any of them is wrongly REPRODUCED is at most {total:.2g}, and likewise for any "
        f"wrongly named failure."
    )


def _unit_lines(run: RunData, title: str, units: Sequence[UnitScore], what: str) -> list[str]:
    if not units:
        return []
    out = [f"**{title}**", ""]
    for u in units:
        detail = u.excluded or "; ".join(u.misses)
        rerun = f" rerun: {code(rerun_command(run, list(u.nodeids)))}" if u.nodeids else ""
        out.append(f"- {what} {md(u.unit)}: {md(_trim(detail, 300))}.{rerun}")
    return [*out, ""]


def _part_block(run: RunData, r: ClaimResult, p: PartResult) -> list[str]:
    name = f"Part {code(p.name)}" if p.name else "Claim"
    out = [f"{name}: **{p.verdict.value}**: {md(p.reason)}", ""]
    if r.protocol is not None and r.protocol.declared:  # the calibration of its decision, and each family's count
        part = r.protocol.part(p.name)
        mark = md(part_mark(run.calibration, r.claim_id, part))
        out.append(f"Calibration of its decision ({code(part.decision_id or 'none')}): {mark}")
        entry = entry_of(run.calibration, r.claim_id, part)
        for f in entry.get("families", []) if entry else []:
            verb = "accepted" if f["expect"] == "pass" else "rejected"
            out.append(f"- must {f['expect']}: {md(f['name'])}: {f['right']}/{f['cases']} {verb}")
        out.append("")
    failed = [u for u in p.units if not u.passed and not u.excluded] if p.rule == "pass-rate" else []  # a mean: none
    excluded = [u for u in p.units if u.excluded]
    out += _unit_lines(run, "Units that failed", failed, p.unit_name)
    out += _unit_lines(run, "Units excluded (outside the premise; not counted)", excluded, p.unit_name)
    for c in p.estimates:
        out.append(f"- {'mean' if p.rule == 'mean' else 'estimate'}: {md(c.describe())} ({md(c.interval)})")
    return out


def _may_pass(c: ControlResult) -> str:
    if c.kind == "positive":
        return "must pass, as its part"
    if c.rate is None:
        return "interval must not meet"
    return "none" if c.max_pass_rate <= 0 else f"< {c.max_pass_rate:g}"


def _stat_row(s: StatSummary) -> list[str]:
    where = f"control: {s.control}" if s.control else s.part or "claim"
    return [where, s.statistic, f"{s.direction} {s.threshold:g}", s.values.format(), f"{s.met}/{s.values.n}"]


def _capped(rows: list[str], what: str) -> list[str]:
    if len(rows) <= SHOWN_ROWS:
        return rows
    return [*rows[:SHOWN_ROWS], f"- ... and {len(rows) - SHOWN_ROWS} more {what} in the JSON sidecar"]


def _section(run: RunData, r: ClaimResult, figure_folder: str, shown: set[str] | None) -> str:
    parts = [f'<a id="{_anchor(r)}"></a>', f"## {md(r.claim_id)}: {md(r.title)}", ""]
    parts += [f"**Verdict: {r.verdict.value}**. Paper source: {md(r.source)}", ""]
    if r.verdict is Verdict.SKIPPED:
        return "\n".join([*parts, f"Skipped: {md(r.reason)}"])
    if r.protocol is not None:
        parts += _protocol_block(r.protocol, run.ledger.get(r.claim_id, ""), run.code.get(r.claim_id, {}))
    cache = {name: sum(t.counts.get(name, 0) for t in r.tests) for name in ("computed", "cached", "verified")}
    if any(cache.values()):
        read = f"{cache['cached']} read, {cache['verified']} of those read verified"
        parts += [f"**Cache**: {cache['computed']} computed, {read}", ""]
    if level := _claim_level(r):
        parts += [md(level), ""]
    looks: list[str] = []  # the looks each batched test took: units, what was decided, and why it stopped
    for t in r.tests:
        if (rec := t.record) is None or not rec.schedule:
            continue
        plan = ", ".join(str(n) for n in rec.schedule)
        looks.append(f"- `{md(t.nodeid)}`: looks planned at {plan} units; {md(rec.stopped or 'did not finish')}")
        for i, look in enumerate(rec.looks, start=1):
            state = "; ".join(f"{k}: {v}" for k, v in look.state.items()) or "nothing recorded"
            looks.append(f"  - look {i}, {look.units} units: {md(state)}")
    if looks:
        parts += ["**Looks** (units added in batches; the decision was asked after each)", "", *looks, ""]
    for p in r.parts:
        parts += _part_block(run, r, p)
    if r.verdict is Verdict.ERROR:
        parts += [f"Error: {md(_trim(r.reason, 600))}", ""]
    if errors := [t for t in r.tests if t.outcome == "error"]:
        parts += ["**Tests that raised**", ""]
        parts += [f"- {code(t.nodeid)}: {md(_trim(t.message, 300))}" for t in errors] + [""]
    if r.controls:
        rows = [[c.name + _KIND_NOTE.get(c.kind, ""), c.why, _rate_cell(c), _may_pass(c), c.status] for c in r.controls]
        heading = "**Controls** (positive ones must pass)" if r.positive_controls else "**Negative controls**"
        head = ["control", "why the claim should not hold there", "passed (as if the claim held)", "may pass", "status"]
        parts += [heading, "", *table_lines(head, rows, md), ""]
    if stats := r.claim_stats + r.control_stats:
        head, rows = ["part", "statistic", "threshold", "median [min, max] (n)", "met"], [_stat_row(s) for s in stats]
        parts += ["**Statistics** (every check of every unit)", "", *table_lines(head, rows, md), ""]
    seen: dict[str, int] = {}
    for t in r.tests:
        for label, items in t.record.regime.items() if t.record else ():
            key = (f"{label}: " if label else "") + "; ".join(f"{k}={v}" for k, v in items.items())
            seen[key] = seen.get(key, 0) + 1
    regimes = _capped([f"- {md(_trim(k, SHOWN_CHARS))} (tests: {n})" for k, n in sorted(seen.items())], "regimes")
    parts += ["**Regime tested**", "", "\n".join(regimes) if seen else "_no regime recorded_", ""]
    if notes := [n for t in r.tests if t.record for n in t.record.notes]:
        listed = _capped([f"- {md(_trim(n, SHOWN_CHARS))}" for n in dict.fromkeys(notes)], "notes")
        parts += ["<details><summary>Notes</summary>", "", *listed, "", "</details>", ""]
    groups = dict.fromkeys(c.group for t in r.tests if t.record for c in t.record.curves)
    names = {g: figure_name(r.claim_id, g) for g in groups}  # linked when drawn (in ``shown``; None: every figure)
    if figures := [f"![{md(g)}]({quote(figure_folder)}/{n})" for g, n in names.items() if shown is None or n in shown]:
        parts += ["**Figures**", "", *figures, ""]
    if skipped := [t for t in r.tests if t.outcome == "skipped"]:
        parts += ["**Skipped tests**", ""] + [f"- {md(t.nodeid)}: {md(t.message)}" for t in skipped]
    return "\n".join(parts).rstrip() + "\n"


def render(
    run: RunData,
    *,
    figure_folder: str = "figures",
    extra: Sequence[str] = (),
    figures: set[str] | None = None,
    details: str = "",
    sections: Sequence[str] | None = None,
) -> str:
    """Return the markdown report: the first screen, ``extra`` sections (a baseline comparison), the environment,
    then the per-claim sections (``sections`` when rendered already), or a link to ``details`` when it is given;
    ``figure_folder`` is relative to the report, ``figures`` the figure files that exist (None: link every one)."""
    results = run.results()
    parts = [f"# {md(run.title)}", "", f"**{counts(results)}**", ""]
    parts += gate_lines(run.gate) if run.gate else []
    if run.expectations:
        parts += [f"Expectations: {md(run.expectations)}.", ""]
    if run.deviations:
        parts += [f"**{len(run.deviations)} deviation(s) from the expectations** (each fails the session):", ""]
        parts += [f"- {md(d)}" for d in run.deviations] + [""]
    if run.rounding:
        parts += ["Held at the verdict level under these numerics (rounding moves them as far as sampling does):", ""]
        parts += [f"- {md(d)}" for d in run.rounding] + [""]
    if run.incomplete:
        parts += [f"**INCOMPLETE RUN**: {md(incomplete_line(run, results))}. What did not run or finish:", ""]
        parts += [f"- {md(i)}" for i in run.incomplete] + [""]
    parts += _first_screen(run, results, details) if results else ["_no claim tests ran_"]
    if details:
        parts += ["", f"Per-claim details (protocol, parts, controls, statistics, regime, notes, figures): [{details}]"
                  f"({details}); every value is in the JSON sidecar."]  # fmt: skip
    parts += ["", RULE_TEXT, ""]
    if session := session_level(results):
        parts += [md(session), ""]
    parts += [*extra]  # the baseline comparison (and any problems writing the report) before the environment
    env = [(k, portable(v) if isinstance(v, str) else v) for k, v in run.env.items()]
    parts += ["## Environment", "", *table_lines(["setting", "value"], env, md), ""]
    if run.counters:
        parts += [", ".join(f"{md(k)}: {v}" for k, v in run.counters.items()), ""]
    if run.data_files:
        rows = [[d["file"], d["size"], d["sha256"][:16], d["status"]] for d in run.data_files]
        parts += ["**Data files** (sha256 against the published copies)", ""]
        parts += [*table_lines(["file", "bytes", "sha256 (first 16)", "status"], rows, md), ""]
    if not details:
        parts += claim_sections(run, figure_folder, figures) if sections is None else list(sections)
    return "\n".join(parts)


def claim_sections(run: RunData, figure_folder: str = "figures", figures: set[str] | None = None) -> list[str]:
    """Return one markdown section per claim (protocol, parts, controls, statistics, regime, notes, figures)."""
    return [_section(run, r, figure_folder, figures) for r in run.results()]


def gate_lines(gate: dict[str, Any]) -> list[str]:
    """Return the report's lines for the baseline gate: its line in bold, then what makes it (``gate.to_dict``)."""
    lines = [f"**{md(str(gate.get('line', '')))}** ({md(str(gate.get('consequence', '')))})", ""]
    if details := [str(d) for d in gate.get("details", [])]:
        lines += [f"- {md(d)}" for d in details] + [""]
    if not gate.get("section"):  # a run written before the section travelled in its JSON
        return lines
    return [*lines, "Each statistic's comparison is in the section Comparison with baseline, below.", ""]


def render_details(
    run: RunData,
    *,
    figure_folder: str = "figures",
    figures: set[str] | None = None,
    sections: Sequence[str] | None = None,
) -> str:
    """Return the per-claim sections of ``render`` as a file of their own, headed by the run's title and id."""
    head = [f"# {md(run.title)}: per-claim details", "", f"Run {md(run.env.get('run id', ''))}.", ""]
    return "\n".join(head + (claim_sections(run, figure_folder, figures) if sections is None else list(sections)))


def incomplete_line(run: RunData, results: Sequence[ClaimResult]) -> str:
    """Say which claims of an interrupted run finished (none of their tests in ``run.not_run``) and which did not."""
    done = [r.claim_id for r in results if r.claim_id not in run.not_run]
    cut = [r.claim_id for r in results if r.claim_id in run.not_run]
    return (
        f"finished, so their verdicts stand: {', '.join(done) or 'none'}; "
        f"did not finish, so none is REPRODUCED: {', '.join(cut) or 'none'}"
    )


def terminal_lines(run: RunData, results: Sequence[ClaimResult]) -> list[tuple[str, bool]]:
    """Return the terminal summary: one line per claim and part, known non-reproductions said plainly."""
    out: list[tuple[str, bool]] = [(f"INCOMPLETE RUN: {incomplete_line(run, results)}", True)] if run.incomplete else []
    for r in results:
        if r.verdict is Verdict.SKIPPED:
            out.append((f"{r.claim_id}: SKIPPED: {r.reason}", False))
            continue
        status = _short_status(run.ledger.get(r.claim_id, "")) if r.protocol and r.protocol.declared else "no protocol"
        version = f"v{r.protocol.version} {status}" if r.protocol else "did not run"
        parts = f" ({split(r)})" if split(r) else ""
        line = f"{r.claim_id}: {r.verdict.value}{_known(r, run)}{parts} [{version}]: {r.title}"
        out.append((line, r.verdict is not Verdict.REPRODUCED))
        for p in r.parts:
            name = p.name or "claim"
            out.append((f"    {name}: {p.verdict.value}: {_rate_cell(p)} vs bar {_bar_cell(p, r.protocol)}", False))
        if r.controls and r.controls_total == 0:
            out.append(("    no discriminating control: every control it ran fails by construction", True))
        if taken := looks_taken(r):
            out.append((f"    looks: {taken}", False))
        if r.verdict is Verdict.ERROR:
            out.append((f"    {_trim(r.reason, 300)}", True))
        if r.verdict is Verdict.INCONCLUSIVE:
            out.append((f"    why: {why_inconclusive(run, r)}", True))
        if broken := premises(r):
            out.append((f"    model outside the claim's premises: {'; '.join(broken)}", True))
    if not_holding := [r.claim_id for r in results if r.verdict not in (Verdict.REPRODUCED, Verdict.SKIPPED)]:
        out.append((f"claims that do not hold as REPRODUCED in this run: {', '.join(not_holding)}", True))
    return out


def render_compact(run: RunData, limit: int = STEP_SUMMARY_LIMIT // 2) -> str:
    """Return a short summary for a CI job page: the first screen, under ``limit`` bytes."""
    results = run.results()
    head = [f"### {md(run.title)}", "", f"**{counts(results)}**", ""]
    if run.incomplete:
        head += [f"**INCOMPLETE RUN**: {md(incomplete_line(run, results))}", ""]
    text = "\n".join(head + _first_screen(run, results)) + "\n"
    if len(text.encode()) <= limit:
        return text
    cut = "\n".join(head) + "\n\n_details left out: the summary would exceed its size limit_\n"
    return cut.encode()[:limit].decode(errors="ignore")
