"""Measure the suite's power to catch a broken model: run a catalogue of mutants and benign edits, say what caught each.

The catalogue's format and how an entry is judged: docs/mutants.md.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claimcheck.decide.verdicts import ClaimResult, _claim_sort_key
from claimcheck.errors import ClaimcheckError
from claimcheck.gate.baseline import VerdictChange, compare
from claimcheck.gate.paired import Movement
from claimcheck.provenance import git
from claimcheck.report.markdown import md, premises, table_lines
from claimcheck.report.rundata import RunData

KILLERS = ("probe", "claims", "gate", "first screen")
KINDS = ("mutant", "benign")
LEFT_OUT = ("reports", ".git", ".claimcheck", ".venv")  # not copied into a patched checkout


class CatalogueError(ClaimcheckError):
    """A catalogue cannot be read, or an entry's edit does not apply; the message names the entry."""


@dataclass(frozen=True)
class Edit:
    """Replace the text ``old`` (exactly one occurrence) with ``new`` in ``file`` of a copy of the checkout."""

    file: str
    old: str
    new: str


@dataclass(frozen=True)
class Entry:
    """One mutant or benign edit of a catalogue."""

    name: str
    kind: str  # "mutant" or "benign"
    what: str  # what it changes, in one line
    model: str = ""  # the --claim-model spec; "" runs the suite's own model
    edits: tuple[Edit, ...] = ()
    expect: tuple[str, ...] = ()  # killers expected to catch a mutant, from KILLERS (optionally ":C1,C2")
    uncovered: str = ""  # why no claim speaks of this bug (a mutant that may survive)


@dataclass(frozen=True)
class Catalogue:
    """The reference models and the entries of a catalogue file."""

    source: Path
    reference_model: str  # the healthy model the model entries are edits of
    entries: tuple[Entry, ...]


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if isinstance(raw, str):
        return (raw,)
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise CatalogueError(f"{where}: expected a string or a list of strings, got {raw!r}")
    return tuple(raw)


def _entry(raw: Any, kind: str, source: Path, i: int) -> Entry:
    where = f"{source}: [[{kind}]] #{i + 1}"
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not isinstance(raw.get("what"), str):
        raise CatalogueError(f"{where}: every entry needs a name and a what (strings)")
    where = f"{source}: {kind} {raw['name']!r}"
    edits = []
    for e in raw.get("edit", []):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("file", "old", "new")):
            raise CatalogueError(f"{where}: each [[{kind}.edit]] needs file, old and new (strings)")
        edits.append(Edit(e["file"], e["old"], e["new"]))
    model = raw.get("model", "")
    if not isinstance(model, str) or not (model or edits):
        raise CatalogueError(f"{where}: give a model (path/to/file.py:factory), edits, or both")
    expect = _strings(raw.get("expect", []), f"{where}: expect")
    if unknown := [x for x in expect if x.split(":")[0] not in KILLERS]:
        raise CatalogueError(f"{where}: expect names {unknown}; the killers are {list(KILLERS)}")
    if kind == "mutant" and not expect and not raw.get("uncovered"):
        raise CatalogueError(f"{where}: a mutant names what should catch it (expect) or why nothing can (uncovered)")
    return Entry(raw["name"], kind, raw["what"], model, tuple(edits), expect, str(raw.get("uncovered", "")))


