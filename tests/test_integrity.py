"""The integrity of a verdict, seen from outside: disjoint seed blocks, ledger states, a tamper-evident ledger,
confirmations checked against git, and expectations that hold at any base seed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.cli.main import main as cli
from claimcheck.errors import ConfigError
from claimcheck.protocol.spec import EXPLORATORY_CAP, N_BUDGETS, SPAN, ClaimProtocol, Part, Seeds, Stat, block_seed
from claimcheck.provenance.ledger import append, load_ledger
from claimcheck.pytest.options import MAX_SEED

MODULE = """
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

VALUE = {value}
PROTOCOL = ClaimProtocol(
    "T1",
    1,
    parts=(Part("", "the toy value is small", (Stat("s", "<=", 1.0),), bar=0.5),),
    controls=(Control("ctl", "", "the toy claim should not hold here", max_pass_rate=0.5),),
    seeds=Seeds("T1-v1", 1000, {{"ci": 10, "standard": 12}}),
)
CLAIM = pytest.mark.claim("T1", "toy", "Sec. 1", protocol=PROTOCOL)


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("s", VALUE if claim_seed % 2 else {odd}, part="")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("s", 2.0, control="ctl")
"""
CONFTEST = """
from pathlib import Path

from claimcheck.provenance.fingerprint import Engine


def pytest_claimcheck_engine(config):
    return Engine(identity=(Path(__file__).parent / "engine.txt").read_text().strip())
"""


@pytest.fixture
def toy(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A suite of one claim with an engine identity read from engine.txt, run from its own folder."""
    pytester.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.5))
    pytester.makeconftest(CONFTEST)
    (pytester.path / "engine.txt").write_text("engine-one\n")
    monkeypatch.chdir(pytester.path)
    return pytester


def _register(change: str = "first version") -> int:
    return cli(
        ["ledger", "register", "test_toy.py", "--change", change, "--motivated-by", "a test", "--ledger", "ledger.toml"]
    )


def _report(pytester: pytest.Pytester) -> str:
    return (pytester.path / "reports" / "claim-report.md").read_text()


def _json(pytester: pytest.Pytester) -> dict[str, object]:
    return json.loads((pytester.path / "reports" / "claim-report.json").read_text())  # type: ignore[no-any-return]


# --- seeds -------------------------------------------------------------------------------------------------


def _seeds(pytester: pytest.Pytester, *args: str) -> set[int]:
    out = pytester.runpytest("--collect-only", "-q", *args).stdout.str()
    return {int(s) for s in re.findall(r"test_claim\[seed(\d+)\]", out)}


def test_two_base_seeds_and_two_budgets_draw_disjoint_seed_lists(toy: pytest.Pytester) -> None:
    blocks = {
        (seed, budget, pool): _seeds(toy, f"--claim-seed={seed}", f"--claim-budget={budget}", f"--claim-pool={pool}")
        for seed in (0, 1)
        for budget in ("ci", "standard")
        for pool in ("confirmatory", "exploratory")
    }
    assert blocks[(0, "ci", "confirmatory")] == set(range(1000, 1010))  # base seed 0 at ci: the protocol's block
    assert all(len(s) in (10, 12) for s in blocks.values())
    union = [x for s in blocks.values() for x in s]
    assert len(union) == len(set(union))  # no seed is drawn twice by two (base seed, budget, pool) blocks


def test_the_largest_derived_seed_fits_every_generator() -> None:
    top = block_seed(MAX_SEED, N_BUDGETS - 1, SPAN - 1)
    assert top < 2**63
    torch.Generator().manual_seed(top)
    np.random.default_rng(np.random.SeedSequence([top, 0x5EED])).normal()
    assert np.random.default_rng(top).integers(10) >= 0


def test_a_block_that_meets_the_exploratory_pool_is_refused_naming_the_protocol() -> None:
    with pytest.raises(ConfigError, match=r"T1 v1: seeds block 'T1-v1' starts at 10, inside the exploratory pool"):
        ClaimProtocol("T1", 1, (Part("", "p", (Stat("s", "<=", 1.0),)),), (), Seeds("T1-v1", 10, {"ci": 3}))
    with pytest.raises(ConfigError, match="must stay within a block"):
        ClaimProtocol("T1", 1, (Part("", "p", (Stat("s", "<=", 1.0),)),), (), Seeds("T1-v1", SPAN - 2, {"ci": 3}))
    with pytest.raises(ConfigError, match="must stay within a block"):
        units = {"ci": EXPLORATORY_CAP + 1}
        ClaimProtocol("T1", 1, (Part("", "p", (Stat("s", "<=", 1.0),)),), (), Seeds("T1-v1", 5000, units))


