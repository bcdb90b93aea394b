"""Own a report's set of files (markdown, JSON sidecar, details file, figures) and replace it as a whole.

A manifest beside the report names each file the last run wrote, with its sha256; only such a file, under a name
claimcheck gives a file of the set (``own_name``) and holding what claimcheck writes there, is ever replaced or
removed; any other entry is left alone and named (``ReportSetWarning``). A new set is staged beside the report,
then committed: the manifest names the moves (the commit point), the files are moved into place, and ``recover``
finishes a commit a kill cut short (docs/reliability.md, "Nothing lost, nothing injected").
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from claimcheck.files import write_atomic

FORMAT = "claimcheck-report-set/2"  # 2: the sha256 of every file claimcheck wrote
FORMATS = ("claimcheck-report-set/1", FORMAT)  # 1: no hashes, so none of its entries is removed or moved over
RUN_SCHEMA_PREFIX = "claimcheck-run/"
# what write_atomic leaves when killed: ".<name>.<8 characters of mkstemp>.tmp"
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
_FIGURE = re.compile(r"[A-Za-z0-9-]+\.png")  # what report.figure_name gives
_PNG = b"\x89PNG\r\n\x1a\n"
DETAILS_MARK = "<!-- claimcheck details -->"  # the first line of a details file claimcheck wrote
_NAME_MAX = 255  # bytes in one file name (ext4, APFS, NTFS)


class ReportSetWarning(UserWarning):
    """An entry of a report manifest was not honoured: the file it names was left alone."""


@dataclass
class Manifest:
    """The files of one report set (relative to the report's folder), and a commit's moves while it is under way;
    an entry without a matching hash (``sha256``, or ``before``: as it was when the commit began) is never removed,
    moved or moved over."""

    run_id: str
    files: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)  # staged -> final, still to do
    remove: list[str] = field(default_factory=list)  # files of the old set the new one lacks, still to remove
    sha256: dict[str, str] = field(default_factory=dict)  # each file's hash as claimcheck wrote it
    before: dict[str, str] = field(default_factory=dict)  # each file a commit replaces or removes, as it was


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
        if raw.get("format") not in FORMATS:
            return None
        return Manifest(
            str(raw["run id"]),
            [str(f) for f in raw["files"]],
            [(str(a), str(b)) for a, b in raw.get("moves", [])],
            [str(f) for f in raw.get("remove", [])],
            {str(k): str(v) for k, v in dict(raw.get("sha256", {})).items()},
            {str(k): str(v) for k, v in dict(raw.get("before", {})).items()},
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _write_manifest(report: Path, m: Manifest) -> None:
    data: dict[str, Any] = {"format": FORMAT, "run id": m.run_id, "files": m.files, "sha256": m.sha256}
    if m.moves or m.remove:
        data |= {"moves": [list(mv) for mv in m.moves], "remove": m.remove, "before": m.before}
    write_atomic(manifest_path(report), json.dumps(data, indent=1) + "\n")


def file_sha256(path: Path) -> str | None:
    """Return the sha256 of the regular file at ``path`` (no symbolic link followed), or None if it is none."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        return hashlib.file_digest(f, "sha256").hexdigest()


def own_name(report: Path, entry: str) -> bool:
    """Return whether ``entry`` is the report, its sidecar, its details file, or a figure in its figure folder."""
    if entry in (report.name, sidecar_path(report).name, details_path(report).name):
        return True
    folder, _, name = entry.partition("/")
    return folder == figure_dir(report).name and _FIGURE.fullmatch(name) is not None and len(name) <= _NAME_MAX


def _quote(entry: str) -> str:
    """Return ``entry`` quoted on one line for a message, cut to a readable length."""
    text = repr(entry)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(entry):,} characters)"


def inside(report: Path, entry: str) -> Path | None:
    """Return the path a manifest ``entry`` (relative, no ``..`` or NUL) names in the report's folder or below it
    (links resolved), or None if it leaves the folder."""
    rel = PurePosixPath(entry)
    if not rel.parts or rel.is_absolute() or ".." in rel.parts or "\\" in entry or "\0" in entry:  # "", "."
        return None
    folder = report.parent
    path = folder.joinpath(*rel.parts)
    try:
        real_folder, real_parent = folder.resolve(), path.parent.resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if real_parent != real_folder and real_folder not in real_parent.parents:
        return None
    return path


