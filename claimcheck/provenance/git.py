"""Run git for the core: every git call of claimcheck.provenance goes through ``run``."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

_COMMIT_LINE = re.compile(r"([0-9a-f]{40})(?: (.*))?")


def run(cwd: Path, *args: str, data: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd`` with ``data`` on its standard input."""
    return subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True, timeout=timeout, check=False)


def output(cwd: Path, *args: str) -> str | None:
    """Return what ``git args`` printed, or None when it failed."""
    done = run(cwd, *args)
    return done.stdout.decode(errors="replace") if done.returncode == 0 else None


def git_root(path: Path) -> Path | None:
    """Return the top of the git work tree holding ``path``, or None (no git, or not a repository)."""
    folder = path if path.is_dir() else path.parent
    if shutil.which("git") is None or not folder.exists():
        return None
    top = (output(folder, "rev-parse", "--show-toplevel") or "").strip()
    return Path(top) if top else None


def is_shallow(root: Path) -> bool:
    """Return whether the repository at ``root`` is a shallow clone (its history cut at some depth)."""
    return (output(root, "rev-parse", "--is-shallow-repository") or "").strip() == "true"


def log_files(root: Path, *args: str) -> tuple[list[tuple[str, str, str]], str | None]:
    """Return (commit, subject, file) for each file each commit of ``git log --name-only args`` names, and git's
    error when the log failed (then there are no rows)."""
    done = run(root, "log", "--format=%H %s", "--name-only", *args)
    if done.returncode != 0:
        return [], done.stderr.decode(errors="replace")
    rows, commit, subject = [], "", ""
    for line in done.stdout.decode(errors="replace").splitlines():
        if head := _COMMIT_LINE.fullmatch(line):
            commit, subject = head[1], head[2] or ""
        elif line.strip():
            rows.append((commit, subject, line.strip()))
    return rows, None


def cat_objects(root: Path, names: Sequence[str]) -> dict[str, tuple[str, bytes]]:
    """Return the type and content of each object git has (one ``git cat-file --batch``); missing ones are left out.

    A commit's content is given as its full id instead (what a short id names)."""
    if not names:
        return {}
    data, found, at = run(root, "cat-file", "--batch", data=("\n".join(names) + "\n").encode()).stdout, {}, 0
    for name in names:
        end = data.find(b"\n", at)
        if end < 0:
            break
        header = data[at:end].decode(errors="replace").split()
        at = end + 1
        if len(header) == 3 and header[2].isdigit():
            size = int(header[2])
            found[name] = (header[1], header[0].encode() if header[1] == "commit" else data[at : at + size])
            at += size + 1
    return found


def ancestry(root: Path, commits: Sequence[str]) -> dict[str, list[str]]:
    """Return each ancestor of ``commits`` (themselves included) with its parents (one ``git rev-list --parents``)."""
    lines = (output(root, "rev-list", "--parents", *commits) or "").splitlines() if commits else []
    return {head: parents for head, *parents in (line.split() for line in lines)}


def descends(commit: str, ancestor: str, parents: Mapping[str, Sequence[str]]) -> bool:
    """Return whether ``ancestor`` is ``commit`` or one of its ancestors in ``parents``."""
    seen, todo = set(), [commit]
    while todo:
        c = todo.pop()
        if c == ancestor:
            return True
        if c not in seen:
            seen.add(c)
            todo.extend(parents.get(c, ()))
    return False
