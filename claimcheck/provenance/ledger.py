"""Keep the ledger of claim versions: a hash chain of entries, appended and never edited, anchored in git.

A ledger is a TOML file or a folder of them, each a chain of ``[[entry]]`` tables (kinds ``REQUIRED``);
docs/protocols.md ("The ledger: a hash chain", "States") says what each entry holds and how a claim's
state and the git checks (``check_history``, ``check_git``) read it."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import tomli_w

from claimcheck.decide.calibration import PartCalibration, decision_digest, ledger_results
from claimcheck.errors import ConfigError
from claimcheck.files import loads_toml
from claimcheck.provenance import git
from claimcheck.provenance.git import git_root as git_root  # the CLI reads it here

SCHEMA = "claimcheck-ledger/1"
CODE_SCHEME = "claimcheck-code/2"  # fingerprint.SCHEME: a registration of another scheme never matches
_STR, _INT = str, int
REQUIRED: dict[str, dict[str, type]] = {
    "register": {
        "claim": _STR, "version": _INT, "fingerprint": _STR, "scheme": _STR, "block": _STR, "change": _STR,
        "motivated_by": _STR, "date": _STR,
    },
    "confirm": {
        "claim": _STR, "registration": _STR, "budget": _STR, "base_seed": _INT, "pool": _STR, "seeds": _STR,
        "commit": _STR, "engine": _STR, "date": _STR, "verdict": _STR, "result": _STR,
    },
    "calibrate": {"claim": _STR, "part": _STR, "fingerprint": _STR, "date": _STR},
    "migrate": {"source": _STR, "source_sha256": _STR, "date": _STR, "note": _STR},
}  # fmt: skip
HEADER = (
    "# A claimcheck ledger ({schema}): a hash chain of entries, appended and never edited.\n"
    "# Each [[entry]] holds its kind and fields, prev (the hash of the entry before it) and hash (the sha256\n"
    "# of its whole content). `claimcheck ledger verify` checks the chain; `claimcheck ledger show` prints it.\n\n"
)
StateKind = Literal["confirmed", "registered", "changed"]


class LedgerError(ConfigError):
    """The ledger is broken: an entry was edited, removed or reordered, or git contradicts it."""


@dataclass(frozen=True)
class Entry:
    """One entry of a ledger file, as read (``index`` counts from 1 in its file)."""

    kind: str
    data: dict[str, Any]
    prev: str
    hash: str
    file: Path
    index: int

    def get(self, name: str, default: Any = "") -> Any:
        return self.data.get(name, default)

    def describe(self) -> str:
        """Return e.g. ``C1.toml entry #3 (register C1 v3, 5f2a0c1d)``."""
        version = f"v{self.get('version')}" if self.kind == "register" else ""
        what = " ".join(str(x) for x in (self.kind, self.get("claim"), version) if x)
        return f"{self.file.name} entry #{self.index} ({what}, {self.hash[:8]})"


@dataclass(frozen=True)
class State:
    """Where a claim's code stands in the ledger, and the sentence the report shows."""

    kind: StateKind
    text: str  # "<kind>: ..." (the report shows the word before the colon in its tables)
    registration: Entry | None = None
    confirmation: Entry | None = None


