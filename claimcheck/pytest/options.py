"""Declare the claim options (``OPTIONS``, each with its ini twin); read and validate them once into ``Settings``."""

from __future__ import annotations

import math
import os
import re
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from claimcheck.errors import ConfigError
from claimcheck.files import user_cache_dir
from claimcheck.gate.tolerance import DEFAULT_TOLERANCE, Tolerance
from claimcheck.protocol.budget import BUDGETS, Budget, get_budget
from claimcheck.protocol.spec import N_BUDGETS
from claimcheck.pytest.executor import INSTALL, ray_missing
from claimcheck.report.fileset import foreign, sidecar_path

if TYPE_CHECKING:
    import pytest

    from claimcheck.provenance.expectations import Expected, PinnedAt

DEFAULT_REPORT = "reports/claim-report.md"
DATA_ENV = "CLAIMCHECK_DATA_DIR"
# The largest base seed: 32 bits keep every seed a claim derives from it in the range of every common seeding API
MAX_SEED = 2**32 - 1
T = TypeVar("T")


@dataclass(frozen=True)
class Option:
    """A command-line option and its ini twin: ``--claim-seed`` and ``claim_seed``."""

    flag: str
    ini: str
    metavar: str
    help: str
    default: str = ""  # the ini default (as text); "" means unset
    kind: str = "value"  # value, flag (store_true; ini bool) or optional (a value that may be left out)
    const: str = DEFAULT_REPORT  # an optional option's value when it is given without one


