"""``claimcheck calibrate``: find the protocols of a suite's claim modules, calibrate every part, render the results.

Claim modules are imported by path (``test_*.py`` / ``*_test.py`` under each folder given, as
pytest would collect them); every module-level ``ClaimProtocol`` is a protocol to calibrate.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from claimcheck.decide.calibration import FLOOR, PartCalibration, RuleSimulation, SuiteCalibration
from claimcheck.decide.verdicts import Verdict, _claim_sort_key
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import ClaimProtocol
from claimcheck.report.markdown import table_lines

MODULE_PREFIX = "claimcheck_calibrate"


def claim_modules(paths: Iterable[Path]) -> list[Path]:
    """Return the claim module files under ``paths`` (files as given; folders: ``test_*.py`` and ``*_test.py``)."""
    out: list[Path] = []
    for p in paths:
        if p.is_file():
            out.append(p)
        elif p.is_dir():
            out += sorted({*p.rglob("test_*.py"), *p.rglob("*_test.py")})
        else:
            raise ConfigError(f"claimcheck calibrate: {p} is neither a claim module nor a folder of them")
    return out


def load_protocols(paths: Iterable[Path]) -> list[ClaimProtocol]:
    """Import the claim modules under ``paths`` and return their protocols, one per (claim, version), by claim id."""
    found: dict[tuple[str, int], ClaimProtocol] = {}
    for path in claim_modules(paths):
        name = f"{MODULE_PREFIX}.{'_'.join(path.resolve().with_suffix('').parts[-3:])}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"claimcheck calibrate: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look the module up by name
        folder = str(path.resolve().parent)
        added = folder not in sys.path
        if added:
            sys.path.insert(0, folder)  # as pytest's default import mode does for a test file
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise ConfigError(f"claimcheck calibrate: importing {path} failed: {type(e).__name__}: {e}") from e
        finally:
            if added:
                sys.path.remove(folder)
        for value in vars(module).values():
            if isinstance(value, ClaimProtocol) and value.declared:
                found.setdefault((value.claim_id, value.version), value)
    return sorted(found.values(), key=lambda p: (_claim_sort_key(p.claim_id), p.version))


def _bound(p: PartCalibration, side: str, origin: str = "design") -> str:
    rate = p.rate(side, origin)
    if rate.n == 0:
        return "no cases" if origin == "design" else "-"
    return f"{rate.passed}/{rate.n} = {rate.rate:.3f} [{rate.low:.3f}]"


def _zone(p: PartCalibration) -> str:
    return "; ".join(f"{o[0]} {_bound(p, 'zone', o)}" for o in p.origins if p.rate("zone", o).n) or "-"


def _name(p: PartCalibration | RuleSimulation) -> str:
    return f"{p.claim}/{p.part}" if p.part else p.claim


def _worst(p: PartCalibration, limit: int = 2) -> str:
    short = sorted((f for f in p.families if f.right < f.cases), key=lambda f: f.right / f.cases)
    return "; ".join(f.describe() for f in short[:limit]) or "none"


def _family_lines(p: PartCalibration, origin: str) -> list[str]:
    lines = []
    for f in (f for f in p.families if f.origin == origin):
        expect = "in zone" if f.expect == "zone" else f"must {f.expect}"
        zone = f"; {f.zone}/{f.cases} left undecided" if f.zone and f.expect != "zone" else ""
        lines.append(f"- {expect}: **{f.name}**: {f.right}/{f.cases} {f.verb}{zone} ({f.grid})")
        if f.right == f.cases:
            continue
        if f.wrong_ranges:
            ranges = ", ".join(f"{k} {lo:.4g}..{hi:.4g}" for k, (lo, hi) in f.wrong_ranges.items())
            lines.append(f"  - wrong over: {ranges}")
        lines += [f"  - {w.describe()}" for w in f.wrong]
    return lines


def _rule_table(rules: Sequence[RuleSimulation]) -> list[str]:
    order = (Verdict.REPRODUCED, Verdict.INCONCLUSIVE, Verdict.NOT_REPRODUCED)
    rows = []
    for sim in rules:
        for r in sim.rows:
            rows.append([_name(sim), f"{sim.bar:g}", f"{r.budget} ({r.units})", f"{r.true_rate:g}"])
            rows[-1] += [f"{r.share(v):.3f}" for v in order]
    return table_lines(["part", "bar", "budget (units)", "true pass rate", *(v.value for v in order)], rows)


def _below_floor(parts: Sequence[PartCalibration]) -> list[str]:
    """Return one line per family whose share of right answers is below the floor: which, how far, and why."""
    return [
        f"- {_name(p)} ({f.origin}) {f.describe()} = {r.rate:.3f} [{r.low:.3f}]: answer known because "
        f"{f.why or 'no reason given'}"
        for p in parts
        for f in p.families
        if (r := f.rate).rate < FLOOR
    ]


def _origin_sections(p: PartCalibration) -> list[str]:
    if p.origins == ("design",) or not p.origins:
        return [*_family_lines(p, "design"), ""]
    return [line for o in p.origins for line in [f"#### {o} families", "", *_family_lines(p, o), ""]]


def render_calibration(suite: SuiteCalibration) -> str:
    """Return the markdown of a suite's calibration: the summary table, each failing part's families, the claim rule."""
    parts = suite.parts
    lines = [
        "# Calibration of the decision rules",
        "",
        f"{len(parts)} parts; seed {suite.seed}; {suite.seconds:.1f} s. Sensitivity: must-pass cases accepted; "
        f"specificity: must-fail cases rejected; zone: cases in a zone the part declares unresolvable left "
        f"undecided; [one-sided 95% lower bound, Clopper-Pearson]. Design families are the part's designer's; "
        f"challenge families were written from the claim's words by someone who never saw the decision; outside "
        f"families by a later referee, from the claim's words, before the version they calibrate was designed. A part "
        f"is calibrated when every bound with cases reaches {FLOOR:g}.",
        "",
    ]
    origins = ("design", "challenge", "outside")
    bounds = [f"{o} {w}" for o in origins for w in ("sensitivity", "specificity")]
    head = ["part", "status", *bounds, "zone (d: design, c: challenge, o: outside)", "families short of all right"]
    rows = []
    for p in parts:
        rows.append([_name(p), p.status, *(_bound(p, side, o) for o in origins for side in ("pass", "fail"))])
        rows[-1] += [_zone(p), _worst(p) if p.decision else "no decision declared"]
    lines += table_lines(head, rows)
    lines += ["", f"**Failing calibration**: {', '.join(_name(p) for p in suite.failing) or 'none'}", ""]
    if below := _below_floor(parts):
        lines += [f"**Families below {FLOOR:g}** (share of cases answered right):", "", *below, ""]
    if uncal := [p for p in parts if p.status == "uncalibrated"]:
        lines += [f"**Uncalibrated**: {', '.join(f'{_name(p)} ({p.summary()})' for p in uncal)}", ""]
    lines += ["## Controls", ""]
    for c in suite.controls:
        disc = ", ".join(d["name"] for d in c["discriminating"]) or "none"
        sanity = ", ".join(c["sanity"]) or "none"
        positive = f"; positive (must pass): {', '.join(c['positive'])}" if c.get("positive") else ""
        flag = f" **{c['flag'].upper()}**" if c["flag"] else ""
        lines.append(f"- {c['claim']}:{flag} discriminating: {disc}; sanity (not counted): {sanity}{positive}")
    if flagged := [c["claim"] for c in suite.controls if c["flag"]]:
        lines += ["", f"{len(flagged)} claim(s) have no discriminating control: {', '.join(flagged)}"]
    lines += ["", "## Families, part by part", ""]
    for p in parts:
        lines += [f"### {_name(p)}: {p.status}", "", f"decision `{p.decision or 'none'}`", "", *_origin_sections(p)]
    lines += [
        "## The claim-level rule",
        "",
        "Each pass-rate part at each budget's unit count: units drawn pass/fail with the true pass rate, decided "
        "by the controller's rule (`claimcheck.decide.calibration.rule_verdict`); the share of simulated claims per "
        f"verdict ({suite.rules[0].rows[0].reps if suite.rules and suite.rules[0].rows else 0} per row).",
        "",
        *_rule_table(suite.rules),
        "",
    ]
    return "\n".join(lines)
