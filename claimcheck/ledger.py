"""Read the ledger of protocol versions: what changed, why, and whether a confirmatory block was run.

The ledger is a TOML file, or a folder of them (this suite's is ``claims/ledger/``, one file per
claim), kept in the repository, with one ``[[version]]`` table per protocol version of a claim::

    [[version]]
    claim = "C1"
    version = 2
    fingerprint = "3f2a..."          # ClaimProtocol.fingerprint() of that version
    date = "2026-12-01"
    change = "what changed"
    motivated_by = "which results motivated it"
    block = "C1-v2"                  # its confirmatory block (seeds never looked at before)
    confirmed = ""                   # empty until the block has run: then budget, seeds, date, result

A version is *exploratory* until its ``confirmed`` entry is filled in, after a run on its block.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from claimcheck.errors import ConfigError
from claimcheck.protocol import ClaimProtocol

_FIELDS = {"claim": str, "version": int, "fingerprint": str, "date": str, "change": str, "motivated_by": str}


@dataclass(frozen=True)
class Entry:
    """One protocol version as the ledger records it."""

    claim: str
    version: int
    fingerprint: str
    date: str
    change: str
    motivated_by: str
    block: str = ""
    confirmed: str = ""  # empty: exploratory


@dataclass(frozen=True)
class Ledger:
    """Every recorded protocol version, by (claim, version)."""

    path: Path | None
    entries: dict[tuple[str, int], Entry]

    def status(self, protocol: ClaimProtocol) -> str:
        """Return ``confirmed: ...``, ``exploratory: ...`` or ``unregistered: ...`` for ``protocol``."""
        if not protocol.declared:
            return "exploratory: no protocol declared (every unit must pass)"
        entry = self.entries.get((protocol.claim_id, protocol.version))
        where = self.path.name if self.path else "the ledger"
        if entry is None:
            return f"unregistered: v{protocol.version} is not in {where}; add it before the confirmatory run"
        if entry.fingerprint != protocol.fingerprint():
            return (
                f"unregistered: v{protocol.version} in code (fingerprint {protocol.fingerprint()}) differs from "
                f"{where} ({entry.fingerprint}); a changed protocol is a new version"
            )
        if entry.confirmed:
            return f"confirmed: {entry.confirmed}"
        return f"exploratory: block {entry.block or protocol.seeds.block} not yet run"

    def history(self, claim: str) -> list[Entry]:
        """Return the claim's versions, oldest first."""
        return sorted((e for (c, _), e in self.entries.items() if c == claim), key=lambda e: e.version)


EMPTY = Ledger(None, {})


def load_ledger(path: Path, option: str) -> Ledger:
    """Read a ledger file, or every ``*.toml`` in a ledger folder; raise ConfigError naming the first bad field."""
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    entries: dict[tuple[str, int], Entry] = {}
    for f in files:
        _read(f, option, entries)
    return Ledger(path, entries)


def _read(path: Path, option: str, entries: dict[tuple[str, int], Entry]) -> None:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(
            f"{option}: cannot read the ledger {path} ({e.strerror}); fix the path or set it empty"
        ) from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{option}: the ledger {path} is not valid TOML ({e})") from None
    rows = raw.get("version", [])
    if not isinstance(rows, list):
        raise ConfigError(f"{option}: {path}: expected [[version]] tables")
    for i, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise ConfigError(f"{option}: {path}: [[version]] #{i} is not a table")
        for name, kind in _FIELDS.items():
            if not isinstance(row.get(name), kind):
                raise ConfigError(f"{option}: {path}: [[version]] #{i} needs {name} as {kind.__name__}")
        extra = set(row) - set(_FIELDS) - {"block", "confirmed"}
        if extra:
            raise ConfigError(f"{option}: {path}: [[version]] #{i} has unknown fields {sorted(extra)}")
        entry = Entry(**{k: row[k] for k in row})
        key = (entry.claim, entry.version)
        if key in entries:
            raise ConfigError(f"{option}: {path}: {entry.claim} v{entry.version} is recorded twice")
        entries[key] = entry