OPTIONS: tuple[Option, ...] = (
    Option("--claim-report", "claim_report", "PATH", "write the claim report (markdown, JSON, figures) to PATH "
           "(default reports/claim-report.md); never over a file claimcheck did not write; exit status 12 when it "
           "cannot be written", kind="optional"),
    Option("--claim-seed", "claim_seed", "INT", "base seed; it selects each claim's replication block", "0"),
    Option("--claim-budget", "claim_budget", "NAME", "run size: ci, standard or paper", "ci"),
    Option("--claim-device", "claim_device", "DEV", "auto, cpu, cuda or cuda:N", "cpu"),
    Option("--claim-data-dir", "claim_data_dir", "DIR", "folder holding the datasets; else $CLAIMCHECK_DATA_DIR, "
           "else the user cache"),
    Option("--claim-model-dir", "claim_model_dir", "DIR", "local pretrained model folder (safetensors + "
           "tokenizer.json)"),
    Option("--claim-baseline", "claim_baseline", "JSON", "compare this run with an earlier run's JSON sidecar"),
    Option("--claim-baseline-fail", "claim_baseline_fail", "worse", "exit 13 when a verdict fell or a statistic "
           "is worse beyond its margin seed by seed against --claim-baseline, 14 when one is undecided or a "
           "baseline claim is not compared; =worse accepts undecided statistics", kind="optional", const="all"),
    Option("--claim-baseline-exact", "claim_baseline_exact", "", "exit non-zero when any verdict or value differs "
           "from --claim-baseline's (bit identity on the same hardware; see --claim-tolerance)", kind="flag"),
    Option("--claim-tolerance", "claim_tolerance", "SAME[,CROSS]", "relative tolerances of the bit-identity "
           "check vs the baseline: on the same hardware, across hardware", "0,0.05"),
    Option("--claim-cache", "claim_cache", "MODE", "training-result cache: on, off, or clear (empty it, then use "
           "it)", "on"),
    Option("--claim-cache-dir", "claim_cache_dir", "DIR", "cache folder (default ~/.cache/claimcheck/results)"),
    Option("--claim-cache-verify", "claim_cache_verify", "FRACTION", "recompute this seeded fraction of the "
           "cache's hits (0-1) and compare them; a mismatch is an ERROR naming the entry, which is dropped", "0"),
    Option("--claim-threads", "claim_threads", "N|auto", "torch threads per process (auto: cores / xdist "
           "workers)", "1"),
    Option("--claim-expectations", "claim_expectations", "TOML", "verdicts known per budget, with reasons"),
    Option("--claim-pool", "claim_pool", "POOL", "seed pool: confirmatory (the protocol's block) or exploratory",
           "confirmatory"),
    Option("--claim-ledger", "claim_ledger", "TOML", "ledger of protocol versions (exploratory or confirmed)"),
    Option("--claim-exploratory", "claim_exploratory", "", "declare the run exploratory: a claim whose code matches "
           "no registered version is labelled changed instead of failing the session", kind="flag"),
    Option("--claim-figures", "claim_figures", "on|off", "draw the report's figures", "on"),
    Option("--claim-autosave", "claim_autosave", "", "keep this run's JSON in .claimcheck/history/<machine>/ "
           "(see claimcheck history)", kind="flag"),
    Option("--claim-executor", "claim_executor", "local|ray", "where training runs missing from the cache run: "
           f"this process, or Ray tasks (needs {INSTALL})", "local"),
    Option("--claim-ray-address", "claim_ray_address", "ADDR", "Ray cluster (else $RAY_ADDRESS, else a local "
           "Ray)"),
    Option("--claim-timeout", "claim_timeout", "SECONDS", "wall-clock limit per claim test and per training run; "
           "one past it is an ERROR naming it (0: no limit)", "0"),
    Option("--claim-baseline-update", "claim_baseline_update", "", "accept this run as the new baseline: write its "
           "JSON over --claim-baseline, keeping the old one beside it as <name>.<UTC time>.json", kind="flag"),
    Option("--claim-gate-cap", "claim_gate_cap", "MULTIPLE", "record each claim test's units up to MULTIPLE times "
           "its budget's, for the baseline gate only (a baseline that lets the gate decide by adding units; 16 at "
           "ci, 2 at standard); 1: none", "1"),
)  # fmt: skip
MARGINS_HELP = (
    "margins of the baseline gate per statistic, one CLAIM.statistic=MARGIN a line, the statistic named as the "
    "comparison's table names it (they win over the protocol's)"
)
MODEL_FIX = (
    "give the folder holding model.safetensors and tokenizer.json, or drop the option to use the installed package"
)
FRACTION = "a fraction from 0 to 1 (0.1: a tenth of the hits)"
GATE_CAP = "a whole multiple >= 1 of each claim test's units (16 at ci, 2 at standard; 1: no reserve)"
FAIL_MODES = "nothing (fail on worse and undecided) or worse"  # the gate's mode: "all", "worse" or "" (off)
FAIL_MODE_WORDS = {"": "", "all": "all", "worse": "worse", "true": "all", "1": "all", "yes": "all", "on": "all",
              "false": "", "0": "", "no": "", "off": ""}  # fmt: skip
EXECUTORS = ("local", "ray")
RAY_ENV = "RAY_ADDRESS"
CACHE_MODES = ("on", "off", "clear")
POOLS = ("confirmatory", "exploratory")
SWITCH = {"on": True, "yes": True, "true": True, "1": True, "off": False, "no": False, "false": False, "0": False}
CACHE_DIR_FIX = (
    "choose a writable folder with --claim-cache-dir (ini claim_cache_dir), or run without the cache "
    "(--claim-cache off)"
)


def add_options(parser: pytest.Parser) -> None:
    """Register every option of ``OPTIONS`` in one group, each with its ini twin (pytest's parser, duck-typed)."""
    group = parser.getgroup("claimcheck", "claimcheck: check a paper's empirical claims")
    for o in OPTIONS:
        shown = f" (default {o.default})" if o.default else ""
        text = f"{o.help}{shown}; ini: {o.ini}"
        if o.kind == "flag":
            group.addoption(o.flag, action="store_true", default=None, help=text)
            parser.addini(o.ini, o.help, type="bool")
            continue
        if o.kind == "optional":
            group.addoption(o.flag, nargs="?", const=o.const, default=None, metavar=o.metavar, help=text)
        else:
            group.addoption(o.flag, default=None, metavar=o.metavar, help=text)
        parser.addini(o.ini, o.help, default=o.default)
    parser.addini("claim_title", "title of the claim report", default="Claim report")
    parser.addini("claim_baseline_margins", MARGINS_HELP, type="linelist", default=[])


