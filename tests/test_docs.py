"""The docs promise only what the code does: every example runs, every command parses, every link lands.

README.md, tests/README.md, every ``*.md`` under ``docs/`` and the records' pages under ``records/`` are read; a new
doc is covered by being there (and ``docs/index.md`` must link each doc under ``docs/``). What each test checks:

- A fenced block says what it holds. ``python`` runs as a script in a temporary folder (its
  traceback lines are the doc's lines); ``python fragment`` (a piece of a module, kept rare) must
  compile; ``python pytest`` is a test module that runs under pytester with the paper's plugin and
  must pass with every claim REPRODUCED; ``bash`` is checked command by command; ``text``,
  ``toml``, ``json`` and ``ini`` hold no code (TOML and JSON must parse).
- A command, in a ``bash`` block or in an inline code span that starts with ``pytest``, ``python
  -m pytest``, ``claimcheck`` or ``claimcheck-fetch``, uses only the subcommands and options its
  program lists in ``--help`` (pytest's as the repository configures it, with the command's
  ``-c``), picks a listed choice, and names only repository files that exist.
- A link lands on a file (and a heading or anchor there) that exists; a repository path or a
  dotted name (``qin2025.engine.model.Forward``) in backticks exists; a doc that the code, CI or
  ``pyproject.toml`` names exists.
- Every doc opens with its one H1 and skips no heading level; ``docs/index.md`` links every doc.
- ``docs/index.md``'s code map names every module of ``claimcheck/`` and ``qin2025/``.
- No doc or source file cites a file outside the repository (``CLAIMS.md``, ``../shared``, a
  ``/work/`` path): the claims' readings are the repository's own (``docs/claims-reading.md``).
- ``docs/options.md`` lists every option and ini key the plugins register, with the ini name and
  default of ``claimcheck.pytest.options.OPTIONS``.
- A report excerpt (between ``<!-- excerpt: FILE -->`` and ``<!-- end excerpt -->``) is made of
  lines of FILE, in order.

The docs describe the paper's suite too, so without ``qin2025`` (the core-alone run) they are not checked.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import io
import itertools
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

pytest.importorskip("qin2025", reason="the docs describe the paper's suite (qin2025) as well as the core")

from claimcheck.cli import main as cli
from claimcheck.pytest.options import OPTIONS
from qin2025 import fetch

ROOT = Path(__file__).resolve().parents[1]
# The records' own pages are docs too (their links must land); a design script's output is not.
RECORDS = sorted(p for p in (ROOT / "records").rglob("*.md") if "results" not in p.relative_to(ROOT).parts)
DOCS = [ROOT / "README.md", ROOT / "tests" / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *RECORDS]
INDEX = "docs/index.md"
OPTIONS_PAGE = "docs/options.md"
INFO = ("python", "python fragment", "python pytest", "bash", "text", "toml", "json", "ini", "yaml")
# The first folder (or file) of a path that is the repository's: such a path in a doc must exist.
REPO_TOP = ("claimcheck", "qin2025", "claims", "tests", "examples", "benchmarks", "records", "fixtures", "docs", ".ci")
REPO_FILES = ("README.md", "pyproject.toml", "conftest.py")
# Docs that other open issues are writing now. The index links them ahead of time; a link to one
# lands once it exists, and then it must leave this list (a test says so).
BEING_WRITTEN: dict[str, str] = {}
# Paths a doc owned by another open issue still names wrongly or schematically, by (doc, path); a
# test says when an entry is no longer needed.
KNOWN_PATHS: dict[tuple[str, str], str] = {}
# Programs a bash block may run that this test does not check: installers, the shell's own words, Ray's CLI.
AS_IS = ("pip", "git", "export", ".", "source", "cd", "mkdir", "ray")


# --- reading a doc ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A fenced block: its doc, the doc line of its first line, its info string and its text."""

    doc: str
    line: int
    info: str
    text: str

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}"


@dataclass(frozen=True)
class Doc:
    """A doc's fenced blocks, and its prose: the text with every fenced block blanked, lines kept."""

    path: str
    prose: str
    blocks: tuple[Block, ...]
    problems: tuple[str, ...] = ()


FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")


def read_doc(path: Path, text: str | None = None) -> Doc:
    """Split the doc at ``path`` (or ``text``, as if it were there) into its fenced blocks and its prose."""
    rel = path.relative_to(ROOT).as_posix()
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    prose: list[str] = []
    blocks: list[Block] = []
    problems: list[str] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            prose.append(lines[i])
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence)), None)
        if end is None:
            problems.append(f"{rel}:{i + 1}: a fence that never closes")
            end = len(lines)
        body = [line[indent:] if not line[:indent].strip() else line.lstrip() for line in lines[i + 1 : end]]
        blocks.append(Block(rel, i + 2, " ".join(m["info"].split()), "\n".join(body) + "\n"))
        prose += [""] * (min(end, len(lines) - 1) - i + 1)
        i = end + 1
    return Doc(rel, "\n".join(prose), tuple(blocks), tuple(problems))


