"""Own a report's set of files (markdown, JSON sidecar, figures) and replace it as a whole.

A manifest beside the report (``.<report name>.manifest.json``) names every file the last run wrote;
only those are ever replaced or removed, so a file of the user's in the report's folder or its
figure folder is never touched, and a report path that holds a file claimcheck did not write is
refused (``foreign``).

A new set is written into a staging folder beside the report (``.<report name>.<run id>.staging``),
then committed: the manifest is rewritten to name the moves still to do (the commit point), the
staged files are renamed into place, the old set's files the new one lacks are removed, and the
manifest is rewritten without moves. A kill before the commit point leaves the old set and a
staging folder; a kill after it leaves moves that ``recover`` (run before anything else touches the
set) finishes. Either way the set is the old one or the new one, never a mix, once ``recover`` ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claimcheck.files import write_atomic

FORMAT = "claimcheck-report-set/1"
RUN_SCHEMA_PREFIX = "claimcheck-run/"
# what write_atomic leaves when killed: ".<name>.<8 characters of mkstemp>.tmp"
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")


@dataclass
class Manifest:
    """The files of one report set (relative to the report's folder), and a commit's moves while it is under way."""

    run_id: str
    files: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)  # staged -> final, still to do
    remove: list[str] = field(default_factory=list)  # files of the old set the new one lacks, still to remove


def manifest_path(report: Path) -> Path:
    """Return the manifest file of the report set at ``report``."""
    return report.with_name(f".{report.name}.manifest.json")


def sidecar_path(report: Path) -> Path:
    """Return the JSON sidecar of the report at ``report``."""
    return report.with_suffix(".json")


def figure_dir(report: Path) -> Path:
    """Return the folder holding the figures of the report at ``report``."""
    return report.with_name(report.stem + "-figures")


def details_path(report: Path) -> Path:
    """Return the file that holds the per-claim sections when the report at ``report`` is split."""
    return report.with_name(report.stem + "-details.md")


def staging_dir(report: Path, run_id: str) -> Path:
    """Return the folder a run stages its new set in before it commits it."""
    return report.with_name(f".{report.name}.{run_id}.staging")


def read_manifest(report: Path) -> Manifest | None:
    """Return the manifest beside ``report``, or None if there is none or it cannot be read."""
    try:
        raw = json.loads(manifest_path(report).read_text(encoding="utf-8"))
        if raw.get("format") != FORMAT:
            return None
        return Manifest(
            str(raw["run id"]),
            [str(f) for f in raw["files"]],
            [(str(a), str(b)) for a, b in raw.get("moves", [])],
            [str(f) for f in raw.get("remove", [])],
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_manifest(report: Path, m: Manifest) -> None:
    data: dict[str, Any] = {"format": FORMAT, "run id": m.run_id, "files": m.files}
    if m.moves or m.remove:
        data |= {"moves": [list(mv) for mv in m.moves], "remove": m.remove}
    write_atomic(manifest_path(report), json.dumps(data, indent=1) + "\n")


def _relative(report: Path, path: Path) -> str:
    return path.relative_to(report.parent).as_posix()


def _legacy_own(report: Path, path: Path) -> bool:
    """Return whether ``path`` is the markdown or sidecar of a set written before manifests existed.

    Such a set is recognised by its sidecar: a claimcheck run file whose run id the markdown shows.
    """
    if path not in (report, sidecar_path(report)):
        return False
    try:
        run = json.loads(sidecar_path(report).read_text(encoding="utf-8"))
        run_id = str(run["env"]["run id"])
        return str(run.get("schema", "")).startswith(RUN_SCHEMA_PREFIX) and run_id in report.read_text(encoding="utf-8")
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return False


def owns(report: Path, path: Path) -> bool:
    """Return whether claimcheck wrote ``path`` as a file of the report set at ``report``."""
    m = read_manifest(report)
    if m is not None and _relative(report, path) in m.files:
        return True
    return _legacy_own(report, path)


def foreign(report: Path, path: Path) -> str | None:
    """Return why the set at ``report`` may not replace ``path`` (a folder, a file not claimcheck's), or None."""
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            return f"{path} is a folder"
        if not owns(report, path):
            return f"{path} exists and was not written by claimcheck (no report manifest names it)"
    return None


def recover(report: Path) -> list[str]:
    """Finish a commit that a kill cut short, and remove the temporaries a killed run left; return what was done.

    Call it with the report's lock held (no other session is writing the set).
    """
    done: list[str] = []
    m = read_manifest(report)
    if m is not None and (m.moves or m.remove):
        _apply(report, m)
        done.append(f"finished writing the report set of run {m.run_id}, which was cut short")
    folder = report.parent
    if folder.is_dir():
        for leftover in folder.glob(f".{glob_escape(report.name)}.*.staging"):
            shutil.rmtree(leftover, ignore_errors=True)
            done.append(f"removed {leftover.name}, left by a run that did not finish")
    names = {report.name, sidecar_path(report).name, manifest_path(report).name}
    figures = figure_dir(report)
    for where, own in ((folder, names.__contains__), (figures, _is_figure_name)):
        for leftover in where.glob(".*.tmp") if where.is_dir() else ():
            found = _TEMPORARY.match(leftover.name)
            if found and own(found["name"]):
                leftover.unlink(missing_ok=True)
                done.append(f"removed {leftover.name}, left by a run that did not finish")
    return done


def _is_figure_name(name: str) -> bool:
    return name.endswith(".png")


def glob_escape(name: str) -> str:
    """Return ``name`` with the characters glob reads as patterns made literal."""
    return re.sub(r"([*?\[])", r"[\1]", name)


def commit(report: Path, run_id: str, staged: list[Path]) -> None:
    """Move the set staged in ``staging_dir(report, run_id)`` into place, as a whole (see the module).

    ``staged`` are the final paths of the new set's files; each lies at the same path relative to
    the report's folder inside the staging folder. The old set's files the new one lacks are removed.
    """
    stage = staging_dir(report, run_id)
    files = [_relative(report, p) for p in staged]
    old = read_manifest(report)
    remove = [f for f in (old.files if old else []) if f not in files]
    moves = [(_relative(report, stage / f), f) for f in files]
    m = Manifest(run_id, files, moves, remove)
    _write_manifest(report, m)  # the commit point: from here on the new set is the one
    _apply(report, m)


def _apply(report: Path, m: Manifest) -> None:
    """Do the moves and removals ``m`` names that are not done yet, then record the set as complete."""
    folder = report.parent
    for src, dst in m.moves:
        source, target = folder / src, folder / dst
        if source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
    for gone in m.remove:
        (folder / gone).unlink(missing_ok=True)
    _write_manifest(report, Manifest(m.run_id, m.files))
    for src, _ in m.moves[:1]:
        shutil.rmtree(folder / Path(src).parts[0], ignore_errors=True)
