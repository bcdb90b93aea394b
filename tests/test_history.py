"""The run history (``claimcheck.gate.history``) and the commands that read it: history, compare, matrix, --help."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from claimcheck.cli.main import _parser, main
from claimcheck.gate import history
from claimcheck.gate.history import HistoryError, list_entries, machine_id, resolve, save_run
from claimcheck.report.markdown import md  # the table escapes what GitHub would link ("@ 2.80GHz" on Intel hosts)

REFERENCE = Path(__file__).parents[1] / "reports" / "reference" / "claim-report.json"


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())  # type: ignore[no-any-return]


def _variant(raw: dict[str, Any], **env: str) -> tuple[str, dict[str, str]]:
    """Return a run's JSON text with ``env`` changed, and that environment."""
    changed = {**raw, "env": {**raw["env"], **{k.replace("_", " "): v for k, v in env.items()}}}
    return json.dumps(changed), changed["env"]


def _commit(raw: dict[str, Any]) -> str:
    env = raw["env"]
    return str(env["git commit"]) + ("-dirty" if env.get("git tree dirty") == "True" else "")


def _stamp(raw: dict[str, Any]) -> str:
    return (
        str(raw["env"]["date"])[:16].replace("-", "").replace(" ", "-").replace(":", "")
        + str(raw["env"]["date"])[17:19]
    )


def test_runs_are_saved_per_machine_and_numbered(tmp_path: Path, reference: dict[str, Any]) -> None:
    text, env = _variant(reference)
    first = save_run(text, tmp_path, env)
    second = save_run(text, tmp_path, {**env, "git commit": "0123456789ab", "git tree dirty": "True"})
    gpu_text, gpu_env = _variant(reference, gpu="NVIDIA H200 (x1)", device="cuda")
    other = save_run(gpu_text, tmp_path, gpu_env)
    machine = tmp_path / ".claimcheck" / "history" / machine_id(env)
    assert machine.name.startswith("Linux-py3.11-cpu-")
    stamp = _stamp(reference)
    assert first == machine / f"0001_{_commit(reference)}_{stamp}.json"
    assert second.name == f"0002_0123456789ab-dirty_{stamp}.json"
    assert other.parent.name.startswith("Linux-py3.11-cuda-") and other.name.startswith("0001_")
    assert first.read_text() == text
    assert [e.name for e in list_entries(tmp_path)] == sorted(
        [f"{machine.name}/{first.name}", f"{machine.name}/{second.name}", f"{other.parent.name}/{other.name}"]
    )
    assert not list(machine.glob(".entry.*"))  # no temporary file left


def test_a_taken_number_is_skipped_not_overwritten(
    tmp_path: Path, reference: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    text, env = _variant(reference)
    first = save_run(text, tmp_path, env)
    monkeypatch.setattr(history, "_entries", lambda machine: [])  # as if another session had not seen it
    second = save_run(text, tmp_path, env)
    assert (first.name[:4], second.name[:4]) == ("0001", "0002")


def test_entries_resolve_by_number_prefix_or_path(tmp_path: Path, reference: dict[str, Any]) -> None:
    text, env = _variant(reference)
    first = save_run(text, tmp_path, env)
    second = save_run(text, tmp_path, {**env, "git commit": "0123456789ab"})
    assert resolve("1", tmp_path) == resolve("0001", tmp_path) == first
    assert resolve("0002_0123", tmp_path) == second
    assert resolve(f"{first.parent.name}/0002", tmp_path) == second
    assert resolve(str(REFERENCE), tmp_path) == REFERENCE
    with pytest.raises(HistoryError, match=r"'Linux' names 2 history entries .*give a longer prefix"):
        resolve("Linux", tmp_path)
    with pytest.raises(HistoryError, match=r"'7' is neither a file nor an entry .*\(2 entries\); `claimcheck history`"):
        resolve("7", tmp_path)


def test_the_same_number_on_two_machines_must_be_told_apart(tmp_path: Path, reference: dict[str, Any]) -> None:
    text, env = _variant(reference)
    save_run(text, tmp_path, env)
    gpu_text, gpu_env = _variant(reference, device="cuda", gpu="H200")
    gpu = save_run(gpu_text, tmp_path, gpu_env)
    with pytest.raises(HistoryError, match="names 2 history entries"):
        resolve("1", tmp_path)
    assert resolve("1", tmp_path, machine=gpu.parent.name) == gpu


def test_history_command_saves_and_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["history"]) == 0
    assert "no runs saved in" in capsys.readouterr().out
    assert main(["history", "--save", str(REFERENCE)]) == 0
    assert "as " + str(tmp_path / ".claimcheck" / "history") in capsys.readouterr().out
    assert main(["history"]) == 0
    line = capsys.readouterr().out.strip()
    raw = json.loads(REFERENCE.read_text())
    commit, stamp, date = _commit(raw), _stamp(raw), raw["env"]["date"]
    pattern = rf"Linux-py3\.11-cpu-\w{{8}}/0001_{re.escape(commit)}_{stamp}\.json  commit {re.escape(commit)}  "
    assert re.fullmatch(pattern + rf"{re.escape(date)}  ci  \d/8 reproduced", line), line