READ = [read_doc(p) for p in DOCS]
BLOCKS = [b for d in READ for b in d.blocks]
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def code_spans(doc: Doc) -> Iterator[tuple[int, str]]:
    """Yield (line, text) of each inline code span of the prose."""
    for m in CODE_SPAN.finditer(doc.prose):
        if "\n\n" not in m[2]:
            yield _line(doc.prose, m.start()), " ".join(m[2].split())


def without_code(text: str) -> str:
    """Return ``text`` with its code spans blanked (newlines kept), so that links are found only in prose."""
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m[0]) if "\n\n" not in m[2] else m[0], text)


def slug(heading: str) -> str:
    """Return GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(doc: Doc) -> set[str]:
    """Return every anchor a link into ``doc`` may name: heading slugs (numbered when repeated) and <a id>."""
    seen: dict[str, int] = {}
    found = set(ANCHOR.findall(doc.prose))
    for m in HEADING.finditer(doc.prose):
        base = slug(m[2])
        found.add(base if base not in seen else f"{base}-{seen[base]}")
        seen[base] = seen.get(base, 0) + 1
    return found


def repo_path(token: str) -> str | None:
    """Return the repository path a word names (without a ``::test`` or ``:factory`` suffix), or None."""
    path = token.split("::")[0]
    if ":" in path and path.split(":")[0].endswith(".py"):
        path = path.split(":")[0]
    path = path.rstrip("/").removeprefix("./")
    if not path or any(c in path for c in "<>{}$ "):
        return None
    top = path.split("/")[0]
    return path if top in REPO_TOP or path in REPO_FILES else None


def path_exists(path: str) -> bool:
    return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()


# --- help texts: what each program offers --------------------------------------------------------


@dataclass
class Help:
    """What a program's ``--help`` lists: options (with whether each takes a value), choices, ini keys."""

    options: dict[str, str] = field(default_factory=dict)  # name -> "flag", "value" or "optional"
    choices: dict[str, set[str]] = field(default_factory=dict)  # option (or "" for a positional) -> choices
    ini: set[str] = field(default_factory=set)


SPEC = re.compile(r"^(-{1,2}[\w-]+)(?:(=|\s)(\[)?(.+?)\]?)?$")


def parse_help(text: str) -> Help:
    """Read an argparse help text (pytest's included): its options, choices and pytest's ini keys."""
    found = Help()
    in_ini = False
    for line in text.splitlines():
        if line.startswith("[pytest] "):  # "[pytest] ini-options in the first ..." (pytest 9: "configuration options")
            in_ini = True
        elif in_ini and not line.startswith(" ") and line.strip():
            in_ini = False
        if in_ini:
            m = re.match(r"^  ([\w-]+) \(\w+\):", line)
            if m:
                found.ini.add(m[1])
            continue
        m = re.match(r"^ {2,4}(\{[^}]+\})(?:\s|$)", line)
        if m:
            found.choices[""] = set(m[1].strip("{}").split(","))
        m = re.match(r"^ {4}([a-z][\w-]*) {2,}\S", line)  # a subcommand listed under a METAVAR (``ACTION ...``)
        if m:
            found.choices.setdefault("", set()).add(m[1])
        if not re.match(r"^ {2,4}-", line):
            continue
        for variant in re.split(r"\s{2,}", line.strip())[0].split(", "):
            s = SPEC.match(variant)
            if s is None:
                continue
            name, _, optional, metavar = s.groups()
            found.options[name] = "flag" if metavar is None else ("optional" if optional else "value")
            if metavar and metavar.startswith("{"):
                found.choices[name] = set(metavar.strip("{}").split(","))
    return found


@functools.cache
def pytest_help(config: tuple[str, ...]) -> Help:
    """Return pytest's help as the repository configures it, with ``config`` (``-c FILE``, ``--rootdir``) added.

    pytest runs in this process (as pytester's in-process runs do), from the repository root.
    """
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.chdir(ROOT)
        patch.setenv("COLUMNS", "200")  # one line per option
        status = pytest.main([*config, "--help"])
    assert status == 0, f"pytest {' '.join(config)} --help failed:\n{out.getvalue()[-3000:]}"
    return parse_help(out.getvalue())


def _argparse_help(main: Callable[[list[str]], object], argv: list[str]) -> tuple[int, str]:
    """Run an argparse ``main`` with ``argv`` (ending in --help); return its exit status and output."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.setenv("COLUMNS", "200")  # one line per option
        try:
            main(argv)
        except SystemExit as e:
            return int(e.code or 0), out.getvalue() + err.getvalue()
    return 0, out.getvalue()


@functools.cache
def claimcheck_help(command: str) -> Help | str:
    """Return ``claimcheck COMMAND --help`` read (COMMAND may be nested: "ledger register"), or the error."""
    status, text = _argparse_help(cli.main, [*command.split(), "--help"])
    return parse_help(text) if status == 0 else text.strip().splitlines()[-1]


@functools.cache
def fetch_help() -> Help:
    return parse_help(_argparse_help(fetch.main, ["--help"])[1])


# --- checking a command --------------------------------------------------------------------------


def commands(text: str) -> list[list[str]]:
    """Split shell text into simple commands (their words), with continued lines joined and comments dropped."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words: list[str] = []
        for token in lexer:
            if set(token) <= set("&|;()<>"):  # an operator ends a command
                found.append(words)
                words = []
            else:
                words.append(token)
        found.append(words)
    return [_without_assignments(w) for w in found if _without_assignments(w)]