# --- ledger states -------------------------------------------------------------------------------------------


def test_code_that_matches_no_registered_version_is_changed_and_fails_the_session(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*T1 changed: the code that decides T1 (fingerprint *) matches no registered*"])
    assert "| v1, changed |" in _report(toy) and "**Ledger**: changed: T1" in _report(toy)


@pytest.mark.parametrize("option", ["--claim-exploratory", "--claim-pool=exploratory"])
def test_a_run_declared_exploratory_labels_changed_code_without_failing(toy: pytest.Pytester, option: str) -> None:
    result = toy.runpytest("--claim-ledger=ledger.toml", option)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*T1 changed: *labelled only: the run is declared exploratory*"])


def test_a_registered_version_runs_unconfirmed_and_a_changed_constant_makes_it_changed(toy: pytest.Pytester) -> None:
    assert _register() == 0
    result = toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*T1: REPRODUCED [[]v1 registered]*"])
    assert "registered: v1 (code " in _report(toy) and "not confirmed" in _report(toy)
    assert _register() == 0  # nothing changed: nothing is appended
    assert len(load_ledger(toy.path / "ledger.toml").entries) == 1
    toy.makepyfile(test_toy=MODULE.format(value=0.25, odd=0.5))  # a constant of the claim module
    assert toy.runpytest("--claim-ledger=ledger.toml").ret == pytest.ExitCode.TESTS_FAILED


EDITS_ITSELF = """
from pathlib import Path


def test_a_edit_this_file():  # runs before the claim's tests (file order): an edit made while the run goes on
    if Path("edit.flag").exists():
        here = Path(__file__)
        here.write_text(here.read_text().replace("VALUE = 0.5", "VALUE = 0.25"))
"""


def test_the_fingerprint_is_of_the_code_as_imported_not_as_edited_while_the_run_goes_on(toy: pytest.Pytester) -> None:
    toy.makepyfile(test_toy=EDITS_ITSELF + MODULE.format(value=0.5, odd=0.5))

    def fingerprint() -> str:
        toy.runpytest("--claim-ledger=ledger.toml", "--claim-exploratory", "--claim-report", "-p", "no:randomly")
        return str(_json(toy)["code"]["T1"]["fingerprint"])  # type: ignore[index]

    as_written = fingerprint()
    (toy.path / "edit.flag").write_text("")
    assert fingerprint() == as_written  # the run imported VALUE = 0.5 and says so
    assert "VALUE = 0.25" in (toy.path / "test_toy.py").read_text()
    (toy.path / "edit.flag").unlink()
    assert fingerprint() != as_written  # the edit is seen by the next run


def test_the_state_is_decided_under_pytest_xdist_from_what_the_workers_report(toy: pytest.Pytester) -> None:
    """The workers fingerprint the claim's code; the controller, which never imports it, decides the state."""
    result = toy.runpytest_subprocess("-n", "2", "--claim-ledger=ledger.toml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*T1 changed: the code that decides T1 (fingerprint *) matches no registered*"])


def test_an_edited_or_removed_ledger_entry_is_an_error_naming_the_file_and_entry(toy: pytest.Pytester) -> None:
    assert _register() == 0 and _register_edit(toy) == 0
    ledger = toy.path / "ledger.toml"
    text = ledger.read_text()
    ledger.write_text(text.replace('change = "first version"', 'change = "a quieter history"'))
    result = toy.runpytest("--claim-ledger=ledger.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ledger *ledger.toml: entry #1 (register T1) does not match its hash*edited*"])
    first = text.index("\n[[entry]]\n")
    second = text.index("\n[[entry]]\n", first + 1)
    ledger.write_text(text[:first] + text[second:])  # the first registration removed
    result = toy.runpytest("--claim-ledger=ledger.toml")
    result.stderr.fnmatch_lines(["*entry #1 (register T1) follows *, but the entry before it is none*"])
    assert cli(["ledger", "verify", "ledger.toml"]) == 1


def _register_edit(toy: pytest.Pytester) -> int:
    toy.makepyfile(test_toy=MODULE.format(value=0.25, odd=0.5))
    return _register("value 0.5 -> 0.25")


# --- confirmations and git -----------------------------------------------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(path: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True, text=True).stdout


def _commit(path: Path, message: str) -> str:
    _git(path, "add", "-A", ".", ":!reports")
    _git(path, "commit", "-qm", message)
    return _git(path, "rev-parse", "--short=12", "HEAD").strip()