@dataclass(frozen=True)
class Settings:
    """The claim options of one pytest session, validated."""

    report: Path | None  # where to write the markdown report; None: no report
    seed: int  # base seed; claims derive their seeds from it
    budget: Budget
    device: str  # "cpu", "cuda" or "cuda:N" (resolved from "auto")
    data_dir: Path  # where datasets are looked for (may not exist)
    data_dir_source: str  # which setting chose data_dir
    model_dir: Path | None  # a local pretrained model directory, if given
    baseline: Path | None = None  # an earlier run's JSON to compare with
    baseline_fail: str = ""  # the gate's mode: "" off, "all" (worse and undecided fail the session) or "worse"
    baseline_exact: bool = False  # with baseline_fail: a value that is not the baseline's is a regression too
    tolerance: Tolerance = DEFAULT_TOLERANCE
    cache: str = "on"  # on, off, or clear (empty the cache, then use it)
    cache_dir: Path | None = None  # None: the user cache folder
    cache_verify: float = 0.0  # the fraction of cache hits recomputed and compared (0: none, 1: every hit)
    threads: int = 1  # torch intra-op threads per process; 0 means cores / xdist workers
    expected: Expected = field(default_factory=dict)  # claim -> what it is pinned to give at this budget
    expected_source: str = ""  # the file (or baseline) the expectations came from
    pool: str = "confirmatory"  # which seed pool the units draw from: confirmatory or exploratory
    figures: bool = True  # draw the report's figures
    executor: str = "local"  # where training runs that miss the cache run: local or ray
    ray_address: str = ""  # the Ray cluster to run on; empty: an embedded local Ray
    ray_address_source: str = ""  # which setting chose ray_address
    ledger: Path | None = None  # the ledger file or folder; None: no ledger
    ledger_source: str = ""  # which setting named the ledger
    autosave: bool = False  # keep the run's JSON in the history folder
    budget_index: int = 0  # the budget's position in the suite's list of budgets: it selects the seed block
    exploratory: bool = False  # a declared exploratory run: changed code is labelled, not failed
    expected_at: PinnedAt | None = None  # the block the pins were measured on (None: no pins)
    expectations_off: bool = False  # --claim-expectations= (empty): no expectation is checked at all
    timeout: float = 0.0  # wall-clock seconds per claim test and per training run; 0: no limit
    report_link: Path | None = None  # the symbolic link the report path was given as (the set is written at report)
    gate_cap: int = 1  # record each claim test's units up to this multiple of its budget's, for the gate only
    baseline_update: bool = False  # write this run's JSON over the baseline, keeping the old one beside it
    baseline_margins: tuple[tuple[str, float], ...] = ()  # (CLAIM.statistic, margin) from claim_baseline_margins

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        """Read every claim option (the option, else its ini twin) and validate it; raise ConfigError naming it."""
        root = config.rootpath
        values = {o.ini: _value(config, o) for o in OPTIONS}
        for value, source in values.values():
            check_encodable(value, source)
        data_dir, data_src = resolve_data_dir(config.getoption("claim_data_dir"), config.getini("claim_data_dir"), root)
        budgets = config.hook.pytest_claimcheck_budgets(config=config)
        budget = parse_budget(*values["claim_budget"], budgets)
        own = config.hook.pytest_claimcheck_own_subject(config=config)
        expected, source, at = _expected(values["claim_expectations"], budget.name, root, own is False)
        pool = _choice(*values["claim_pool"], {p: p for p in POOLS})
        ray_address, ray_source = resolve_ray_address(*values["claim_ray_address"])
        cache = _choice(*values["claim_cache"], {m: m for m in CACHE_MODES})
        ledger_text, ledger_source = values["claim_ledger"]
        report, link = parse_report(*values["claim_report"], root)
        baseline_fix = "give the .json written next to an earlier claim report"
        baseline = _existing(*values["claim_baseline"], root, "baseline", baseline_fix)
        check_report_spares_baseline(report, baseline)
        baseline_fail = _choice(*values["claim_baseline_fail"], FAIL_MODE_WORDS, FAIL_MODES)
        flags = {key: bool(values[key][0]) for key in ("claim_baseline_update", "claim_baseline_exact")}
        asked = [values[k][1] for k, on in (("claim_baseline_fail", bool(baseline_fail)), *flags.items()) if on]
        check_gate_has_baseline(values["claim_baseline"], baseline, asked)
        return cls(
            report=report,
            seed=parse_seed(*values["claim_seed"]),
            budget=budget,
            device=parse_device(*values["claim_device"]),
            data_dir=data_dir,
            data_dir_source=data_src,
            model_dir=_existing(*values["claim_model_dir"], root, "model directory", MODEL_FIX),
            baseline=baseline,
            baseline_fail=baseline_fail,
            baseline_update=flags["claim_baseline_update"],
            baseline_margins=parse_margins(config.getini("claim_baseline_margins"), "ini claim_baseline_margins"),
            baseline_exact=flags["claim_baseline_exact"],
            tolerance=parse_tolerance(*values["claim_tolerance"]),
            cache=cache,
            threads=parse_threads(*values["claim_threads"]),
            expected=expected,
            expected_source=source,
            cache_dir=parse_cache_dir(*values["claim_cache_dir"], root, cache),
            cache_verify=_number(*values["claim_cache_verify"], FRACTION, lambda v: 0 <= v <= 1, float),
            pool=pool,
            figures=_choice(*values["claim_figures"], SWITCH, "on or off"),
            executor=parse_executor(*values["claim_executor"]),
            ray_address=ray_address,
            ray_address_source=ray_source,
            ledger=parse_path(str(ledger_text or "").strip() or None, root),
            ledger_source=ledger_source,
            autosave=bool(values["claim_autosave"][0]),
            budget_index=budget_index(budget, budgets),
            exploratory=bool(values["claim_exploratory"][0]) or pool == "exploratory",
            expected_at=at,
            expectations_off=values["claim_expectations"] == ("", "--claim-expectations"),
            timeout=parse_timeout(*values["claim_timeout"]),
            gate_cap=_number(*values["claim_gate_cap"], GATE_CAP, lambda v: v >= 1, _whole),
            report_link=link,
        )

    @property
    def rerun_options(self) -> str:
        """Return the core's options that make another session draw the same seeds, sizes and data."""
        pool = " --claim-pool exploratory" if self.pool == "exploratory" else ""
        if self.exploratory and not pool:
            pool = " --claim-exploratory"
        data = f" --claim-data-dir {shlex.quote(str(self.data_dir))}" if self.data_dir_source != "user cache" else ""
        if self.data_dir_source == f"${DATA_ENV}":  # the variable, not this machine's folder
            data = f' --claim-data-dir "${DATA_ENV}"'
        head = f"--claim-seed {self.seed} --claim-budget {self.budget.name} --claim-device {self.device}"
        return f"{head}{pool}{data}"