def test_compare_and_matrix_take_history_entries(
    tmp_path: Path, reference: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text, env = _variant(reference)
    save_run(text, tmp_path, env)
    moved = json.loads(text)
    moved["env"]["git commit"] = "fedcba987654"
    for t in moved["tests"]:
        for c in (t.get("record") or {}).get("checks", []):
            c["value"] *= 1.5
    save_run(json.dumps(moved), tmp_path, moved["env"])
    assert main(["compare", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "## Comparison with baseline" in out
    assert "**worse beyond margin**" in out or "**better beyond margin**" in out
    assert main(["compare", "1", "2", "--fail"]) == 13  # the session's --claim-baseline-fail status: worse
    assert main(["compare", "1", "2", "--fail=worse"]) == 13  # --claim-baseline-fail=worse fails on worse too
    capsys.readouterr()
    assert main(["compare", "1", "1", "--fail"]) == 0
    capsys.readouterr()
    assert main(["matrix", "1", "2"]) == 0
    head = capsys.readouterr().out.splitlines()[2]
    cpu, date, commit = md(reference["env"]["cpu"]), reference["env"]["date"][:16], reference["env"]["git commit"]
    dirty = " (dirty)" if reference["env"].get("git tree dirty") == "True" else ""
    assert head == f"| claim | {commit}{dirty}, {cpu}, {date} | fedcba987654{dirty}, {cpu}, {date} | agree |"
    assert main(["compare", "9", "1"]) == 2
    assert "'9' is neither a file nor an entry" in capsys.readouterr().err


def test_matrix_columns_with_the_same_run_head_are_told_apart_by_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", str(REFERENCE), str(REFERENCE)]) == 0
    head = capsys.readouterr().out.splitlines()[2]
    assert head.count(", claim-report.json |") == 2


def test_help_lists_every_command_with_a_plain_one_line_description(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    commands = _parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) == {
        "render",
        "matrix",
        "compare",
        "history",
        "expectations",
        "stability",
        "mutants",
        "calibrate",
        "ledger",
        "audit",
        "baseline",
    }
    for name in commands:
        (line,) = [x for x in text.splitlines() if x.startswith(f"    {name} ")]
        assert len(line.split(name, 1)[1].strip()) > 10, line
    assert "``" not in text and ":func:" not in text


def test_history_changes_lists_the_verdicts_that_changed_entry_by_entry(
    tmp_path: Path, reference: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text, env = _variant(reference)
    save_run(text, tmp_path, env)
    save_run(text, tmp_path, {**env, "git commit": "aaaaaaaaaaaa"})
    broken = json.loads(text)
    for t in broken["tests"]:
        if t["claim_id"] == "C2" and "control" not in t["nodeid"]:
            for c in t["record"]["checks"]:
                c["value"] = 99.0  # C2's steps where the loss rose: every unit fails
    broken["env"]["git commit"] = "bbbbbbbbbbbb"
    save_run(json.dumps(broken), tmp_path, broken["env"])
    assert main(["history", "--changes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2  # the first entry of a machine has nothing to compare with
    assert lines[0].endswith("commit aaaaaaaaaaaa: no verdict changed")
    assert lines[1].endswith("commit bbbbbbbbbbbb: C2 REPRODUCED -> NOT REPRODUCED")


def test_verdict_changes_name_claims_that_appear_or_go() -> None:
    machine = history.Entry(Path("m/0001_a_20260101-000000.json"), "m", 1, "a", "20260101-000000")
    later = history.Entry(Path("m/0002_b_20260101-000000.json"), "m", 2, "b", "20260101-000000")
    changes = history.verdict_changes([(machine, {"C1": "REPRODUCED"}), (later, {"C2": "ERROR"})])
    assert changes == [(later, ["C1 REPRODUCED -> (not run)", "C2 (not run) -> ERROR"])]


def test_history_lists_claims_in_the_report_s_order() -> None:
    """One order for claim ids everywhere (the report's): by prefix, then number; it was by length in four places."""
    machine = history.Entry(Path("m/0001_a_20260101-000000.json"), "m", 1, "a", "20260101-000000")
    later = history.Entry(Path("m/0002_b_20260101-000000.json"), "m", 2, "b", "20260101-000000")
    before = {"B2": "REPRODUCED", "A10": "REPRODUCED", "A9": "REPRODUCED"}
    changes = history.verdict_changes([(machine, before), (later, dict.fromkeys(before, "ERROR"))])
    assert [line.split()[0] for line in changes[0][1]] == ["A9", "A10", "B2"]
