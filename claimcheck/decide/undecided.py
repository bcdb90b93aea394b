"""Say what an INCONCLUSIVE claim lacks: the parts and controls still undecided, and the budget that would decide them.

The projection keeps the measured effect (rate, or value and spread) as it is and uses the one-look
tests, so for a budget that adds units in batches it is a lower bound. A ``ClaimResult`` in, text out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from claimcheck.decide.record import Check
from claimcheck.decide.stats import MAX_UNITS, binomial_p, fewest_units
from claimcheck.decide.verdicts import CANNOT_DISCRIMINATE, ClaimResult, Verdict


@dataclass(frozen=True)
class Pending:
    """One undecided part or control: what it is, the units it ran on, and the units that would decide it."""

    what: str  # e.g. "part L2", "control 'shuffled' (part stops)"
    units: int
    needed: int | None  # None: no number of units decides it at the measured effect (or nothing was measured)
    unresolved: str = ""  # a zone part its range cannot resolve: what it cannot tell (more units do not help)


def rate_units(passed: int, n: int, bar: float, alpha: float) -> int | None:
    """Return the fewest units whose exact one-sided binomial test decides ``passed``/``n`` against ``bar``."""
    if n <= 0 or not 0 < bar < 1 or math.isclose(rate := passed / n, bar):
        return None

    def decided(m: int) -> bool:
        k = min(m, max(0, round(rate * m)))
        return min(binomial_p(k, m, bar, "greater"), binomial_p(k, m, bar, "less")) <= alpha

    return fewest_units(decided, n)


def mean_units(checks: Sequence[Check], n: int) -> int | None:
    """Return the fewest units whose intervals (at ``n`` units), narrowing as 1/sqrt(units), clear every threshold."""
    need = n
    for c in checks:
        if c.low is None or c.high is None or not all(map(math.isfinite, (c.value, c.low, c.high))):
            return None
        half, gap = (c.high - c.low) / 2, abs(c.value - c.threshold)
        if gap == 0:
            return None
        if c.low <= c.threshold <= c.high:
            need = max(need, math.ceil(n * (half / gap) ** 2))
    return need if need <= MAX_UNITS else None


def pending(r: ClaimResult) -> list[Pending]:
    """Return the claim's undecided parts and controls, each with the units that would decide it."""
    out: list[Pending] = []
    for p in r.parts:
        if p.verdict is not Verdict.INCONCLUSIVE:
            continue
        name = f"part {p.name}" if p.name else "the claim"
        if p.unresolved:
            out.append(Pending(name, 0, None, p.unresolved))
        elif p.rate is not None:
            out.append(Pending(name, p.rate.n, rate_units(p.rate.passed, p.rate.n, p.bar, r.alpha)))
        else:
            n = _units(p.estimates, len([u for u in p.units if not u.excluded]))
            out.append(Pending(name, n, mean_units(p.estimates, n) if n else None))
    for c in r.controls:
        if c.status != "undecided":
            continue
        name = f"control '{c.name}'" + (f" (part {c.part})" if c.part else "")
        if c.rate is not None:
            out.append(Pending(name, c.rate.n, rate_units(c.rate.passed, c.rate.n, c.max_pass_rate, r.alpha)))
        else:
            n = _units(c.estimates, len(c.units))
            out.append(Pending(name, n, mean_units(c.estimates, n) if n else None))
    return out


def _units(checks: Sequence[Check], fallback: int) -> int:
    """Return the units behind an estimate (its interval says ``..., 14 units``), else ``fallback``."""
    for c in checks:
        words = c.interval.replace(",", " ").split()
        for i, w in enumerate(words[1:], 1):
            if w.startswith("unit") and words[i - 1].isdigit():
                return int(words[i - 1])
    return fallback


