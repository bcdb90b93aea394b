"""Measure whether verdicts hold across base seeds, and whether every negative control keeps failing.

Each base seed draws a block of seeds of its own (``claimcheck.protocol.spec.block_seed``), so K base
seeds are K independent replications; ``stability`` also counts, from the runs themselves, how many
of them share no unit seed with another (``ClaimStability.independent``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from claimcheck.cli.suite_runs import run_many
from claimcheck.decide.verdicts import ClaimResult, Verdict, _claim_sort_key
from claimcheck.report.markdown import md, table_lines
from claimcheck.report.rundata import RunData

DECISIVE = (Verdict.REPRODUCED.value, Verdict.NOT_REPRODUCED.value)


@dataclass(frozen=True)
class ClaimStability:
    """One claim over K runs (base seeds)."""

    claim_id: str
    verdicts: dict[str, int]  # verdict -> how many runs gave it
    runs: int
    flips: int  # runs on the minority side of REPRODUCED vs NOT REPRODUCED (0 when only one side occurs)
    inconclusive: int  # runs that said INCONCLUSIVE (a move, not a flip)
    controls_failed: int  # controls that failed as required, over all runs
    controls_total: int
    runs_with_every_control_failing: int  # runs in which every control failed as required
    independent: int = 0  # runs whose unit seeds meet no other run's: disjoint replications


def flips(verdicts: Sequence[str]) -> int:
    """Return how many verdicts sit on the minority side of REPRODUCED vs NOT REPRODUCED.

    INCONCLUSIVE, ERROR and SKIPPED are not flips: only a change between the two decisive values is.
    """
    c = Counter(v for v in verdicts if v in DECISIVE)
    return min(c[DECISIVE[0]], c[DECISIVE[1]])


def disjoint(units: Sequence[set[str]]) -> int:
    """Return how many of the runs' unit sets share no unit with any other run's (an empty set counts as none)."""
    return sum(1 for i, u in enumerate(units) if u and not any(u & v for j, v in enumerate(units) if j != i))


def stability(runs: Sequence[RunData]) -> list[ClaimStability]:
    """Return, per claim, the verdict counts, flips, INCONCLUSIVE moves and control failures over ``runs``."""
    by_claim: dict[str, list[ClaimResult]] = {}
    for run in runs:
        for r in run.results():
            by_claim.setdefault(r.claim_id, []).append(r)
    out = []
    for cid in sorted(by_claim, key=_claim_sort_key):
        rs = by_claim[cid]
        verdicts = [r.verdict.value for r in rs]
        out.append(
            ClaimStability(
                claim_id=cid,
                verdicts=dict(Counter(verdicts)),
                runs=len(rs),
                flips=flips(verdicts),
                inconclusive=verdicts.count(Verdict.INCONCLUSIVE.value),
                controls_failed=sum(r.controls_failed for r in rs),
                controls_total=sum(r.controls_total for r in rs),
                runs_with_every_control_failing=sum(0 < r.controls_total == r.controls_failed for r in rs),
                independent=disjoint([{c.unit for t in r.tests if t.record for c in t.record.checks} for r in rs]),
            )
        )
    return out


def render_stability(rows: Sequence[ClaimStability], seeds: Sequence[int], budget: str) -> str:
    """Return the markdown table: claim x (verdicts, flips, INCONCLUSIVE, controls failed)."""
    consecutive = list(seeds) == list(range(seeds[0], seeds[-1] + 1))
    shown = f"{seeds[0]}-{seeds[-1]}" if consecutive else ", ".join(map(str, seeds))
    lines = [
        f"# Verdict stability over {len(seeds)} base seeds ({shown}), budget {md(budget)}",
        "",
        f"Each base seed draws its own block of seeds: {len(seeds)} base seeds are {len(seeds)} independent "
        "replications. The column 'independent' counts, per claim, the runs whose unit seeds meet no other "
        "run's. A flip is a change between REPRODUCED and NOT REPRODUCED; INCONCLUSIVE is counted apart.",
        "",
    ]
    head = ["claim", "verdicts", "independent", "flips R/NR", "INCONCLUSIVE", "runs with every control failing"]
    table = [
        [md(s.claim_id), ", ".join(f"{v} x{n}" for v, n in sorted(s.verdicts.items()))]
        + [f"{k}/{s.runs}" for k in (s.independent, s.flips, s.inconclusive, s.runs_with_every_control_failing)]
        + [f"{s.controls_failed}/{s.controls_total}"]
        for s in rows
    ]
    return "\n".join([*lines, *table_lines([*head, "controls failed"], table)]) + "\n"


def run_seeds(
    seeds: Sequence[int],
    out: Path,
    budget: str,
    pytest_args: Sequence[str],
    targets: Sequence[str] = ("claims",),
    jobs: int = 1,
) -> list[RunData]:
    """Run the claim suite once per base seed (a pytest subprocess each) and load every run's JSON.

    The runs share the result cache (a rerun of a base seed reads its results from it).
    """
    runs = [(out / f"seed-{seed}.md", [f"--claim-seed={seed}", *pytest_args]) for seed in seeds]
    return run_many(runs, budget, targets, jobs)
