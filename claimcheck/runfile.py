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

SCHEMA = "claimcheck-run/1"


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
    expected: dict[str, str] = field(default_factory=dict)  # claim id -> "VERDICT: reason" known at this budget
    schema: str = SCHEMA

    def results(self) -> list[ClaimResult]:
        """Return the per-claim verdicts."""
        return aggregate(self.tests)


def to_dict(run: RunData) -> dict[str, Any]:
    """Return the run as plain data, with the derived verdicts added for readers of the JSON."""
    out = asdict(run)
    out["claims"] = [
        {
            "id": r.claim_id,
            "title": r.title,
            "source": r.source,
            "verdict": r.verdict.value,
            "reason": r.reason,
            "statistics": [asdict(s) for s in r.claim_stats + r.control_stats],
            "controls_failed": r.controls_failed,
            "controls_total": r.controls_total,
        }
        for r in run.results()
    ]
    return out


def dumps(run: RunData) -> str:
    """Return the run as JSON text (NaN and Infinity written as Python's json writes them)."""
    return json.dumps(to_dict(run), indent=1, sort_keys=False)


def from_dict(raw: Any, source: str) -> RunData:
    """Rebuild a run from ``to_dict`` output; raise RunFileError naming ``source`` if it is not one."""
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