def _value(config: pytest.Config, option: Option) -> tuple[Any, str]:
    """Return the option's value and where it came from: the command line, else the ini key."""
    value = config.getoption(option.flag.lstrip("-").replace("-", "_"))  # argparse's dest
    if value is not None:
        return value, option.flag
    try:
        return config.getini(option.ini), f"ini {option.ini}"
    except Exception as e:  # pytest's own parse of a bool ini (a UsageError): "invalid truth value 'maybe'"
        raise ConfigError(f"ini {option.ini}: {e}; give true or false (yes/no, on/off, 1/0)") from None


def check_encodable(value: object, option: str) -> None:
    """Raise ConfigError naming ``option`` when ``value`` holds bytes that are not UTF-8 (a path's surrogates)."""
    if not isinstance(value, str):  # every option's value is text or a flag's bool
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigError(
            f"{option}: {os.fsencode(value)!r} holds bytes that are not UTF-8, and the report, its JSON and the cache "
            "record their paths in UTF-8; give a path whose name is UTF-8"
        ) from None


def _expected(
    value: tuple[Any, str], budget: str, root: Path, user_model: bool
) -> tuple[Expected, str, PinnedAt | None]:
    """Return the pins at ``budget``, their file and the block they were measured on (an ini file: the suite's own)."""
    path = parse_path(value[0], root)
    if path is None or (user_model and value[1].startswith("ini")):
        return {}, "", None
    from claimcheck.provenance.expectations import PinnedAt, load_expectations  # the verdicts' library: only with pins

    pins, blocks = load_expectations(path, value[1])
    if budget not in pins:  # nothing to hold this budget to: said, not silent
        return {}, shown_path(path, root), PinnedAt(absent=tuple(sorted(pins)))
    return pins[budget], shown_path(path, root), blocks.get(budget, PinnedAt())


