"""Remember that a ledger was verified: the same files on the same git history need not be checked again.

Verifying the ledger (``load_ledger``, ``check_history``, ``check_git``) parses every committed
version of every ledger file, about 0.7 s of each warm rerun of this suite. Its outcome is a
function of the ledger files' bytes, the commit at HEAD (which names its whole history), whether
the clone is shallow, the Python, and the code that checks (``ledger.py`` and this module):
``memo_key`` digests all of them, and a verification that passed is kept under that key in the
cache folder, sealed with the cache's secret (``claimcheck.cachefile``) as a result entry is. A
kept verification is read back only when every one of those is unchanged, and its entries are
rebuilt through the ledger's own chain check. A verification that failed is never kept: the next
run checks again and raises again.

What a kept verification can miss: a commit that a confirmation names, absent when it was checked,
that arrived later without HEAD moving (a fetch of another branch); the note that it could not be
checked stays until HEAD moves. Commits are immutable, so what was shown stays shown.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from claimcheck import ledger as ledger_module
from claimcheck.cachefile import NotReadable, cache_secret, read_regular, remove_sealed, seal, unseal
from claimcheck.errors import ConfigError
from claimcheck.files import write_atomic
from claimcheck.ledger import Ledger, check_git, check_history, ledger_files, ledger_of, read_ledger_files

FOLDER = "ledger-checks"  # under the results cache folder
SEAL = b"claimcheck-ledger-check/1 hmac-sha256\n"


def memo_key(path: Path) -> str | None:
    """Return the digest naming a verification of the ledger at ``path``, or None (no git: nothing to key on)."""
    folder = path if path.is_dir() else path.parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel", "--is-shallow-repository", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or len(out.stdout.split()) != 3:
        return None
    h = hashlib.sha256(f"{out.stdout}\0{sys.version}\0".encode())
    for code in (ledger_module.__file__, __file__):  # the checks, and how they are kept
        h.update(Path(code).read_bytes())
    for f in ledger_files(path) if path.exists() else []:
        h.update(b"\0" + str(f).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def verified(path: Path, option: str, cache: Path | None) -> Ledger:
    """Return the ledger at ``path``, its chains verified and checked against git, or as kept from a verification
    of the same files on the same history in ``cache`` (None: check every time, keep nothing).

    Raise what ``load_ledger``, ``check_history`` and ``check_git`` raise.
    """
    key = memo_key(path) if cache is not None else None
    if cache is not None and key is not None:
        kept = recall(cache, key, path, option)
        if kept is not None:
            return kept
    raws = read_ledger_files(path, option)
    ledger = ledger_of(path, raws, option)
    ledger.notes += check_history(ledger)
    ledger.notes += check_git(ledger)
    if cache is not None and key is not None:
        keep(cache, key, ledger, [(str(f), raw) for f, raw in raws])
    return ledger


def recall(cache: Path, key: str, path: Path, option: str) -> Ledger | None:
    """Return the ledger verified under ``key``, or None when none was kept (or it is damaged or not sealed)."""
    file = cache / FOLDER / f"{key}.json"
    try:
        data = read_regular(file)
        if data is None:
            return None
        payload, sealed = unseal(SEAL, data, cache_secret(cache))
        kept = json.loads(payload) if sealed else None
        if not isinstance(kept, dict) or kept.get("key") != key:
            return None
        ledger = ledger_of(path, [(Path(name), raw) for name, raw in kept["files"]], option)
        ledger.notes, ledger.committed = list(kept["notes"]), set(kept["committed"])
    except (NotReadable, OSError, ValueError, KeyError, TypeError, ConfigError):
        return None
    return ledger


def keep(cache: Path, key: str, ledger: Ledger, raws: list[tuple[str, Any]]) -> None:
    """Keep a verification that passed under ``key`` (best effort: a cache that cannot be written keeps nothing)."""
    body = {"key": key, "notes": ledger.notes, "committed": sorted(ledger.committed or ()), "files": raws}
    try:
        (cache / FOLDER).mkdir(parents=True, exist_ok=True)
        write_atomic(cache / FOLDER / f"{key}.json", seal(SEAL, json.dumps(body).encode(), cache_secret(cache)))
    except OSError:
        return


def clear(cache: Path) -> int:
    """Delete every kept verification in ``cache`` (its name and its seal line); return how many.

    ``--claim-cache=clear`` empties the cache of results, figures and these; any other file is left.
    """
    return remove_sealed(cache / FOLDER, ".json", SEAL)