def load_catalogue(path: Path) -> Catalogue:
    """Read a catalogue TOML file; raise CatalogueError naming the file and entry on any problem."""
    try:
        raw = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise CatalogueError(f"{path}: cannot read the catalogue ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise CatalogueError(f"{path}: not valid TOML ({e})") from None
    ref = raw.get("reference", {})
    if not isinstance(ref, dict) or not isinstance(ref.get("model", ""), str):
        raise CatalogueError(f"{path}: [reference] model must be a --claim-model spec (a string)")
    entries = tuple(_entry(e, kind, Path(path), i) for kind in KINDS for i, e in enumerate(raw.get(kind, [])))
    names = [e.name for e in entries]
    if twice := sorted(n for n in names if names.count(n) > 1):
        raise CatalogueError(f"{path}: entry names must be unique, got {twice}")
    return Catalogue(Path(path), str(ref.get("model", "")), entries)


def patched_checkout(root: Path, edits: Sequence[Edit], where: str) -> Path:
    """Return a temporary copy of the checkout at ``root`` (its git files), ``edits`` applied; the caller removes it.

    Raise CatalogueError naming ``where`` when an edit's ``old`` text does not occur exactly once.
    """
    listed = git.output(root, "ls-files", "--cached", "--others", "--exclude-standard")
    if listed is None:
        raise CatalogueError(f"{where}: {root} is not a git checkout; engine edits need one to copy")
    copy = Path(tempfile.mkdtemp(prefix="claimcheck-mutant-"))
    for name in listed.splitlines():
        if name.split("/")[0] in LEFT_OUT or not (root / name).is_file():
            continue
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, copy / name)
    for e in edits:
        target = copy / e.file
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        if text.count(e.old) != 1:
            shutil.rmtree(copy, ignore_errors=True)
            raise CatalogueError(
                f"{where}: the edit of {e.file} does not apply: its text occurs {text.count(e.old)} times, not once "
                f"({e.old[:80]!r}); update the catalogue to the current code"
            )
        target.write_text(text.replace(e.old, e.new), encoding="utf-8")
    return copy


@dataclass
class Judgement:
    """What the checks made of one entry's run against its reference."""

    entry: Entry
    killers: dict[str, list[str]] = field(default_factory=dict)  # killer -> what it saw
    verdicts: dict[str, str] = field(default_factory=dict)  # claim id -> verdict (cells of the grid)
    changed: list[str] = field(default_factory=list)  # verdicts that changed either way (false alarms for benign)
    refused: str = ""  # the probe's (or the patch's) message
    better: list[str] = field(default_factory=list)  # statistics better beyond their margins (they fail nothing)
    seconds: float = 0.0

    @property
    def caught(self) -> bool:
        """Return True when any check caught the entry (for a benign edit: a false alarm)."""
        return bool(self.killers) or bool(self.changed and self.entry.kind == "benign")

    @property
    def as_expected(self) -> bool:
        """Return True when one of the expected killers caught the mutant (its claims, when it names them)."""
        return any(_matches(x, self.killers) for x in self.entry.expect)

    def result(self) -> str:
        """Return the row's verdict on the entry."""
        if self.entry.kind == "benign":
            return "**falsely flagged**" if self.caught else "passed"
        if not self.caught:
            return f"survived: no claim covers it ({self.entry.uncovered})" if self.entry.uncovered else "**survived**"
        if self.as_expected or not self.entry.expect:
            return "killed"
        return f"killed, not by the expected {' or '.join(self.entry.expect)}"


def _matches(expected: str, killers: Mapping[str, list[str]]) -> bool:
    kind, _, ids = expected.partition(":")
    return kind in killers and (not ids or any(cid.strip() in " ".join(killers[kind]) for cid in ids.split(",")))


def judge(entry: Entry, reference: RunData, run: RunData | Exception, seconds: float = 0.0) -> Judgement:
    """Return what caught ``entry``'s run (or its refusal) against ``reference``'s, claim by claim."""
    if not isinstance(run, RunData):
        return Judgement(entry, {"probe": [str(run)]}, refused=str(run), seconds=seconds)
    j = Judgement(entry, seconds=seconds)
    ref = {r.claim_id: r for r in reference.results()}
    now = {r.claim_id: r for r in run.results()}
    j.verdicts = {cid: r.verdict.value for cid, r in now.items()}
    pairs = [(cid, ref[cid].verdict, r.verdict) for cid, r in now.items() if cid in ref]
    worse = [f"{cid} {a.value} -> {b.value}" for cid, a, b in pairs if VerdictChange(cid, a.value, b.value).worse]
    j.changed = [f"{cid} {a.value} -> {b.value}" for cid, a, b in pairs if a != b]
    comp = compare(run, reference, "the reference run")
    gate = [s.describe() for s in comp.stats if s.worse]
    j.better = [s.describe() for s in comp.stats if s.movement is Movement.BETTER]
    screen = [f"{cid}: {'; '.join(new)}" for cid, r in now.items() if (new := _new_premises(r, ref.get(cid)))]
    j.killers = {k: seen for k, seen in (("claims", worse), ("gate", gate), ("first screen", screen)) if seen}
    return j


