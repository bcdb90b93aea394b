"""Say which data file a locator passed over and why, so a report can list the choice it made."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Rejected:
    """A candidate file a locator passed over as invalid, and why (the loader's message)."""

    path: Path
    problem: str


def rejection(path: Path, error: Exception) -> Rejected:
    """Return ``error`` (a loader's DataError) as the rejection of ``path``, without the path repeated in front."""
    text = str(error)
    for prefix in (f"{path}: ", f"{path}, ", f"{path}:"):
        text = text.removeprefix(prefix)
    return Rejected(path, text)


def passed_over(rejected: Sequence[Rejected]) -> str:
    """Return ``; passed over N invalid file(s): name (problem); ...``, or "" when none was rejected."""
    if not rejected:
        return ""
    return f"; passed over {len(rejected)} invalid file(s): " + "; ".join(
        f"{r.path.name} ({r.problem})" for r in rejected
    )
