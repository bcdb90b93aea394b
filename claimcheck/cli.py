"""The ``claimcheck`` command: re-render a report from its JSON, or compare runs as a claim x run matrix."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from claimcheck.errors import ClaimcheckError
from claimcheck.expectations import pins_of, render_pins
from claimcheck.figures import draw
from claimcheck.files import write_atomic
from claimcheck.mutation import render_mutants
from claimcheck.report import figure_dir, md, render
from claimcheck.results import ClaimResult
from claimcheck.runfile import RunData, load
from claimcheck.runs import run_many
from claimcheck.stability import render_stability, run_seeds, stability

_MATRIX_ENV = ("date", "cpu", "gpu", "device", "torch", "budget", "base seed", "git commit")


def _headline(r: ClaimResult) -> str:
    if not r.claim_stats:
        return ""
    s = r.claim_stats[0]
    return f" ({md(s.statistic)} {s.values.format()})"


def render_matrix(runs: Sequence[tuple[str, RunData]]) -> str:
    """Return markdown: one row per claim, one column per run, each cell the verdict and headline statistic."""
    results = [{r.claim_id: r for r in run.results()} for _, run in runs]
    claims = sorted({cid for rs in results for cid in rs}, key=lambda c: (len(c), c))
    names = [md(Path(name).name) for name, _ in runs]
    lines = ["# Claim x run matrix", "", "| claim | " + " | ".join(names) + " | agree |"]
    lines.append("|---" * (len(runs) + 2) + "|")
    for cid in claims:
        cells = [f"**{rs[cid].verdict.value}**{_headline(rs[cid])}" if cid in rs else "not run" for rs in results]
        verdicts = {rs[cid].verdict for rs in results if cid in rs}
        lines.append(f"| {md(cid)} | " + " | ".join(cells) + f" | {'yes' if len(verdicts) == 1 else '**no**'} |")
    lines += ["", "## Runs", "", "| setting | " + " | ".join(names) + " |", "|---" * (len(runs) + 1) + "|"]
    for key in _MATRIX_ENV:
        lines.append(f"| {md(key)} | " + " | ".join(md(run.env.get(key, "")) for _, run in runs) + " |")
    return "\n".join(lines) + "\n"


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def _write_or_print(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        write_atomic(out, text)
        print(f"wrote {out}", file=sys.stderr)


def _cmd_render(args: argparse.Namespace) -> None:
    run = load(args.run)
    out: Path | None = args.output
    folder = figure_dir(out if out is not None else args.run.with_suffix(".md"))
    if out is not None and not args.no_figures:
        draw(run, folder)
    _write_or_print(render(run, figure_folder=folder.name), out)


def _cmd_matrix(args: argparse.Namespace) -> None:
    _write_or_print(render_matrix([(str(p), load(p)) for p in args.runs]), args.output)


def _cmd_expectations(args: argparse.Namespace) -> None:
    run = load(args.run)
    header = (
        f"What this suite is known to give at budget {args.budget}, pinned check by check.\n"
        f"Written by `claimcheck expectations {args.run.name} --budget {args.budget}` from the run of "
        f"{run.env.get('date', '?')} (commit {run.env.get('git commit', '?')}, "
        f"base seed {run.env.get('base seed', '?')})."
    )
    _write_or_print(render_pins(args.budget, pins_of(run.results()), header), args.output)


def _cmd_stability(args: argparse.Namespace) -> None:
    seeds = [args.first + i * args.stride for i in range(args.base_seeds)]
    runs = run_seeds(seeds, args.out, args.budget, args.pytest_args, args.targets.split(","))
    text = render_stability(stability(runs), seeds, args.budget)
    _write_or_print(text, args.out / "stability.md")
    sys.stdout.write(text)


def _cmd_mutants(args: argparse.Namespace) -> None:
    specs = [args.reference, *args.mutants]
    jobs = [(args.out / f"model-{i}.md", [f"--claim-model={spec}", *args.pytest_args]) for i, spec in enumerate(specs)]
    runs = run_many(jobs, args.budget, args.targets.split(","), args.jobs)
    text = render_mutants((specs[0], runs[0]), list(zip(specs[1:], runs[1:], strict=True)))
    _write_or_print(text, args.out / "mutants.md")
    sys.stdout.write(text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (2 for bad input, with the reason on stderr)."""
    parser = argparse.ArgumentParser(prog="claimcheck", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("render", help="re-render the markdown report (and figures) from a run's JSON")
    p.add_argument("run", type=Path, help="the .json written next to a claim report")
    p.add_argument("-o", "--output", type=Path, help="write the markdown here (default: stdout)")
    p.add_argument("--no-figures", action="store_true", help="do not redraw the figures")
    p.set_defaults(func=_cmd_render)
    m = sub.add_parser("matrix", help="claim x run matrix of several runs' JSON (e.g. one per machine)")
    m.add_argument("runs", type=Path, nargs="+", help="run .json files")
    m.add_argument("-o", "--output", type=Path, help="write the markdown here (default: stdout)")
    m.set_defaults(func=_cmd_matrix)
    e = sub.add_parser("expectations", help="pin a run's verdicts, parts, controls and statistics as TOML")
    e.add_argument("run", type=Path, help="the .json written next to a claim report")
    e.add_argument("--budget", default="ci", help="the budget table to write (default ci)")
    e.add_argument("-o", "--output", type=Path, help="write the TOML here (default: stdout)")
    e.set_defaults(func=_cmd_expectations)
    s = sub.add_parser("stability", help="run the claim suite over K base seeds; count verdict flips and controls")
    s.add_argument("--base-seeds", type=_positive, default=20, metavar="K", help="how many base seeds (default 20)")
    s.add_argument("--first", type=int, default=0, help="the first base seed (default 0)")
    s.add_argument("--stride", type=_positive, default=1, help="distance between base seeds (default 1)")
    s.add_argument("--budget", default="ci", help="budget of every run (default ci)")
    s.add_argument("--targets", default="claims", help="comma-separated test paths (default claims)")
    s.add_argument("--out", type=Path, default=Path("reports/stability"), help="folder for the runs' reports")
    s.set_defaults(func=_cmd_stability)
    u = sub.add_parser("mutants", help="run the suite on a reference model and on broken ones; tabulate what broke")
    u.add_argument("reference", help="the trusted model, package.module:factory or path/to/file.py:factory")
    u.add_argument("mutants", nargs="+", help="the broken models, named the same way")
    u.add_argument("--budget", default="ci", help="budget of every run (default ci)")
    u.add_argument("--targets", default="claims", help="comma-separated test paths (default claims)")
    u.add_argument("--jobs", type=_positive, default=1, help="suite runs at a time (default 1)")
    u.add_argument("--out", type=Path, default=Path("reports/mutants"), help="folder for the runs' reports")
    u.set_defaults(func=_cmd_mutants)
    parser.epilog = "stability and mutants pass everything after -- to pytest"
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1 :]
    try:
        args.func(args)
    except ClaimcheckError as e:
        print(f"claimcheck: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