def budget_for(
    units: Mapping[str, int], needed: int, now: int, batch: Mapping[str, int] | None = None, current: str = ""
) -> str:
    """Return the budget (of ``units``: budget -> units it runs) that first runs ``needed`` units, or say none does.

    ``now`` units were admitted of the ``units[current]`` the run's budget ran: a budget is counted in
    admitted units at the same rate, and only one larger than the run's own can decide more.
    ``batch`` names the budgets that add units in batches. Past every cap, the text names the caps.
    """
    ran = units.get(current, 0)
    if ran > now > 0:  # units left the premise or the zone: a budget admits about the same share
        needed = math.ceil(needed * ran / now)
    looks = batch or {}
    bigger = [(n, b) for n, _, b in sorted((n, i, b) for i, (b, n) in enumerate(units.items()) if n > max(now, ran))]
    for n, b in bigger:
        if n >= needed:
            how = f" at most, {looks[b]} at a time until decided" if looks.get(b) else ""
            return f"budget {b} runs {n}{how} (--claim-budget {b})"
    if bigger:  # a projection at the effect as measured: the effect moves as units come, so say so
        n = bigger[-1][0]
        b = next(name for cap, name in bigger if cap == n)  # the cheapest budget at the largest cap
        caps = ", ".join(f"{name} {cap}" + (f" ({looks[name]} a look)" if looks.get(name) else "")
                         for name, cap in units.items())  # fmt: skip
        return (
            f"that many only if the effect stays as measured on these {now} units, past every budget's cap ({caps}); "
            f"the effect may move as units come, and a larger budget can still decide it (--claim-budget {b})"
        )
    return "more than any budget of this claim runs"


def undecided_line(r: ClaimResult, budget: str = "") -> str:
    """Return one line on why ``r`` is INCONCLUSIVE (``budget``: the run's): what is undecided, what would decide it."""
    if r.verdict is not Verdict.INCONCLUSIVE:
        return ""
    if blind := [c for c in r.controls if c.status in CANNOT_DISCRIMINATE and c.kind == "positive"]:
        return (
            f"the instrument is blind here: positive control '{blind[0].name}' was shown to fail; no budget decides "
            "the claim on this subject"
        )
    if not r.parts:
        return r.reason  # did not run, or the run stopped before it: its reason says so
    items = pending(r)
    if not items:  # a run that did not finish, or evidence both ways: the reason says which
        return r.reason
    seeds = r.protocol.seeds if r.protocol is not None and r.protocol.declared else None
    units, batch = (dict(seeds.units), dict(seeds.batch)) if seeds is not None else ({}, {})
    zoned = [i for i in items if i.unresolved]
    items = [i for i in items if not i.unresolved]
    empty = [i for i in items if i.units == 0]
    stuck = [i for i in items if i.units and i.needed is None]
    open_ = [i for i in items if i.units and i.needed is not None]
    said = [f"{i.what}: {i.unresolved}; its tested range cannot resolve it, and more units do not" for i in zoned]
    if open_:
        now, needed = max(i.units for i in open_), max(i.needed or 0 for i in open_)
        where = (
            budget_for(units, needed, now, batch, budget) if units else "rerun with a larger budget (--claim-budget)"
        )
        ran = units.get(budget, 0)
        more = f", more than {budget} gives" if budget else ""
        more += f" (it admitted {now} of the {ran} units it ran)" if ran > now else ""
        said.append(f"undecided at {now} units: {_names(open_)}; about {needed} units would decide {_them(open_)}"
                    f"{more}: {where}")  # fmt: skip
    if stuck:
        said.append(f"undecided: {_names(stuck)}; no number of units decides {_them(stuck)} at the measured effect")
    if empty:
        said.append(
            f"no admissible unit ran for {_names(empty)} (every unit left the premise): this budget cannot decide "
            f"{_them(empty)}; one whose units meet the premise can"
        )
    return "; ".join(said)


def _names(items: Sequence[Pending]) -> str:
    return ", ".join(i.what for i in items)


def _them(items: Sequence[Pending]) -> str:
    return "them" if len(items) > 1 else "it"
