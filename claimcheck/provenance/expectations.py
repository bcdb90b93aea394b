"""Pin what a suite is known to give, check by check, and find what deviates from it.

Per budget and claim: the verdict, parts, controls and, per statistic, its count of met checks and median
(within ``rtol``/``atol``, with its rounding spread where measured); docs/protocols.md, "Expectations per block".
"""

from __future__ import annotations

import math
import re
import sys
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from claimcheck.decide.verdicts import ClaimResult, StatSummary, Verdict, unit_values
from claimcheck.errors import ConfigError

_VERDICTS = {v.value for v in Verdict}
_CONTROL_STATUSES = {"fails as required", "passes too often", "passes as required", "fails too often", "undecided"}
DEFAULT_RTOL = 0.05  # relative tolerance on a pinned median, unless the file states another
# relative differences are relative to max(|before|, ABS_FLOOR): the smallest normal float, so a statistic of size
# 1e-24 (C2's loss ratios) is compared relative to itself; at 1e-12 a 1000x move of such a value read as 1e-9
ABS_FLOOR = sys.float_info.min
RANK = {"ERROR": 0, "NOT REPRODUCED": 1, "INCONCLUSIVE": 2, "REPRODUCED": 3}  # verdicts by rank; SKIPPED: none


@dataclass(frozen=True)
class StatPin:
    """A statistic's pinned count of met checks and median."""

    met: int
    n: int
    median: float
    rtol: float = DEFAULT_RTOL
    atol: float = 0.0  # an absolute floor on the tolerance: the statistic's resolution (one sentence of N, say)
    rounding: float = 0.0  # measured: the median's largest relative move over the claim's rounding reruns
    chaotic: str = ""  # measured: the spread of its count over those reruns, where it moved (empty: it did not)


@dataclass(frozen=True)
class ClaimPin:
    """What one claim is expected to give."""

    verdict: str
    parts: dict[str, str] = field(default_factory=dict)
    controls: dict[str, str] = field(default_factory=dict)
    stats: dict[str, StatPin] = field(default_factory=dict)
    rounding: tuple[str, ...] = ()  # the numerics its block was rerun under to measure the rounding spread
    block: str = ""  # the claim's own seed block (its protocol's, e.g. "C5-v7"): a new version draws new seeds


Expected = dict[str, ClaimPin]
BLOCK_KEYS = ("base_seed", "pool", "numerics")  # a budget table's own keys: where its pins were measured


@dataclass(frozen=True)
class PinnedAt:
    """Where a budget's pins were measured: a base seed, a seed pool and the numerics (empty: any host)."""

    base_seed: int = 0
    pool: str = "confirmatory"
    numerics: str = ""
    absent: tuple[str, ...] | None = None  # the file has no table for this budget: the budgets it does pin

    def describe(self) -> str:
        kernels = f", {self.numerics}" if self.numerics else ""
        return f"base seed {self.base_seed} ({self.pool} pool){kernels}"

    def covers(self, base_seed: int, pool: str) -> bool:
        return (self.base_seed, self.pool) == (base_seed, pool)

    def rounds_as(self, numerics: str) -> bool:
        return not self.numerics or not numerics or numerics == self.numerics


def numerics_label(env: Mapping[str, Any]) -> str:
    """Return a run's numerics from its environment: its ``numerics`` line (unknown: "").

    An older run's line (the instruction set alone, ``cpu AVX512``) is completed from its CPU and thread lines.
    """
    line = str(env.get("numerics", "") or "")
    if ";" in line or not (line or env.get("cpu")):
        return line  # the whole line, or nothing recorded: unknown numerics
    cpu = str(env.get("cpu", "") or "unknown CPU").split(" (")[0]
    threads = str(env.get("torch threads", "") or "?")
    return f"{line or 'cpu ?'}; {cpu}; torch {env.get('torch', '?')}; {threads} thread{'' if threads == '1' else 's'}"