def _without_assignments(words: list[str]) -> list[str]:
    while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
        words = words[1:]
    return words


def check_options(args: list[str], offered: Help, program: str) -> tuple[list[str], list[str]]:
    """Return the problems with ``args`` against ``offered`` and the positional words left."""
    problems, positional = [], []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--" or not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, eq, value = word.partition("=")
        if not name.startswith("--") and len(name) > 2:  # -n2, -qq, -rA: a short option with its value or a bundle
            name, eq, value = name[:2], "=", name[2:]
        kind = offered.options.get(name)
        if kind is None:
            problems.append(f"{program}: no option {name}")
            continue
        if kind == "value" and not eq:
            if i >= len(args):
                problems.append(f"{program}: {name} needs a value")
                continue
            value = args[i]
            i += 1
        if name in offered.choices and (eq or kind == "value") and value not in offered.choices[name]:
            problems.append(f"{program}: {name} {value!r} is not one of {sorted(offered.choices[name])}")
        if eq or kind == "value":
            for part in (
                value.split(",") if "," in value and "/" in value else [value]
            ):  # a comma-separated list of paths
                path = repo_path(part)
                if path and not path_exists(path):
                    problems.append(f"{program}: {name} names {path}, which does not exist")
    return problems, positional


def _paths(words: list[str], program: str) -> list[str]:
    return [f"{program}: {p} does not exist" for w in words if (p := repo_path(w)) and not path_exists(p)]


def check_pytest(args: list[str]) -> list[str]:
    config: list[str] = []  # what changes the configuration; a -p plugin is loaded here already, or removes options
    for i, word in enumerate(args):
        if word in ("-c", "--rootdir") and i + 1 < len(args):
            config += [word, args[i + 1]]
    problems, positional = check_options(args, pytest_help(tuple(config)), "pytest")
    return problems + _paths(positional, "pytest")


def check_claimcheck(args: list[str]) -> list[str]:
    cut = args.index("--") if "--" in args else len(args)
    ours, to_pytest = args[:cut], args[cut + 1 :]
    command = next((w for w in ours if not w.startswith("-")), "")
    offered = claimcheck_help(command)
    if isinstance(offered, str):
        return [f"claimcheck {command}: {offered}"]
    rest = ours[ours.index(command) + 1 :] if command else ours
    sub = next((w for w in rest if not w.startswith("-")), "")
    if sub and sub in offered.choices.get("", set()):  # a command group: ``claimcheck ledger register``
        offered_sub = claimcheck_help(f"{command} {sub}")
        if isinstance(offered_sub, str):
            return [f"claimcheck {command} {sub}: {offered_sub}"]
        command, offered = f"{command} {sub}", offered_sub
        rest = rest[rest.index(sub) + 1 :]
    ours = [w for w in ours if w not in command.split()] if not command else rest
    problems, positional = check_options(ours, offered, f"claimcheck {command}".strip())
    return problems + _paths(positional, "claimcheck") + (check_pytest(to_pytest) if to_pytest else [])


def check_fetch(args: list[str]) -> list[str]:
    offered = fetch_help()
    problems, positional = check_options(args, offered, "claimcheck-fetch")
    if positional and positional[0] not in offered.choices[""]:
        problems.append(f"claimcheck-fetch: no dataset {positional[0]!r}; it has {sorted(offered.choices[''])}")
    return problems


def check_python(args: list[str]) -> list[str]:
    if args[:1] == ["-m"] and len(args) > 1:
        if args[1] == "pytest":
            return check_pytest(args[2:])
        return [] if importlib.util.find_spec(args[1]) else [f"python -m {args[1]}: no such module"]
    if args and not args[0].startswith("-"):
        return _paths(args[:1], "python") if repo_path(args[0]) else [f"python {args[0]}: not a repository script"]
    return []


def check_command(words: list[str]) -> list[str]:
    """Return what is wrong with one command: an option, subcommand, choice or repository file that does not exist."""
    program = Path(words[0]).name or words[0]  # "." (source) has no name
    schematic = [w for w in words if w.startswith("[") or w.endswith("...")]
    if schematic and program in ("pytest", "claimcheck", "claimcheck-fetch"):
        return [f"{program}: {w} is schematic (a [bracket] or ...), not a word the command takes" for w in schematic]
    if program == "pytest":
        return check_pytest(words[1:])
    if program == "claimcheck":
        return check_claimcheck(words[1:])
    if program == "claimcheck-fetch":
        return check_fetch(words[1:])
    if program in ("python", "python3"):
        return check_python(words[1:])
    if program in AS_IS:
        return []
    return [f"{program}: a program this test does not know; check it in check_command, or add it to AS_IS"]


