"""``claimcheck ledger``: register a claim's code, confirm a registration from its run, verify and show the ledger.

``register`` collects the claims with pytest, so the fingerprint is the one a session computes with the suite's
own hooks; ``confirm`` first checks that the run is its registered block's one confirmatory run (``confirm_problems``).
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Callable
from itertools import groupby
from pathlib import Path
from typing import Any

from claimcheck.decide.verdicts import ClaimResult
from claimcheck.errors import ConfigError
from claimcheck.files import sha256_file
from claimcheck.provenance import git
from claimcheck.provenance.fingerprint import SCHEME, decides
from claimcheck.provenance.ledger import (
    Entry,
    Ledger,
    LedgerError,
    append,
    check_git,
    check_history,
    committed_in,
    describe_entry,
    git_root,
    history,
    load_ledger,
    migrate,
    seeds_text,
    today,
)
from claimcheck.pytest.collect import collect
from claimcheck.report.rundata import RunData, load

LEDGER = Path("claims/ledger")  # the default ledger of calibrate --record, ledger confirm, verify and show

Command = Callable[[str, str], argparse.ArgumentParser]


def used_block(ledger: Ledger, claim: str, block: str) -> dict[str, str]:
    """Return {budget: which confirmation ran it} for each budget at which ``block`` of ``claim`` already ran.

    A block's seeds at a budget are drawn once: a second confirmation there would look at seeds
    already seen (legacy confirmations count; their ``confirmed`` text opens with the budget).
    """
    out: dict[str, str] = {}
    for e in ledger.of(claim, "register"):
        for conf in ledger.confirmations(e) if e.get("block") == block else []:
            out.setdefault(str(conf.get("budget")), f"the confirmation of {e.describe()} at {conf.get('budget')}")
    for e in ledger.entries:
        for row in e.get("legacy", []) if e.kind == "migrate" else []:
            if row.get("claim") == claim and row.get("block") == block and row.get("confirmed"):
                out.setdefault(str(row["confirmed"]).split(",")[0], f"legacy v{row.get('version')}")
    return out


def cmd_register(args: argparse.Namespace) -> int:
    """Append a register entry for each collected claim whose code matches no registered version."""
    found = collect(args.paths, args.pytest_args)
    path = args.ledger or found.ledger
    if path is None:
        raise ConfigError("no ledger: the suite sets no claim_ledger; name one with --ledger")
    ledger = load_ledger(path)
    if missing := sorted(set(args.claim) - set(found.claims)):
        raise ConfigError(f"--claim {missing}: not collected; found {sorted(found.claims)}")
    appended = 0
    for cid in [c for c in sorted(found.claims) if not args.claim or c in args.claim]:
        c = found.claims[cid]
        if args.dry_run:
            print(f"{cid}: code {c.code.digest} over {len(c.code.covers)} definitions (engine {c.engine or 'none'})")
            print("  covers: " + ", ".join(c.code.covers))
            print("  stops at: " + (", ".join(c.code.stops) or "nothing"))
            continue
        if (known := ledger.registration(cid, c.code.digest)) is not None:
            print(f"{cid}: unchanged, already registered as {known.describe()}")
            continue
        block = args.block or c.protocol.seeds.block
        fields: dict[str, Any] = {
            "claim": cid,
            "version": c.protocol.version,
            "fingerprint": c.code.digest,
            "scheme": SCHEME,
            "block": block,
            "change": args.change,
            "motivated_by": args.motivated_by,
            "date": today(),
            "commit": (git.output(Path(c.module).parent, "rev-parse", "--short=12", "HEAD") or "unknown").strip(),
            "engine": c.engine,
            "module": Path(c.module).name,
            "covers": list(c.code.covers),
            "decides": decides(c.protocol),
        }
        entry = append(ledger.file_for(cid), "register", fields)
        appended += 1
        print(f"{cid}: registered {entry.describe()} (code {c.code.short})")
        for budget, by in used_block(ledger, cid, block).items():
            print(f"  note: block {block} already ran at {budget} ({by}): a confirmation at {budget} would reuse its "
                  "seeds; confirm at another budget (each budget draws its own block) or give the protocol a new "
                  "Seeds start and block")  # fmt: skip
    if appended:
        print(
            f"{appended} registered: commit the ledger before any confirmatory run (a confirmation must come after it)"
        )
    return 0


def _units(r: ClaimResult) -> set[int]:
    return {int(c.unit) for t in r.tests if t.record for c in t.record.checks if c.unit.isdigit()}


def confirm_problems(run: RunData, r: ClaimResult, reg: Entry, ledger: Ledger, reuse_why: str = "") -> list[str]:
    """Return why ``run`` cannot be the confirmatory run of registration ``reg`` (empty: it can)."""
    env, proto = run.env, r.protocol
    problems = []
    budget = run.drawn()[0]
    if ledger.confirmation(reg, budget) is not None:  # said once: its block ran at this budget by this very entry
        problems.append(
            f"{reg.describe()} is already confirmed at {budget}; a block runs once per version and budget (another "
            "budget draws its own block)"
        )
    elif (used := used_block(ledger, r.claim_id, str(reg.get("block"))).get(budget)) and not reuse_why:
        problems.append(
            f"block {reg.get('block')} already ran at {budget} ({used}), so its seeds were seen; confirm at another "
            "budget, or say why a rerun of seen seeds is acceptable with --reused-block-why (recorded in the entry)"
        )
    if env.get("base seed") != "0":
        problems.append(f"the run used base seed {env.get('base seed')}; the confirmatory block is base seed 0")
    if env.get("seed pool") != "confirmatory":
        problems.append(f"the run drew the {env.get('seed pool')} pool; a confirmation draws the confirmatory one")
    if env.get("git tree dirty") != "False":
        problems.append(f"the run's git tree was not clean (git tree dirty: {env.get('git tree dirty')})")
    if run.incomplete:
        problems.append("the run is incomplete")
    position = env.get("budget position", "")
    if proto is not None and position.isdigit():
        block = set(proto.seed_list(0, budget, 0, "confirmatory", int(position)))
        stray = sorted(_units(r) - block)
        if stray or not _units(r):
            problems.append(f"units {stray[:5] or 'none'} are not of block {reg.get('block')} at {budget}")
    else:
        problems.append("the run does not say its budget position (a run of an older claimcheck)")
    root = git_root(reg.file)
    first = committed_in(root, reg.file, reg.hash) if root is not None else None
    if root is None and shutil.which("git") is None:
        problems.append("git is not available here: a confirmation must show its registration came first")
    elif root is None:
        problems.append(
            f"the ledger {reg.file} is not in a git repository, so nothing shows that {reg.describe()} came before "
            "the run: make the suite a repository (git init), commit the ledger, run the block from a clean "
            "tree, then confirm"
        )
    elif first is None:
        problems.append(f"{reg.describe()} is not committed; commit the ledger, then run the block")
    elif git.run(root, "merge-base", "--is-ancestor", first, env.get("git commit", "")).returncode != 0:
        problems.append(f"the run's commit {env.get('git commit')} does not descend from {first[:12]}")
    return problems


def _result(r: ClaimResult) -> str:
    """Return the confirmation's result text: the verdict's reason and each control's status and rate."""
    controls = [f"control {c.name}: {c.status}" + (f", {c.rate.format()}" if c.rate else "") for c in r.controls]
    return "; ".join([r.reason, *controls])[:1500]