def stat_key(part: str, control: str | None, statistic: str) -> str:
    """Return the key a statistic is pinned under: ``part / statistic`` or ``control: name / statistic``."""
    head = f"control: {control}" if control is not None else (part or "claim")
    return f"{head} / {statistic}"


def _recorded(r: ClaimResult) -> dict[str, StatSummary]:
    return {stat_key(s.part, s.control, s.statistic): s for s in r.claim_stats + r.control_stats}


def _fail(option: str, path: Path | str, where: str, what: str) -> ConfigError:
    return ConfigError(f"{option}: {path}: {where}: {what}")


def parse_pins(raw: Mapping[str, Any], option: str, path: Path | str) -> dict[str, Expected]:
    """Return {budget: {claim: ClaimPin}} from parsed TOML; raise ConfigError naming the first bad field."""
    out: dict[str, Expected] = {}
    for budget, table in raw.items():
        if not isinstance(table, dict):
            raise _fail(option, path, f"[{budget}]", "must be a table of claims")
        for claim, pin in table.items():
            if claim in BLOCK_KEYS:
                continue
            where = f"[{budget}.{claim}]"
            if not isinstance(pin, dict):
                raise _fail(option, path, where, 'must be a table with verdict = "..." (the old one-line form is gone)')
            verdict = pin.get("verdict")
            if verdict not in _VERDICTS:
                raise _fail(option, path, where, f"verdict must be one of {sorted(_VERDICTS)}, got {verdict!r}")
            parts = _strings(pin.get("parts", {}), option, path, f"{where} parts", _VERDICTS)
            controls = _strings(pin.get("controls", {}), option, path, f"{where} controls", _CONTROL_STATUSES)
            stats = {}
            for key, s in dict(pin.get("stats", {})).items():
                if not isinstance(s, dict) or not {"met", "n", "median"} <= set(s):
                    raise _fail(option, path, f"{where} stats {key!r}", "needs met, n and median")
                try:
                    met, n, median = int(s["met"]), int(s["n"]), float(s["median"])
                    bounds = {
                        k: float(s.get(k, d)) for k, d in (("rtol", DEFAULT_RTOL), ("atol", 0.0), ("rounding", 0.0))
                    }
                except (TypeError, ValueError) as e:
                    raise _fail(option, path, f"{where} stats {key!r}", f"not a number ({e})") from None
                for name, bound in bounds.items():
                    if not (math.isfinite(bound) and bound >= 0):
                        raise _fail(option, path, f"{where} stats {key!r} {name}", f"must be >= 0, got {bound!r}")
                stats[str(key)] = StatPin(met, n, median, **bounds, chaotic=str(s.get("chaotic", "")))
            extra = set(pin) - {"verdict", "parts", "controls", "stats", "why", "rounding", "block"}
            if extra:
                raise _fail(option, path, where, f"unknown fields {sorted(extra)}")
            rounding, block = pin.get("rounding", []), pin.get("block", "")
            if not isinstance(rounding, list) or not all(isinstance(x, str) for x in rounding):
                raise _fail(option, path, f"{where} rounding", "must be a list of numerics lines (strings)")
            if not isinstance(block, str) or block != block.strip():
                raise _fail(option, path, f"{where} block", f'must be a string such as "C5-v7", got {block!r}')
            out.setdefault(str(budget), {})[str(claim)] = ClaimPin(
                verdict, parts, controls, stats, tuple(rounding), block
            )
    return out


def _strings(raw: Any, option: str, path: Path | str, where: str, allowed: set[str]) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise _fail(option, path, where, "must be a table")
    for k, v in raw.items():
        if v not in allowed:
            raise _fail(option, path, f"{where} {k!r}", f"must be one of {sorted(allowed)}, got {v!r}")
    return {str(k): str(v) for k, v in raw.items()}