def _why_not_ours(report: Path, entry: str, recorded: str | None) -> str | None:
    """Return why the manifest ``entry`` may not be removed or replaced, or None if it is what claimcheck wrote."""
    if not own_name(report, entry):
        return (
            f"{_quote(entry)} is not a name claimcheck gives a file of the report set {report} (the report, "
            f"{sidecar_path(report).name}, {details_path(report).name}, or a figure in {figure_dir(report).name}/)"
        )
    if (path := inside(report, entry)) is None:
        return f"{_quote(entry)} lies outside the report folder {report.parent}"
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file():
        return f"{path} is not a regular file (a symbolic link, a folder or a device)"
    if recorded is None:
        return f"{path}: the manifest records no content hash for it (written by an older claimcheck, or edited)"
    if file_sha256(path) != recorded:
        return f"{path} is not the file claimcheck wrote (its sha256 differs from the one recorded)"
    return _not_its_content(report, entry, path)


def _not_its_content(report: Path, entry: str, path: Path) -> str | None:
    """Return why ``path`` does not hold what claimcheck writes as ``entry`` (the report may hold anything), or None."""
    if entry == report.name:
        return None
    try:
        if entry == sidecar_path(report).name:
            raw = json.loads(path.read_bytes())
            ok, what = isinstance(raw, dict) and str(raw.get("schema", "")).startswith(RUN_SCHEMA_PREFIX), "run file"
        elif entry == details_path(report).name:
            with open(path, "rb") as f:
                ok, what = f.readline(200).rstrip(b"\r\n") == DETAILS_MARK.encode(), "details file"
        else:
            with open(path, "rb") as f:
                ok, what = f.read(len(_PNG)) == _PNG, "figure (a PNG)"
    except (OSError, ValueError):
        ok, what = False, "file"
    return None if ok else f"{path} is not a claimcheck {what}, though the manifest records its sha256"


def _leave(why: str, left: list[str]) -> None:
    """Name a manifest entry left alone: a ReportSetWarning, and in ``left``."""
    message = f"report set: left alone: {why}"
    left.append(message)
    warnings.warn(ReportSetWarning(message), stacklevel=3)


def _relative(report: Path, path: Path) -> str:
    return path.relative_to(report.parent).as_posix()


def owns(report: Path, path: Path) -> bool:
    """Return whether the manifest records ``path`` as a file of the set at ``report`` with its present content."""
    m = read_manifest(report)
    try:
        entry = _relative(report, path)
    except ValueError:
        return False
    if m is None or entry not in m.files or not os.path.lexists(path):
        return False
    return _why_not_ours(report, entry, m.sha256.get(entry)) is None


def foreign(report: Path, path: Path) -> str | None:
    """Return why the set at ``report`` may not replace ``path`` (a folder, a file not claimcheck's), or None."""
    if path.is_symlink() or path.exists():
        if path.is_dir() and not path.is_symlink():
            return f"{path} is a folder"
        if not owns(report, path):
            return f"{path} exists and was not written by claimcheck (no report manifest names it)"
    return None


def recover(report: Path) -> list[str]:
    """Finish a commit a kill cut short, remove the temporaries a killed run left (the lock held); say what was done."""
    done: list[str] = []
    m = read_manifest(report)
    if m is not None and (m.moves or m.remove):
        done += _apply(report, m)
        done.append(f"finished writing the report set of run {m.run_id}, which was cut short")
    folder = report.parent
    if folder.is_dir():
        for leftover in folder.glob(f".{glob.escape(report.name)}.*.staging"):
            if remove_staging(report, leftover.name):
                done.append(f"removed {leftover.name}, left by a run that did not finish")
    names = {report.name, sidecar_path(report).name, manifest_path(report).name}
    figures = figure_dir(report)
    for where, own in ((folder, names.__contains__), (figures, lambda name: name.endswith(".png"))):
        for leftover in where.glob(".*.tmp") if where.is_dir() else ():
            found = _TEMPORARY.match(leftover.name)
            if found and own(found["name"]) and leftover.is_file() and not leftover.is_symlink():
                leftover.unlink(missing_ok=True)
                done.append(f"removed {leftover.name}, left by a run that did not finish")
    return done


def _is_staging(report: Path, name: str) -> bool:
    return re.fullmatch(rf"\.{re.escape(report.name)}\.[^/\\]+\.staging", name) is not None and ".." not in name