def budget_index(budget: Budget, budgets: list[Budget] | None) -> int:
    """Return the budget's position among the suite's budgets (else the core's): it selects the seed block."""
    names = [b.name for b in budgets] if budgets else list(BUDGETS)
    if len(names) > N_BUDGETS:
        raise ConfigError(
            f"the suite declares {len(names)} budgets ({', '.join(names)}); the seed layout has room for {N_BUDGETS}"
        )
    return names.index(budget.name)


def shown_path(path: Path, root: Path) -> str:
    """Return ``path`` relative to ``root`` when it lies under it, else as it is."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _refuse(option: str, expected: str, text: Any) -> ConfigError:
    return ConfigError(f"{option}: expected {expected}, got {text!r}")


def _number(text: Any, option: str, expected: str, ok: Callable[[T], bool], convert: Callable[[str], T]) -> T:
    """Return ``convert(text)`` (stripped) when ``ok`` accepts it, else raise ConfigError naming ``option``."""
    try:
        value = convert(str(text).strip())
    except ValueError:
        raise _refuse(option, expected, text) from None
    if not ok(value):
        raise _refuse(option, expected, text)
    return value


def _whole(text: str) -> int:
    """Return ``text`` as an int when it is written in digits alone (no sign, no underscore), else raise ValueError."""
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


def _choice(text: Any, option: str, words: Mapping[str, T], expected: str = "") -> T:
    """Return what ``words`` maps ``text`` to (case and spaces ignored), or raise ConfigError naming ``option``."""
    key = str(text).strip().lower() if text is not None else ""
    if key not in words:
        raise _refuse(option, expected or f"one of {', '.join(words)}", text)
    return words[key]


def _existing(text: str | None, option: str, root: Path, what: str, fix: str) -> Path | None:
    """Return the path ``option`` names (None: none), or raise ConfigError saying ``fix`` when it is not there."""
    path = parse_path(text, root)
    if path is not None and not (path.is_file() if what == "baseline" else path.is_dir()):
        kind = ("a folder, not a file" if path.is_dir() else "a file, not a folder") if path.exists() else ""
        raise ConfigError(f"{option}: {what} {path} {('is ' + kind) if kind else 'does not exist'}; {fix}")
    return path


def parse_seed(text: str, option: str) -> int:
    """Return a non-negative integer seed or raise ConfigError naming ``option``."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise ConfigError(f"{option}: expected a non-negative integer seed, got {text!r}") from None
    if value < 0:
        raise ConfigError(f"{option}: expected a non-negative integer seed, got {value}")
    if value > MAX_SEED:
        raise ConfigError(
            f"{option}: seed {value} is too large; use a seed from 0 to {MAX_SEED} (2**32 - 1), "
            "since the claims derive further seeds from it"
        )
    return value