def parse_blocks(raw: Mapping[str, Any], option: str, path: Path | str) -> dict[str, PinnedAt]:
    """Return {budget: the block its pins came from} (base seed 0, confirmatory, when a table names none)."""
    out = {}
    for budget, table in raw.items():
        seed, pool, kernels = (dict(table).get(k, d) for k, d in zip(BLOCK_KEYS, (0, "confirmatory", ""), strict=True))
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise _fail(option, path, f"[{budget}] base_seed", f"must be a non-negative integer, got {seed!r}")
        if pool not in ("confirmatory", "exploratory"):
            raise _fail(option, path, f"[{budget}] pool", f"must be confirmatory or exploratory, got {pool!r}")
        if not isinstance(kernels, str):
            raise _fail(option, path, f"[{budget}] numerics", f'must be a string such as "cpu AVX512", got {kernels!r}')
        out[str(budget)] = PinnedAt(seed, pool, kernels)
    return out


def load_expectations(path: Path, option: str) -> tuple[dict[str, Expected], dict[str, PinnedAt]]:
    """Read an expectations file: the pins per budget and their blocks; ConfigError names the first bad field."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{option}: cannot read {path} ({e.strerror}); fix the path or set it empty") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{option}: {path} is not valid TOML ({e})") from None
    return parse_pins(raw, option, path), parse_blocks(raw, option, path)


def pins_of(results: Sequence[ClaimResult]) -> Expected:
    return {
        r.claim_id: ClaimPin(
            r.verdict.value,
            {p.name or "claim": p.verdict.value for p in r.parts},
            {c.name: c.status for c in r.controls},
            {k: StatPin(s.met, s.values.n, s.values.median) for k, s in _recorded(r).items()},
            block=_block(r),
        )
        for r in results
        if r.verdict is not Verdict.SKIPPED
    }


def with_rounding(pinned: Sequence[ClaimResult], reruns: Sequence[tuple[str, Sequence[ClaimResult]]]) -> Expected:
    """Return the pins of ``pinned`` with each statistic's rounding spread measured over ``reruns`` (numerics, results).

    Each gets the largest relative move of its median, or of one unit's value where that is larger
    (``rounding``: the median of values each moved at most r can move r, though the reruns' did not). It is
    ``chaotic`` when its count moved, or could have: when rounding moved some unit's value by at least the
    distance of a unit from the edge where its check stops being met, its count is rounding's to decide.
    """
    out: Expected = {}
    for cid, pin in pins_of(pinned).items():
        seen: list[tuple[str, dict[str, tuple[int, int, float]]]] = []
        reach: dict[str, float] = {}  # the largest move of one unit's value, per statistic
        first = next(x for x in pinned if x.claim_id == cid)
        base = unit_values(first)
        for numerics, results in reruns:
            r = next((x for x in results if x.claim_id == cid and x.verdict is not Verdict.SKIPPED), None)
            if r is not None and _block(r) == _block(first):  # another version's block is no rerun of these seeds
                seen.append((numerics, {k: (s.met, s.values.n, s.values.median) for k, s in _recorded(r).items()}))
                for sk, points in unit_values(r).items():
                    was, name = base.get(sk, {}), stat_key(*sk)
                    moves = [abs(p[0] - was[u][0]) for u, p in points.items() if u in was]
                    reach[name] = max([reach.get(name, 0.0), *filter(math.isfinite, moves)])
        if not seen:
            out[cid] = pin
            continue
        gaps = _edge_distances(first)
        stats = {}
        for key, sp in pin.stats.items():
            values = [(sp.met, sp.n, sp.median)] + [v[key] for _, v in seen if key in v]
            mets, ns, medians = ([v[i] for v in values] for i in range(3))
            moved = [relative(sp.median, m) for m in medians]
            far = reach.get(key, 0.0)
            near = sum(g <= far for g in gaps.get(key, ()))  # units rounding could carry across
            chaotic = ""
            if len(set(zip(mets, ns, strict=True))) > 1:
                chaotic = (
                    f"measured met {_span(mets)} of {_span(ns)}, median {_span(medians, '.4g')} "
                    f"over {len(values)} numerics"
                )
            elif far > 0 and near:
                chaotic = (
                    f"measured met {sp.met} of {sp.n} over {len(values)} numerics, but rounding moved a unit by "
                    f"{far:.3g} and {near} unit{'s' if near > 1 else ''} sit within that of the edge"
                )
            if math.isfinite(sp.median):  # a median of values each moved at most r moves at most r
                moved.append(far / max(abs(sp.median), ABS_FLOOR))
            stats[key] = replace(sp, rounding=max(moved), chaotic=chaotic)
        out[cid] = replace(pin, stats=stats, rounding=tuple(n for n, _ in seen))
    return out


def _block(r: ClaimResult) -> str:
    """Return the seed block of ``r``'s protocol ("" without one): a rerun of a claim must draw its block."""
    return r.protocol.seeds.block if r.protocol is not None else ""


def _stale(pin: ClaimPin, r: ClaimResult) -> bool:
    """Return whether ``pin`` names another seed block than the one ``r``'s protocol draws (a new version)."""
    return bool(pin.block and _block(r) and _block(r) != pin.block)


def _edge_distances(r: ClaimResult) -> dict[str, list[float]]:
    """Return, per statistic key, each check's distance from the edge where it stops being met (finite ones)."""
    out: dict[str, list[float]] = {}
    for t in r.tests:
        for c in t.record.checks if t.record else ():
            edge = c.threshold + c.tol if c.direction in ("<=", "<") else c.threshold - c.tol
            if math.isfinite(gap := abs(c.value - edge)):
                out.setdefault(stat_key(c.part, c.control, c.statistic), []).append(gap)
    return out


AUDIT_HEADERS = ("claim", "statistic", "pinned", "here", "rounding spread", "outcome")
NOT_IN_RUN = "not in this run"  # an audit's outcome for a pinned claim the run did not run
DID_NOT_FINISH = "did not finish: not audited"  # ... for a claim only part of whose tests the run ran
OTHER_BLOCK = "other block: re-pin"  # ... for a claim whose protocol version draws other seeds than its pins'


def audit(
    results: Sequence[ClaimResult], expected: Expected, same_numerics: bool, unfinished: Collection[str] = ()
) -> list[tuple[str, ...]]:
    """Return one row per claim verdict and pinned statistic (``judge_stat``'s outcome, as the deviations)."""
    ran = {r.claim_id for r in results if r.verdict is not Verdict.SKIPPED}
    rows: list[tuple[str, ...]] = [
        (cid, "verdict", p.verdict, "", "", NOT_IN_RUN) for cid, p in expected.items() if cid not in ran
    ]
    for r in results:
        pin = expected.get(r.claim_id)
        if pin is None or r.verdict is Verdict.SKIPPED:
            continue
        if r.claim_id in unfinished:  # part of its tests ran: its verdict and values are no finding
            rows.append((r.claim_id, "verdict", pin.verdict, r.verdict.value, "", DID_NOT_FINISH))
            continue
        if _stale(pin, r):  # a new version's seeds: nothing pairs with the pins
            rows.append((r.claim_id, "seed block", pin.block, _block(r), "", OTHER_BLOCK))
            continue
        same = "same verdict" if r.verdict.value == pin.verdict else "verdict changed"
        rows.append((r.claim_id, "verdict", pin.verdict, r.verdict.value, "", same))
        now = _recorded(r)
        for key, sp in pin.stats.items():
            spread = sp.chaotic or (_spread(sp) if pin.rounding else "not measured")
            outcome, _ = judge_stat(sp, s := now.get(key), not same_numerics and bool(pin.rounding))
            here = f"{s.met}/{s.values.n}, {s.values.median:.6g}" if s is not None else ""
            rows.append((r.claim_id, key, f"{sp.met}/{sp.n}, {sp.median:.6g}", here, spread, outcome))
    return rows


def _spread(sp: StatPin) -> str:
    """Return a statistic's rounding spread for people: relative to its median, or absolute where that is ~0."""
    if sp.rounding <= 1:
        return f"{sp.rounding:.2g} of the median"
    return f"{sp.rounding * max(abs(sp.median), ABS_FLOOR):.2g} absolute (a median of {sp.median:.2g})"


def relative(before: float, after: float) -> float:
    """Return |after - before| / max(|before|, ABS_FLOOR): 0 when equal (NaN and NaN too), inf if one is not finite."""
    if before == after or (math.isnan(before) and math.isnan(after)):
        return 0.0
    if not (math.isfinite(before) and math.isfinite(after)):
        return math.inf
    return abs(after - before) / max(abs(before), ABS_FLOOR)


def _span(values: Sequence[float], fmt: str = "g") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if lo == hi else f"{lo:{fmt}}-{hi:{fmt}}"


def _moved(before: float, after: float, rtol: float, atol: float = 0.0) -> bool:
    """Return whether a pinned median moved past ``rtol`` of itself, or past ``atol`` where that is larger."""
    move = relative(before, after)  # 0: equal (NaN and NaN too); inf: one not finite
    if move in (0.0, math.inf):
        return move == math.inf
    return abs(after - before) > max(rtol * max(abs(before), ABS_FLOOR), atol)


def deviations(
    results: Sequence[ClaimResult],
    expected: Expected,
    source: str,
    same_block: bool = True,
    partial: Collection[str] = (),
    same_numerics: bool = True,
) -> list[str]:
    """Return one sentence per deviation from ``expected`` (from ``source``), claim by claim (see the module).

    A SKIPPED claim is not a deviation; a claim in ``partial`` (an interrupted run's) is not compared.
    """
    out = []
    for r in results:
        pin = expected.get(r.claim_id)
        if r.verdict is Verdict.SKIPPED or r.claim_id in partial:
            continue
        if pin is None:
            if r.verdict is not Verdict.REPRODUCED:
                listed = f"not listed in {source}" if source else "no expectations are set"
                out.append(f"{r.claim_id} is {r.verdict.value} ({listed}, so it must reproduce)")
            continue
        if _stale(pin, r):  # stale pins: one line, not one per statistic
            out.append(
                f"{r.claim_id} drew its seeds from block {_block(r)}, {source} pins block {pin.block}: a new protocol "
                "version draws new seeds, so nothing of it is compared with these pins; re-pin it from its "
                "confirmatory run (`claimcheck expectations <that run's .json>`)"
            )
            continue
        if r.verdict.value != pin.verdict:
            out.append(f"{r.claim_id} is {r.verdict.value}, {source} expects {pin.verdict}")
        for p in r.parts if len(r.parts) > 1 or (r.parts[:1] and r.parts[0].name) else ():
            want = pin.parts.get(p.name or "claim")
            if want is not None and p.verdict.value != want:
                out.append(f"{r.claim_id} part {p.name or 'claim'} is {p.verdict.value}, {source} expects {want}")
        # a pinned part or control this run does not have was renamed or dropped: never compared, so named
        for kind, pinned, here in (
            ("part", pin.parts, {p.name or "claim" for p in r.parts}),
            ("control", pin.controls, {c.name for c in r.controls}),
        ):
            out += [
                f"{r.claim_id} {kind} {n!r} is pinned in {source} but not in this run" for n in pinned if n not in here
            ]
        if same_block and (same_numerics or pin.rounding):
            out += _block_deviations(r, pin, source, skip_chaotic=not same_numerics)
    return out


def chaotic_notes(results: Sequence[ClaimResult], expected: Expected, partial: Collection[str] = ()) -> list[str]:
    """Return, for a run on the pins' block under other numerics, what each chaotic statistic gave."""
    out = []
    for r in results:
        pin = expected.get(r.claim_id)
        if pin is None or r.verdict is Verdict.SKIPPED or r.claim_id in partial:
            continue
        now = _recorded(r)
        for key, sp in pin.stats.items():
            if (s := now.get(key)) is None:
                continue
            outcome, _ = judge_stat(sp, s, bool(pin.rounding))
            if outcome == "chaotic: verdict level":
                out.append(
                    f"{r.claim_id} {key}: met {s.met}/{s.values.n}, median {s.values.median:.6g}; chaotic under "
                    f"rounding ({sp.chaotic}; pinned {sp.met}/{sp.n}, {sp.median:.6g}), held at the verdict level"
                )
            elif outcome == "chaotic median: count held":
                out.append(
                    f"{r.claim_id} {key}: median {s.values.median:.6g}; rounding moves it by up to {sp.rounding:.3g} "
                    f"of itself (pinned {sp.median:.6g}, rtol {sp.rtol:g}), so its count alone is held"
                )
    return out


def _block_deviations(r: ClaimResult, pin: ClaimPin, source: str, skip_chaotic: bool = False) -> list[str]:
    """Return the deviations of the controls and statistics (``skip_chaotic``: another numerics' run)."""
    wants = ((c, pin.controls.get(c.name)) for c in r.controls)
    out = [
        f"{r.claim_id} control '{c.name}' {c.status}, {source} expects '{w}'"
        for c, w in wants
        if w not in (None, c.status)
    ]
    now = _recorded(r)
    for key, sp in pin.stats.items():
        _, problems = judge_stat(sp, now.get(key), skip_chaotic, source, r)
        out += [f"{r.claim_id} {key}: {p}" for p in problems]
    return out


def judge_stat(
    sp: StatPin,
    s: StatSummary | None,
    lenient: bool,
    source: str = "the expectations file",
    r: ClaimResult | None = None,
) -> tuple[str, list[str]]:
    """Return how a recorded statistic stands against its pin: an outcome and the deviations that make it.

    ``lenient`` (other numerics, a measured rounding spread): a chaotic statistic is held at the verdict
    level, a median that rounding moves past its tolerance by its count alone.
    """
    if s is None:
        return "not recorded", [f"pinned in {source} but not recorded"]
    if lenient and sp.chaotic:
        return "chaotic: verdict level", []
    problems = []
    if (s.met, s.values.n) != (sp.met, sp.n):
        problems.append(f"met {s.met}/{s.values.n}, {source} pins {sp.met}/{sp.n}")
    scale = max(abs(sp.median), ABS_FLOOR)  # a median rounding alone moves past its tolerance is not held
    median_held = not (lenient and sp.rounding * scale > max(sp.rtol * scale, sp.atol))
    if median_held and _moved(sp.median, s.values.median, sp.rtol, sp.atol):
        odd = r is not None and not math.isfinite(s.values.median)
        why = f" ({nonfinite_why(r, s.part, s.control, s.statistic)})" if r is not None and odd else ""
        tol = f"rtol {sp.rtol:g}" + (f", atol {sp.atol:g}" if sp.atol else "")
        problems.append(f"median {s.values.median:.6g}{why}, {source} pins {sp.median:.6g} ({tol})")
    move = relative(sp.median, s.values.median)
    if problems or not median_held or move == 0:
        return (
            "moved beyond" if problems else "chaotic median: count held" if not median_held else "identical",
            problems,
        )
    return ("within rounding" if move <= sp.rounding else "within tolerance"), []


def nonfinite_why(r: ClaimResult, part: str, control: str | None, statistic: str) -> str:
    """Return why a statistic's median is not a finite number: how many units gave which value, the first note."""
    bad: dict[str, list[str]] = {}
    notes: list[str] = []
    n = 0
    for t in r.tests:
        checks = [c for c in (t.record.checks if t.record else ()) if c.statistic == statistic]
        checks = [c for c in checks if c.control == control and (control is not None or c.part == part)]
        n += len(checks)
        odd = [c for c in checks if not math.isfinite(c.value)]
        for c in odd:
            bad.setdefault(repr(c.value).replace("nan", "NaN"), []).append(c.unit or c.label or t.nodeid)
        if odd and t.record:
            notes += [x for x in t.record.notes if "finite" in x or "nan" in x.lower() or "diverg" in x]
    if not bad:
        return "not a finite number"
    counts = "; ".join(
        f"{len(units)} of {n} values are {value} (units {', '.join(units[:6])}{', ...' if len(units) > 6 else ''})"
        for value, units in sorted(bad.items())
    )
    nan = "NaN: the statistic could not be computed on those units"
    inf = "an infinite value comes from a division by zero, a log of zero or an overflow on those units"
    meaning = nan if "NaN" in bad else inf
    note = f"; the record notes: {notes[0]}" if notes else ""
    return f"non-finite: {counts}; {meaning}{note}"


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _toml_float(x: float) -> str:
    return repr(float(x))  # TOML's nan, inf and -inf are Python's


def render_pins(budget: str, pins: Expected, header: str = "", at: PinnedAt | None = None) -> str:
    """Return TOML text pinning ``pins`` under ``[budget]``, measured on the block ``at`` (default: base seed 0)."""
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    at = at or PinnedAt()
    lines += [
        "",
        f"[{budget}]",
        f"base_seed = {at.base_seed}  # the block these pins were measured on",
        f"pool = {_toml_str(at.pool)}",
        *([f"numerics = {_toml_str(at.numerics)}  # the kernels that rounded them"] if at.numerics else []),
    ]
    for cid, pin in pins.items():
        lines += ["", f"[{budget}.{cid}]", f"verdict = {_toml_str(pin.verdict)}"]
        lines += [f"block = {_toml_str(pin.block)}  # the claim's seed block"] if pin.block else []
        for name, table in (("parts", pin.parts), ("controls", pin.controls)):
            if table:
                items = ", ".join(f"{_toml_str(k)} = {_toml_str(v)}" for k, v in table.items())
                lines.append(f"{name} = {{ {items} }}")
        if pin.rounding:
            lines.append("rounding = [")
            lines += [f"    {_toml_str(x)}," for x in pin.rounding]
            lines.append("]  # the numerics this block was rerun under to measure each statistic's rounding spread")
        if pin.stats:
            lines += ["", f"[{budget}.{cid}.stats]"]
            for key, sp in pin.stats.items():
                atol = f", atol = {_toml_float(sp.atol)}" if sp.atol else ""
                spread = f", rounding = {_up3(sp.rounding):.3g}" if pin.rounding else ""
                chaotic = f", chaotic = {_toml_str(sp.chaotic)}" if sp.chaotic else ""
                lines.append(
                    f"{_toml_str(key)} = {{ met = {sp.met}, n = {sp.n}, median = {_toml_float(sp.median)}, "
                    f"rtol = {_toml_float(sp.rtol)}{atol}{spread}{chaotic} }}"
                )
    return "\n".join(lines).lstrip("\n") + "\n"


def _up3(x: float) -> float:
    """Return ``x`` rounded up to three significant digits: a spread written shorter must not drop below a tolerance."""
    if not math.isfinite(x) or x <= 0:
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - 2)
    return float(f"{math.ceil(x / step - 1e-9) * step:.3g}")