def remove_staging(report: Path, name: str) -> bool:
    """Remove the staging folder ``name`` of the report's folder; only a real folder named as claimcheck names them."""
    path = report.parent / name
    if not _is_staging(report, name) or path.is_symlink() or not path.is_dir():
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def commit(report: Path, run_id: str, staged: list[Path]) -> list[str]:
    """Move the set staged in ``staging_dir(report, run_id)`` (``staged``: the files' final paths) into place as a
    whole, removing the old set's files it lacks; return what was left alone (each also a ReportSetWarning)."""
    stage = staging_dir(report, run_id)
    folder = report.parent
    files = [_relative(report, p) for p in staged]
    sha = {f: file_sha256(stage / f) or "" for f in files}
    old = read_manifest(report)
    remove = [f for f in (old.files if old else []) if f not in files]
    before = {f: h for f in remove if old and (h := old.sha256.get(f))}
    before |= {f: h for f in files if (h := file_sha256(folder / f))}  # the files replaced, vetted by ``foreign``
    moves = [(_relative(report, stage / f), f) for f in files]
    m = Manifest(run_id, files, moves, remove, sha, before)
    _write_manifest(report, m)  # the commit point: from here on the new set is the one
    return _apply(report, m)


def _apply(report: Path, m: Manifest) -> list[str]:
    """Do the moves and removals ``m`` names that are not done yet, then record the set as complete; return what
    was left alone (a move only from this report's staging folder to a file of the set, with the content recorded
    for it, over nothing or the file recorded before; a removal only of a file with the content recorded)."""
    left: list[str] = []
    for src, dst in m.moves:
        source, target = inside(report, src), inside(report, dst)
        if source is None or not _is_staging(report, PurePosixPath(src).parts[0]) or len(PurePosixPath(src).parts) < 2:
            _leave(f"the move from {_quote(src)}: not a file of this report's staging folder", left)
            continue
        if target is None or dst not in m.files or not own_name(report, dst):
            _leave(f"the move to {_quote(dst)}: not a file of the report set in {report.parent}", left)
            continue
        if not os.path.lexists(source):
            continue  # done before a kill
        if file_sha256(source) != m.sha256.get(dst):
            _leave(f"the move from {source}: not the file claimcheck staged", left)
            continue
        if os.path.lexists(target) and file_sha256(target) not in (m.before.get(dst), m.sha256.get(dst)):
            _leave(f"{target}: not a file claimcheck wrote, so it is not replaced", left)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
    for gone in m.remove:
        why = _why_not_ours(report, gone, m.before.get(gone))
        path = inside(report, gone)
        if why is None and path is not None:
            try:
                path.unlink(missing_ok=True)
            except OSError as e:  # after the commit point nothing may stop the report: name it, go on
                _leave(f"{path} could not be removed ({e.strerror or e})", left)
        else:
            _leave(why or f"{_quote(gone)} lies outside the report folder {report.parent}", left)
    try:
        _write_manifest(report, Manifest(m.run_id, m.files, sha256=m.sha256))
    except OSError as e:  # the new set is in place; the manifest on disk still names the moves: ``recover`` ends it
        message = (
            f"report set: the new report set of run {m.run_id} is in place, but its manifest "
            f"{manifest_path(report).name} could not be written ({e.strerror or type(e).__name__}); "
            "the next run finishes it"
        )
        left.append(message)
        warnings.warn(ReportSetWarning(message), stacklevel=2)
    finally:
        for top in {PurePosixPath(src).parts[0] for src, _ in m.moves if PurePosixPath(src).parts}:
            remove_staging(report, top)
    return left


def record_written(report: Path, written: list[Path], run_id: str = "") -> None:
    """Record in the manifest beside ``report`` that claimcheck just wrote ``written`` (``claimcheck render -o``)."""
    m = read_manifest(report) or Manifest(run_id or "cli")
    for path in written:
        entry = _relative(report, path)
        if entry not in m.files:
            m.files.append(entry)
        m.sha256[entry] = file_sha256(path) or ""
    _write_manifest(report, m)


def forget_written(report: Path, removed: list[Path]) -> None:
    """Drop ``removed`` (files claimcheck just removed) from the manifest beside ``report``, if it names them."""
    if (m := read_manifest(report)) is None:
        return
    entries = {_relative(report, p) for p in removed}
    if not entries & set(m.files):
        return
    m.files = [f for f in m.files if f not in entries]
    m.sha256 = {f: h for f, h in m.sha256.items() if f not in entries}
    _write_manifest(report, m)