def parse_device(text: str, option: str) -> str:
    """Resolve ``auto|cpu|cuda|cuda:N`` against the visible GPUs (``cpu`` asks no torch) or raise ConfigError."""
    name = str(text).strip().lower()
    if name == "cpu":
        return name
    import torch

    cuda_count = int(torch.cuda.device_count())
    if name == "auto":
        return "cuda" if cuda_count else "cpu"
    m = re.fullmatch(r"cuda(?::(\d+))?", name)
    if not m:
        raise ConfigError(f"{option}: expected auto, cpu, cuda or cuda:N, got {text!r}")
    index = int(m.group(1) or 0)
    if index >= cuda_count:
        raise ConfigError(
            f"{option}: {text!r} asks for GPU {index} but {cuda_count} CUDA device(s) are visible; "
            "use --claim-device cpu (or auto)"
        )
    return name


def parse_report(text: str | None, option: str, root: Path) -> tuple[Path | None, Path | None]:
    """Return the report path (relative to ``root``) and the symbolic link it was given as (else None), or raise."""
    path = parse_path(str(text).strip() if text is not None else None, root)
    if path is None:
        return None, None
    link = path if path.is_symlink() else None
    if link is not None:  # followed: the set is written beside the link's target
        try:
            path = path.resolve(strict=True)
        except (OSError, RuntimeError) as e:  # a loop (ELOOP), a link too deep
            if not isinstance(e, FileNotFoundError):
                reason = e.strerror if isinstance(e, OSError) and e.strerror else "it loops"
                raise ConfigError(
                    f"{option}: {path} is a symbolic link that cannot be followed ({reason}); remove the link or "
                    f"choose another report path (default {DEFAULT_REPORT})"
                ) from None
            path = path.resolve()  # a dangling link: the set is written where it points
    if path.is_dir():
        raise ConfigError(f"{option}: {path} is a directory; give a file path such as {DEFAULT_REPORT}")
    if path.suffix.lower() in (".json", ".py"):
        what = "the name of the report's JSON sidecar" if path.suffix.lower() == ".json" else "a test module's name"
        raise ConfigError(
            f"{option}: {path} ends in {path.suffix}, {what}; give the markdown path "
            f"(e.g. {path.with_suffix('.md').name}) and the sidecar is written beside it"
        )
    for target in (path, sidecar_path(path)):
        why = foreign(path, target)
        if why is not None:
            raise ConfigError(
                f"{option}: {why}; the report set never replaces a file it did not write: move it away or "
                f"choose another report path (default {DEFAULT_REPORT})"
            )
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{option}: {parent} is a file, so {path} cannot be created; choose another report path")
    if not os.access(parent, os.W_OK):
        raise ConfigError(f"{option}: cannot write under {parent}; choose a writable path for the report")
    return path, link


def bare_values_as_test_paths(args: list[str], invocation_dir: Path) -> bool:
    """Give a test path written after a bare ``--claim-report`` or ``--claim-baseline-fail`` back to the test paths.

    Such an option becomes ``--claim-report=<default>`` or ``--claim-baseline-fail=all`` in ``args`` when the next
    word is a test path or no gate mode; return whether any did.
    """
    changed = False
    for i, (word, value) in enumerate(pairwise(args)):
        if word == "--claim-report" and _is_test_path(value, invocation_dir):
            args[i] = f"--claim-report={DEFAULT_REPORT}"
        elif word == "--claim-baseline-fail" and value.strip().lower() not in FAIL_MODE_WORDS:
            if value.startswith("-"):
                continue
            args[i] = "--claim-baseline-fail=all"
        else:
            continue
        changed = True
    return changed


