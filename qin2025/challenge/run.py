"""Run the challenge families through a suite's shipped decisions: ``python -m qin2025.challenge.run claims [C1 ...]``.

The claim modules' protocols are loaded as ``claimcheck calibrate`` loads them; each role's
families replace the part's own (``dataclasses.replace``: the decision and statistics are the
shipped ones) and ``claimcheck.decide.calibration.calibrate_part`` decides every case. It prints one line
per family: its expectation, right answers, the exact one-sided 95% lower bound, and the cases left
undecided; ``--json PATH`` writes ``PartCalibration.to_entry`` per role.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from claimcheck.cli.calibrate import load_protocols
from claimcheck.decide.calibration import PartCalibration, calibrate_part, run_family
from claimcheck.protocol.spec import Family, Part
from qin2025.challenge import ROLES, families, part_of

Result = tuple[str, PartCalibration, dict[str, int]]  # role, its calibration, zone family -> cases accepted


def challenge(paths: list[Path], claims: set[str], cases: int | None = None) -> Iterator[Result]:
    """Yield each role's calibration on its challenge families, for the claims named (all when empty)."""
    protocols = {p.claim_id: p for p in load_protocols(paths)}
    for claim, role in ROLES:
        if (claims and claim not in claims) or claim not in protocols:
            continue
        fams = families(claim, role)
        part = replace(protocols[claim].part(part_of(claim, role)), calibration=fams)
        took = {f.name: accepted_in_zone(claim, part, f, cases) for f in fams if f.expect == "zone"}
        yield f"{claim}:{role}", calibrate_part(claim, part, 0, cases), took


def accepted_in_zone(claim: str, part: Part, fam: Family, cases: int | None) -> int:
    """Return how many cases of a zone family the decision accepted (the rest it rejected or left undecided)."""
    return run_family(claim, part, replace(fam, expect="pass"), 0, cases).right


def lines(role: str, pc: PartCalibration, accepted: dict[str, int]) -> list[str]:
    """Return one line per family: expectation, right answers with the lower bound, undecided and accepted cases."""
    out = [f"{role} ({pc.decision.split()[0]}): {pc.seconds:.1f} s"]
    for f in pc.families:
        r = f.rate
        zone = f", {f.zone} undecided" if f.zone else ""
        took = f"; accepted {accepted[f.name]}/{f.cases}" if f.name in accepted else ""
        out.append(f"  {f.expect:4} {f.right:4}/{f.cases} = {r.rate:.3f} [{r.low:.3f}] {f.name}{zone}{took}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qin2025.challenge.run")
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--claim", action="append", default=[])
    parser.add_argument("--cases", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = []
    for role, pc, took in challenge(args.paths, set(args.claim), args.cases):
        print("\n".join(lines(role, pc, took)), flush=True)
        results.append((role, pc, took))
    print(f"{time.perf_counter() - start:.1f} s")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {role: {**pc.to_entry(), "zone_accepted": took} for role, pc, took in results}, indent=1, default=str
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