@needs_git
def test_a_confirmation_stands_on_another_engine_and_shows_both_identities(toy: pytest.Pytester) -> None:
    _git(toy.path, "init", "-q")
    assert _register() == 0
    _commit(toy.path, "register T1 v1")
    assert toy.runpytest("--claim-ledger=ledger.toml", "--claim-report").ret == 0
    assert cli(["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml"]) == 0
    _commit(toy.path, "confirm T1 v1")
    result = toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*T1: REPRODUCED [[]v1 confirmed]*"])
    (toy.path / "engine.txt").write_text("engine-two\n")  # new hardware, new engine: shown, not unconfirmed
    result = toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*T1: REPRODUCED [[]v1 confirmed]*"])
    text = _report(toy)
    assert "on engine engine-one" in text and "this run: engine engine-two" in text
    assert "**Ledger**: confirmed: T1; confirmed on engine engine-one; this run: engine engine-two" in text


@needs_git
def test_a_version_is_confirmed_once_per_budget_and_the_ledger_shows_each(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(toy.path, "init", "-q")
    assert _register() == 0
    _commit(toy.path, "register T1 v1")
    assert toy.runpytest("--claim-ledger=ledger.toml", "--claim-report").ret == 0
    assert cli(["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml"]) == 0
    _commit(toy.path, "confirm T1 v1 at ci")
    std = ("--claim-ledger=ledger.toml", "--claim-budget=standard", "--claim-report=reports/std.md")
    assert toy.runpytest(*std).ret == 0  # standard draws its own block: disjoint from ci's seeds
    assert cli(["ledger", "confirm", "reports/std.json", "--ledger", "ledger.toml"]) == 0
    _commit(toy.path, "confirm T1 v1 at standard")
    assert cli(["ledger", "confirm", "reports/std.json", "--ledger", "ledger.toml"]) == 1
    assert "already confirmed at standard; a block runs once per version and budget" in capsys.readouterr().out
    assert [e.get("budget") for e in load_ledger(toy.path / "ledger.toml").entries[1:]] == ["ci", "standard"]
    toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert re.search(r"confirmed: v1 .* at ci, .*; also confirmed at standard, base seed 0 \(commit \w+", _report(toy))


@needs_git
def test_confirm_refuses_a_run_that_is_not_the_registered_block(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _git(toy.path, "init", "-q")
    assert _register() == 0
    toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")  # before the registration was committed
    _commit(toy.path, "register T1 v1")
    toy.runpytest("--claim-ledger=ledger.toml", "--claim-report=reports/other.md", "--claim-seed=7")
    assert cli(["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml"]) == 1
    assert cli(["ledger", "confirm", "reports/other.json", "--ledger", "ledger.toml"]) == 1
    out = capsys.readouterr().out
    assert "does not descend from" in out and "base seed 7" in out
    assert [e.kind for e in load_ledger(toy.path / "ledger.toml").entries] == ["register"]


@needs_git
def test_a_confirmation_of_a_registration_committed_after_its_run_is_an_error(toy: pytest.Pytester) -> None:
    _git(toy.path, "init", "-q")
    before = _commit(toy.path, "the claim, not yet registered")
    assert _register() == 0
    reg = load_ledger(toy.path / "ledger.toml").entries[0]
    fields = {"claim": "T1", "registration": reg.hash, "budget": "ci", "base_seed": 0, "pool": "confirmatory",
              "seeds": "1000-1002", "commit": before, "engine": "engine-one", "date": "2026-12-01",
              "verdict": "REPRODUCED", "result": "hand-written"}  # fmt: skip
    append(toy.path / "ledger.toml", "confirm", fields)
    _commit(toy.path, "a registration and its confirmation, committed together after the run")
    result = toy.runpytest("--claim-ledger=ledger.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*entry #2 (confirm T1*its run used commit {before}, which does not descend from*"])


@needs_git
def test_confirm_outside_a_git_repository_says_the_folder_is_not_one_and_what_to_do(
    toy: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _register() == 0
    toy.runpytest("--claim-ledger=ledger.toml", "--claim-report")
    assert cli(["ledger", "confirm", "reports/claim-report.json", "--ledger", "ledger.toml"]) == 1
    out = capsys.readouterr().out
    assert "the ledger ledger.toml is not in a git repository" in out and "git init" in out
    assert "git is not available" not in out


def test_git_checks_are_skipped_with_a_note_outside_a_repository(toy: pytest.Pytester) -> None:
    assert _register() == 0
    reg = load_ledger(toy.path / "ledger.toml").entries[0]
    fields = {"claim": "T1", "registration": reg.hash, "budget": "ci", "base_seed": 0, "pool": "confirmatory",
              "seeds": "1000-1002", "commit": "abc", "engine": "engine-one", "date": "2026-12-01",
              "verdict": "REPRODUCED", "result": "r"}  # fmt: skip
    append(toy.path / "ledger.toml", "confirm", fields)
    toy.runpytest("--claim-ledger=ledger.toml", "--claim-report", "-p", "no:cacheprovider")
    env = _json(toy)["env"]
    assert "git checks skipped" in env["ledger"]  # type: ignore[index]


# --- expectations per block ----------------------------------------------------------------------------------


def _pin(toy: pytest.Pytester) -> None:
    toy.runpytest("--claim-report")
    assert cli(["expectations", "reports/claim-report.json", "-o", "expected.toml"]) == 0


def test_at_another_base_seed_only_verdicts_are_compared_and_the_run_says_so(toy: pytest.Pytester) -> None:
    toy.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.9))  # the median moves with the seeds drawn
    _pin(toy)
    text = (toy.path / "expected.toml").read_text()
    assert "[ci]\nbase_seed = 0" in text and 'pool = "confirmatory"' in text
    assert toy.runpytest("--claim-expectations=expected.toml").ret == 0
    result = toy.runpytest("--claim-expectations=expected.toml", "--claim-seed=104729", "--claim-report")
    assert result.ret == 0  # same verdict on another block: the pinned median is not held against it
    result.stdout.fnmatch_lines(
        ["*pins budget ci on base seed 0 (confirmatory pool), cpu *; this run draws base seed 104729*"]
    )
    assert "only the verdicts of claims and parts are compared" in _report(toy)
    toy.makepyfile(test_toy=MODULE.format(value=0.5, odd=3.0))  # now half the units fail: the verdict moves
    result = toy.runpytest("--claim-expectations=expected.toml", "--claim-seed=104729")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*deviation: T1 is * expects REPRODUCED*"])