COMMAND_SPAN = re.compile(r"^(pytest|python3? -m pytest|claimcheck|claimcheck-fetch)( |$)")


def command_spans() -> list[tuple[str, int, str]]:
    """Return (doc, line, command) for every inline code span that is a command of ours."""
    return [(d.path, line, text) for d in READ for line, text in code_spans(d) if COMMAND_SPAN.match(text)]


# --- the tests ------------------------------------------------------------------------------------


def _of(info: str) -> list[Block]:
    return [b for b in BLOCKS if b.info == info]


def test_every_fenced_block_says_what_it_holds_and_every_fence_closes() -> None:
    problems = [p for d in READ for p in d.problems]
    problems += [f"{b.id}: info string {b.info!r} is not one of {INFO}" for b in BLOCKS if b.info not in INFO]
    assert not problems, "\n".join(problems)


def run_python(block: Block, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run ``block`` as a script (``__main__``, from ``folder``) in the repository root, as a reader runs it.

    Its traceback lines are the doc's lines; what it puts on ``sys.path`` is taken off again.
    """
    script = folder / f"{re.sub(r'[^A-Za-z0-9]', '_', block.doc)}_{block.line}.py"
    script.write_text("\n" * (block.line - 1) + block.text, encoding="utf-8")
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "path", list(sys.path))
    runpy.run_path(str(script), run_name="__main__")


@pytest.mark.parametrize("block", _of("python"), ids=lambda b: b.id)
def test_each_python_example_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_python(block, tmp_path, monkeypatch)


@pytest.mark.parametrize("block", _of("python fragment"), ids=lambda b: b.id)
def test_each_python_fragment_compiles(block: Block) -> None:
    compile("\n" * (block.line - 1) + block.text, block.doc, "exec")


@pytest.mark.parametrize("block", _of("python pytest"), ids=lambda b: b.id)
def test_each_example_test_module_passes_and_its_claims_reproduce(block: Block, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{f"test_{re.sub(r'[^A-Za-z0-9]', '_', block.doc)}_{block.line}": block.text})
    result = pytester.runpytest(
        "-p", "qin2025.plugin", "-p", "no:cacheprovider", "--claim-report=report.md",
        f"--claim-cache-dir={pytester.path / 'cache'}",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-4000:]
    claims = json.loads((pytester.path / "report.json").read_text())["claims"]
    assert claims and {c["id"]: c["verdict"] for c in claims} == {c["id"]: "REPRODUCED" for c in claims}


@pytest.mark.parametrize("block", _of("toml") + _of("json") + _of("yaml"), ids=lambda b: b.id)
def test_each_toml_json_and_yaml_block_parses(block: Block) -> None:
    if block.info == "toml":
        tomllib.loads(block.text)
    elif block.info == "yaml":  # a CI workflow (docs/ci-recipe.md)
        assert isinstance(pytest.importorskip("yaml").safe_load(block.text), dict)
    else:
        json.loads(block.text)


@pytest.mark.parametrize("block", _of("bash"), ids=lambda b: b.id)
def test_each_shell_block_uses_only_commands_options_and_files_that_exist(block: Block) -> None:
    problems = [f"{' '.join(w)}\n    {p}" for w in commands(block.text) for p in check_command(w)]
    assert not problems, f"{block.id}:\n" + "\n".join(problems)


def _known(doc: str, problem: str) -> bool:
    return any(d == doc and problem.endswith(f" {path} does not exist") for d, path in KNOWN_PATHS)


def test_each_command_in_the_prose_uses_only_options_and_files_that_exist() -> None:
    problems = [
        f"{doc}:{line}: `{text}`\n    {p}"
        for doc, line, text in command_spans()
        for p in check_command(text.split())
        if not _known(doc, p)
    ]
    assert not problems, "\n".join(problems)


def test_the_command_checks_catch_what_does_not_exist() -> None:
    assert check_command("pytest claims --claim-budgte ci".split()) == ["pytest: no option --claim-budgte"]
    assert check_command("pytest claims/test_c0_none.py".split()) == ["pytest: claims/test_c0_none.py does not exist"]
    assert check_command(["claimcheck", "renders", "run.json"])[0].startswith("claimcheck renders: ")
    assert check_command("claimcheck stability --base-seeds 2 [--first B]".split()) == [
        "claimcheck: [--first is schematic (a [bracket] or ...), not a word the command takes"
    ]
    assert check_command("claimcheck stability --base-seed 2".split()) == [
        "claimcheck stability: no option --base-seed"
    ]
    assert check_command("claimcheck-fetch jena --record 2010".split())[0].startswith("claimcheck-fetch: --record")
    assert check_command("claimcheck-fetch mnist".split())[0].startswith("claimcheck-fetch: no dataset 'mnist'")
    assert check_command(["uptime"])[0].startswith("uptime: a program this test does not know")
    assert commands("A=1 pytest x \\\n  -q && pip install y # z") == [["pytest", "x", "-q"], ["pip", "install", "y"]]


# README's "Writing a claim" example before the docs were checked: worst_ratio was never a function
OLD_README_EXAMPLE = """
PROTOCOL = ClaimProtocol(
    "C1",
    3,
    parts=(Part("", "every GD step contracts the loss", (Stat(WORST_RATIO, "<", 1.0, why="Theorem 1"),), bar=0.8),),
    controls=(Control("mu = 1.5 x bound", "", "breaks 'mu small enough'", max_pass_rate=0.35),),
    seeds=Seeds("C1-v3", 211000, {"ci": 29, "standard": 29, "paper": 59}, exploratory="0-21, 100-121"),
)
CLAIM = pytest.mark.claim("C1", "GD converges linearly", "Theorem 1", protocol=PROTOCOL)


@CLAIM
def test_rate(claim_record, claim_seed, claim_train):
    traj = claim_train(ModelConfig(d=64), TrainConfig(steps=400), data, claim_seed)
    claim_record.check(WORST_RATIO, worst_ratio(traj))  # threshold from the protocol
    claim_record.curve("loss", traj.loss, group="training loss")  # drawn in the report
"""


def test_an_example_that_names_what_does_not_exist_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NameError, match="ClaimProtocol"):
        run_python(Block("README.md", 392, "python", OLD_README_EXAMPLE), tmp_path, monkeypatch)
    imports = "from qin2025.c2.monotone import worst_ratio\n"
    with pytest.raises(ImportError, match="worst_ratio"):
        run_python(Block("README.md", 392, "python", imports), tmp_path, monkeypatch)


def link_problems(doc: Doc, by_path: dict[str, Doc]) -> list[str]:
    """Return every link of ``doc`` that lands on no file, or on no heading or anchor of its file."""
    problems = []
    prose = without_code(doc.prose)
    for m in LINK.finditer(prose):
        target = m[1]
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = os.path.normpath((Path(doc.path).parent / file).as_posix()) if file else doc.path
        where = f"{doc.path}:{_line(prose, m.start())}: {target}"
        if path in BEING_WRITTEN:
            continue
        if not (ROOT / path).exists():
            problems.append(f"{where}: no file {path}")
        elif anchor and path in by_path and anchor not in anchors(by_path[path]):
            problems.append(f"{where}: {path} has no heading or anchor {anchor!r}")
    return problems


def heading_problems(doc: Doc) -> list[str]:
    """Return what is wrong with ``doc``'s headings: no H1 first, a second H1, a skipped level."""
    levels = [(len(m[1]), _line(doc.prose, m.start()), m[2]) for m in HEADING.finditer(doc.prose)]
    problems = [] if levels and levels[0][0] == 1 else [f"{doc.path}: the first heading is not an H1"]
    problems += [f"{doc.path}:{line}: a second H1 {text!r}" for level, line, text in levels[1:] if level == 1]
    for (before, _, _), (level, line, text) in itertools.pairwise(levels):
        if level > before + 1:
            problems.append(f"{doc.path}:{line}: H{level} {text!r} follows an H{before}")
    return problems


def test_every_link_lands_on_a_file_and_anchor_that_exist() -> None:
    by_path = {d.path: d for d in READ}
    problems = [p for doc in READ for p in link_problems(doc, by_path)]
    assert not problems, "\n".join(problems)


def test_the_link_and_heading_checks_catch_what_is_wrong() -> None:
    text = "## Usage\n\n[a](usage.md#no-such-heading) [b](claim-c8.md) `[c](nowhere.md)`\n\n#### Deep\n\n# Late\n"
    doc = read_doc(ROOT / "docs" / "planted.md", text)
    by_path = {d.path: d for d in READ}
    assert link_problems(doc, by_path) == [
        "docs/planted.md:3: usage.md#no-such-heading: docs/usage.md has no heading or anchor 'no-such-heading'",
        "docs/planted.md:3: claim-c8.md: no file docs/claim-c8.md",
    ]
    assert heading_problems(doc) == [
        "docs/planted.md: the first heading is not an H1",
        "docs/planted.md:7: a second H1 'Late'",
        "docs/planted.md:5: H4 'Deep' follows an H2",
    ]


def test_every_repository_path_in_backticks_exists() -> None:
    problems = []
    for doc in READ:
        for line, text in code_spans(doc):
            words = [text] if " " not in text else []
            for path in filter(None, map(repo_path, words)):
                if not path_exists(path) and (doc.path, path) not in KNOWN_PATHS:
                    problems.append(f"{doc.path}:{line}: `{text}` names {path}, which does not exist")
    assert not problems, "\n".join(problems)


CODE = ("claimcheck", "qin2025", "claims", "tests", "benchmarks", "records", "examples", "fixtures")
DOC_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")


def doc_paths_in_the_code() -> set[tuple[str, str]]:
    """Return (file, doc path) for every docs/*.md the code, CI and the project file name."""
    files = [p for top in CODE for p in (ROOT / top).rglob("*.py")] + [ROOT / ".ci" / "run", ROOT / "pyproject.toml"]
    return {
        (f.relative_to(ROOT).as_posix(), m[0])
        for f in files
        if f.name != "test_docs.py"
        for m in DOC_PATH.finditer(f.read_text(encoding="utf-8"))
    }


def test_every_doc_the_code_names_exists() -> None:
    missing = [
        f"{file}: names {path}, which does not exist"
        for file, path in sorted(doc_paths_in_the_code())
        if not (ROOT / path).exists() and path not in BEING_WRITTEN and (file, path) not in KNOWN_PATHS
    ]
    assert not missing, "\n".join(missing)


DOTTED = re.compile(r"^((?:claimcheck|qin2025)(?:\.\w+)+)(?:\(.*\))?$")


def resolves(name: str) -> bool:
    """Return whether ``package.module.attribute...`` names something that exists."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_dotted_name_in_backticks_exists() -> None:
    assert resolves("qin2025.engine.model.Forward") and not resolves("qin2025.c2.monotone.worst_ratio")
    missing = [
        f"{d.path}:{line}: `{text}` names nothing"
        for d in READ
        for line, text in code_spans(d)
        if (m := DOTTED.match(text)) and not resolves(m[1])
    ]
    assert not missing, "\n".join(missing)


def test_the_allow_lists_hold_only_what_is_still_needed() -> None:
    written = [p for p in BEING_WRITTEN if (ROOT / p).exists()]
    assert not written, f"these exist now; take them out of BEING_WRITTEN: {written}"
    named = {(d.path, p) for d in READ for _, text in code_spans(d) for w in text.split() if (p := repo_path(w))}
    named |= doc_paths_in_the_code()
    unneeded = [k for k in KNOWN_PATHS if k not in named or path_exists(k[1])]
    assert not unneeded, f"take these out of KNOWN_PATHS: {unneeded}"


def test_every_doc_opens_with_its_one_h1_and_skips_no_heading_level() -> None:
    problems = [p for doc in READ for p in heading_problems(doc)]
    assert not problems, "\n".join(problems)


STAND_IN = r"[A-Z]{3,}(?:_[A-Z0-9]+)+"  # WARM_TEXT, PER_CLAIM; not a symbol such as W_Q or X_1
PLACEHOLDER = re.compile(
    rf"^\s*(?:[-*]\s+)?{STAND_IN}\W*$"  # a line, or a list item, of nothing but a stand-in
    rf"|\|\s*{STAND_IN}\s*(?=\|)"  # a table cell of nothing but one
    r"|\b(?:TODO|TBD|FIXME)\b"
)


def placeholders(doc: Doc) -> list[str]:
    """Return "path:line: text" for each prose line that is a stand-in for text still to be written.

    A stand-in is a line, list item or table cell holding nothing but an upper-case name with
    underscores (``WARM_TEXT``), or TODO, TBD or FIXME; inline code (``without_code``) is skipped.
    """
    lines = enumerate(without_code(doc.prose).splitlines(), 1)
    return [f"{doc.path}:{n}: {line.strip()}" for n, line in lines if PLACEHOLDER.search(line)]


def test_no_doc_holds_a_placeholder_for_text_still_to_be_written() -> None:
    found = [p for doc in READ for p in placeholders(doc)]
    assert not found, "\n".join(found)


def test_the_placeholder_check_catches_a_stand_in_line_and_a_todo() -> None:
    text = (
        "# T\n\n### Warm rerun\n\nWARM_TEXT\n\nThe warm run is TODO.\n\n- PER_CLAIM\n\n| a | STD_WALL |\n\n"
        "Set `ENGINE_VERSION` to 3, or `a\nTODO` across a line.\n\nW_Q\n"
    )
    found = placeholders(read_doc(ROOT / "docs" / "t.md", text))
    want = ["WARM_TEXT", "The warm run is TODO.", "- PER_CLAIM", "| a | STD_WALL |"]
    assert [f.split(": ", 1)[1] for f in found] == want


def test_the_index_maps_every_doc_and_the_readme_links_the_index() -> None:
    index = next(d for d in READ if d.path == INDEX)
    linked = {
        os.path.normpath((Path(INDEX).parent / m[1].partition("#")[0]).as_posix()) for m in LINK.finditer(index.prose)
    }
    unlisted = [d.path for d in READ if d.path.startswith("docs/") and d.path != INDEX and d.path not in linked]
    assert not unlisted, f"docs/index.md does not link {unlisted}"
    assert "docs/index.md" in next(d for d in READ if d.path == "README.md").prose


def _table_rows(text: str) -> list[list[str]]:
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-| :]+\|$", line):
            rows.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_the_options_page_lists_every_option_and_ini_key_with_its_ini_name_and_default() -> None:
    rows = _table_rows((ROOT / OPTIONS_PAGE).read_text(encoding="utf-8"))
    documented = {m[1]: row for row in rows if (m := re.match(r"^`(--claim-[\w-]+)", row[0]))}
    offered = pytest_help(())
    registered = {o for o in offered.options if o.startswith("--claim-")}
    assert set(documented) == registered, (
        f"{OPTIONS_PAGE}: options registered but not documented {sorted(registered - set(documented))}, "
        f"documented but not registered {sorted(set(documented) - registered)}"
    )
    ini_documented = {row[1].strip("`") for row in rows if len(row) > 1 and row[1].startswith("`claim_")}
    ini_registered = {i for i in offered.ini if i.startswith("claim_")}
    assert ini_documented == ini_registered, (ini_registered - ini_documented, ini_documented - ini_registered)
    for option in OPTIONS:
        row = documented[option.flag]
        assert row[1] == f"`{option.ini}`", f"{option.flag}: ini {row[1]} in {OPTIONS_PAGE}, {option.ini} in OPTIONS"
        default = f"`{option.default}`" if option.default else "off" if option.kind == "flag" else ""
        assert default in row[2], f"{option.flag}: default {row[2]!r} in {OPTIONS_PAGE}, {default} in OPTIONS"


EXCERPT = re.compile(r"<!-- excerpt: (\S+) -->\n(.*?)<!-- end excerpt -->", re.S)
IN_PAGE_LINK = re.compile(r"\[([^\]]+)\]\((?:[\w.-]+-details\.md)?#[^)]+\)")  # in the page or its details file


def test_each_report_excerpt_is_made_of_lines_of_its_report_in_order() -> None:
    """An excerpt may leave lines out; the lines it keeps are the report's, with links to its sections unwrapped."""
    found = 0
    for doc in READ:
        for m in EXCERPT.finditer(doc.prose):
            found += 1
            source = [IN_PAGE_LINK.sub(r"\1", line) for line in (ROOT / m[1]).read_text(encoding="utf-8").splitlines()]
            at = 0
            for line in filter(None, m[2].splitlines()):
                assert line in source[at:], (
                    f"{doc.path}: the excerpt line {line[:100]!r} is not a later line of {m[1]}; "
                    "copy the excerpt again from the report"
                )
                at = source.index(line, at) + 1
    assert found, "README shows no excerpt of a report"


# --- the code map, and a repository that stands alone ---------------------------------------------


def modules_missing_from_the_map(index: str) -> list[str]:
    """Return each ``.py`` module under ``claimcheck/`` and ``qin2025/`` that ``index`` does not name in backticks."""
    named = {text for _, text in code_spans(read_doc(ROOT / INDEX, index))}
    modules = sorted(
        p.relative_to(ROOT).as_posix() for top in ("claimcheck", "qin2025") for p in (ROOT / top).rglob("*.py")
    )
    return [m for m in modules if m not in named]


def test_the_code_map_names_every_module_of_the_core_and_the_suite() -> None:
    missing = modules_missing_from_the_map((ROOT / INDEX).read_text(encoding="utf-8"))
    assert not missing, f"{INDEX}'s code map does not name {missing}: add a row with the module's job"
    assert modules_missing_from_the_map("# Map\n\n| `claimcheck/pytest/plugin.py` | hooks |\n")[:1] == [
        "claimcheck/__init__.py"
    ]


# A doc or source file may not send its reader outside the repository. Data, reports of other runs and
# this test (which names what it forbids) are not docs; the data folder's default place beside the
# checkout is where CI and two tests look for the data, not a text they cite.
OUTSIDE = re.compile(
    r"CLAIMS\.md|(?:\.\./|(?<![\w./$-]))shared(?:/[\w.-]+)+|\.\./shared|(?<![\w.~$])/work(?:/[\w.-]+)+"
)
SOURCE_SUFFIXES = (".md", ".py", ".toml", ".ini", ".cfg", ".txt", ".yaml", ".yml")
NOT_SOURCE = ("tests/fixtures/", "reports/", "tests/test_docs.py")
OUTSIDE_ALLOWED: dict[tuple[str, str], str] = {
    (".ci/run", "../shared/data"): "CI's data folder beside the checkout, exported as $CLAIMCHECK_DATA_DIR",
    ("tests/paper/test_jena.py", "../shared/data"): "where the test finds the real data when CI has not set it",
    (
        "tests/paper/test_fetch_datasets.py",
        "../shared/data",
    ): "where the test finds the real data when CI has not set it",
    ("tests/paper/test_fetch_datasets.py", "../shared"): "asserts that the usage text does not name it",
}


def tracked_files() -> list[str]:
    """Return the repository's tracked files (every file under it, where git is not there to ask)."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode == 0 and out.stdout.strip():
        return out.stdout.split()
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]


def outside_paths(file: str, text: str) -> list[str]:
    """Return "file:line: path" for each path outside the repository that ``text`` (``file``'s) cites."""
    return [
        f"{file}:{_line(text, m.start())}: {m[0]}"
        for m in OUTSIDE.finditer(text)
        if (file, m[0]) not in OUTSIDE_ALLOWED
    ]


def test_no_doc_or_source_file_cites_a_path_outside_the_repository() -> None:
    found = []
    for file in tracked_files():
        if (file.endswith(SOURCE_SUFFIXES) or file == ".ci/run") and not file.startswith(NOT_SOURCE):
            path = ROOT / file
            if path.is_file():
                found += outside_paths(file, path.read_text(encoding="utf-8", errors="replace"))
    assert not found, "these cite files outside the repository; say it in the repository's own docs:\n" + "\n".join(
        found
    )
    still = {(f, m[0]) for f, _ in OUTSIDE_ALLOWED for m in OUTSIDE.finditer((ROOT / f).read_text(encoding="utf-8"))}
    assert set(OUTSIDE_ALLOWED) <= still, f"take these out of OUTSIDE_ALLOWED: {set(OUTSIDE_ALLOWED) - still}"


def test_the_outside_path_check_catches_a_claims_file_a_shared_folder_and_a_machine_path() -> None:
    text = "Read (../shared/CLAIMS.md).\nDATA = '/work/shared/data'\n`$CLAIMCHECK_DATA_DIR/work/x` ~/work/y\n"
    text += "See shared/data/SOURCES.md; not $CLAIMCHECK_DATA_DIR/shared/x or a/shared/y.\n"
    assert outside_paths("docs/x.md", text) == [
        "docs/x.md:1: ../shared/CLAIMS.md",
        "docs/x.md:2: /work/shared/data",
        "docs/x.md:4: shared/data/SOURCES.md",
    ]
    assert outside_paths(".ci/run", "cd ../shared/data") == []


def modules_missing_from_the_tests_readme(readme: str) -> list[str]:
    """Return each module under ``claimcheck/`` and ``qin2025/`` for which ``readme`` names no test's place.

    A module is placed when the page names it in backticks, or names a folder below the package that
    holds it (``qin2025/calibration/``; the packages themselves are named in the page's prose).
    """
    named = {text for _, text in code_spans(read_doc(ROOT / "tests/README.md", readme))}
    modules = sorted(
        p.relative_to(ROOT).as_posix() for top in ("claimcheck", "qin2025") for p in (ROOT / top).rglob("*.py")
    )

    def placed(module: str) -> bool:
        inner = [a for a in Path(module).parents if len(a.parts) >= 2]  # qin2025/data, not qin2025 or .
        return module in named or any(f"{a.as_posix()}/" in named for a in inner)

    return [m for m in modules if not placed(m)]


def test_the_tests_readme_says_where_a_test_of_each_module_goes() -> None:
    missing = modules_missing_from_the_tests_readme((ROOT / "tests/README.md").read_text(encoding="utf-8"))
    assert not missing, f"tests/README.md does not say where a test of {missing} goes: add it to a row"
    assert modules_missing_from_the_tests_readme("# T\n\n| `qin2025/calibration/` | x |\n")[:1] == [
        "claimcheck/__init__.py"
    ]
    assert "qin2025/calibration/draw.py" not in modules_missing_from_the_tests_readme("| `qin2025/calibration/` |")


@pytest.mark.slow
def test_a_suite_of_ones_own_follows_writing_a_claim_to_a_calibrated_confirmed_claim(tmp_path: Path) -> None:
    """Write the G9 suite from docs/writing-a-claim.md alone and run its steps as they stand there, in order."""
    doc = "docs/writing-a-claim.md"
    blocks = [b for b in BLOCKS if b.doc == doc]
    module = next(b for b in blocks if b.info == "python pytest" and '"G9"' in b.text)
    ini = next(b for b in blocks if b.info == "ini" and "claim_ledger" in b.text)
    ignore = next(b for b in blocks if b.info == "text" and "reports/" in b.text)
    steps = next(b for b in blocks if b.info == "bash" and "ledger confirm" in b.text)
    (tmp_path / "test_gd_linear.py").write_text(module.text)
    (tmp_path / "pytest.ini").write_text(ini.text)
    (tmp_path / ".gitignore").write_text(ignore.text)
    who = {f"GIT_{r}_{f}": v for r in ("AUTHOR", "COMMITTER") for f, v in (("NAME", "reader"), ("EMAIL", "r@x"))}
    env = {
        **os.environ,
        **who,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
    }
    env.pop("PYTEST_ADDOPTS", None)
    run = subprocess.run(["bash", "-e", "-c", steps.text], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    out = run.stdout + run.stderr
    assert "G9/: calibrated" in out and "G9: REPRODUCED [v1 registered]" in out
    assert "G9: confirmed" in out and "every hash chain holds" in out
    (tmp_path / "pytest.ini").write_text(ini.text + "claim_expectations = expectations.toml\n")
    again = subprocess.run(["pytest", "--claim-report"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "G9: REPRODUCED [v1 confirmed]" in again.stdout, again.stdout[-3000:]


def test_the_index_where_is_it_table_names_definitions_that_exist() -> None:
    import importlib

    text = (ROOT / INDEX).read_text(encoding="utf-8")
    section = text.split("### Where is it", 1)[1].split("\n\n`qin2025/`", 1)[0]
    names = re.findall(r"`((?:claimcheck|qin2025)\.[\w.]+)`", section)
    assert len(names) >= 15
    missing = []
    for name in names:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable module, then attributes
            try:
                obj: object = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr)
            except AttributeError:
                missing.append(name)
            break
        else:
            missing.append(name)
    assert not missing, f"{INDEX}'s 'Where is it' table names what does not exist: {missing}"
