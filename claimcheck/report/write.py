"""Write a run's report set (JSON sidecar, figures, markdown, and a details file when the markdown would exceed
``MAX_CHARS``) once, at the end, as a whole; then the CI summary."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from claimcheck.files import write_atomic
from claimcheck.report.figures import draw_figures
from claimcheck.report.fileset import (
    DETAILS_MARK,
    commit,
    details_path,
    figure_dir,
    foreign,
    forget_written,
    owns,
    read_manifest,
    record_written,
    recover,
    remove_staging,
    sidecar_path,
    staging_dir,
)
from claimcheck.report.markdown import MAX_CHARS, claim_sections, md, render, render_compact, render_details
from claimcheck.report.rundata import RunData, dumps
from claimcheck.store.filelock import LockTimeout, hold, to_stderr


@dataclass
class Written:
    """What ``write_report`` wrote and found."""

    report: Path
    json: Path
    details: Path | None = None  # the per-claim sections, when the report had to be split
    figures: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what could not be done (a figure, the comparison)
    left_alone: list[str] = field(default_factory=list)  # files the old manifest named that were not claimcheck's


@contextmanager
def _report_lock(path: Path) -> Iterator[None]:
    """Hold a lock beside ``path`` so that two sessions never interleave their report sets (a timeout: OSError)."""
    lock = path.with_name(f".{path.name}.lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        with hold(lock, note=to_stderr):
            yield
    except LockTimeout as e:
        raise OSError(errno.ETIMEDOUT, str(e), str(lock)) from None


STALE_BANNER = (
    "> **This report is from an earlier run.** Run {run_id}, started {date}, is writing a new one; "
    "if this line stays, that run did not finish.\n\n"
)


class ReportWriteError(Exception):
    """The report set could not be written; the previous set is left as it was."""


def mark_superseded(path: Path, run_id: str, date: str) -> list[str]:
    """Finish what a killed run left (``recover``), then banner the report claimcheck wrote (``owns``) so that a run
    killed before it finishes leaves it marked; return what was done (best effort: a failure leaves it alone)."""
    try:
        with _report_lock(path):
            done = recover(path)
            m = read_manifest(path)
            if m is None or not owns(path, path):
                return done
            raw = path.read_bytes()
            if hashlib.sha256(raw).hexdigest() != m.sha256.get(path.name):  # changed since ``owns`` looked
                return done
            text = raw.decode("utf-8")
            if text.startswith(STALE_BANNER.split(" Run ", 1)[0]):  # an earlier banner: replaced, not stacked
                text = text.split("\n\n", 1)[-1]
            write_atomic(path, STALE_BANNER.format(run_id=run_id, date=date) + text)
            record_written(path, [path])  # the banner is claimcheck's too: record the new content
            return done
    except (OSError, UnicodeDecodeError):
        return []


def write_report(
    run: RunData,
    path: Path,
    *,
    sections: Sequence[str] = (),
    problems: Sequence[str] = (),
    figures: bool = True,
    figure_cache: Path | None = None,
    sidecar: str | None = None,
) -> Written:
    """Write the report set of ``run`` (JSON sidecar, figures, markdown) as a whole, then the CI step summary.
    ``sections``: markdown the session rendered (the baseline comparison); ``problems``: what it could not do;
    ``figure_cache``: ``figures.cached_group``'s folder; ``sidecar``: the run's JSON text if the caller has it. The
    set is staged and committed under one lock: the old set or the new one, never a mix; ReportWriteError (the
    old set kept) names the path and the cause when it cannot be written.
    """
    written = Written(path, sidecar_path(path), problems=list(problems))
    extra = list(sections)
    try:
        with _report_lock(path):
            recover(path)
            _write_set(run, path, written, extra, figures, figure_cache, sidecar)
    except OSError as e:
        where = f" ({e.filename})" if e.filename else ""
        raise ReportWriteError(
            f"cannot write the claim report {path}: {e.strerror or type(e).__name__}{where}"
        ) from None
    if summary := os.environ.get("GITHUB_STEP_SUMMARY"):
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(render_compact(run) + "\n")
        except OSError as e:
            written.problems.append(f"the CI step summary {summary} was not written: {e.strerror}")
    return written


def _write_set(
    run: RunData,
    path: Path,
    written: Written,
    extra: list[str],
    figures: bool,
    figure_cache: Path | None,
    sidecar: str | None,
) -> None:
    """Stage the sidecar, the figures and the markdown, then commit them (the lock is held)."""
    for target in (path, written.json):
        if (why := foreign(path, target)) is not None:
            raise ReportWriteError(f"cannot write the claim report {path}: {why}")
    run_id = run.env.get("run id", "run")
    stage = staging_dir(path, run_id)
    folder = figure_dir(path)
    remove_staging(path, stage.name)
    try:
        write_atomic(stage / written.json.name, dumps(run) if sidecar is None else sidecar)
        try:  # figures never decide the outcome
            drawn = draw_figures(run, stage / folder.name, enabled=figures, cache=figure_cache)
            written.problems += drawn.problems + drawn.notes
            written.figures = _placeable(path, [folder / p.name for p in drawn.written], written.problems)
        except Exception as e:
            written.problems.append(f"drawing the figures failed: {type(e).__name__}: {e}")
        if written.problems:
            extra.append(
                "## Problems while writing this report\n\n" + "\n".join(f"- {md(p)}" for p in written.problems) + "\n"
            )
        shown = {p.name for p in written.figures}
        files = markdown_files(run, path, folder.name, extra, shown)
        for name, text in files.items():
            write_atomic(stage / name, text)
        details = details_path(path)
        written.details = details if details.name in files else None
        if written.details and (why := foreign(path, details)) is not None:
            raise ReportWriteError(f"cannot write the claim report {path}: {why}")
    except BaseException:
        remove_staging(path, stage.name)
        raise
    written.left_alone = commit(
        path, run_id, [written.json, *written.figures, path, *([details] if written.details else [])]
    )  # an old details file goes only when the manifest records it with its present content


def _placeable(report: Path, figures: list[Path], problems: list[str]) -> list[Path]:
    """Return the figures that may be moved into place: none over a file or folder claimcheck did not write (the
    problems name each relative to the report's folder: the markdown carries no path of the machine)."""
    folder = figure_dir(report)
    if folder.exists() and not folder.is_dir():
        problems.append(f"no figure is shown: {folder.name} is a file, not a folder")
        return []
    out = []
    for p in figures:
        if (why := foreign(report, p)) is None:
            out.append(p)
        else:
            where = p.relative_to(report.parent).as_posix()
            problems.append(f"figure {p.name} is not shown: {why.replace(str(p), where)}")
    return out


def markdown_files(
    run: RunData, path: Path, figure_folder: str, extra: list[str], shown: set[str] | None
) -> dict[str, str]:
    """Return the markdown of the report at ``path`` by file name: the report, and its details file
    (``details_path``) when the whole report would exceed ``MAX_CHARS``."""
    sections = claim_sections(run, figure_folder, shown)  # rendered once, whether the report is whole or split
    whole = render(run, figure_folder=figure_folder, extra=extra, figures=shown, sections=sections)
    if len(whole) <= MAX_CHARS:
        return {path.name: whole}
    details = details_path(path)
    return {
        details.name: DETAILS_MARK + "\n" + render_details(run, sections=sections),
        path.name: render(run, figure_folder=figure_folder, extra=extra, figures=shown, details=details.name),
    }


def write_markdown_files(path: Path, files: dict[str, str]) -> Path | None:
    """Write ``files`` (``markdown_files``' answer for ``path``) beside ``path``; return the details file, or None
    (an earlier details file is then removed only if claimcheck wrote it)."""
    for name, text in files.items():
        write_atomic(path.with_name(name), text)
    details = details_path(path)
    if details.name in files:
        return details
    if owns(path, details):
        details.unlink()
        forget_written(path, [details])
    return None


def foreign_details(path: Path, files: dict[str, str]) -> str | None:
    """Return why writing ``files`` beside ``path`` would replace a details file claimcheck did not write
    (``owns``: its first line proves nothing), or None."""
    details = details_path(path)
    if details.name not in files or not os.path.lexists(details):
        return None
    if details.is_symlink() or not details.is_file():
        return f"{details} is a symbolic link, a folder or a device"
    if owns(path, details):
        return None
    return f"{details} exists and was not written by claimcheck (no manifest beside {path.name} records it)"