def _is_test_path(word: str, invocation_dir: Path) -> bool:
    """Return whether ``word`` names an existing folder or Python module (a node id's file part counts)."""
    if word.startswith("-"):
        return False
    path = Path(word.split("::")[0]).expanduser()
    path = path if path.is_absolute() else invocation_dir / path
    return path.is_dir() or (path.suffix == ".py" and path.is_file())


def resolve_data_dir(option_value: str | None, ini_value: str | None, root: Path) -> tuple[Path, str]:
    """Pick the data directory: option, then ini, then $CLAIMCHECK_DATA_DIR, then the user cache."""
    fix = "create it or point the setting at the folder that holds jena/, jena_partial/ and sst2/"
    if option_value is not None and not option_value.strip():  # given, and empty: not a quiet fall-through
        raise ConfigError(
            "--claim-data-dir: empty; name the folder that holds jena/, jena_partial/ and sst2/, or leave the "
            f"option out to use the ini key claim_data_dir, ${DATA_ENV} or the user cache"
        )
    for value, source in (
        (option_value, "--claim-data-dir"),
        (ini_value, "ini claim_data_dir"),
        (os.environ.get(DATA_ENV), f"${DATA_ENV}"),
    ):
        path = _existing(value, source, root, "data directory", fix)
        if path is not None:
            return path.resolve(), source
    return user_cache_dir("data"), "user cache"


def parse_budget(text: str, option: str, budgets: list[Budget] | None = None) -> Budget:
    """Return the named budget (from the suite's ``budgets`` when it declares them) or raise ConfigError."""
    try:
        return get_budget(str(text).strip(), budgets)
    except ConfigError as e:
        raise ConfigError(f"{option}: {e}") from None


def parse_tolerance(text: str, option: str) -> Tolerance:
    """Parse ``SAME[,CROSS]`` relative tolerances (finite numbers >= 0; 0 is bit identity) or raise ConfigError."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or not all(0 <= v < math.inf for v in values):
        raise ConfigError(
            f"{option}: expected SAME[,CROSS] finite relative tolerances >= 0 like 0,0.05 (0: bit for bit), "
            f"got {text!r}"
        )
    return Tolerance(values[0], values[-1] if len(values) == 2 else DEFAULT_TOLERANCE.cross)


def parse_timeout(text: str, option: str) -> float:
    """Return a wall-clock limit in seconds (0: none), or raise ConfigError naming ``option``."""
    return _number(text, option, "a number of seconds (0 for no limit)", lambda v: 0 <= v < math.inf, float)


def check_gate_has_baseline(given: tuple[Any, str], baseline: Path | None, asked: Sequence[str]) -> None:
    """Raise ConfigError when the gate options ``asked`` are set without a baseline: nothing would be compared."""
    text, source = given
    if source == "--claim-baseline" and not str(text).strip():
        raise ConfigError(
            "--claim-baseline: empty, so nothing would be compared; give the earlier run's JSON (the .json beside "
            "its claim report), or leave the option out"
        )
    if baseline is None and asked:
        raise ConfigError(
            f"{', '.join(asked)}: no --claim-baseline given, so nothing would be compared and the gate would pass "
            f"without a word; give the earlier run's JSON with --claim-baseline FILE (the .json beside its claim "
            f"report), or drop {', '.join(asked)}"
        )


def check_report_spares_baseline(report: Path | None, baseline: Path | None) -> None:
    """Raise ConfigError when the report's JSON sidecar is the baseline file: the run would write over it."""
    if report is None or baseline is None:
        return
    sidecar = sidecar_path(report)
    try:
        same = sidecar.exists() and os.path.samefile(sidecar, baseline)
    except OSError:
        same = False
    if same or sidecar.resolve() == baseline.resolve():
        raise ConfigError(
            f"--claim-report: its JSON sidecar {sidecar} is the --claim-baseline file {baseline}, so this run would "
            f"write over the baseline it compares with; copy the baseline elsewhere first (cp {baseline} "
            f"baseline.json, then --claim-baseline baseline.json) or choose another --claim-report path"
        )


