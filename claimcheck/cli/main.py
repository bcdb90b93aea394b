"""The ``claimcheck`` command: re-render reports, compare runs, keep a run history, and run the suite many times.

Every place that takes a run's JSON also takes a history entry: its number, or a prefix of its name.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from claimcheck.cli.calibrate import load_protocols, render_calibration
from claimcheck.cli.ledger import LEDGER
from claimcheck.cli.ledger import add_commands as add_ledger_commands
from claimcheck.cli.mutants import Catalogue, Entry, load_catalogue, render_catalogue, run_catalogue
from claimcheck.cli.stability import render_stability, run_seeds, stability
from claimcheck.cli.suite_runs import RunRefused, reused, run_suite
from claimcheck.decide.calibration import RULE_REPS, calibrate_suite
from claimcheck.decide.verdicts import ClaimResult, _claim_sort_key
from claimcheck.errors import ClaimcheckError, ConfigError
from claimcheck.files import write_atomic
from claimcheck.gate.accept import accept
from claimcheck.gate.baseline import compare, render_comparison
from claimcheck.gate.decision import exit_status, judge
from claimcheck.gate.history import list_entries, resolve, save_run, verdict_changes
from claimcheck.provenance.expectations import (
    AUDIT_HEADERS,
    DID_NOT_FINISH,
    NOT_IN_RUN,
    OTHER_BLOCK,
    PinnedAt,
    audit,
    load_expectations,
    merge_pins,
    numerics_label,
    render_pins,
    with_rounding,
)
from claimcheck.provenance.ledger import record_in_ledger
from claimcheck.pytest.options import parse_tolerance
from claimcheck.report.figures import draw_figures
from claimcheck.report.fileset import figure_dir, owns, record_written
from claimcheck.report.markdown import md, render, table_lines
from claimcheck.report.rundata import RunData, load
from claimcheck.report.write import foreign_details, markdown_files, write_markdown_files

_MATRIX_ENV = ("date", "cpu", "gpu", "device", "torch", "budget", "base seed", "git commit")


def _cell(r: ClaimResult | None, cut: bool) -> str:
    """Return a matrix cell: the verdict and its headline statistic, or why there is none."""
    if r is None:
        return "not run"
    if cut or not r.claim_stats:
        return f"**{r.verdict.value}**" + (" (did not finish)" if cut else "")
    return f"**{r.verdict.value}** ({md(r.claim_stats[0].statistic)} {r.claim_stats[0].values.format()})"


def run_heading(env: dict[str, str]) -> str:
    """Return a column head naming a run by what it ran: commit, machine and date."""
    commit = env.get("git commit", "") or "unknown commit"
    dirty = " (dirty)" if env.get("git tree dirty") == "True" else ""
    gpu = env.get("gpu", "none")
    machine = (env.get("cpu", "") or "unknown machine") + (f", {gpu}" if gpu and gpu != "none" else "")
    return f"{commit}{dirty}, {machine}, {env.get('date', '')[:16] or 'no date'}"


def render_matrix(runs: Sequence[tuple[str, RunData]]) -> str:
    """Return markdown: one row per claim, one column per run, each cell the verdict and headline statistic.

    Columns are headed by run (commit, machine, date), told apart by file name when two heads are the same.
    """
    results = [{r.claim_id: r for r in run.results()} for _, run in runs]
    claims = sorted({cid for rs in results for cid in rs}, key=_claim_sort_key)
    heads = [run_heading(run.env) for _, run in runs]
    names = [
        md(h if heads.count(h) == 1 else f"{h}, {Path(src).name}") for h, (src, _) in zip(heads, runs, strict=True)
    ]
    rows = []
    for cid in claims:
        cut = [cid in run.not_run for _, run in runs]  # an interrupted run's claim: its verdict is no finding
        cells = [_cell(rs.get(cid), c) for rs, c in zip(results, cut, strict=True)]
        done = [rs[cid].verdict for rs, c in zip(results, cut, strict=True) if cid in rs and not c]
        agree = "-" if any(cut) and len(done) < 2 else "yes" if len(set(done)) == 1 else "**no**"
        rows.append([md(cid), *cells, agree])
    settings = [["file", *(md(Path(source).name) for source, _ in runs)]]
    settings += [[md(key), *(md(run.env.get(key, "")) for _, run in runs)] for key in _MATRIX_ENV]
    lines = ["# Claim x run matrix", "", *table_lines(["claim", *names, "agree"], rows), "", "## Runs", ""]
    return "\n".join([*lines, *table_lines(["setting", *names], settings)]) + "\n"


def _run_file(spec: str, args: argparse.Namespace) -> Path:
    """Return the run file a command-line argument names: a path or a history entry."""
    return resolve(spec, Path.cwd(), folder=args.history)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


FORCE_HELP = "replace an existing -o file even if claimcheck did not write it"
HISTORY_HELP = "the run history folder (default .claimcheck/history in the current folder)"
Parser = argparse.ArgumentParser
Handler = Callable[[argparse.Namespace], int | None]


def check_output(out: Path | None, force: bool, option: str = "-o") -> None:
    """Raise ClaimcheckError when ``option out`` would replace a file claimcheck did not write (unless ``force``).

    A file is claimcheck's when the manifest beside it (``.<name>.manifest.json``) records it with its present content.
    """
    if out is None or force or not os.path.lexists(out):
        return
    if out.is_dir():
        raise ClaimcheckError(f"{option} {out}: it is a folder; give a file path")
    if not owns(out, out):
        raise ClaimcheckError(
            f"{option} {out}: the file exists and claimcheck did not write it (no manifest beside it records it with "
            "this content), so it is not replaced; choose another path, or add --force to replace it"
        )


def cannot_write(option: str, out: Path, e: OSError) -> ClaimcheckError:
    """Return the one-line error for an ``option out`` that could not be written (read-only, name too long, ...)."""
    where = f" ({e.filename})" if e.filename and str(e.filename) != str(out) else ""
    fix = {
        errno.ENAMETOOLONG: "choose a path with a shorter name",
        errno.ENOENT: f"create its folder (mkdir -p {out.parent}) or choose another path",
        errno.ENOTDIR: f"a part of {out.parent} is a file, not a folder: choose another path",
    }.get(e.errno or 0, "choose a path you can write to")
    return ClaimcheckError(
        f"{option} {out}: cannot write it: {e.strerror or type(e).__name__}{where}; nothing was replaced; {fix}"
    )


def _write_or_print(text: str, out: Path | None, force: bool, option: str = "-o") -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        check_output(out, force, option)
        try:
            write_atomic(out, text)
            record_written(out, [out])
        except OSError as e:
            raise cannot_write(option, out, e) from None
        print(f"wrote {out}", file=sys.stderr)


def _summary_file(args: argparse.Namespace, name: str) -> Path:
    """Return the summary ``name`` in ``--out``; raise ClaimcheckError before any run if either would be refused."""
    out: Path = args.out
    if os.path.lexists(out) and not out.is_dir():
        raise ClaimcheckError(
            f"--out {out}: it is a file, not a folder, and the runs' reports go into it; nothing was run; "
            "give a folder (it is created when missing)"
        )
    check_output(out / name, args.force, "--out")
    return out / name


def _cmd_render(args: argparse.Namespace) -> None:
    source = _run_file(args.run, args)
    run = load(source)
    out: Path | None = args.output
    folder = figure_dir(out if out is not None else source.with_suffix(".md"))
    gated = _gated(run)
    if out is None:
        sys.stdout.write(render(run, figure_folder=folder.name, extra=gated))
        return
    check_output(out, args.force)
    files = markdown_files(run, out, folder.name, gated, None)
    why = None if args.force else foreign_details(out, files)  # None while out's folder is missing
    if why is not None:
        raise ClaimcheckError(
            f"-o {out}: the report is too long for one file, and its per-claim sections go beside it: {why}; "
            "nothing is written; choose another path, or add --force to replace it"
        )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)  # as --claim-report and audit -o do
        _render_files(run, args, out, folder, files)
    except OSError as e:
        raise cannot_write("-o", out, e) from None


def _gated(run: RunData) -> list[str]:
    """Return the comparison section the session wrote into the run (none for a run without a baseline)."""
    return [str(run.gate["section"])] if run.gate.get("section") else []


def _render_files(run: RunData, args: argparse.Namespace, out: Path, folder: Path, files: dict[str, str]) -> None:
    """Draw the figures and write the markdown files of ``claimcheck render -o out``, then record them."""
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as stage:
        figures = draw_figures(run, Path(stage), enabled=not args.no_figures)
        placed = []
        for drawn in figures.written:
            target = folder / drawn.name
            if os.path.lexists(target) and not args.force and not owns(out, target):
                figures.problems.append(f"figure {target} not drawn over: a file claimcheck did not write is there")
                continue
            folder.mkdir(parents=True, exist_ok=True)
            os.replace(drawn, target)
            placed.append(target)
    for text in figures.notes + figures.problems:
        print(f"claimcheck: {text}", file=sys.stderr)
    if not args.no_figures:  # show the figures drawn here, not a file left in the folder (shorter: no new split)
        files = markdown_files(run, out, folder.name, _gated(run), {p.name for p in placed})
    details = write_markdown_files(out, files)
    record_written(out, [out, *placed, *([details] if details else [])])
    beside = f" and {details.name} (the report would exceed a PR comment)" if details else ""
    print(f"wrote {out}{beside}", file=sys.stderr)


def _cmd_matrix(args: argparse.Namespace) -> None:
    files = [_run_file(spec, args) for spec in args.runs]
    _write_or_print(render_matrix([(str(p), load(p)) for p in files]), args.output, args.force)


def _cmd_audit(args: argparse.Namespace) -> int:
    run = load(_run_file(args.run, args))
    drawn = run.drawn()[0]
    budget = args.budget or drawn or "ci"
    if drawn and budget != drawn:  # another budget draws other seeds and sizes: nothing would pair
        raise ClaimcheckError(
            f"--budget {budget}: {args.run} ran budget {drawn}, whose seeds and sizes are not {budget}'s; audit it "
            f"against its own budget (leave --budget out), or rerun at --claim-budget {budget} and audit that run"
        )
    pins, blocks = load_expectations(args.expectations, "--expectations")
    if budget not in pins:
        raise ClaimcheckError(f"--expectations {args.expectations}: no [{budget}] table; name another with --budget")
    at = blocks[budget]
    seed = run.env.get("base seed", "0")
    if not at.covers(int(seed) if seed.isdigit() else -1, run.env.get("seed pool", "confirmatory")):
        raise ClaimcheckError(
            f"{args.run}: drew base seed {seed} ({run.env.get('seed pool', '?')} pool); {args.expectations} pins "
            f"budget {budget} on {at.describe()}: rerun that block here (pytest claims --claim-budget {budget} "
            f"--claim-seed {at.base_seed} --claim-pool {at.pool} --claim-report) and audit that run"
        )
    here = numerics_label(run.env)
    rows = audit(run.results(), pins[budget], at.rounds_as(here), run.not_run)
    outcomes = [row[-1] for row in rows]
    n = outcomes.count
    moved = sum(o in ("moved beyond", "verdict changed", "not recorded") for o in outcomes)
    verdicts = sum(row[1] == "verdict" and row[-1] not in (NOT_IN_RUN, DID_NOT_FINISH) for row in rows)
    notes = [
        f"{n(OTHER_BLOCK)} claim(s) drew another seed block than their pins" if n(OTHER_BLOCK) else "",
        f"{n(NOT_IN_RUN)} pinned claim(s) not in this run" if n(NOT_IN_RUN) else "",
        f"an incomplete run: {n(DID_NOT_FINISH)} claim(s) not audited ({run.incomplete[0]})" if run.incomplete else "",
    ]
    summary = (
        f"audit of {args.run} against {args.expectations} [{budget}] (pinned on {at.numerics or 'unrecorded numerics'}"
        f"; here {here}): {n('same verdict')} of {verdicts} verdicts the same; statistics: {n('identical')} identical, "
        f"{n('within rounding')} within rounding, {n('within tolerance')} within tolerance, "
        f"{sum(o.startswith('chaotic') for o in outcomes)} chaotic (held at the verdict level or by count), "
        f"{moved} moved beyond what the pins allow" + "".join(f"; {note}" for note in notes if note)
    )
    table = "\n".join(table_lines(AUDIT_HEADERS, rows, md))  # the report's own table writer: unpadded markdown
    _write_or_print(f"{md(summary)}\n\n{table}\n", args.output, args.force)
    if args.output is not None or not sys.stdout.isatty():  # on a terminal, the markdown just shown holds it
        print(summary, file=sys.stderr)
    return 1 if moved or OTHER_BLOCK in outcomes else 0


def _cmd_compare(args: argparse.Namespace) -> int:
    base, now = _run_file(args.baseline, args), _run_file(args.run, args)
    comp = compare(load(now), load(base), str(base), parse_tolerance(args.tolerance, "--tolerance"))
    _write_or_print(f"Run: `{md(str(now))}`\n\n" + render_comparison(comp), args.output, args.force)
    gate = judge(comp).exit_code(args.fail) if args.fail else 0  # as the session's --claim-baseline-fail[=worse]
    return exit_status(0, bool(args.exact and comp.differences), gate)


def _cmd_baseline_accept(args: argparse.Namespace) -> None:
    source = _run_file(args.run, args)
    load(source)  # a run file of a schema this claimcheck reads, or RunFileError naming it
    kept = accept(source.read_text(encoding="utf-8"), args.baseline)
    print(f"accepted {source} as the baseline {args.baseline}" + (f"; the old one is kept as {kept}" if kept else ""))


def _cmd_history(args: argparse.Namespace) -> None:
    root = Path.cwd()
    if args.save is not None:
        run = load(args.save)
        path = save_run(args.save.read_text(encoding="utf-8"), root, run.env, folder=args.history)
        print(f"saved {args.save} as {path}")
        return
    entries = list_entries(root, folder=args.history)
    if not entries:
        where = root / (args.history or ".claimcheck/history")
        print(f"no runs saved in {where}; save one with: claimcheck history --save reports/claim-report.json")
        return
    if args.changes:
        runs = []
        for e in entries:  # a claim the run did not finish has no verdict to compare ("")
            run = load(e.path)
            runs.append((e, {r.claim_id: "" if r.claim_id in run.not_run else r.verdict.value for r in run.results()}))
        for e, changed in verdict_changes(runs):
            print(f"{e.name}  commit {e.commit}: {'; '.join(changed) if changed else 'no verdict changed'}")
        return
    for e in entries:
        run = load(e.path)
        verdicts = [r.verdict.value for r in run.results()]
        done = f"{verdicts.count('REPRODUCED')}/{len(verdicts)} reproduced{' (incomplete)' if run.incomplete else ''}"
        print(f"{e.name}  commit {e.commit}  {run.env.get('date', '')}  {run.drawn()[0]}  {done}")


def _reruns(run: RunData, paths: Sequence[Path]) -> list[tuple[str, list[ClaimResult]]]:
    """Load ``--rounding`` runs: the same budget, base seed and pool as ``run``, each under numerics of its own."""
    out = []
    for path in paths:
        other = load(path)
        (budget, seed, pool), want = other.drawn(), run.drawn()
        if (budget, seed, pool) != want:
            raise ClaimcheckError(
                f"--rounding {path}: it ran budget {budget}, base seed {seed} ({pool} pool), the pinned run "
                f"{want[0]}, base seed {want[1]} ({want[2]} pool); a rounding rerun must draw the same seeds: rerun "
                "it with the same --claim-budget, --claim-seed and --claim-pool"
            )
        out.append((numerics_label(other.env), other.results()))
    return out


def _cmd_expectations(args: argparse.Namespace) -> None:
    run = load(args.run)
    if run.incomplete:  # an interrupted run, or one with a claim's test left out, pins what did not finish
        raise ClaimcheckError(
            f"{args.run}: the run is incomplete ({run.incomplete[0]}), so it pins nothing; rerun every test of the "
            "claims to pin, and pin that run"
        )
    ran = run.drawn()[0]
    if ran and args.budget and args.budget != ran:  # the pins of a budget are what a run at that budget gives
        raise ClaimcheckError(
            f"--budget {args.budget}: {args.run} ran budget {ran}, so its values are no pins for {args.budget}; "
            f"pin it as --budget {ran} (or leave --budget out)"
        )
    budget = args.budget or ran or "ci"
    seed = run.env.get("base seed", "0")
    at = PinnedAt(int(seed) if seed.isdigit() else 0, run.env.get("seed pool", "confirmatory"), numerics_label(run.env))
    reruns = _reruns(run, args.rounding)
    rounding = f" --rounding {' '.join(p.name for p in args.rounding)}" if args.rounding else ""
    header = (
        f"What this suite is known to give at budget {budget}, pinned check by check, on {at.describe()}:\n"
        "at another base seed or pool only the verdicts are compared; under other numerics, what the\n"
        "measured rounding spread allows (claimcheck.provenance.expectations).\n"
        f"Written by `claimcheck expectations {args.run.name} --budget {budget}{rounding}` from the run of "
        f"{run.env.get('date', '?')} (commit {run.env.get('git commit', '?')})."
    )
    pins = with_rounding(run.results(), reruns)
    out: Path | None = args.output
    if out is not None and os.path.lexists(out) and not args.force:  # keep the other claims' pins
        note = f"{', '.join(pins) or 'no claim'}: {header.splitlines()[-1]}"
        try:
            merged = merge_pins(out.read_text(encoding="utf-8"), out, budget, pins, note, at)
        except (OSError, UnicodeDecodeError) as e:
            raise ClaimcheckError(f"-o {out}: cannot read it ({e}); choose another path, or add --force") from None
        except ConfigError as e:
            raise ClaimcheckError(
                f"-o {out}: not merged into: {e}; choose another path, or add --force to replace the file"
            ) from None
        write_atomic(out, merged)
        print(f"updated {', '.join(pins) or 'no claim'} in {out}; every other pin is kept", file=sys.stderr)
        return
    _write_or_print(render_pins(budget, pins, header, at), out, force=True)  # a new file, or --force


def _cmd_stability(args: argparse.Namespace) -> None:
    seeds = [args.first + i for i in range(args.base_seeds)]
    summary = _summary_file(args, "stability.md")
    runs = run_seeds(seeds, args.out, args.budget, args.pytest_args, args.targets.split(","), args.jobs)
    text = render_stability(stability(runs), seeds, args.budget)
    _write_or_print(text, summary, args.force, "--out")
    sys.stdout.write(text)


def _cmd_mutants(args: argparse.Namespace) -> None:
    if args.catalogue is not None:
        catalogue = load_catalogue(args.catalogue)
    elif len(args.models) >= 2:
        entries = tuple(Entry(f"model-{i}", "mutant", spec, spec) for i, spec in enumerate(args.models[1:], start=1))
        catalogue = Catalogue(Path("(command line)"), args.models[0], entries)
    else:
        raise ClaimcheckError("mutants: give --catalogue FILE, or a reference model and at least one mutant")

    summary, timings = _summary_file(args, "mutants.md"), args.out / "timings.json"
    seconds, targets = _timings(timings, args.force, args.reuse), args.targets.split(",")

    def runner(name: str, report: Path, extra: Sequence[str], cwd: Path | None) -> tuple[RunData | Exception, float]:
        if args.reuse and report.stem in seconds and (found := reused(report)) is not None:
            return found, seconds[report.stem]
        start = time.monotonic()
        try:
            run: RunData | Exception = run_suite(report, args.budget, targets, [*extra, *args.pytest_args], cwd)
        except RunRefused as e:
            run = e
        seconds[report.stem] = time.monotonic() - start
        write_atomic(timings, json.dumps(seconds, indent=1))
        print(f"[claimcheck] {name}: {seconds[report.stem]:.0f} s", file=sys.stderr, flush=True)
        return run, seconds[report.stem]

    only = [n for n in args.only.split(",") if n] if args.only else []
    refs, judgements = run_catalogue(catalogue, Path.cwd(), args.out, runner, only, args.jobs)
    text = render_catalogue(catalogue, refs, judgements)
    _write_or_print(text, summary, args.force, "--out")
    sys.stdout.write(text)


def _timings(path: Path, force: bool, reuse: bool) -> dict[str, float]:
    """Return the seconds each run took by report name from ``path`` when ``reuse``, else nothing.

    Unless ``force``, raise ClaimcheckError when ``path`` holds anything else (a user's file, a link): runs write it.
    """
    if not os.path.lexists(path):
        return {}
    try:
        data = None if path.is_symlink() else json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    ours = isinstance(data, dict) and all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) for k, v in data.items()
    )
    if not ours and not force:
        raise ClaimcheckError(
            f"--out {path.parent}: {path} is not a table of run times claimcheck wrote, and the runs would write "
            "over it; choose another --out, or add --force to replace it"
        )
    return {str(k): float(v) for k, v in data.items()} if ours and reuse and isinstance(data, dict) else {}


def _cmd_calibrate(args: argparse.Namespace) -> int:
    protocols = load_protocols(args.paths)
    if args.only:
        wanted = {c.strip() for c in args.only.split(",") if c.strip()}
        unknown = sorted(wanted - {p.claim_id for p in protocols})
        if unknown and protocols:
            raise ConfigError(
                f"--only: no claim {', '.join(unknown)} under {', '.join(map(str, args.paths))}; its claims: "
                f"{', '.join(sorted(p.claim_id for p in protocols))} (ids are case-sensitive)"
            )
        protocols = [p for p in protocols if p.claim_id in wanted]
    if not protocols:
        raise ConfigError(f"claimcheck calibrate: no claim protocol found under {', '.join(map(str, args.paths))}")
    for option, path in (("--json", args.json), ("-o", args.output)):  # before the run of minutes, not after it
        check_output(path, args.force, option)

    def progress(pc: Any) -> None:
        print(f"calibrated {pc.claim}/{pc.part}: {pc.status} ({pc.seconds:.1f} s)", file=sys.stderr)

    suite = calibrate_suite(protocols, args.seed, args.cases, args.reps, progress)
    if args.json is not None:
        _write_or_print(json.dumps(suite.to_dict(), indent=1) + "\n", args.json, args.force, "--json")
    if args.record is not None:  # LEDGER when --record names no path: the ledger commands' default too
        added = record_in_ledger(args.record, suite.parts)
        print(
            f"recorded {len(added)} calibration result(s) in the ledger {args.record} "
            f"({len(suite.parts) - len(added)} unchanged since their last entry)",
            file=sys.stderr,
        )
    _write_or_print(render_calibration(suite), args.output, args.force)
    return 1 if args.fail and suite.failing else 0


class _Formatter(argparse.HelpFormatter):
    """Keep each command's help on its name's line: argparse measures the commands without their indent."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog)
        self._action_max_length = 16


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="claimcheck",
        formatter_class=_Formatter,
        description="Re-render claim reports, compare runs, keep a history of runs, run the claim suite many times, "
        "and calibrate its decision rules. Wherever a run's JSON is asked for, an entry of the run history also works: "
        "its number or a prefix of its name (see: claimcheck history).",
        epilog="stability, mutants and ledger register pass everything after -- to pytest. "
        "claimcheck COMMAND --help: its options.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str, func: Handler | None = None) -> Parser:
        p = sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        if func is not None:
            p.set_defaults(func=func)
        return p

    def history(p: Parser) -> None:
        p.add_argument("--history", type=Path, metavar="DIR", help=HISTORY_HELP)

    def output(p: Parser, with_history: bool = True, text: str = "write the markdown here (default: stdout)") -> None:
        p.add_argument("-o", "--output", type=Path, help=text)
        p.add_argument("--force", action="store_true", help=FORCE_HELP)
        if with_history:
            history(p)

    def suite(p: Parser, out: str, written: str) -> None:  # the options of the commands that run the suite
        p.add_argument("--budget", default="ci", help="budget of every run (default ci)")
        p.add_argument("--targets", default="claims", help="comma-separated test paths (default claims)")
        p.add_argument("--out", type=Path, default=Path(f"reports/{out}"), help="folder for the runs' reports")
        p.add_argument("--jobs", type=_positive, default=1, help="suite runs at a time (default 1)")
        p.add_argument("--force", action="store_true", help=f"replace {written}")

    p = command("render", "re-render a report (and its figures) from a run's JSON", _cmd_render)
    p.add_argument("run", help="the .json written next to a claim report, or a history entry")
    output(p, text="write the markdown here (default: stdout, without figures)")
    p.add_argument("--no-figures", action="store_true", help="do not redraw the figures")
    m = command("matrix", "tabulate claims x runs, e.g. one run per machine", _cmd_matrix)
    m.add_argument("runs", nargs="+", help="run .json files or history entries")
    output(m)
    e = command("expectations", "pin a run's verdicts, parts, controls and statistics as TOML", _cmd_expectations)
    e.add_argument("run", type=Path, help="the .json written next to a claim report")
    e.add_argument("--budget", default=None, help="the budget table to write (default: the run's budget)")
    text = (
        "write the TOML here (default: stdout); into an existing expectations file, only this run's claims "
        "are replaced and every other pin is kept"
    )
    e.add_argument("-o", "--output", type=Path, help=text)
    e.add_argument("--force", action="store_true", help="replace an existing -o file whole instead of merging into it")
    text = (
        "runs of the same block under other numerics (ATEN_CPU_CAPABILITY=avx2 or default, another CPU, "
        "--claim-threads): each statistic's rounding spread is measured over them and pinned with it"
    )
    e.add_argument("--rounding", nargs="+", type=Path, default=[], metavar="JSON", help=text)
    text = "hold a run of the pinned block (on new hardware, say) to the expectations, statistic by statistic"
    a = command("audit", text, _cmd_audit)
    a.add_argument("run", help="the run's .json (a run of the block the expectations were pinned on)")
    a.add_argument("--expectations", type=Path, default=Path("claims/expectations.toml"), help="the pins (TOML)")
    a.add_argument("--budget", default=None, help="the budget table (default: the run's budget)")
    output(a)
    c = command("compare", "compare a run with a baseline: verdicts, then statistics", _cmd_compare)
    c.add_argument("baseline", help="the trusted run: a .json file or a history entry")
    c.add_argument("run", help="the run to check: a .json file or a history entry")
    text = "relative tolerance SAME[,CROSS] of the bit-identity check (default 0,0.05: bit for bit on one machine)"
    c.add_argument("--tolerance", default="0,0.05", help=text)
    text = (
        "exit as --claim-baseline-fail does: 13 when a verdict fell or a statistic is worse beyond its margin, "
        "14 when a statistic is undecided or not compared (--fail=worse: 13 only, as --claim-baseline-fail=worse)"
    )
    c.add_argument("--fail", nargs="?", const="all", default="", choices=("all", "worse"), help=text)
    c.add_argument("--exact", action="store_true", help="exit 1 when any verdict or value is not the baseline's")
    output(c)
    b = command("baseline", "manage the regression gate's baseline")
    actions = b.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = actions.add_parser(
        "accept",
        help="accept a run as the new baseline, keeping the old one beside it as <name>.<UTC time>.json",
        description="Write RUN over BASELINE; the old BASELINE is renamed to <name>.<UTC time>.json beside it.",
    )
    a.add_argument("run", help="the run to accept: a .json file or a history entry")
    a.add_argument("baseline", type=Path, help="the baseline .json file (created when missing)")
    history(a)
    a.set_defaults(func=_cmd_baseline_accept)
    h = command("history", "list the saved runs, or save one", _cmd_history)
    h.add_argument("--save", type=Path, metavar="RUN.json", help="save this run as the next entry of its machine")
    text = "list, entry by entry, the verdicts that changed since the machine's last"
    h.add_argument("--changes", action="store_true", help=text)
    history(h)
    text = "run the suite over K base seeds (K independent replications); count verdict flips"
    s = command("stability", text, _cmd_stability)
    s.add_argument("--base-seeds", type=_positive, default=20, metavar="K", help="how many base seeds (default 20)")
    s.add_argument("--first", type=int, default=0, help="the first base seed (default 0)")
    suite(s, "stability", "<out>/stability.md even if claimcheck did not write it")
    text = "run a catalogue of mutants and benign edits; say what caught each (the mutation score)"
    u = command("mutants", text, _cmd_mutants)
    text = "without --catalogue: the trusted model, then broken ones (package.module:factory or file.py:factory)"
    u.add_argument("models", nargs="*", metavar="MODEL", help=text)
    u.add_argument("--catalogue", type=Path, metavar="TOML", help="the catalogue of mutants and benign edits")
    u.add_argument("--only", default="", metavar="NAMES", help="comma-separated entries of the catalogue to run")
    text = "judge the runs an earlier call left in --out again instead of rerunning them"
    u.add_argument("--reuse", action="store_true", help=text)
    suite(u, "mutants", "<out>/mutants.md and <out>/timings.json even if claimcheck did not write them")
    text = "run every part's decision on cases whose answer is known; simulate the claim rule"
    k = command("calibrate", text, _cmd_calibrate)
    k.add_argument("paths", nargs="*", type=Path, default=[Path("claims")], help="claim modules or folders (claims)")
    k.add_argument("--json", type=Path, metavar="PATH", help="write every count, bound and wrong case here")
    text = (
        f"append each changed part's result to the ledger as a calibrate entry (default {LEDGER}, as the "
        "ledger commands; give your suite's claim_ledger), where the report reads it"
    )
    k.add_argument("--record", type=Path, nargs="?", const=LEDGER, metavar="PATH", help=text)
    k.add_argument("--cases", type=_positive, help="cases per family instead of each family's own count (a quick look)")
    k.add_argument("--reps", type=_positive, default=RULE_REPS, help=f"simulated claims per rule row ({RULE_REPS})")
    k.add_argument("--seed", type=int, default=0, help="seed of the case generators (default 0)")
    k.add_argument("--only", metavar="IDS", help="comma-separated claim ids to calibrate (default: all)")
    k.add_argument("--fail", action="store_true", help="exit 1 when a part fails calibration")
    output(k, with_history=False)
    add_ledger_commands(command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (1 for a failed --fail comparison, 2 for bad input)."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1 :]
    try:
        status = args.func(args)
    except ClaimcheckError as e:
        print(f"claimcheck: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a write no command foresaw: one line naming the file, not a traceback
        where = f" {e.filename}" if e.filename else ""
        print(f"claimcheck: {args.command}: cannot write or read{where}: {e.strerror or e}", file=sys.stderr)
        return 2
    return int(status or 0)


if __name__ == "__main__":
    raise SystemExit(main())
