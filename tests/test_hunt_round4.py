"""An outside user's fault hunt of 7 December (evening): each test is one defect it found, now fixed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.cli.main import main
from claimcheck.gate.accept import AcceptError, accept

TOY = """
import pytest

ONE = pytest.mark.claim("C1", "a toy claim", "Sec. 1")


@ONE
def test_one(claim_record, claim_seed):
    claim_record.check("s", 0.5, "<=", 1.0, label="toy")


@ONE
def test_one_shuffled(claim_record, claim_seed):
    claim_record.check("s", 2.0, "<=", 1.0, control="shuffled", label="toy")


@ONE
def test_one_sanity(claim_record, claim_seed):
    claim_record.check("s", 3.0, "<=", 1.0, control="sanity", label="toy")
"""


def test_a_claim_with_a_test_deselected_is_not_decided_and_the_report_says_which(pytester: pytest.Pytester) -> None:
    # C3 read REPRODUCED with its one discriminating control deselected by -k (a sanity control counted as "a control")
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest_inprocess("--claim-report=out.md", "-k", "not shuffled")
    result.stdout.fnmatch_lines(["*C1: INCONCLUSIVE*", "*3 test(s) of this claim did not run*"])
    text = (pytester.path / "out.md").read_text()
    assert "not selected (a node id, -k, -m, --deselect or --lf): test_toy.py::test_one_shuffled\\[seed0\\]" in text
    whole = pytester.runpytest_inprocess("--claim-report=all.md", "-k", "toy")  # every test: no note
    assert "not selected (" not in (pytester.path / "all.md").read_text() and whole.ret == 0


def test_a_claim_test_left_out_by_a_node_id_is_named_as_not_selected(pytester: pytest.Pytester) -> None:
    # a node id (or --lf) collects some of a module's functions and deselects nothing: C3 read ERROR, no banner
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest_inprocess(
        "--claim-report=out.md", "test_toy.py::test_one", "test_toy.py::test_one_sanity"
    )
    assert "INCOMPLETE RUN" in result.stdout.str()
    text = (pytester.path / "out.md").read_text()
    assert "not selected (a node id, -k, -m, --deselect or --lf): test_toy.py::test_one_shuffled\\[seed0\\];" in text


def test_a_parametrized_id_or_a_class_method_left_out_is_named_and_a_whole_file_run_stays_complete(
    pytester: pytest.Pytester,
) -> None:
    # a node id with one seed read REPRODUCED 1/1 COMPLETE; a class's other method was never seen; a module-level
    # claim marker made a fixture named test_* a "left out" test
    pytester.makepyfile(test_toy=TOY)
    one = pytester.runpytest_inprocess("--claim-report=one.md", "test_toy.py::test_one[seed0]")
    assert "INCOMPLETE RUN" in one.stdout.str() and "test_one\\[seed1\\]" in (pytester.path / "one.md").read_text()
    pytester.makepyfile(
        test_cls="""
import pytest

@pytest.mark.claim("C2", "a toy claim", "Sec. 2")
class TestToy:
    def test_two(self, claim_record, claim_seed):
        claim_record.check("s", 0.5, "<=", 1.0, label="toy")

    def test_two_shuffled(self, claim_record, claim_seed):
        claim_record.check("s", 2.0, "<=", 1.0, control="shuffled", label="toy")
""",
        test_mod="""
import pytest

pytestmark = pytest.mark.claim("C3", "a toy claim", "Sec. 3")

@pytest.fixture
def test_input():
    return 0.5

def testing_helper():
    return 1
testing_helper.__test__ = False

def test_three(claim_record, claim_seed, test_input):
    claim_record.check("s", test_input, "<=", 1.0, label="toy")

def test_three_shuffled(claim_record, claim_seed):
    claim_record.check("s", 2.0, "<=", 1.0, control="shuffled", label="toy")