def cmd_confirm(args: argparse.Namespace) -> int:
    """Append a confirm entry for each claim of the run that ran its registered block; refuse with the reasons."""
    run = load(args.run)
    run_sha256 = sha256_file(Path(args.run))  # the evidence the confirmation names
    ledger = load_ledger(args.ledger)
    refused = 0
    results = run.results()
    if unknown := sorted(set(args.claim) - {r.claim_id for r in results}):
        raise ConfigError(
            f"--claim {', '.join(unknown)}: not in the run {args.run}; it holds "
            f"{', '.join(sorted(r.claim_id for r in results)) or 'no claim'}"
        )
    for r in [r for r in results if not args.claim or r.claim_id in args.claim]:
        code = run.code.get(r.claim_id, {})
        reg = ledger.registration(r.claim_id, code.get("fingerprint", ""))
        problems = confirm_problems(run, r, reg, ledger, args.reused_block_why) if reg is not None else []
        if reg is None:
            problems = [f"its code ({code.get('fingerprint', 'unknown')[:12]}) matches no registration"]
        if problems:
            refused += 1
            print(f"{r.claim_id}: not confirmed: " + "; ".join(problems))
            continue
        assert reg is not None and r.protocol is not None
        fields = {
            "claim": r.claim_id,
            "registration": reg.hash,
            "budget": run.drawn()[0],
            "base_seed": 0,
            "pool": "confirmatory",
            "seeds": seeds_text(sorted(_units(r))),
            "commit": run.env.get("git commit", ""),
            "engine": code.get("engine", ""),
            "date": today(),
            "verdict": r.verdict.value,
            "result": _result(r),
            "run_id": run.env.get("run id", ""),
            "run_sha256": run_sha256,
            **({"reused_block": args.reused_block_why} if args.reused_block_why else {}),
        }
        entry = append(reg.file, "confirm", fields)
        print(f"{r.claim_id}: confirmed {reg.describe()} by {entry.describe()}: {r.verdict.value}")
    return 1 if refused else 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify every chain of the ledger and each confirmation against git; exit 1 naming what is broken."""
    try:
        ledger = load_ledger(args.ledger)
        notes = check_history(ledger) + check_git(ledger)
    except LedgerError as e:
        print(f"ledger ERROR: {e}")
        return 1
    files = len({e.file for e in ledger.entries})
    print(f"{args.ledger}: {files} file(s), {len(ledger.entries)} entries: every hash chain holds")
    if ledger.committed is not None:
        pending = [entry for entry in ledger.entries if entry.hash not in ledger.committed]
        if ledger.history_checked:
            print(f"every committed version is a prefix of the file now; {len(pending)} entries not committed yet")
        else:
            print(
                "the git history could NOT be checked (a shallow clone holds only its last commits): the versions "
                f"it holds are prefixes of the file now; {len(pending)} entries not committed yet"
            )
        for entry in pending:
            print(f"pending: {entry.describe()} (commit the ledger file; until then it confirms nothing)")
    for n in notes:
        print(f"note: {n}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Print the ledger's entries, or one claim's history (legacy versions included)."""
    ledger = load_ledger(args.ledger)
    unknown = [cid for cid in args.claim if not history(ledger, cid)]
    if unknown:  # an empty history and an id the ledger never held must not look the same
        known = sorted({str(e.get("claim")) for e in ledger.entries if e.get("claim")})
        raise ConfigError(f"--claim {', '.join(unknown)}: no entry in the ledger; it holds {', '.join(known)}")
    if args.claim:
        for cid in args.claim:
            print(f"{cid}:")
            for line in history(ledger, cid):
                print(f"  {line}")
        return 0
    for file, entries in groupby(ledger.entries, key=lambda e: e.file):
        print(f"{file}:")
        for e in entries:
            print(f"  {describe_entry(e)}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    """Convert ledger files of the older format, each as a chain that opens with a migrate entry."""
    for path in args.files:
        entry = migrate(path)
        print(f"{path}: {entry.describe()}: {len(entry.get('legacy', []))} legacy versions kept")
    return 0


def _ledger_path(text: str) -> Path:
    """Return the ledger a command-line path names: a suite folder that holds ``ledger/`` names that folder."""
    path = Path(text)
    return path / "ledger" if path.is_dir() and (path / "ledger").is_dir() else path


def add_commands(command: Command) -> None:
    """Add ``claimcheck ledger ...`` to the command line (``command(name, help)`` makes a subcommand)."""
    top = command("ledger", "register, confirm, verify and show the ledger of claim versions")
    sub = top.add_subparsers(dest="ledger_command", required=True, metavar="ACTION")

    def action(name: str, text: str, func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        p.set_defaults(func=func)
        return p

    r = action("register", "register each claim whose code matches no registered version", cmd_register)
    r.add_argument("paths", nargs="+", help="claim modules or folders, as given to pytest (e.g. claims)")
    r.add_argument("--change", required=True, help="what changed since the last registered version")
    r.add_argument("--motivated-by", required=True, help="which results or review motivated the change")
    r.add_argument("--block", default="", help="the confirmatory block's name (default: the protocol's)")
    r.add_argument("--claim", action="append", default=[], help="register only this claim (repeatable)")
    r.add_argument("--ledger", type=Path, help="the ledger file or folder (default: the suite's claim_ledger)")
    r.add_argument("--dry-run", action="store_true", help="print each fingerprint and what it covers; append nothing")
    c = action("confirm", "record a run as the confirmatory run of the registrations its claims match", cmd_confirm)
    c.add_argument("run", type=Path, help="the .json written next to the run's claim report")
    c.add_argument("--claim", action="append", default=[], help="confirm only this claim (repeatable)")
    text = "confirm on a block that already ran at this budget, for this recorded reason (shown with the state)"
    c.add_argument("--reused-block-why", default="", metavar="TEXT", help=text)
    c.add_argument("--ledger", type=_ledger_path, default=LEDGER, help="the ledger (default claims/ledger)")
    text = "check every hash chain, each file against its git history, and each confirmation"
    v = action("verify", text, cmd_verify)
    v.add_argument("ledger", type=_ledger_path, nargs="?", default=LEDGER, help="default claims/ledger")
    s = action("show", "print the ledger's entries, or one claim's history", cmd_show)
    s.add_argument("ledger", type=_ledger_path, nargs="?", default=LEDGER, help="default claims/ledger")
    s.add_argument("--claim", action="append", default=[], help="show this claim's history (repeatable)")
    m = action("migrate", "convert ledger files of the older format ([[version]] tables)", cmd_migrate)
    m.add_argument("files", type=Path, nargs="+", help="the old ledger files")
