"""Hold one run's results as data, and read and write them as the JSON sidecar of the report.

The markdown report is rendered from a ``RunData``, and a ``RunData`` round-trips through JSON, so
``claimcheck render run.json`` reproduces the markdown that the run wrote.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from claimcheck.errors import DataError
from claimcheck.record import ClaimRecorder
from claimcheck.results import ClaimResult, TestOutcome, aggregate

SCHEMA = "claimcheck-run/2"
OLD_SCHEMAS = {"claimcheck-run/1": "written before verdicts came from protocols (every run had to pass)"}


class RunFileError(DataError):
    """A run JSON file cannot be read or is not of this schema."""


@dataclass
class RunData:
    """Everything a run produced: environment, every claim test outcome, and run-level facts."""

    title: str
    env: dict[str, str]
    tests: list[TestOutcome] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)  # what did not run, when interrupted
    counters: dict[str, int] = field(default_factory=dict)  # e.g. training results computed / cached
    expected: dict[str, Any] = field(default_factory=dict)  # claim id -> its pinned expectations at this budget
    not_run: dict[str, list[str]] = field(default_factory=dict)  # claim id -> its tests that did not run
    ledger: dict[str, str] = field(default_factory=dict)  # claim id -> status of its protocol version
    schema: str = SCHEMA

    def results(self) -> list[ClaimResult]:
        """Return the per-claim verdicts."""
        return aggregate(self.tests, self.not_run)


def to_dict(run: RunData) -> dict[str, Any]:
    """Return the run as plain data, with the derived verdicts added for readers of the JSON."""
    out = asdict(run)
    out["claims"] = [claim_dict(r, run.ledger.get(r.claim_id, "")) for r in run.results()]
    return out


def claim_dict(r: ClaimResult, status: str) -> dict[str, Any]:
    """Return one claim's verdict and evidence as plain data: parts, controls, statistics, protocol."""
    proto = r.protocol
    return {
        "id": r.claim_id,
        "title": r.title,
        "source": r.source,
        "verdict": r.verdict.value,
        "reason": r.reason,
        "protocol_version": proto.version if proto else None,
        "protocol_fingerprint": proto.fingerprint() if proto else None,
        "protocol_status": status,
        "parts": [
            {
                "name": p.name,
                "verdict": p.verdict.value,
                "rule": p.rule,
                "bar": p.bar,
                "reason": p.reason,
                "rate": asdict(p.rate) if p.rate else None,
                "units": [asdict(u) for u in p.units],
                "estimates": [asdict(c) for c in p.estimates],
            }
            for p in r.parts
        ],
        "controls": [
            {
                "name": c.name,
                "part": c.part,
                "status": c.status,
                "max_pass_rate": c.max_pass_rate,
                "rate": asdict(c.rate) if c.rate else None,
                "units": [asdict(u) for u in c.units],
            }
            for c in r.controls
        ],
        "statistics": [asdict(s) for s in r.claim_stats + r.control_stats],
        "controls_failed": r.controls_failed,
        "controls_total": r.controls_total,
    }


def dumps(run: RunData) -> str:
    """Return the run as JSON text (NaN and Infinity written as Python's json writes them)."""
    return json.dumps(to_dict(run), indent=1, sort_keys=False)


def from_dict(raw: Any, source: str) -> RunData:
    """Rebuild a run from ``to_dict`` output; raise RunFileError naming ``source`` if it is not one."""
    if isinstance(raw, dict) and raw.get("schema") in OLD_SCHEMAS:
        old = raw["schema"]
        raise RunFileError(
            f"{source}: a run file of the older schema {old!r} ({OLD_SCHEMAS[old]}); this claimcheck reads "
            f"{SCHEMA!r}. Rerun the suite to get a current file, or read this one with the claimcheck that wrote it"
        )
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        found = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise RunFileError(
            f"{source}: not a claimcheck run file of schema {SCHEMA!r} (found {found!r}); "
            "give the .json written next to a claim report by --claim-report"
        )
    try:
        tests = []
        for t in raw["tests"]:
            rec = t.get("record")
            tests.append(TestOutcome(**{**t, "record": ClaimRecorder.from_json(json.dumps(rec)) if rec else None}))
        return RunData(
            title=raw["title"],
            env=dict(raw["env"]),
            tests=tests,
            incomplete=list(raw.get("incomplete", [])),
            counters=dict(raw.get("counters", {})),
            expected=dict(raw.get("expected", {})),
            not_run={str(k): list(v) for k, v in raw.get("not_run", {}).items()},
            ledger=dict(raw.get("ledger", {})),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise RunFileError(f"{source}: malformed claimcheck run file ({type(e).__name__}: {e})") from None


def load(path: Path) -> RunData:
    """Read a run JSON file; raise RunFileError naming the file on any problem."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise RunFileError(f"{path}: cannot read run file ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}: not valid JSON at line {e.lineno} ({e.msg})") from None
    return from_dict(raw, str(path))