def _new_premises(now: ClaimResult, before: ClaimResult | None) -> list[str]:
    old = set(premises(before)) if before is not None else set()
    return [p for p in premises(now) if p not in old]


Outcome = tuple[RunData | Exception, float]  # the run (or what stopped it at start) and its wall time in seconds
Runner = Callable[[str, Path, Sequence[str], Path | None], Outcome]  # (name, report, args, cwd)


def reference_name(model: str) -> str:
    """Return the report name of the reference run of ``model`` (stable, so --reuse finds it): reference-own for ""."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", model.rsplit("/", 1)[-1]).strip("-")
    return f"reference-{slug or 'own'}"


def _reference_model(catalogue: Catalogue, entry: Entry) -> str:
    """Return the model an entry is judged against: its own for edits of the checkout, else the catalogue's."""
    return entry.model if entry.edits else catalogue.reference_model


def run_catalogue(
    catalogue: Catalogue, root: Path, out: Path, runner: Runner, only: Sequence[str] = (), jobs: int = 1
) -> tuple[dict[str, Outcome], list[Judgement]]:
    """Run each reference once, then every entry (or those named in ``only``), ``jobs`` at a time.

    ``runner(name, report, args, cwd)`` runs the suite with ``args`` and a report at ``report``, in ``cwd`` when it is a
    patched copy of the checkout at ``root``, and returns the run (or the error that stopped it at start) with its wall
    time. Return the reference runs by model, with their wall times, and the judgements in catalogue order.
    """
    if unknown := sorted(set(only) - {e.name for e in catalogue.entries}):
        raise CatalogueError(f"{catalogue.source}: --only names {unknown}, which the catalogue does not hold")
    entries = [e for e in catalogue.entries if not only or e.name in only]
    refs: dict[str, Outcome] = {}
    for model in dict.fromkeys(_reference_model(catalogue, e) for e in entries):
        refs[model] = runner("reference", out / f"{reference_name(model)}.md", _model_args(model), None)
        if not isinstance(refs[model][0], RunData):
            raise CatalogueError(f"the reference {model or 'the suite own model'!r} was refused: {refs[model][0]}")

    def one(entry: Entry) -> Judgement:
        copy = None
        try:
            if entry.edits:
                copy = patched_checkout(root, entry.edits, f"{catalogue.source}: {entry.kind} {entry.name!r}")
            run, seconds = runner(entry.name, out / f"{entry.name}.md", _model_args(entry.model), copy)
        except CatalogueError as e:
            run, seconds = e, 0.0
        finally:
            if copy is not None:
                shutil.rmtree(copy, ignore_errors=True)
        reference = refs[_reference_model(catalogue, entry)][0]
        assert isinstance(reference, RunData)
        return judge(entry, reference, run, seconds)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return refs, list(pool.map(one, entries))


def _model_args(model: str) -> list[str]:
    return [f"--claim-model={model}"] if model else []