""",
    )
    cls = pytester.runpytest_inprocess("--claim-report=cls.md", "test_cls.py::TestToy::test_two")
    assert "INCOMPLETE RUN" in cls.stdout.str()
    assert "test_cls.py::TestToy::test_two_shuffled\\[seed0\\]" in (pytester.path / "cls.md").read_text()
    whole = pytester.runpytest_inprocess("--claim-report=mod.md", "test_mod.py")
    assert "INCOMPLETE RUN" not in whole.stdout.str() and whole.ret == 0


def test_a_claim_none_of_whose_tests_was_selected_is_simply_not_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY, test_other="def test_plain():\n    assert True\n")
    result = pytester.runpytest_inprocess("--claim-report=out.md", "-k", "plain")
    assert result.ret == 0 and "not selected (" not in result.stdout.str()


def test_an_accepted_baseline_keeps_every_test_of_its_claims(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    pytester.runpytest_inprocess("--claim-report=base.md")
    base = pytester.path / "base.json"
    whole = base.read_text()
    data = json.loads(whole)
    data["tests"] = [t for t in data["tests"] if "shuffled" not in t["nodeid"]]
    data["incomplete"] = []  # as an older run or an edited file could be
    with pytest.raises(AcceptError, match=r"3 test.s. this run did not run .test_toy.py::test_one_shuffled\[seed0\]"):
        accept(json.dumps(data), base)
    assert base.read_text() == whole


def test_expectations_pin_only_the_budget_the_run_ran(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_cli_output import _run_json

    run = _run_json(tmp_path)  # a ci run
    out = tmp_path / "exp.toml"
    assert main(["expectations", str(run), "--budget", "standard", "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert "--budget standard" in err and "ran budget ci" in err and not out.exists()
    assert main(["expectations", str(run), "--budget", "ci", "-o", str(out)]) == 0 and "[ci]" in out.read_text()


def test_render_of_a_gated_run_keeps_its_comparison_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    pytester.runpytest_inprocess("--claim-report=base.md")
    pytester.runpytest_inprocess("--claim-report=now.md", "--claim-baseline=base.json")
    written = (pytester.path / "now.md").read_text()
    assert "## Comparison with baseline" in written
    assert main(["render", str(pytester.path / "now.json"), "-o", str(pytester.path / "again.md")]) == 0
    assert (pytester.path / "again.md").read_text() == written


def test_ledger_show_names_an_id_the_ledger_never_held(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[1]
    assert main(["ledger", "show", str(root / "claims" / "ledger"), "--claim", "C9"]) != 0
    assert "--claim C9: no entry in the ledger; it holds C1, C2" in capsys.readouterr().err


def test_render_into_a_folder_under_a_file_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_cli_output import _run_json

    run = _run_json(tmp_path)
    (tmp_path / "mine.md").write_text("mine")
    assert main(["render", str(run), "-o", str(tmp_path / "mine.md" / "x.md")]) != 0
    err = capsys.readouterr().err
    assert "-o " in err and "choose a path you can write to" in err and (tmp_path / "mine.md").read_text() == "mine"


def test_a_rerun_of_another_version_s_block_is_no_rounding_rerun_of_a_claim() -> None:
    # the Xeon's run of C5 v6's block, given as a rounding rerun of C5 v7's, would make every statistic "chaotic"
    from claimcheck.provenance.expectations import with_rounding

    pinned = _toy_results("C1-v2", [0.1, 0.2, 0.3, 2.0])
    (same,) = with_rounding(pinned, [("other", _toy_results("C1-v2", [0.1, 0.2, 0.3000001, 2.0]))]).values()
    assert same.rounding == ("other",)
    (kept,) = with_rounding(pinned, [("other", _toy_results("C1-v1", [0.9, 0.2, 0.3, 0.4]))]).values()
    assert kept.rounding == () and not any(sp.chaotic for sp in kept.stats.values())


def _toy_results(block: str, values: list[float], claim: str = "C1") -> list:  # type: ignore[type-arg]
    from claimcheck.decide.record import ClaimRecorder
    from claimcheck.decide.verdicts import TestOutcome
    from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
    from claimcheck.report.rundata import RunData

    part = Part("", "s stays small", (Stat("s", "<=", 1.0),), bar=0.5)
    proto = ClaimProtocol(claim, 1, (part,), (Control("ctl", "", "shifted"),), Seeds(block, 1000, {"ci": 40}))
    tests = []
    for seed, v in enumerate(values):
        rec = ClaimRecorder(claim, seed=seed, protocol=proto)
        rec.check("s", v, unit=seed)
        rec.check("s", 5.0, control="ctl", unit=seed)
        tests.append(TestOutcome(f"t.py::test[{seed}]", claim, "t", "s", "passed", rec, protocol=proto.to_dict()))
    return RunData("r", {"cpu": "x"}, tests).results()


def test_a_new_version_s_block_reads_as_one_line_saying_re_pin_not_as_every_statistic_moved() -> None:
    # C5 v7 on its new block against v6's pins gave 19 deviation lines, each "if this change is intended, rewrite"
    import tomllib

    from claimcheck.provenance.expectations import (
        NOT_IN_RUN,
        OTHER_BLOCK,
        audit,
        deviations,
        parse_pins,
        pins_of,
        render_pins,
    )

    pins = parse_pins(tomllib.loads(render_pins("ci", pins_of(_toy_results("C1-v1", [0.1, 0.2, 3.0])))), "-o", "x")
    assert pins["ci"]["C1"].block == "C1-v1"
    now = _toy_results("C1-v2", [0.9, 2.0, 3.0])
    (line,) = deviations(now, pins["ci"], "the pins")
    assert "block C1-v2" in line and "pins block C1-v1" in line and "re-pin" in line
    assert not deviations(_toy_results("C1-v1", [0.1, 0.2, 3.0]), pins["ci"], "the pins")
    rows = audit(now, {**pins["ci"], "C9": pins["ci"]["C1"]}, True)
    assert [r[-1] for r in rows] == [NOT_IN_RUN, OTHER_BLOCK]


def test_the_matrix_does_not_count_a_claim_an_interrupted_run_did_not_finish_as_agreeing(tmp_path: Path) -> None:
    from claimcheck.cli.main import render_matrix
    from claimcheck.report.rundata import RunData

    done = RunData("r", {"git commit": "a"}, _toy_results("C1-v1", [0.1, 0.2, 3.0])[0].tests)
    cut = RunData("r", {"git commit": "b"}, done.tests, not_run={"C1": ["t.py::test[3]"]})
    text = render_matrix([("a.json", done), ("b.json", cut)])
    row = next(line for line in text.splitlines() if line.startswith("| C1"))
    assert "(did not finish)" in row and row.rstrip(" |").endswith("-")


def test_expectations_refuse_an_incomplete_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_cli_output import _run_json

    run = _run_json(tmp_path)
    data = json.loads(run.read_text())
    data["incomplete"] = ["not selected (a node id, -k, -m, --deselect or --lf): t.py::test_control"]
    run.write_text(json.dumps(data))
    out = tmp_path / "exp.toml"
    assert main(["expectations", str(run), "-o", str(out)]) != 0 and not out.exists()
    assert "the run is incomplete (not selected" in capsys.readouterr().err


def test_the_gate_does_not_call_a_claim_the_run_did_not_finish_worse() -> None:
    # -k "not c3_control_adversarial" against a full baseline read "worse: C3 REPRODUCED -> INCONCLUSIVE", exit 13
    from claimcheck.gate.baseline import compare
    from claimcheck.gate.decision import judge
    from claimcheck.report.rundata import RunData

    base = RunData("b", {"cpu": "x"}, _toy_results("C1-v1", [0.1, 0.2, 3.0])[0].tests)
    cut = RunData("n", {"cpu": "x"}, base.tests[:2], not_run={"C1": ["t.py::test[2]"]})
    comp = compare(cut, base, "base.json")
    assert not comp.verdicts and any("did not finish in this run" in w for w in comp.not_compared)
    assert judge(comp).status.value == "UNDECIDED" and judge(comp).exit_code("all") == 14  # blind, not worse: 14


def test_collect_only_with_k_reports_no_incomplete_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest_inprocess("--co", "-k", "not shuffled")
    assert "INCOMPLETE RUN" not in result.stdout.str()


def test_a_block_with_stray_spaces_is_refused_naming_it(tmp_path: Path) -> None:
    import tomllib

    from claimcheck.errors import ConfigError
    from claimcheck.provenance.expectations import parse_pins

    raw = tomllib.loads('[ci.C2]\nverdict = "REPRODUCED"\nblock = "C2-v5 "\n')
    with pytest.raises(ConfigError, match=r"\[ci.C2\] block"):
        parse_pins(raw, "--claim-expectations", tmp_path / "e.toml")


def test_render_of_a_run_whose_gate_has_no_section_does_not_point_to_one() -> None:
    from claimcheck.report.markdown import gate_lines

    lines = gate_lines({"line": "claim baseline: PASS", "consequence": "passes"})
    assert not any("section Comparison with baseline" in line for line in lines)
    assert any("section Comparison" in line for line in gate_lines({"line": "x", "section": "## Comparison"}))


def test_history_changes_skip_a_claim_a_run_did_not_finish() -> None:
    # a -k run between two full ones read "C3 REPRODUCED -> INCONCLUSIVE", then back
    from claimcheck.gate.history import Entry, verdict_changes

    def entry(n: int) -> Entry:
        return Entry(Path(f"m/{n:04d}_c_d.json"), "m", n, "c", "d")

    runs = [(entry(1), {"C3": "REPRODUCED"}), (entry(2), {"C3": ""}), (entry(3), {"C3": "REPRODUCED"})]
    assert [changed for _, changed in verdict_changes(runs)] == [[], []]
    runs[2] = (entry(3), {"C3": "NOT REPRODUCED"})
    assert [changed for _, changed in verdict_changes(runs)] == [[], ["C3 REPRODUCED -> NOT REPRODUCED"]]


def test_the_audit_says_a_claim_the_run_did_not_finish_was_not_audited() -> None:
    # a -k "not 4" C8 run read C8 "not in this run" although it ran
    from claimcheck.provenance.expectations import DID_NOT_FINISH, audit, pins_of

    results = _toy_results("C1-v1", [0.1, 0.2, 3.0])
    rows = audit(results, pins_of(results), True, unfinished={"C1"})
    assert [r[-1] for r in rows] == [DID_NOT_FINISH]


def test_a_refused_baseline_update_fails_the_run_and_keeps_the_baseline(pytester: pytest.Pytester) -> None:
    # --claim-baseline-update on a partial run was refused with a line on the terminal, and the run exited 0
    pytester.makepyfile(test_toy=TOY)
    pytester.runpytest_inprocess("--claim-report=base.md")
    before = (pytester.path / "base.json").read_text()
    args = ("--claim-report=now.md", "--claim-baseline=base.json", "--claim-baseline-update")
    result = pytester.runpytest_inprocess(*args, "-k", "not shuffled")
    result.stdout.fnmatch_lines(["*baseline NOT updated:*"])
    assert result.ret == 12  # a file the run was asked to write was not written (docs/report.md, exit statuses)
    assert "baseline NOT updated: not accepted as the baseline" in (pytester.path / "now.md").read_text()  # the why
    assert (pytester.path / "base.json").read_text() == before
    assert pytester.runpytest_inprocess(*args).ret == 0  # the whole run is accepted


def test_the_audit_shows_a_zero_median_s_rounding_spread_in_absolute_terms() -> None:
    # C3's collapsed control (median 0 to float precision) showed "2.7e+212 of the median"
    from claimcheck.provenance.expectations import StatPin, _spread

    assert _spread(StatPin(0, 30, 3.5e-112, rounding=0.0)) == "0 of the median"
    assert _spread(StatPin(30, 30, 0.75, rounding=0.012)) == "0.012 of the median"
    assert _spread(StatPin(0, 30, 3.5e-112, rounding=6.0)) == "2.1e-111 absolute (a median of 3.5e-112)"


def test_a_bad_truth_value_for_a_flag_s_ini_twin_names_the_key(pytester: pytest.Pytester) -> None:
    # -o claim_autosave=maybe gave pytest's bare "invalid truth value 'maybe'"
    pytester.makepyfile(test_toy=TOY)
    result = pytester.runpytest_inprocess("-o", "claim_autosave=maybe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ini claim_autosave: invalid truth value 'maybe'; give true or false*"])
