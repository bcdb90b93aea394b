"""Hold one run's results as data (``RunData``), and read and write them as the report's JSON sidecar: the run
round-trips through it, so ``claimcheck render run.json`` reproduces the markdown the run wrote."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from claimcheck.decide.calibration import part_mark
from claimcheck.decide.record import Check, ClaimRecorder
from claimcheck.decide.verdicts import ClaimResult, TestOutcome, aggregate
from claimcheck.errors import DataError

SCHEMA = "claimcheck-run/3"
READABLE = {  # older schemas read as they are: what they lack is derived or left out
    "claimcheck-run/2": "written before protocols could declare the regression gate's margins (Stat.margin); "
    "the gate derives them from the baseline's spread",
}
OLD_SCHEMAS = {"claimcheck-run/1": "written before verdicts came from protocols (every run had to pass)"}
MAX_INT_DIGITS = 308  # an integer of a run file longer than this is past the float range: refused, naming its field
NOT_STARTED = "the run did not start: "  # how a run refused at start names itself in ``incomplete``
DECISION_INPUTS = frozenset({"tests", "not_run", "titles"})  # the fields of RunData its verdicts are decided from
TYPED_ENV: dict[str, type] = {
    "base seed": int,
    "torch threads": int,
    "git tree dirty": bool,
    "budget position": int,
    "deterministic algorithms": bool,
}  # env entries the JSON writes as numbers or booleans; the report shows every entry as text
_LEAVES = (str, int, float, bool, type(None))
_OUTCOMES = {"passed", "error", "skipped"}
_DIRECTIONS = {"<=", ">=", "<", ">"}


class RunFileError(DataError):
    """A run JSON file cannot be read or is not of this schema."""


@dataclass
class GateUnits:
    """What a claim test ran for the baseline gate only (``claimcheck.gate.reserve``); no verdict reads it."""

    looks: list[int]  # units after each look the gate may take (gate_looks); K = len(looks)
    checks: list[Check] = field(default_factory=list)  # checks on units beyond those the verdict is decided on
    units: int = 0  # units run in all (the claim's and the reserve's)
    stopped: str = ""  # e.g. "decided at look 3 of 5 (48 units)", "reserve recorded to the cap (192 units)"

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> GateUnits:
        """Rebuild a reserve from ``to_dict`` output."""
        return cls(
            [int(n) for n in raw.get("looks", [])],
            [Check(**c) for c in raw.get("checks", [])],
            int(raw.get("units", 0)),
            str(raw.get("stopped", "")),
        )


@dataclass
class RunData:
    """Everything a run produced: environment, every claim test outcome, and run-level facts."""

    title: str
    env: dict[str, str]
    tests: list[TestOutcome] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)  # what did not run, when interrupted
    counters: dict[str, int] = field(default_factory=dict)  # e.g. training results computed / cached
    expected: dict[str, Any] = field(default_factory=dict)  # claim id -> its pinned expectations at this budget
    not_run: dict[str, list[str]] = field(default_factory=dict)  # claim id -> its tests that did not run
    ledger: dict[str, str] = field(default_factory=dict)  # claim id -> status of its protocol version
    data_files: list[dict[str, str]] = field(default_factory=list)  # file, size, sha256, published status
    calibration: list[dict[str, Any]] = field(default_factory=list)  # recorded calibration entries (calibration.py)
    code: dict[str, dict[str, str]] = field(default_factory=dict)  # claim id -> fingerprint, engine, ledger state
    expectations: str = ""  # which expectations the run was held to (and on which block), in one sentence
    deviations: list[str] = field(default_factory=list)  # each way the run departs from its expectations
    rounding: list[str] = field(default_factory=list)  # what each statistic held at the verdict level gave
    titles: dict[str, list[str]] = field(default_factory=dict)  # claim id -> [title, source], for a claim not run
    gate: dict[str, Any] = field(default_factory=dict)  # the baseline gate's outcome and statistics (gate.to_dict)
    gate_units: dict[str, GateUnits] = field(default_factory=dict)  # node id -> units run for the gate only
    schema: str = SCHEMA

    def __post_init__(self) -> None:
        self._decided: list[ClaimResult] | None = None  # the verdicts, once ``decide`` has fixed them

    def __setattr__(self, name: str, value: Any) -> None:
        if name in DECISION_INPUTS:  # new outcomes: the verdicts kept are no longer theirs
            object.__setattr__(self, "_decided", None)
        object.__setattr__(self, name, value)

    def decide(self) -> list[ClaimResult]:
        """Decide every claim now and keep the verdicts: ``results`` returns these same objects until ``tests``,
        ``not_run`` or ``titles`` is assigned (a change made inside them needs another ``decide``)."""
        self._decided = aggregate(self.tests, self.not_run, self.titles)
        return self._decided

    def drawn(self) -> tuple[str, str, str]:
        """Return the seed block the run drew: its budget's name, base seed and pool ("" where unrecorded)."""
        env = self.env
        return str(env.get("budget", "")).split(":")[0].strip(), str(env.get("base seed", "")), env.get("seed pool", "")

    def results(self) -> list[ClaimResult]:
        """Return the per-claim verdicts (a claim collected but not run among them): ``decide``'s, once it ran."""
        return self._decided if self._decided is not None else aggregate(self.tests, self.not_run, self.titles)