def _killed_cell(j: Judgement) -> str:
    parts = []
    for k in KILLERS:
        seen = j.killers.get(k, [])
        if not seen:
            continue
        if k == "gate":
            per = Counter(line.split(" ", 1)[0] for line in seen)
            where = ", ".join(f"{cid} {n}" for cid, n in sorted(per.items(), key=lambda x: (len(x[0]), x[0])))
            detail = f"{len(seen)} statistics worse beyond their margins ({where}), e.g. {seen[0]}"
        elif k == "first screen":
            detail = "; ".join(dict.fromkeys(line.split(": ", 1)[-1] for line in seen))
        else:
            detail = "; ".join(seen)
        parts.append(f"**{k}**: {md(_short(detail, 260))}")
    if j.changed and "claims" not in j.killers:
        parts.append("verdicts changed: " + md("; ".join(j.changed)))
    if j.better:
        parts.append(f"(the gate saw {len(j.better)} statistics better beyond their margins, which fail nothing)")
    return "<br>".join(parts) or "nothing"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def render_catalogue(catalogue: Catalogue, refs: Mapping[str, Outcome], judgements: Sequence[Judgement]) -> str:
    """Return markdown: the summary (kill rate, false alarms), one row per entry, and the verdicts per claim."""
    mutants = [j for j in judgements if j.entry.kind == "mutant"]
    benign = [j for j in judgements if j.entry.kind == "benign"]
    killed = [j for j in mutants if j.caught]
    expected = [j for j in killed if j.as_expected]
    uncovered = [j for j in mutants if not j.caught and j.entry.uncovered]
    alarms = [j for j in benign if j.caught]
    runs = {model: run for model, (run, _) in refs.items() if isinstance(run, RunData)}
    env = next((run.env for run in runs.values()), {})
    lines = [
        "# Mutation score of the claim suite",
        "",
        f"Catalogue `{md(catalogue.source)}`; budget {md(env.get('budget', '?'))}; base seed "
        f"{md(env.get('base seed', '?'))}; commit {md(env.get('git commit', '?'))}.",
        "",
        f"**Mutants killed: {len(killed)} of {len(mutants)}** ({len(expected)} by their expected killer; "
        f"{len(uncovered)} survived where no claim speaks of the bug). **Benign edits falsely flagged: "
        f"{len(alarms)} of {len(benign)}.** The {len(judgements)} runs took "
        f"{sum(j.seconds for j in judgements) / 60:.1f} min, the {len(refs)} reference runs "
        f"{sum(s for _, s in refs.values()) / 60:.1f} min (wall time, one at a time unless --jobs).",
        "",
    ]
    rows = []
    for j in judgements:
        exp = ", ".join(j.entry.expect) or ("none: " + j.entry.uncovered if j.entry.uncovered else "")
        exp = "nothing (must pass)" if j.entry.kind == "benign" else exp
        row = [f"`{md(j.entry.name)}`", j.entry.kind, md(j.entry.what), md(exp), _killed_cell(j), j.result()]
        rows.append([*row, f"{j.seconds / 60:.1f}"])
    head = ["entry", "kind", "what it changes", "expected killer", "killed by", "result", "minutes"]
    claims = sorted({r.claim_id for run in runs.values() for r in run.results()}, key=_claim_sort_key)
    grid = []
    for model, ref in runs.items():
        verdicts = {r.claim_id: r.verdict.value for r in ref.results()}
        grid.append([f"reference `{md(model or 'the suite own model')}`", *(verdicts.get(c, "") for c in claims)])
    for j in judgements:
        grid.append([f"`{md(j.entry.name)}`", *(j.verdicts.get(c, "refused" if j.refused else "") for c in claims)])
    lines += [*table_lines(head, rows), "", "## Verdicts per claim", "", *table_lines(["run", *claims], grid)]
    lines += ["", "## What each check saw", ""]
    for j in judgements:
        seen = [f"- {k}: {md(line)}" for k in KILLERS for line in j.killers.get(k, [])]
        seen += [f"- gate, better beyond margin (fails nothing): {md(line)}" for line in j.better]
        if seen:
            lines += [f"<details><summary>{md(j.entry.name)}</summary>", "", *seen, "", "</details>", ""]
    return "\n".join(lines) + "\n"
