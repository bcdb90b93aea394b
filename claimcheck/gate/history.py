"""Keep past runs' JSON in a history folder (``<history>/<machine>/<NNNN>_<commit>_<date>.json``).

Entries are named by path, number or a prefix of their name (docs/report.md, "The ``claimcheck`` command").
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from claimcheck.decide.verdicts import _claim_sort_key
from claimcheck.errors import ClaimcheckError
from claimcheck.provenance.environment import hardware_key

HISTORY_DIR = Path(".claimcheck") / "history"
_ENTRY = re.compile(r"(\d{4,})_(.+)_(\d{8}-\d{6})\.json")


class HistoryError(ClaimcheckError):
    """A history entry cannot be saved or found; the message says which and what to do."""


@dataclass(frozen=True)
class Entry:
    """One saved run: where it is and what its name says."""

    path: Path
    machine: str
    number: int
    commit: str
    date: str  # YYYYMMDD-HHMMSS, UTC, from the run's environment

    @property
    def name(self) -> str:
        """Return ``<machine>/<file name>``, the entry's name in listings."""
        return f"{self.machine}/{self.path.name}"


def _slug(text: str, keep: str = r"[^A-Za-z0-9.+-]+") -> str:
    return re.sub(keep, "-", text).strip("-") or "unknown"


def machine_id(env: dict[str, str]) -> str:
    """Return the folder name of the machine a run's environment describes, e.g. ``Linux-py3.11-cpu-1a2b3c4d``."""
    system, python = env.get("platform", "").split("-")[0], ".".join(env.get("python", "").split(".")[:2])
    device = (env.get("device", "") or "unknown").split(":")[0]
    digest = hashlib.sha256("\0".join(hardware_key(env)).encode()).hexdigest()[:8]
    return f"{_slug(system)}-py{_slug(python)}-{_slug(device)}-{digest}"


def _date(env: dict[str, str]) -> str:
    try:
        return datetime.strptime(env.get("date", ""), "%Y-%m-%d %H:%M:%S UTC").strftime("%Y%m%d-%H%M%S")
    except ValueError:
        return "00000000-000000"


def _commit(env: dict[str, str]) -> str:
    commit = _slug(env.get("git commit", "") or "unknown", keep=r"[^A-Za-z0-9]+")
    return commit + ("-dirty" if env.get("git tree dirty") == "True" else "")


def history_dir(root: Path, folder: Path | None = None) -> Path:
    """Return the history folder: ``folder`` (relative to ``root`` unless absolute), else the default under ``root``."""
    return root / (folder if folder is not None else HISTORY_DIR)


def save_run(run_json_text: str, root: Path, env: dict[str, str], *, folder: Path | None = None) -> Path:
    """Save a run's JSON text as the next entry of its machine's history; return the path.

    The file is written whole and takes a number no other entry has, even when two sessions save at once.
    """
    machine = history_dir(root, folder) / machine_id(env)
    try:
        machine.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=machine)
    except OSError as e:
        raise HistoryError(
            f"cannot write the run history under {machine}: {e.strerror}; choose a writable folder"
        ) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(run_json_text)
        number = max((e.number for e in _entries(machine)), default=0) + 1
        while True:
            path = machine / f"{number:04d}_{_commit(env)}_{_date(env)}.json"
            try:
                os.link(tmp, path)  # fails if the name is taken: another session saved first
                return path
            except FileExistsError:
                number += 1
    finally:
        Path(tmp).unlink(missing_ok=True)


def _entries(machine: Path) -> list[Entry]:
    found = [(p, _ENTRY.fullmatch(p.name)) for p in machine.glob("*.json")]
    return [Entry(p, machine.name, int(m[1]), m[2], m[3]) for p, m in found if m]


def list_entries(root: Path, *, folder: Path | None = None) -> list[Entry]:
    """Return every saved run, by machine and then by number."""
    base = history_dir(root, folder)
    machines = sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []
    return [e for m in machines for e in sorted(_entries(m), key=lambda e: e.number)]


def verdict_changes(runs: Sequence[tuple[Entry, Mapping[str, str]]]) -> list[tuple[Entry, list[str]]]:
    """Return, for every entry after the first of its machine, the claims whose verdict changed since the one before.

    ``runs`` pairs each entry (as ``list_entries`` orders them) with its verdicts by claim id. A
    claim only one of the two runs has is named as appearing or gone; one a run did not finish (its
    verdict "") is not compared, and the next run is compared with its last finished verdict.
    """
    out: list[tuple[Entry, list[str]]] = []
    last: dict[str, Mapping[str, str]] = {}
    for entry, verdicts in runs:
        before = last.get(entry.machine)
        unfinished = {cid for cid, v in verdicts.items() if not v}
        carried = {cid: v for cid in unfinished if (v := (before or {}).get(cid))}  # its last finished verdict
        last[entry.machine] = {**{k: v for k, v in verdicts.items() if v}, **carried}
        if before is None:
            continue
        ids = sorted((set(before) | set(verdicts)) - unfinished, key=_claim_sort_key)
        moved = [(cid, before.get(cid), verdicts.get(cid)) for cid in ids if before.get(cid) != verdicts.get(cid)]
        out.append((entry, [f"{cid} {a or '(not run)'} -> {b or '(not run)'}" for cid, a, b in moved]))
    return out


def resolve(spec: str, root: Path, *, folder: Path | None = None, machine: str | None = None) -> Path:
    """Return the run file ``spec`` names: an existing path, an entry number, or a prefix of an entry's name.

    Raise HistoryError when nothing matches or when several entries do, naming them.
    """
    if Path(spec).is_file():
        return Path(spec)
    entries = [e for e in list_entries(root, folder=folder) if machine is None or e.machine == machine]
    if spec.isdigit():
        matches = [e for e in entries if e.number == int(spec)]
    else:
        matches = [e for e in entries if e.path.name.startswith(spec) or e.name.startswith(spec)]
    where = history_dir(root, folder)
    if not matches:
        raise HistoryError(
            f"{spec!r} is neither a file nor an entry of the run history in {where} "
            f"({len(entries)} entries); `claimcheck history` lists them"
        )
    if len(matches) > 1:
        names = ", ".join(e.name for e in matches[:10]) + (", ..." if len(matches) > 10 else "")
        raise HistoryError(
            f"{spec!r} names {len(matches)} history entries ({names}); give a longer prefix, such as <machine>/NNNN"
        )
    return matches[0].path
