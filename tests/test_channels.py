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
    assert len(saved) == 2 and json.loads(saved[0].read_text())["schema"] == "claimcheck-run/2"