@dataclass
class Ledger:
    """Every entry of a ledger (file or folder), chains verified."""

    path: Path | None
    entries: list[Entry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what could not be checked, and why
    committed: set[str] | None = None  # hashes of the entries committed at HEAD (None: not checked against git)
    history_checked: bool = False  # check_history walked the ledger's whole git history (False: not, or shallow)
    unproven: dict[str, str] = field(default_factory=dict)  # confirmation hash -> why git does not show its run

    def file_for(self, claim: str) -> Path:
        """Return the file a new entry of ``claim`` goes to: ``<folder>/<claim>.toml``, or the ledger file."""
        if self.path is None:
            raise ConfigError("no ledger is set; name one with --claim-ledger (ini claim_ledger)")
        return self.path if self.path.suffix == ".toml" else self.path / f"{claim}.toml"

    def of(self, claim: str, kind: str) -> list[Entry]:
        return [e for e in self.entries if e.kind == kind and e.get("claim") == claim]

    def by_hash(self, digest: str) -> Entry | None:
        return next((e for e in self.entries if e.hash == digest), None)

    def registration(self, claim: str, fingerprint: str) -> Entry | None:
        """Return the latest registration of ``claim`` whose code fingerprint is ``fingerprint``."""
        wanted = (fingerprint, CODE_SCHEME)
        found = [e for e in self.of(claim, "register") if (e.get("fingerprint"), e.get("scheme")) == wanted]
        return found[-1] if found else None

    def confirmations(self, registration: Entry) -> list[Entry]:
        """Return the confirmations of ``registration`` in ledger order: at most one per budget (each its own seeds)."""
        return [e for e in self.entries if e.kind == "confirm" and e.get("registration") == registration.hash]

    def confirmation(self, registration: Entry, budget: str | None = None) -> Entry | None:
        found = (e for e in self.confirmations(registration) if budget is None or e.get("budget") == budget)
        return next(found, None)

    def state(self, claim: str, fingerprint: str, engine: str = "") -> State:
        """Return whether ``claim``'s code (``fingerprint``) is confirmed, registered or changed, in words.

        ``engine`` (this run's engine identity) is shown beside the confirmation's; another one leaves it standing."""
        where = self.file_for(claim).name if self.path is not None else "the ledger"
        reg = self.registration(claim, fingerprint)
        if reg is None:
            last = self.of(claim, "register")
            before = f"; last registered: v{last[-1].get('version')} on {last[-1].get('date')}" if last else ""
            return State(
                "changed",
                f"changed: the code that decides {claim} (fingerprint {fingerprint[:12]}) matches no registered "
                f"version in {where}{before}; register it (claimcheck ledger register) before its confirmatory run",
            )
        code = f"v{reg.get('version')} (code {fingerprint[:12]}, registered {reg.get('date')})"
        now = f"this run: engine {engine}" if engine else "this run: no engine identity"
        shown = [e for e in self.confirmations(reg) if e.hash not in self.unproven]
        unproven = [e for e in self.confirmations(reg) if e.hash in self.unproven]
        if not shown:
            why = (
                f", unconfirmed: {self.unproven[unproven[0].hash]}; a confirmation counts only when git shows its "
                "run's commit after the registration's"
                if unproven
                else f", not confirmed: block {reg.get('block')} has not run at base seed 0 (exploratory until it has)"
            )
            return State("registered", f"registered: {code}{why}; {now}", reg)
        conf = shown[0]
        if self.committed is not None and conf.hash not in self.committed:
            pending = f"its confirmation ({conf.describe()}: {conf.get('verdict')}) is pending: it is not committed yet"
            why = f"; {pending}, so it confirms nothing until the ledger file is committed"
            return State("registered", f"registered: {code}{why}; {now}", reg)
        same = "" if not engine or engine == conf.get("engine") else " (another engine: the confirmation stands)"
        if conf.get("reused_block"):
            same += f"; its block had run before at {conf.get('budget')} ({conf.get('reused_block')})"
        same += "".join(
            f"; also confirmed at {more.get('budget')}, base seed {more.get('base_seed')} (commit "
            f"{more.get('commit')}, {more.get('date')}: {more.get('verdict')})"
            for more in shown[1:]
            if self.committed is None or more.hash in self.committed
        )
        return State(
            "confirmed",
            f"confirmed: {code} at {conf.get('budget')}, base seed {conf.get('base_seed')}, on engine "
            f"{conf.get('engine') or 'unknown'} (commit {conf.get('commit')}, {conf.get('date')}: "
            f"{conf.get('verdict')}); {now}{same}",
            reg,
            conf,
        )


EMPTY = Ledger(None)


# --- reading ---------------------------------------------------------------------------------------


def content_hash(entry: Mapping[str, Any]) -> str:
    """Return the sha256 of an entry's content (every field but ``hash``) as canonical JSON."""
    body = {k: v for k, v in entry.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def ledger_files(path: Path) -> list[Path]:
    return sorted(path.glob("*.toml")) if path.is_dir() else [path]


def load_ledger(path: Path, option: str = "claim_ledger") -> Ledger:
    """Read a ledger file, or every ``*.toml`` in a ledger folder, and verify each file's chain (LedgerError)."""
    if not (path.is_dir() or path.is_file()):
        if path.suffix != ".toml":
            raise ConfigError(f"{option}: the ledger {path} does not exist; create the folder or fix the path")
        return Ledger(path)
    for f in (files := ledger_files(path)):
        _inside_repository(f, option)  # every file first: a link out of the repository is named before any content
    raws = [(f, read_raw(f, option)) for f in files]
    return Ledger(path, [e for f, raw in raws for e in entries_of(raw, f, option)])


def _inside_repository(file: Path, option: str) -> None:
    """Raise ConfigError naming ``file`` when it is a symbolic link to a file outside its git repository."""
    root = git_root(file.parent) if file.is_symlink() else None
    if root is not None and not (target := file.resolve()).is_relative_to(root.resolve()):
        raise ConfigError(
            f"{option}: the ledger file {file} is a symbolic link to {target}, outside the git repository {root}: "
            "its history cannot be checked there; keep the ledger file itself in the repository (--claim-ledger)"
        )


def _relative(root: Path, file: Path) -> str:
    """Return ``file``'s path in the repository ``root``; raise ConfigError naming it when it lies outside."""
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise ConfigError(
            f"--claim-ledger: the ledger file {file} lies outside the git repository {root} (a symbolic link?): its "
            "history cannot be checked; keep the ledger file itself in the repository"
        ) from None


def read_file(path: Path, option: str = "claim_ledger") -> list[Entry]:
    return entries_of(read_raw(path, option), path, option)


def read_raw(path: Path, option: str = "claim_ledger") -> dict[str, Any]:
    try:
        return loads_toml(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{option}: cannot read the ledger {path} ({e.strerror}); fix the path") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{option}: the ledger {path} is not valid TOML ({e})") from None
    except RecursionError:
        raise ConfigError(
            f"{option}: the ledger {path} nests arrays or tables too deeply to be read (a ledger holds flat "
            "[[entry]] tables); restore the file from git (--claim-ledger)"
        ) from None


def entries_of(raw: Mapping[str, Any], path: Path, option: str = "claim_ledger") -> list[Entry]:
    if "version" in raw and "entry" not in raw:
        raise ConfigError(
            f"{option}: {path} is a ledger of the older format ([[version]] tables, no hash chain); convert it, as a "
            f"recorded entry, with: claimcheck ledger migrate {path}"
        )
    rows = raw.get("entry", [])
    if not isinstance(rows, list) or set(raw) - {"entry"}:
        raise ConfigError(f"{option}: {path}: a ledger holds only [[entry]] tables, found {sorted(raw)}")
    out: list[Entry] = []
    for i, row in enumerate(rows, 1):
        entry, prev = _entry(row, path, i, option), out[-1].hash if out else ""
        which = f"ledger {path}: entry #{i} ({entry.kind} {entry.get('claim')})"
        if entry.hash != (digest := content_hash(row)):
            raise LedgerError(
                f"{which} does not match its hash (stored {entry.hash[:12]}, content gives {digest[:12]}): it was "
                "edited after it was written. Entries are appended, never edited: restore the file from git and "
                "append a new entry instead"
            )
        if entry.prev != prev:
            raise LedgerError(
                f"{which} follows {entry.prev[:12] or 'nothing'}, but the entry before it is {prev[:12] or 'none'}: "
                "an entry was removed, inserted or reordered. Restore the file from git"
            )
        out.append(entry)
    return out


def _entry(row: Any, path: Path, i: int, option: str) -> Entry:
    where = f"{option}: {path}: [[entry]] #{i}"
    if not isinstance(row, dict):
        raise ConfigError(f"{where} is not a table")
    kind = row.get("kind")
    if kind not in REQUIRED:
        raise ConfigError(f"{where}: kind must be one of {sorted(REQUIRED)}, got {kind!r}")
    for name, typ in {**REQUIRED[kind], "prev": str, "hash": str}.items():
        if not isinstance(row.get(name), typ) or isinstance(row.get(name), bool):
            raise ConfigError(f"{where} ({kind}) needs {name} as {typ.__name__}")
    data = {k: v for k, v in row.items() if k not in ("kind", "prev", "hash")}
    return Entry(kind, data, row["prev"], row["hash"], path, i)


# --- writing ---------------------------------------------------------------------------------------


def today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def _normal(value: Any, where: str) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _normal(v, f"{where}.{k}") for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        if any(v is None for v in value):
            raise ConfigError(f"ledger entry field {where}: TOML has no null; leave the item out")
        return [_normal(v, where) for v in value]
    if isinstance(value, bool | int | float | str):
        return value
    raise ConfigError(f"ledger entry field {where}: {type(value).__name__} cannot be written; give plain data")


def render_entry(entry: Mapping[str, Any]) -> str:
    """Return one entry as TOML (``tomli_w``): an ``[[entry]]`` table (its content is hashed, never its text)."""
    return tomli_w.dumps({"entry": [dict(entry)]})


def append(path: Path, kind: str, fields: Mapping[str, Any]) -> Entry:
    """Append an entry of ``kind`` (``fields``: its ``REQUIRED`` ones and any plain data) to ``path``; return it."""
    if kind not in REQUIRED:
        raise ConfigError(f"ledger entry kind must be one of {sorted(REQUIRED)}, got {kind!r}")
    if missing := [n for n, t in REQUIRED[kind].items() if not isinstance(fields.get(n), t)]:
        raise ConfigError(f"a {kind} entry needs {', '.join(missing)} ({', '.join(REQUIRED[kind])} are required)")
    before = read_file(path) if path.exists() else []
    row = {"kind": kind, **_normal({k: v for k, v in fields.items() if k not in ("kind", "prev", "hash")}, kind)}
    row["prev"] = before[-1].hash if before else ""
    row["hash"] = content_hash(row)
    text = render_entry(row)
    if content_hash(loads_toml(text)["entry"][0]) != row["hash"]:  # it must read back as what was hashed
        raise ConfigError(f"a {kind} entry for {path} does not read back as written; give plain data")
    head = "" if path.exists() and path.stat().st_size else HEADER.format(schema=SCHEMA)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(head + ("\n" if before else "") + text)
    return read_file(path)[-1]


def append_calibration(
    ledger: Path, claim: str, part: str, fingerprint: str, results: Mapping[str, Any], date: str = ""
) -> Entry:
    """Append a ``calibrate`` entry: ``part``'s decision (``fingerprint``) run on labelled cases (plain ``results``)."""
    path = Ledger(ledger).file_for(claim)
    fields = {"claim": claim, "part": part, "fingerprint": fingerprint, "date": date or today(), "results": results}
    return append(path, "calibrate", fields)


def migrate(path: Path, date: str = "") -> Entry:
    """Rewrite a ledger file of the older format (``[[version]]`` tables) as a chain opening with a ``migrate`` entry.

    The old versions stay, marked legacy (their fingerprints are of the older scheme)."""
    data = path.read_bytes()
    raw = loads_toml(data.decode("utf-8"))
    if "version" not in raw or "entry" in raw:
        raise ConfigError(f"{path} is not a ledger of the older format ([[version]] tables); nothing to migrate")
    fields = {
        "source": f"{path.name} ([[version]] tables, before {SCHEMA})",
        "source_sha256": hashlib.sha256(data).hexdigest(),
        "date": date or today(),
        "note": "the older ledger, kept as legacy history: its fingerprints hash the declared protocol only "
        "(ClaimProtocol.fingerprint), so no code registered now matches them; its confirmations stand for "
        "the code of their day",
        "legacy": [{**row, "legacy": True} for row in raw["version"]],
    }
    path.rename(path.with_suffix(".toml.migrating"))
    try:
        entry = append(path, "migrate", fields)
    except BaseException:
        path.with_suffix(".toml.migrating").rename(path)
        raise
    path.with_suffix(".toml.migrating").unlink()
    return entry


# --- git -----------------------------------------------------------------------------------------------


def committed_in(root: Path, file: Path, digest: str) -> str | None:
    rel = _relative(root, file)
    commits = (git.output(root, "log", "--format=%H", "--reverse", f"-S{digest}", "--", rel) or "").split()
    return commits[0] if commits else None


def check_git(ledger: Ledger) -> list[str]:
    """Check that each confirmation's registration was committed, unchanged, in an ancestor of its run's commit.

    Raise LedgerError naming the entry on a contradiction; a run's commit git does not have confirms nothing
    (``ledger.unproven`` says why). Return notes on what could not be checked (no git, a shallow clone)."""
    confirms = [e for e in ledger.entries if e.kind == "confirm"]
    if not confirms or ledger.path is None:
        return []
    root = git_root(ledger.path)
    if root is None:
        return [f"git checks skipped: {ledger.path} is not in a git work tree (or git is missing)"]
    pairs = []
    for c in confirms:
        reg = ledger.by_hash(str(c.get("registration")))
        if reg is None or reg.kind != "register":
            raise LedgerError(f"ledger {c.describe()}: it confirms {str(c.get('registration'))[:12]}, no registration")
        pairs.append((c, reg))
    top = root.resolve()
    shallow = git.is_shallow(root)
    rel = {reg.file: _relative(top, reg.file) for _, reg in pairs}
    names = sorted(set(rel.values()))
    log = git.log_files(root, "--full-history", "--reverse", "--", *names)[0]
    versions = {f: [commit for commit, _, name in log if name == f] for f in names}  # the commits changing each file
    runs = sorted({str(c.get("commit")) for c, _ in pairs})
    objects = [f"{commit}:{name}" for name, commits in versions.items() for commit in commits]
    found = git.cat_objects(root, [*objects, *runs])
    full = {r: found[r][1].decode() for r in runs if r in found and found[r][0] == "commit"}  # the run's full id
    parents = git.ancestry(root, sorted(set(full.values())))
    notes = []
    now = {f: f.read_text(encoding="utf-8", errors="replace") for f in rel}
    held: dict[str, tuple[str | None, bool]] = {}  # a registration's first commit, and whether it holds it unchanged
    for c, reg in pairs:
        if reg.hash not in held:
            own = next((t for t in _tables(now[reg.file], reg.hash) if _hashed(t, reg.hash)), None)
            held[reg.hash] = _first_holding(versions[rel[reg.file]], rel[reg.file], reg.hash, found, own)
        first, same = held[reg.hash]
        if first is None:
            raise LedgerError(f"ledger {c.describe()}: its registration {reg.describe()} was never committed")
        if not same:
            raise LedgerError(f"ledger {reg.describe()}: it differs from the entry committed in {first[:12]}")
        run = str(c.get("commit"))
        if full.get(run) not in parents:
            why = f"its confirmation {c.describe()} names commit {run}, not in this repository's history" + (
                " (a shallow clone: fetch the full history with git fetch --unshallow)" if shallow else ""
            )
            ledger.unproven[c.hash] = why
            notes.append(f"{why}: it confirms nothing here")
        elif not git.descends(full[run], first, parents):
            raise LedgerError(
                f"ledger {c.describe()}: its run used commit {run}, which does not descend from {first[:12]}, "
                f"the commit that registered {reg.describe()}: the run is not shown to come after the registration"
            )
    return notes


def _tables(text: str, digest: str) -> list[str]:
    """Return the ``[[entry]]`` tables of ``text`` naming ``digest``, its own (``hash = "digest"``) first."""
    tables = ["[[entry]]" + t.rstrip("\n") for t in text.split("\n[[entry]]")[1:] if digest in t]
    return sorted(tables, key=lambda t: not _hashed(t, digest))  # the others name it as prev


def _hashed(table: str, digest: str) -> bool:
    """Return whether an ``[[entry]]`` table's own keys (before its first sub-table) say ``hash = "digest"``."""
    return f'\nhash = "{digest}"\n' in table.split("\n[", 1)[0] + "\n"


def _first_holding(
    commits: Sequence[str], name: str, digest: str, found: Mapping[str, tuple[str, bytes]], own: str | None
) -> tuple[str | None, bool]:
    """Return the first of ``commits`` whose version of ``name`` holds an entry hashed ``digest``, and whether that
    entry is unchanged (its content hashes to ``digest``).

    ``own``: the entry's own table in the file now, whose hash ``load_ledger`` verified: a committed
    table of the same bytes is the same entry, unparsed; else only the tables naming the digest are parsed, and the
    whole version when those alone are not TOML."""
    for commit in commits:
        kind, data = found.get(f"{commit}:{name}", ("", b""))
        if kind != "blob" or digest.encode() not in data:
            continue
        text = data.decode("utf-8", errors="replace")
        tables = _tables(text, digest)
        if own is not None and own in tables:
            return commit, True
        for source in [*tables, text]:
            try:
                rows = loads_toml(source).get("entry", [])
            except (tomllib.TOMLDecodeError, RecursionError):
                continue
            for row in rows:
                if isinstance(row, dict) and row.get("hash") == digest:
                    return commit, content_hash(row) == digest
    return None, False


def check_history(ledger: Ledger) -> list[str]:
    """Check that every committed version of each ledger file is a prefix of the file now, entry by entry.

    Raise LedgerError naming the commit where the history diverges (an entry removed, reordered, edited or
    re-hashed, a file that held entries gone); every parent of a merge is walked. Set ``ledger.committed``
    (the hashes at HEAD) and ``ledger.history_checked`` (not in a shallow clone); return notes on what was not."""
    if ledger.path is None or not ledger.entries:
        return []
    root = git_root(ledger.path)
    if root is None:
        return [f"git history not checked: {ledger.path} is not in a git work tree (or git is missing)"]
    files = {_relative(root, f): f for f in ledger_files(ledger.path)}
    texts = {rel: f.read_text(encoding="utf-8") for rel, f in files.items()}  # the files now
    hashes = {rel: [e.hash for e in ledger.entries if e.file == f] for rel, f in files.items()}  # verified by load
    spec = _relative(root, ledger.path) if ledger.path.exists() else sorted(files)[0]
    log, error = git.log_files(root, "--full-history", "-m", "--no-renames", "--", spec)
    if error is not None:
        return [f"git history not checked for {ledger.path}: git log failed ({error.strip()[:200]})"]
    folder = ("" if spec in (".", "") else spec.rstrip("/")) if ledger.path.is_dir() else None  # None: one file
    versions: dict[str, list[tuple[str, str]]] = {rel: [] for rel in files}  # file -> [(commit, subject)], newest first
    for commit, subject, name in log:
        head, _, tail = name.rpartition("/")
        ours = name in versions or (head == folder and tail.endswith(".toml"))
        if ours and (commit, subject) not in versions.setdefault(name, []):
            versions[name].append((commit, subject))
    same = {} if folder is not None else _renamed_from(root, spec, versions)  # an older name -> the file now
    commits = sorted({c for vs in versions.values() for c, _ in vs})
    at_head = [f"HEAD:{rel}" for rel in files]
    found = git.cat_objects(root, [f"{c}:{rel}" for rel, vs in versions.items() for c, _ in vs] + commits + at_head)
    blobs = {k: v.decode("utf-8", errors="replace") for k, (kind, v) in found.items() if kind == "blob"}
    notes = []
    shallow = git.is_shallow(root)
    if shallow:
        notes.append(
            f"git history not checked for {ledger.path}: this is a shallow clone, so the versions before its "
            "depth are not here; only the ones it holds were compared (fetch the full history: git fetch --unshallow)"
        )
    for rel, vs in versions.items():
        path = files.get(same.get(rel, rel), root / rel)
        now = hashes.get(same.get(rel, rel), [])
        newer = "the working tree (not committed)" if rel in files else "the working tree (the file is gone)"
        # the last version read: an older one that is its byte prefix is read off it. It starts as the file now,
        # whose entries load_ledger has verified, so the common case (HEAD's version unchanged) parses nothing.
        newer_parsed: tuple[str, list[str]] | tuple[()] = (texts[same.get(rel, rel)], now) if now else ()
        for c, subj in vs:
            text = blobs.get(f"{c}:{rel}")
            if text is None:  # deleted in that commit, or missing from a shallow clone
                if c not in found:
                    notes.append(f"{rel}: the version of commit {c[:12]} could not be read (a shallow clone?)")
                newer = f"commit {c[:12]} ({subj})"
                continue
            old = _prefix_hashes(text, *newer_parsed) if newer_parsed else None
            old = _committed_hashes(text) if old is None else old
            newer_parsed = (text, old) if old is not None else ()
            if old is None:  # the older format: its entries live on in a migrate entry
                break
            if old and same.get(rel, rel) not in files:
                raise LedgerError(
                    f"ledger {path}: the version committed in {c[:12]} ({subj}) holds {len(old)} entries, and the "
                    f"file is gone from the ledger {ledger.path} now (deleted or renamed in {newer}). A ledger is "
                    f"append-only against git: restore the file (git show {c[:12]}:{rel}) and append new entries to it"
                )
            if old != now[: len(old)]:
                at = next(
                    (j for j, (a, b) in enumerate(zip(old, now, strict=False)) if a != b), min(len(old), len(now))
                )
                what = "removed" if at >= len(now) else "edited, re-hashed or reordered"
                raise LedgerError(
                    f"ledger {path}: its history diverges in {newer}: the version committed in {c[:12]} ({subj}) "
                    f"holds {len(old)} entries and is not a prefix of the file now ({len(now)} entries): entry "
                    f"#{at + 1} was {what}. A ledger is append-only against git: restore the committed entries "
                    f"(git show {c[:12]}:{rel}) and append new ones after them"
                )
            newer = f"commit {c[:12]} ({subj})"
    ledger.committed = set()
    for rel in files:  # HEAD's version is usually the file now or a prefix of it: read off the verified entries
        if (text := blobs.get(f"HEAD:{rel}")) is not None:
            held = _prefix_hashes(text, texts[rel], hashes[rel])
            ledger.committed.update(held if held is not None else _committed_hashes(text) or [])
    ledger.history_checked = not shallow
    return notes


def _renamed_from(root: Path, name: str, versions: dict[str, list[tuple[str, str]]]) -> dict[str, str]:
    """Add to ``versions`` the commits of the single-file ledger ``name`` under older names; map each to ``name``."""
    log = git.log_files(root, "--follow", "--", name)[0]
    for commit, subject, old in log:
        if old != name and (commit, subject) not in versions.setdefault(old, []):
            versions[old].append((commit, subject))
    return {old: name for _, _, old in log if old != name}


def _prefix_hashes(text: str, newer: str, hashes: list[str]) -> list[str] | None:
    """Return the hashes of ``text`` read off a newer version it is a byte prefix of, cut at an entry; else None."""
    if not newer.startswith(text) or not (newer[len(text) :].startswith(("[[entry]]", "\n[[entry]]")) or newer == text):
        return None
    lines = f"\n{text}\n"
    count = lines.count("\n[[entry]]\n")  # the lines that are "[[entry]]" (a regex took 0.26 s over the history)
    if "\n[[entry]]\n[[entry]]\n" in lines:  # adjacent ones share a newline, which count() does not see twice
        count = len(re.findall(r"^\[\[entry\]\]$", text, flags=re.M))
    return hashes[:count] if count <= len(hashes) else None


def _committed_hashes(text: str) -> list[str] | None:
    try:
        raw = loads_toml(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return []
    if "entry" not in raw:
        return None
    rows = [r for r in raw["entry"] if isinstance(r, dict)]
    return [str(r.get("hash")) if content_hash(r) == r.get("hash") else "(bad hash)" for r in rows]


def history(ledger: Ledger, claim: str) -> list[str]:
    out = []
    for e in ledger.entries:
        if e.kind == "migrate":
            versions = [r for r in e.get("legacy", []) if isinstance(r, dict) and r.get("claim") == claim]
            out += [f"legacy v{r.get('version')} ({r.get('date')}): {r.get('change')}" for r in versions]
        elif e.get("claim") == claim:
            out.append(describe_entry(e))
    return out


def describe_entry(e: Entry) -> str:
    head = f"#{e.index} {e.kind}"
    if e.kind == "register":
        code = str(e.get("fingerprint"))[:12]
        return f"{head} v{e.get('version')} code {code}, hash {e.hash[:12]} ({e.get('date')}): {e.get('change')}"
    if e.kind == "confirm":
        return (
            f"{head} {str(e.get('registration'))[:12]} at {e.get('budget')}, base seed {e.get('base_seed')}, "
            f"engine {e.get('engine')}, commit {e.get('commit')} ({e.get('date')}): {e.get('verdict')}"
        )
    if e.kind == "calibrate":
        return f"{head} part {e.get('part') or 'claim'} ({e.get('date')})"
    legacy, sha = e.get("legacy", []), str(e.get("source_sha256"))[:12]
    return f"{head} {e.get('source')} ({len(legacy)} legacy versions, sha256 {sha})"


def seeds_text(seeds: Sequence[int]) -> str:
    """Return seeds as runs, e.g. ``211000-211028`` or ``5, 7-9``."""
    out: list[str] = []
    for s in sorted(seeds):
        if out and out[-1].split("-")[-1] == str(s - 1):
            out[-1] = f"{out[-1].split('-')[0]}-{s}"
        else:
            out.append(str(s))
    return ", ".join(out)


def record_in_ledger(ledger: Path, parts: Iterable[PartCalibration]) -> list[Entry]:
    """Append a ``calibrate`` entry to ``ledger`` for each part whose results differ from its latest entry's."""
    if ledger.suffix != ".toml":
        ledger.mkdir(parents=True, exist_ok=True)
    known = load_ledger(ledger) if ledger.exists() else Ledger(ledger)
    added = []
    for pc in parts:
        results = ledger_results(pc)
        latest = [e for e in known.of(pc.claim, "calibrate") if e.get("part") == pc.part]
        if not latest or latest[-1].get("results") != json.loads(json.dumps(results)):
            added.append(append_calibration(ledger, pc.claim, pc.part, decision_digest(pc.decision), results))
    return added


def calibration_entries(ledger: Ledger) -> list[dict[str, Any]]:
    return [
        {**dict(e.get("results", {})), "claim": e.get("claim"), "part": e.get("part"), "date": e.get("date")}
        for e in reversed(ledger.entries)
        if e.kind == "calibrate"
    ]