def test_pins_from_other_kernels_hold_only_the_verdicts_and_the_run_says_so(toy: pytest.Pytester) -> None:
    """A host whose vector kernels round otherwise (AVX2 against AVX-512) gives other bits on the same seeds."""
    toy.makepyfile(test_toy=MODULE.format(value=0.5, odd=0.9))
    _pin(toy)
    pinned = (toy.path / "expected.toml").read_text()
    here = tomllib.loads(pinned)["ci"]["numerics"]
    assert here.startswith("cpu ")  # the pinning run's own kernels are written down
    toy.makepyfile(test_toy=MODULE.format(value=0.6, odd=0.9))  # the median moves, the verdict does not
    result = toy.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the same kernels: the moved median is a deviation
    (toy.path / "expected.toml").write_text(pinned.replace(f'numerics = "{here}"', 'numerics = "cpu NEON"'))
    result = toy.runpytest("--claim-expectations=expected.toml", "--claim-report")
    assert result.ret == 0 and "deviation" not in result.stdout.str()
    report = _report(toy)  # no rounding spread was measured for T1: nothing tells its chaotic statistics from the rest
    assert (
        "this run rounds under other numerics (cpu " in report
        and "T1 by the verdicts of claims and parts alone" in report
    )
    toy.makepyfile(test_toy=MODULE.format(value=3.0, odd=3.0))  # a verdict that moves still fails there
    assert toy.runpytest("--claim-expectations=expected.toml").ret == pytest.ExitCode.TESTS_FAILED


ROUNDING_MODULE = """
import os

import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat

ROUNDING = float(os.environ.get("TOY_ROUNDING", "0"))  # what another kernel's last bits do to a value at an edge
PROTOCOL = ClaimProtocol(
    "T1",
    1,
    parts=(Part("", "the toy values are small", (Stat("edge", "<=", 1.0), Stat("firm", "<=", 1.0)), bar=0.5),),
    controls=(Control("ctl", "", "the toy claim should not hold here", max_pass_rate=0.5),),
    seeds=Seeds("T1-v1", 1000, {{"ci": 10, "standard": 12}}),
)


@pytest.mark.claim("T1", "toy", "Sec. 1", protocol=PROTOCOL)
def test_claim(claim_record, claim_seed):
    claim_record.check("edge", 1.0 - 1e-12 + ROUNDING * (claim_seed % 10 == 0), part="")
    claim_record.check("firm", 0.5 + {shift} + 1e-3 * (claim_seed % 10), part="")


@pytest.mark.claim("T1", "toy", "Sec. 1", protocol=PROTOCOL)
def test_control(claim_record, claim_seed):
    claim_record.check("edge", 2.0, control="ctl")
"""


