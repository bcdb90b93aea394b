"""pytest's own channels carry the claims: junit XML properties, pytest-json-report, pytest-html."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

TOY = """
import pytest

CLAIM = pytest.mark.claim("C9", "toy", "Sec. 9")


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("toy statistic", {value}, "<=", 1.0)


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("toy statistic", 2.0, "<=", 1.0, control="toy control")
"""


def test_junit_xml_names_each_claims_verdict_and_a_known_non_reproduction(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY.format(value=1.5))
    pytester.makefile(".toml", expected='[ci.C9]\nverdict = "NOT REPRODUCED"\n')
    result = pytester.runpytest("--junitxml=out.xml", "--claim-expectations=expected.toml")
    assert result.ret == 0
    root = ET.parse(pytester.path / "out.xml").getroot()
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["claim C9"] == "NOT REPRODUCED (known)"
    assert props["claim C9 claim"].startswith("NOT REPRODUCED: 0/3")


def test_json_report_carries_the_verdicts(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_jsonreport")
    pytester.makepyfile(test_toy=TOY.format(value=0.5))
    pytester.runpytest("--json-report", "--json-report-file=r.json")
    data = json.loads((pytester.path / "r.json").read_text())
    assert data["claimcheck"]["C9"]["verdict"] == "REPRODUCED"
    assert data["claimcheck"]["C9"]["parts"]["claim"]["evidence"].startswith("3/3 = 1.00")


def test_html_report_shows_the_verdicts(pytester: pytest.Pytester) -> None:
    pytest.importorskip("pytest_html")
    pytester.makepyfile(test_toy=TOY.format(value=0.5))
    pytester.runpytest("--html=r.html", "--self-contained-html")
    text = (pytester.path / "r.html").read_text()
    assert "Claim verdicts" in text and "<b>REPRODUCED</b>" in text


def test_autosave_keeps_each_run_in_the_history_headed_by_commit_and_machine(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY.format(value=0.5))
    first = pytester.runpytest("--claim-autosave")
    second = pytester.runpytest("--claim-autosave", "--claim-report")
    first.stdout.fnmatch_lines(["*run saved to the history: *.claimcheck/history/*/0001_*.json"])
    second.stdout.fnmatch_lines(["*run saved to the history: *.claimcheck/history/*/0002_*.json"])
    saved = sorted((pytester.path / ".claimcheck" / "history").rglob("*.json"))
    assert len(saved) == 2 and json.loads(saved[0].read_text())["schema"] == "claimcheck-run/3"


def test_the_json_sidecar_types_its_env_values_and_reads_them_back(pytester: pytest.Pytester) -> None:
    from claimcheck.report.rundata import load

    pytester.makepyfile(test_toy=TOY.format(value=0.5))
    pytester.runpytest("--claim-report", "--claim-seed=7")
    path = pytester.path / "reports" / "claim-report.json"
    env = json.loads(path.read_text())["env"]
    assert env["base seed"] == 7 and env["torch threads"] == 1
    assert isinstance(env["git tree dirty"], str) or isinstance(env["git tree dirty"], bool)
    assert isinstance(env["deterministic algorithms"], bool) and isinstance(env["cpu"], str)
    assert load(path).env["base seed"] == "7"  # the report shows text


def test_the_report_does_not_depend_on_the_order_the_tests_ran_in(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_toy=TOY.format(value=0.5))
    pytester.runpytest("--claim-report=forward.md")
    pytester.makeconftest("def pytest_collection_modifyitems(items):\n    items.reverse()\n")
    pytester.runpytest("--claim-report=backward.md")

    def stable(name: str) -> list[str]:
        volatile = ("| run id ", "| date ", "| command ")
        return [line for line in (pytester.path / name).read_text().splitlines() if not line.startswith(volatile)]

    assert stable("forward.md") == stable("backward.md")
