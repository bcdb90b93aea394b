"""An interrupted run's report says one thing everywhere.

A claim whose every collected test ran to the end has finished, and its verdict stands. A claim
with a test that did not run or was cut off has not: it is never REPRODUCED. A claim none of whose
tests ran has a row all the same (INCONCLUSIVE, "did not run"). The banner, the headline counts, the
first screen's rows, the JSON sidecar and the terminal all say the same.
"""

from __future__ import annotations

import json
import re

import pytest

CLAIM_MODULE = """
import pytest

CLAIM = pytest.mark.claim("C{n}", "{title}", "Sec. {n}")


@CLAIM
def test_control(claim_record, claim_seed):
    claim_record.check("s", 2.0, "<=", 1.0, control="c")


@CLAIM
def test_claim(claim_record, claim_seed):
    claim_record.check("s", 0.5, "<=", 1.0)
    if {cut} and claim_seed == 1:
        raise KeyboardInterrupt  # Ctrl-C in the middle of the claim's second unit
"""
SUITE = {
    f"test_c{n}_{name}": CLAIM_MODULE.format(n=n, title=title, cut=n == 2)
    for n, name, title in [
        (1, "done", "finishes before the interrupt"),
        (2, "cut", "is cut off by the interrupt"),
        (3, "never", "never starts"),
    ]
}


def _rows(text: str) -> dict[str, str]:
    """Return each claim's verdict as the first screen's table shows it."""
    return dict(re.findall(r"^\| \[(C\d)\]\(#claim-c\d\) \| [^|]* \| \*\*([A-Z ]+)\*\*", text, flags=re.M))


def test_an_interrupted_runs_report_says_one_thing_everywhere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**SUITE)
    result = pytester.runpytest_subprocess("--claim-report", "-p", "no:randomly")  # Ctrl-C must not reach us
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    data = json.loads((pytester.path / "reports" / "claim-report.json").read_text())
    # every collected claim has a row; only the one that finished keeps REPRODUCED
    want = {"C1": "REPRODUCED", "C2": "INCONCLUSIVE", "C3": "INCONCLUSIVE"}
    rows = _rows(text)
    assert rows == want and "C3 INCONCLUSIVE**: did not run" in text
    assert "rerun: `pytest test_c3_never.py --claim-seed 0" in text  # its own file, not the whole suite
    # the headline counts the rows
    headline = re.search(r"^\*\*(\d+ REPRODUCED, .*)\*\*$", text, flags=re.M)
    assert headline is not None
    counts = {v: int(n) for n, v in re.findall(r"(\d+) ([A-Z ]+?)(?:,|$)", headline.group(1))}
    assert counts and all(counts[v] == list(rows.values()).count(v) for v in counts)
    # the banner names what finished and what did not
    banner = text[text.index("**INCOMPLETE RUN**") :].split("\n\n")[0]
    assert "no claim of it is REPRODUCED" not in banner
    assert "finished, so their verdicts stand: C1; did not finish, so none is REPRODUCED: C2, C3" in banner
    # the JSON sidecar and the terminal say the same
    assert {c["id"]: c["verdict"] for c in data["claims"]} == want
    result.stdout.fnmatch_lines(
        [
            "*INCOMPLETE RUN: finished, so their verdicts stand: C1; did not finish, so none is REPRODUCED: C2, C3*",
            "C1: REPRODUCED*",
            "C2: INCONCLUSIVE*",
            "C3: INCONCLUSIVE*",
        ]
    )


PINS = """
[ci]
base_seed = 0
pool = "confirmatory"

[ci.C2]
verdict = "REPRODUCED"

[ci.C2.stats]
"claim / s" = { met = 3, n = 3, median = 0.5 }
"control: c / s" = { met = 0, n = 3, median = 3.0 }

[ci.C3]
verdict = "REPRODUCED"

[ci.C3.stats]
"claim / s" = { met = 3, n = 3, median = 0.5 }
"""


def test_a_claim_the_interrupt_cut_off_is_not_held_to_its_pins(pytester: pytest.Pytester) -> None:
    """Its counts and medians stop where the interrupt cut them: no deviation is read off them (the banner names it)."""
    pytester.makepyfile(**SUITE)
    (pytester.path / "pins.toml").write_text(PINS)
    result = pytester.runpytest_subprocess("-p", "no:randomly", f"--claim-expectations={pytester.path / 'pins.toml'}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert not [line for line in result.stdout.lines if line.startswith("deviation:")], result.stdout.str()
    result.stdout.fnmatch_lines(["*INCOMPLETE RUN*did not finish, so none is REPRODUCED: C2, C3*"])
