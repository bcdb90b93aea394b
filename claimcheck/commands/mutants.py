"""Compare runs of broken models (mutants) with a reference run: which claims did each bug break?

A claim is broken by a mutant when its verdict moved away from the reference's (REPRODUCED to NOT
REPRODUCED or ERROR, or NOT REPRODUCED to ERROR), or when one of its claim statistics met its
threshold in every reference run and misses it in some mutant run: a NOT REPRODUCED claim can
still lose evidence it had. SKIPPED on either side says nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from claimcheck.report import md
from claimcheck.rundata import RunData
from claimcheck.verdicts import ClaimResult, Verdict


@dataclass(frozen=True)
class Damage:
    """What one mutant did to one claim."""

    claim_id: str
    before: Verdict
    after: Verdict
    lost: list[str] = field(default_factory=list)  # claim statistics met in every reference run, missed now

    @property
    def broken(self) -> bool:
        """Return True when the verdict got worse or a statistic stopped meeting its threshold."""
        if Verdict.SKIPPED in (self.before, self.after):
            return False
        worse = self.before != self.after and self.after is not Verdict.REPRODUCED
        return worse or bool(self.lost)

    def cell(self) -> str:
        """Return the table cell: the verdict, marked when broken, with the lost statistics."""
        text = f"**{self.after.value}**" if self.broken else self.after.value
        if self.lost:
            text += " (lost: " + "; ".join(md(s) for s in self.lost) + ")"
        return text


def _lost(ref: ClaimResult, now: ClaimResult) -> list[str]:
    held = {s.statistic for s in ref.claim_stats if s.met == s.values.n}
    return [s.statistic for s in now.claim_stats if s.statistic in held and s.met < s.values.n]


def damage(reference: RunData, mutant: RunData) -> list[Damage]:
    """Return one ``Damage`` per claim the reference run has."""
    now = {r.claim_id: r for r in mutant.results()}
    out = []
    for ref in reference.results():
        cur = now.get(ref.claim_id)
        after = cur.verdict if cur is not None else Verdict.SKIPPED
        out.append(Damage(ref.claim_id, ref.verdict, after, _lost(ref, cur) if cur is not None else []))
    return out


def render_mutants(reference: tuple[str, RunData], mutants: Sequence[tuple[str, RunData | Exception]]) -> str:
    """Return markdown: the reference's verdicts, then one row per mutant with the claims it broke.

    A mutant whose run was refused at start (an ``Exception`` in place of its run: the probe caught
    it) gets a row saying so; every claim counts as guarded for it.
    """
    name, ref = reference
    claims = [r.claim_id for r in ref.results()]
    rows = [(m, damage(ref, run)) for m, run in mutants if isinstance(run, RunData)]
    refused = [(m, run) for m, run in mutants if not isinstance(run, RunData)]
    lines = [
        "# Mutants: which claims each broken model breaks",
        "",
        f"Reference model: `{md(name)}`; budget {md(ref.env.get('budget', '?'))}, base seed "
        f"{md(ref.env.get('base seed', '?'))}. **Bold** cells are broken: the verdict got worse than the "
        "reference's, or a claim statistic that met its threshold in every reference run missed it.",
        "",
        "| model | " + " | ".join(md(c) for c in claims) + " | claims broken |",
        "|---" * (len(claims) + 2) + "|",
        "| reference | " + " | ".join(r.verdict.value for r in ref.results()) + " | |",
    ]
    for m, dmg in rows:
        broke = ", ".join(d.claim_id for d in dmg if d.broken) or "**none**"
        lines.append(f"| `{md(m)}` | " + " | ".join(d.cell() for d in dmg) + f" | {broke} |")
    for m, err in refused:
        lines.append(f"| `{md(m)}` | " + " | ".join("refused" for _ in claims) + f" | refused at start: {md(err)} |")
    never = [c for c in claims if not any(d.broken for _, dmg in rows for d in dmg if d.claim_id == c)]
    if never:
        lines += ["", f"No mutant broke: {', '.join(never)}."]
    return "\n".join(lines) + "\n"