_HEADER_LINE = re.compile(r"^\[(?P<name>[^\[\]]+)\]\s*(#.*)?$")


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """Split TOML text into (table name, its lines) in order; the lines before the first table have name ""."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if found := _HEADER_LINE.match(line.strip()):
            out.append((found["name"].strip(), []))
        out[-1][1].append(line)
    return out


def merge_pins(existing: str, path: Path, budget: str, pins: Expected, note: str, at: PinnedAt | None = None) -> str:
    """Return the expectations file ``existing`` with ``pins`` written into ``[budget]``; the rest kept, comments too.

    ``note`` becomes a comment of the file's head. Raise ConfigError when ``existing`` is not an expectations
    file, or pins ``budget`` on another block of seeds than ``at``.
    """
    where = f"{path}"
    try:
        raw = tomllib.loads(existing)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where} is not an expectations file (not valid TOML: {e})") from None
    if not raw:  # a README of one "# heading", an empty file: valid TOML, but no file of pins
        raise ConfigError(f"{where} is not an expectations file (it holds no budget table such as [{budget}])")
    old = parse_pins(raw, "-o", where)
    at = at or PinnedAt()
    blocks = parse_blocks(raw, "-o", where)
    if budget in blocks and blocks[budget] != at:
        raise ConfigError(
            f"{where} pins budget {budget} on {blocks[budget].describe()}, this run drew {at.describe()}; "
            "write these pins to another file"
        )
    pins = _with_tolerances(pins, old.get(budget, {}))
    fresh = _sections(render_pins(budget, pins, "", at))
    sections = _sections(existing)
    ours = {f"{budget}.{cid}" for cid in pins}

    def claim_of(name: str) -> str | None:
        return next((t for t in ours if name == t or name.startswith(t + ".")), None)

    kept = [(name, lines) for name, lines in sections if claim_of(name) is None]
    new_tables = [(name, lines) for name, lines in fresh if claim_of(name) is not None]
    if not any(name == budget for name, _ in kept):
        kept += [(name, lines) for name, lines in fresh if name == budget]
    last = max(i for i, (name, _) in enumerate(kept) if name == budget or name.startswith(budget + "."))
    if new_tables:
        new_tables[-1] = (new_tables[-1][0], [*new_tables[-1][1], ""])
        if kept[last][1] and kept[last][1][-1].strip():
            kept[last][1].append("")
    kept[last + 1 : last + 1] = new_tables
    head = kept[0][1]
    while head and not head[-1].strip():
        head.pop()
    head += [f"# {line}" for line in note.splitlines()] + [""]
    text = "\n".join(line for _, lines in kept for line in lines).rstrip("\n") + "\n"
    merged = parse_pins(tomllib.loads(text), "-o", where)
    for b, claims in old.items():  # every other claim's pin is the one the file held
        for cid, pin in claims.items():
            assert (b == budget and cid in pins) or merged[b][cid] == pin, (b, cid)
    return text


def _with_tolerances(pins: Expected, old: Mapping[str, ClaimPin]) -> Expected:
    """Return ``pins`` with what the file set for the same statistics: pinning again keeps the tolerances.

    Pinning the same measurement again (every statistic's count and median as the file pins them) keeps the
    rounding spread measured before too: the reruns of both count, and the numerics of both are listed.
    """
    out: Expected = {}
    for cid, pin in pins.items():
        was = old.get(cid, ClaimPin(""))
        before = was.stats
        again = bool(was.rounding and pin.rounding) and all(
            k in before and (before[k].met, before[k].n, before[k].median) == (sp.met, sp.n, sp.median)
            for k, sp in pin.stats.items()
        )
        stats = {}
        for k, sp in pin.stats.items():
            if k in before:
                sp = replace(sp, rtol=before[k].rtol, atol=before[k].atol)
            if again:
                sp = replace(sp, rounding=max(sp.rounding, before[k].rounding), chaotic=sp.chaotic or before[k].chaotic)
            stats[k] = sp
        numerics = tuple(dict.fromkeys(was.rounding + pin.rounding)) if again else pin.rounding
        out[cid] = replace(pin, stats=stats, rounding=numerics)
    return out


def known_label(verdict: str, expected_verdict: str | None) -> str:
    """Return how a verdict stands against its pin: " (known)", " (expected X)", or "" (REPRODUCED, SKIPPED, no pin).

    Every channel (markdown, terminal, junit XML, pytest-html, pytest-json-report) labels through it.
    """
    if expected_verdict is None or verdict in (Verdict.SKIPPED.value, Verdict.REPRODUCED.value):
        return ""
    return " (known)" if verdict == expected_verdict else f" (expected {expected_verdict})"