def parse_margins(lines: Any, option: str) -> tuple[tuple[str, float], ...]:
    """Return (CLAIM.statistic, margin) pairs from ``CLAIM.statistic=MARGIN`` lines (split at the last ``=``)."""
    out: list[tuple[str, float]] = []
    for line in lines or ():
        name, eq, text = str(line).strip().rpartition("=")
        try:
            margin = float(text)
        except ValueError:
            margin = math.nan
        if not (eq and "." in name.strip() and 0 <= margin < math.inf):
            raise ConfigError(
                f'{option}: expected CLAIM.statistic=MARGIN (a finite number >= 0), e.g. "C2.loss_T / loss_0=0.05", '
                f"got {line!r}"
            )
        out.append((name.strip(), margin))
    return tuple(out)


def parse_executor(text: str, option: str) -> str:
    """Return local or ray, or raise ConfigError naming ``option`` (and the install command when Ray is missing)."""
    name = _choice(text, option, {e: e for e in EXECUTORS})
    why = ray_missing() if name == "ray" else None
    if why is not None:
        raise ConfigError(f"{option} ray: {why}")
    return name


def resolve_ray_address(value: str | None, source: str) -> tuple[str, str]:
    """Return the Ray cluster named by ``source``, else by $RAY_ADDRESS, with its source ("", "": a local Ray)."""
    if value and str(value).strip():
        return str(value).strip(), source
    env = os.environ.get(RAY_ENV, "").strip()
    return (env, f"${RAY_ENV}") if env else ("", "")


def parse_cache_dir(text: str | None, option: str, root: Path, mode: str = "on") -> Path | None:
    """Return the cache folder named by ``option`` (None: the user cache folder), checked unless ``mode`` is off."""
    path = parse_path(str(text).strip() if text else None, root)
    if mode != "off":
        source = option if path is not None else "the default cache folder (--claim-cache-dir is not set)"
        check_cache_dir(path or user_cache_dir("results"), source)
    return path


def check_cache_dir(path: Path, source: str) -> None:
    """Create ``path`` if needed and write a probe file in it; raise ConfigError naming ``source`` if that fails."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{source}: {path} is a file, not a folder; remove it or {CACHE_DIR_FIX}")
    parent = path
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(
            f"{source}: {parent} is a file, so the cache folder {path} cannot be created; {CACHE_DIR_FIX}"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".claimcheck-write-probe.", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise ConfigError(
            f"{source}: cannot write in the cache folder {path} ({reason}); the cache needs to write entries and "
            f"their lock files even to read; make it writable or {CACHE_DIR_FIX}"
        ) from None


def parse_path(text: str | None, root: Path) -> Path | None:
    """Return ``text`` as a path relative to ``root`` (``~`` expanded; it need not exist), or None if empty."""
    if not text:
        return None
    path = Path(text).expanduser()
    return path if path.is_absolute() else root / path


def parse_threads(text: str, option: str) -> int:
    """Return a positive thread count, or 0 for ``auto``; raise ConfigError naming ``option``."""
    if str(text).strip().lower() == "auto":
        return 0
    return _number(text, option, "a positive number of threads or auto", lambda v: v > 0, _whole)


def spread_device(device: str, worker_id: str | None, cuda_count: int) -> str:
    """Return the device of pytest-xdist worker ``gwK``: plain ``cuda`` becomes ``cuda:(K mod count)``."""
    if device != "cuda" or worker_id is None or cuda_count < 2:
        return device
    return f"cuda:{int(worker_id.removeprefix('gw')) % cuda_count}"