def _typed(key: str, value: str) -> Any:
    """Return ``value`` as its JSON type when ``key`` is one of ``TYPED_ENV`` and it parses; else the text."""
    kind = TYPED_ENV.get(key)
    if kind is bool and value in ("True", "False"):
        return value == "True"
    if kind is int and value.lstrip("-").isdigit():
        return int(value)
    return value


def plain(value: Any) -> Any:
    """Return ``value`` as JSON-ready data: dataclasses as dicts, tuples as lists (``asdict`` without its copies)."""
    if isinstance(value, _LEAVES):
        return value
    if isinstance(value, list | tuple):
        return list(value) if all(isinstance(v, _LEAVES) for v in value) else [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    return value


def record_json(record: ClaimRecorder) -> str:
    """Return ``record.to_json()``'s text, built with ``plain`` (read back with ``ClaimRecorder.from_json``)."""
    return json.dumps({f.name: plain(getattr(record, f.name)) for f in fields(record) if f.name != "protocol"})


def to_dict(run: RunData) -> dict[str, Any]:
    """Return the run as plain data, with typed env values and the derived verdicts added for readers."""
    out: dict[str, Any] = plain(run)
    out["env"] = {k: _typed(k, v) for k, v in run.env.items()}
    out["claims"] = [
        claim_dict(r, run.ledger.get(r.claim_id, ""), run.code.get(r.claim_id), run.calibration) for r in run.results()
    ]
    return out


def claim_dict(
    r: ClaimResult, status: str, code: dict[str, str] | None = None, calibration: Sequence[Mapping[str, Any]] = ()
) -> dict[str, Any]:
    """Return one claim's verdict and evidence as plain data: parts (with calibration marks), controls, statistics."""
    proto = r.protocol
    declared = proto is not None and proto.declared
    code = code or {}
    return {
        "id": r.claim_id,
        "title": r.title,
        "source": r.source,
        "verdict": r.verdict.value,
        "reason": r.reason,
        "protocol_version": proto.version if proto else None,
        "protocol_fingerprint": proto.fingerprint() if proto else None,
        "code_fingerprint": code.get("fingerprint"),
        "engine": code.get("engine"),
        "protocol_status": status,
        "alpha": r.alpha,
        "multiplicity": r.multiplicity,
        "family": r.family,
        "looks": [  # per test that ran its units in batches: its schedule, its looks and why it stopped
            {"test": t.nodeid, **_pick(t.record, "schedule looks stopped")}
            for t in r.tests
            if t.record is not None and t.record.schedule
        ],
        "parts": [
            {
                **_pick(p, "name verdict rule bar reason rate p_hold p_fail units estimates"),
                "verdict": p.verdict.value,
                "calibration": part_mark(calibration, r.claim_id, proto.part(p.name)) if declared and proto else "",
                **({"unresolved": p.unresolved} if p.unresolved else {}),
            }
            for p in r.parts
        ],
        "controls": [
            _pick(c, "name part kind status max_pass_rate rate p_fails p_passes units estimates") for c in r.controls
        ],
        "statistics": [plain(s) for s in r.claim_stats + r.control_stats],
        "controls_failed": r.controls_failed,
        "controls_total": r.controls_total,
        "sanity_controls": [c.name for c in r.sanity_controls],
    }


def _pick(value: Any, names: str) -> dict[str, Any]:
    """Return the fields ``names`` (separated by spaces) of ``value`` as JSON-ready data (``plain``)."""
    return {name: plain(getattr(value, name)) for name in names.split()}


def dumps(run: RunData) -> str:
    """Return the run as compact JSON text (json's C encoder; NaN and Infinity as Python's json writes them)."""
    return json.dumps(to_dict(run), separators=(",", ":"))


def from_dict(raw: Any, source: str) -> RunData:
    """Rebuild a run from ``to_dict`` output; raise RunFileError naming ``source`` if it is not one."""
    if isinstance(raw, dict) and raw.get("schema") in OLD_SCHEMAS:
        old = raw["schema"]
        raise RunFileError(
            f"{source}: a run file of the older schema {old!r} ({OLD_SCHEMAS[old]}); this claimcheck reads "
            f"{SCHEMA!r} and {sorted(READABLE)}. {regenerate(raw, source)}"
        )
    if not isinstance(raw, dict) or (raw.get("schema") != SCHEMA and raw.get("schema") not in READABLE):
        found = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise RunFileError(
            f"{source}: not a claimcheck run file of schema {SCHEMA!r} (found {found!r}); "
            "give the .json written next to a claim report by --claim-report"
        )
    _validate(raw, source)
    try:
        tests = []
        for t in raw["tests"]:
            rec = t.get("record")
            tests.append(TestOutcome(**{**t, "record": ClaimRecorder.from_json(json.dumps(rec)) if rec else None}))
        return RunData(
            title=raw["title"],
            env={str(k): str(v) for k, v in raw["env"].items()},  # as the report shows them: True, 3, ...
            tests=tests,
            incomplete=list(raw.get("incomplete", [])),
            counters=dict(raw.get("counters", {})),
            expected=dict(raw.get("expected", {})),
            not_run={str(k): list(v) for k, v in raw.get("not_run", {}).items()},
            ledger=dict(raw.get("ledger", {})),
            data_files=[dict(d) for d in raw.get("data_files", [])],
            calibration=[dict(e) for e in raw.get("calibration", [])],
            code={str(k): {str(a): str(b) for a, b in v.items()} for k, v in raw.get("code", {}).items()},
            expectations=str(raw.get("expectations", "")),
            deviations=[str(x) for x in raw.get("deviations", [])],
            rounding=[str(x) for x in raw.get("rounding", [])],
            titles={str(k): [str(x) for x in v] for k, v in raw.get("titles", {}).items()},
            gate=dict(raw.get("gate", {})),
            gate_units={str(k): GateUnits.from_dict(v) for k, v in raw.get("gate_units", {}).items()},
            schema=str(raw["schema"]),  # what the file was written as: a READABLE older one stays named
        )
    except (KeyError, TypeError, ValueError) as e:
        raise RunFileError(f"{source}: malformed claimcheck run file ({type(e).__name__}: {e})") from None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _validate(raw: dict[str, Any], source: str) -> None:
    """Check every field a report is built from, so that a bad file fails here, naming the first bad field."""

    def need(ok: bool, where: str, what: str) -> None:
        if not ok:
            raise RunFileError(f"{source}: {where}: {what}; give the .json written next to a claim report")

    need(isinstance(raw.get("title"), str), "title", "must be a string")
    env = raw.get("env")
    ok = isinstance(env, dict) and all(isinstance(v, str | int | float | bool) for v in env.values())
    need(ok, "env", "must be an object of strings, numbers and booleans")
    tests = raw.get("tests")
    need(isinstance(tests, list), "tests", "must be a list")
    for i, t in enumerate(tests or []):
        where = f"tests[{i}]"
        need(isinstance(t, dict), where, "must be an object")
        for name in ("nodeid", "claim_id", "title", "source", "message"):
            ok = isinstance(t.get(name, ""), str) and (name in t or name == "message")
            need(ok, f"{where}.{name}", f"must be a string, got {t.get(name)!r}")
        outcome = t.get("outcome")
        need(outcome in _OUTCOMES, f"{where}.outcome", f"must be one of {sorted(_OUTCOMES)}, got {outcome!r}")
        need(_number(t.get("duration", 0.0)), f"{where}.duration", "must be a number")
        if (rec := t.get("record")) is None:
            continue
        ok = isinstance(rec, dict) and isinstance(rec.get("checks", []), list)
        need(ok, f"{where}.record", "must be an object with a list of checks")
        for j, c in enumerate(rec.get("checks", [])):
            cw = f"{where}.record.checks[{j}]"
            need(isinstance(c, dict), cw, "must be an object")
            statistic = c.get("statistic")
            need(isinstance(statistic, str), f"{cw}.statistic", f"must be a string, got {statistic!r}")
            for name in ("value", "threshold"):
                need(_number(c.get(name)), f"{cw}.{name}", f"must be a number, got {c.get(name)!r}")
            ok = c.get("direction") in _DIRECTIONS
            need(ok, f"{cw}.direction", f"must be one of {sorted(_DIRECTIONS)}, got {c.get('direction')!r}")
            need(c.get("control") is None or isinstance(c["control"], str), f"{cw}.control", "must be a string or null")
            for name in ("label", "part", "unit", "interval"):
                need(isinstance(c.get(name, ""), str), f"{cw}.{name}", "must be a string")
        for j, cv in enumerate(rec.get("curves", [])):
            ys = cv.get("y") if isinstance(cv, dict) else None
            ok = isinstance(ys, list) and all(_number(y) for y in ys)
            need(ok, f"{where}.record.curves[{j}].y", "must be a list of numbers")


def regenerate(raw: dict[str, Any], source: str = "baseline.json") -> str:
    """Return the command that writes a current file for the run ``raw`` describes (its options and commit)."""
    env = raw["env"] if isinstance(raw.get("env"), dict) else {}
    options = str(env.get("rerun options", "") or "")
    commit = str(env.get("git commit", "") or "")
    report = Path(source).with_suffix(".md").name
    command = " ".join(p for p in ("pytest claims", options, f"--claim-report={report}") if p)
    where = f" on the code and model of that run (commit {commit})" if commit else " on the code and model of that run"
    return f"Regenerate it with this claimcheck: `{command}`{where}"


class _HugeInt(str):
    """An integer literal of a run file too long for a float (past 308 digits): kept as its text, then refused."""


def _parse_int(text: str) -> int | _HugeInt:
    # int() refuses past 4,300 digits (ValueError, no position) and float() overflows past 308
    return _HugeInt(text) if len(text.lstrip("-")) > MAX_INT_DIGITS else int(text)


def _huge_int(raw: Any) -> tuple[str, _HugeInt] | None:
    """Return the first field (``tests[0].record.checks[2].value``) holding a ``_HugeInt``, and it; None if none."""
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, _HugeInt):
            return where or "the file", value
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
    return None


def load(path: Path) -> RunData:
    """Read a run JSON file; raise RunFileError naming the file on any problem."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"), parse_int=_parse_int)
    except OSError as e:
        raise RunFileError(f"{path}: cannot read run file ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise RunFileError(f"{path}: not valid JSON at line {e.lineno} ({e.msg})") from None
    except RecursionError:
        raise RunFileError(f"{path}: nested too deeply to be a claimcheck run file") from None
    if (huge := _huge_int(raw)) is not None:
        where, text = huge
        raise RunFileError(
            f"{path}: {where}: an integer of {len(text.lstrip('-')):,} digits ({text[:12]}...), past the "
            f"{MAX_INT_DIGITS} digits a number of a run file can have; the file is damaged or was not written by "
            "claimcheck: give the .json written next to a claim report"
        )
    run = from_dict(raw, str(path))
    try:
        run.decide()  # decide every claim now, once, so a file that cannot be reported on fails here
    except Exception as e:
        raise RunFileError(f"{path}: cannot be reported on ({type(e).__name__}: {e})") from None
    return run