def test_a_measured_rounding_spread_holds_chaotic_statistics_at_the_verdict_level_and_the_rest_to_their_pins(
    toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 49: a new host passes where only statistics that rounding moves have moved, and fails naming the rest."""
    toy.makepyfile(test_toy=ROUNDING_MODULE.format(shift=0.0))
    toy.runpytest("--claim-report")
    (toy.path / "reports" / "claim-report.json").rename(toy.path / "ref.json")
    monkeypatch.setenv("TOY_ROUNDING", "1e-11")  # the same seeds under "other kernels": one unit crosses its edge
    toy.runpytest("--claim-report")
    (toy.path / "reports" / "claim-report.json").rename(toy.path / "rerun.json")
    assert cli(["expectations", "ref.json", "--rounding", "rerun.json", "-o", "expected.toml"]) == 0
    pins = tomllib.loads((toy.path / "expected.toml").read_text())["ci"]
    stats = pins["T1"]["stats"]
    assert stats["claim / edge"]["chaotic"].startswith("measured met 9-10 of 10")
    assert "chaotic" not in stats["claim / firm"] and stats["claim / firm"]["rounding"] == 0
    assert len(pins["T1"]["rounding"]) == 1
    result = toy.runpytest("--claim-expectations=expected.toml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the pins' own numerics: every count is held, bit for bit
    result.stdout.fnmatch_lines(["*deviation: T1 claim / edge: met 9/10, * pins 10/10*"])
    text = (toy.path / "expected.toml").read_text()
    (toy.path / "expected.toml").write_text(
        text.replace(f"numerics = {json.dumps(pins['numerics'])}", 'numerics = "cpu NEON; elsewhere"')
    )
    result = toy.runpytest("--claim-expectations=expected.toml", "--claim-report")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*held at the verdict level: T1 claim / edge: met 9/10*chaotic under rounding*"])
    assert "Held at the verdict level under these numerics" in _report(toy)
    assert any("claim / edge" in line for line in _json(toy)["rounding"])  # type: ignore[attr-defined]
    assert cli(["audit", "reports/claim-report.json", "--expectations", "expected.toml", "-o", "audit.md"]) == 0
    table = (toy.path / "audit.md").read_text()
    assert "chaotic: verdict level" in table
    assert "1 of 1 verdicts the same" in table and "0 moved beyond" in table
    toy.makepyfile(test_toy=ROUNDING_MODULE.format(shift=0.2))  # a change beyond rounding: the firm median moves
    result = toy.runpytest("--claim-expectations=expected.toml", "--claim-report")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*deviation: T1 claim / firm: median 0.70*pins 0.50*"])
    assert "1 deviation(s) from the expectations" in _report(toy) and "claim / firm" in _report(toy)
    assert [d for d in _json(toy)["deviations"] if "claim / firm" in d]  # type: ignore[attr-defined]
    assert cli(["audit", "reports/claim-report.json", "--expectations", "expected.toml"]) == 1


def test_a_rounding_rerun_of_another_block_is_refused(toy: pytest.Pytester) -> None:
    toy.runpytest("--claim-report")
    (toy.path / "reports" / "claim-report.json").rename(toy.path / "ref.json")
    toy.runpytest("--claim-report", "--claim-seed=7")
    assert cli(["expectations", "ref.json", "--rounding", "reports/claim-report.json"]) != 0


def test_an_empty_expectations_option_turns_every_check_off(toy: pytest.Pytester) -> None:
    toy.makepyfile(test_toy=MODULE.format(value=3.0, odd=3.0))  # NOT REPRODUCED
    result = toy.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*T1 is NOT REPRODUCED (no expectations are set, so it must reproduce)*"])
    result = toy.runpytest("--claim-expectations=", "--claim-report")
    assert result.ret == 0 and "deviation" not in result.stdout.str()
    assert "Expectations: off (--claim-expectations= is empty)" in _report(toy)


def test_a_non_finite_median_says_why(toy: pytest.Pytester) -> None:
    _pin(toy)
    toy.makepyfile(test_toy=MODULE.format(value="float('-inf')", odd="float('-inf')"))
    result = toy.runpytest("--claim-expectations=expected.toml")
    result.stdout.fnmatch_lines(
        [
            "*T1 claim / s: median -inf (non-finite: 10 of 10 values are -inf (units 1000, 1001, *, ...)*"
            "*division by zero*"
        ]
    )
