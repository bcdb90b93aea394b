"""Accept a run as the new baseline (``--claim-baseline-update``, ``claimcheck baseline accept``), keeping the old."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from claimcheck.errors import ClaimcheckError
from claimcheck.files import write_atomic


class AcceptError(ClaimcheckError):
    """A run cannot be accepted as the baseline (incomplete, or not a run file)."""


def kept_name(baseline: Path, when: datetime) -> Path:
    """Return the free name the old baseline is kept under: ``<stem>.<YYYYmmddTHHMMSSZ>[-2, -3...].json`` beside it."""
    stamp = when.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = baseline.with_name(f"{baseline.stem}.{stamp}{baseline.suffix}")
    n = 2
    while path.exists():
        path = baseline.with_name(f"{baseline.stem}.{stamp}-{n}{baseline.suffix}")
        n += 1
    return path


def refusal(text: str, baseline: Path) -> str | None:
    """Return why the run JSON ``text`` may not replace ``baseline`` (unparsed, incomplete, partial), else None."""
    try:
        data = json.loads(text)
        incomplete = data.get("incomplete")
    except (ValueError, AttributeError):
        return f"cannot accept as the baseline {baseline}: the run's JSON does not parse"
    if incomplete:
        return f"not accepted as the baseline {baseline}: the run is incomplete ({incomplete[0]}); rerun it whole"
    try:
        held = _tests_of(json.loads(baseline.read_text(encoding="utf-8"))) if baseline.exists() else {}
    except (OSError, ValueError):  # a baseline that cannot be read or parsed holds no claim tests
        held = {}
    ran = _tests_of(data)
    dropped = sorted(set(held.values()) - set(ran.values()))
    if dropped:  # a partial run would take those claims out of the gate without a word
        return (
            f"not accepted as the baseline {baseline}: it holds {', '.join(dropped)}, which this run did not run, "
            "so accepting it would drop them from the gate; run every claim of the baseline, or give this run a "
            "baseline file of its own"
        )
    cut = sorted(n for n in held if n not in ran)  # a test of a claim both hold: its control would leave the gate
    if cut:
        return (
            f"not accepted as the baseline {baseline}: it holds {len(cut)} test(s) this run did not run ({cut[0]}), "
            "so accepting it would drop them from the gate; run every test of the baseline's claims"
        )
    return None


def accept(text: str, baseline: Path, when: datetime | None = None) -> Path | None:
    """Write the run JSON ``text`` over ``baseline``; return where the old baseline was kept (None: there was none).

    Raise AcceptError saying why (``refusal``) for a run that may not replace it. If writing the new file
    fails, the old one is put back.
    """
    if (why := refusal(text, baseline)) is not None:
        raise AcceptError(why)
    kept = kept_name(baseline, when or datetime.now(UTC)) if baseline.exists() else None
    if kept is not None:
        os.replace(baseline, kept)
    try:
        write_atomic(baseline, text)
    except BaseException:
        if kept is not None:
            os.replace(kept, baseline)
        raise
    return kept


def _tests_of(data: object) -> dict[str, str]:
    """Return node id -> claim id of the claim tests a parsed run JSON holds."""
    tests = data.get("tests", []) if isinstance(data, dict) else []
    return {str(t.get("nodeid", "")): str(t["claim_id"]) for t in tests if isinstance(t, dict) and t.get("claim_id")}
