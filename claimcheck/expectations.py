"""Read the verdicts a suite is known to give per budget, and find claims that deviate from them.

A claim that does not reproduce under faithful conditions is a result, not a bug: the report says
NOT REPRODUCED with its evidence. Listing it in the expectations file (with the reason) keeps the
session green while the verdict stays as measured, and turns any change of that verdict (the claim
starts to reproduce, or errors) into a failed session, so the suite still works as a regression test.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path

from claimcheck.errors import ConfigError
from claimcheck.results import ClaimResult, Verdict
from claimcheck.runfile import RunData

_VERDICTS = {v.value for v in Verdict}


def load_expectations(path: Path, option: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Return {budget: {claim id: (verdict, reason)}} from a TOML file, or raise ConfigError naming it.

    Each entry is ``C4 = "NOT REPRODUCED: why"`` under a ``[budget]`` table.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{option}: cannot read {path} ({e.strerror}); fix the path or set it empty") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{option}: {path} is not valid TOML ({e})") from None
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for budget, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f'{option}: {path}: [{budget}] must be a table of claim = "VERDICT: reason"')
        for claim, text in table.items():
            verdict, _, reason = str(text).partition(":")
            if verdict.strip() not in _VERDICTS:
                raise ConfigError(
                    f"{option}: {path}: [{budget}] {claim} = {text!r} must start with one of "
                    f"{', '.join(sorted(_VERDICTS))} and a colon"
                )
            out.setdefault(budget, {})[claim] = (verdict.strip(), reason.strip())
    return out


def deviations(results: Sequence[ClaimResult], expected: Mapping[str, tuple[str, str]]) -> list[str]:
    """Return one sentence per listed claim whose verdict differs from the expected one.

    A SKIPPED claim (its data or model is absent) is not a change of verdict.
    """
    out = []
    for r in results:
        if r.verdict is Verdict.SKIPPED:
            continue
        if r.claim_id in expected and r.verdict.value != expected[r.claim_id][0]:
            out.append(f"{r.claim_id} is {r.verdict.value} but expected {expected[r.claim_id][0]}")
    return out


def from_baseline(run: RunData, source: str) -> dict[str, tuple[str, str]]:
    """Return the verdicts of a trusted run as expectations: what a regression run must keep.

    Skipped claims are left out (they said nothing).
    """
    return {
        r.claim_id: (r.verdict.value, f"the verdict of the baseline {source}")
        for r in run.results()
        if r.verdict is not Verdict.SKIPPED
    }
