"""The regression gate end to end: a user's model against its healthy baseline, seed by seed, through pytest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claimcheck.gate.decision import EXIT_WORSE

EXAMPLE = Path(__file__).parents[2] / "examples" / "tinyformer"
HEALTHY = f"--claim-model={EXAMPLE / 'claim_adapter.py'}:build"

# Twelve seeds; each trains the model under test on its own small data set and records how the loss fell,
# and how far its attention at initialisation is from uniform (a hard argmax trains as well, but attends
# one-hot: only the second statistic can see it).
GATE_CLAIM = """
import math
import numpy as np
import pytest
from claimcheck.protocol.spec import ClaimProtocol, Control, Part, Seeds, Stat
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.spectral import distance_from_uniform, sample_attention
from qin2025.engine.train import TrainConfig

S_FAR = "median ||S - 11^T/n||_F at init"
STATS = (Stat("log10 L_T/L_0", "<=", -0.5), Stat("worst step ratio", "<", 1.0), Stat(S_FAR, "<=", 3.0))
PROTOCOL = ClaimProtocol(
    "G1",
    1,
    parts=(Part("", "the loss falls", STATS, bar=0.5),),
    controls=(Control("past the bound", "", "mu = 4 x 2/lambda_max: GD is not stable", max_pass_rate=0.3),),
    seeds=Seeds("G1-v1", 1000, {{"ci": {units}}}),
)
CLAIM = pytest.mark.claim("G1", "a small Transformer trains", "toy", protocol=PROTOCOL)


def record(rec, train, tcfg, seed, control=None):
    cfg, data = ModelConfig(d=8, d_qk=4), make_synthetic(2, 4, 8, 1, seed)
    traj = train(cfg, tcfg, data, seed)
    rec.check("log10 L_T/L_0", math.log10(traj.loss[-1] / traj.loss[0]), control=control, unit=seed)
    rec.check("worst step ratio", float((traj.loss[1:] / traj.loss[:-1]).max()), control=control, unit=seed)
    s = sample_attention(cfg, data.x, seed, train.model).s
    rec.check(S_FAR, float(np.median(distance_from_uniform(s))), control=control, unit=seed)


@CLAIM
def test_trains(claim_record, claim_units, claim_train):
    for seeds in claim_units.batches():
        for seed in seeds:
            record(claim_record, claim_train, TrainConfig(steps=60, power_iters=30), seed)


@CLAIM
def test_control(claim_record, claim_units, claim_train):
    tcfg = TrainConfig(steps=60, power_iters=30, lr_fraction=4.0)
    for seeds in claim_units.batches():
        for seed in seeds:
            record(claim_record, claim_train, tcfg, seed, control="past the bound")
"""

HARD_ARGMAX = f"""
import sys
sys.path.insert(0, {str(EXAMPLE)!r})
from mutants import hard_argmax


def build(cfg):
    model = hard_argmax(cfg)
    # the user says W_Q and W_K do not learn: the model is labelled, not refused
    model.claim_frozen = tuple(f"net.blocks.{{i}}.{{w}}" for i in range(cfg.n_layers) for w in ("query", "key"))
    model.claim_honours = ("beta", "n_layers")  # the scale of W_Q, W_K cannot move an argmax
    return model
"""


def _claim(pytester: pytest.Pytester, units: int = 12) -> None:
    pytester.makepyfile(test_gate_claim=GATE_CLAIM.format(units=units))


def _baseline(pytester: pytest.Pytester) -> None:
    _claim(pytester)
    base = pytester.runpytest(HEALTHY, "--claim-report=base.md", "--claim-cache=off")
    assert json.loads((pytester.path / "base.json").read_text())["claims"][0]["verdict"] == "REPRODUCED", base.stdout


def test_a_model_whose_weights_get_no_gradient_is_refused_naming_them(pytester: pytest.Pytester) -> None:
    _claim(pytester)
    result = pytester.runpytest(f"--claim-model={EXAMPLE / 'mutants.py'}:hard_argmax")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*get no gradient*: net.blocks.0.query.weight, net.blocks.0.key.weight*"])


def test_a_refused_model_still_writes_a_report_that_says_why(pytester: pytest.Pytester) -> None:
    """Issue 49: a CI step that posts the report has one to post when the probe refuses the model."""
    _claim(pytester)
    old = pytester.path / "reports" / "claim-report.md"
    result = pytester.runpytest(f"--claim-model={EXAMPLE / 'mutants.py'}:hard_argmax", "--claim-report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*get no gradient*", f"*the claim report {old} says so*"])
    text = old.read_text()
    assert "INCOMPLETE RUN" in text and "the run did not start" in text and "get no gradient" in text
    assert json.loads(old.with_suffix(".json").read_text())["incomplete"][0].startswith("the run did not start")


def test_a_benign_edit_passes_the_gate_against_the_baseline(pytester: pytest.Pytester) -> None:
    _baseline(pytester)
    # the same bits: every statistic equivalent; other draws from the same distribution: at 12 units every statistic
    # is undecided (none shown within its margin), which the strict gate fails and =worse accepts
    for edit, outcome, mode in (("renamed", "PASS", ""), ("reseeded", "UNDECIDED", "=worse")):
        result = pytester.runpytest(
            f"--claim-model={EXAMPLE / 'benign.py'}:{edit}",
            "--claim-report=now.md",
            "--claim-baseline=base.json",
            f"--claim-baseline-fail{mode}",
            "--claim-cache=off",
        )
        assert result.ret == 0, (edit, (pytester.path / "now.md").read_text())
        assert "worse beyond margin" not in "\n".join(result.stdout.lines)
        result.stdout.fnmatch_lines([f"claim baseline: {outcome} — *"])


def test_a_hard_argmax_model_fails_the_gate_naming_the_statistics_beyond_their_margins(
    pytester: pytest.Pytester,
) -> None:
    _baseline(pytester)
    pytester.makepyfile(hard=HARD_ARGMAX)
    result = pytester.runpytest(
        f"--claim-model={pytester.path / 'hard.py'}:build",
        "--claim-report=now.md",
        "--claim-baseline=base.json",
        "--claim-baseline-fail",
        "--claim-cache=off",
    )
    assert result.ret == EXIT_WORSE
    result.stdout.fnmatch_lines(
        ["claim baseline: FAIL — *", "*worse: G1 median ||S - 11^T/n||_F at init: median * (worse beyond margin)"]
    )
    text = (pytester.path / "now.md").read_text()
    assert "**worse beyond margin**" in text
    assert "frozen weights (net.blocks.0.key, net.blocks.0.query" in text  # labelled on the first screen


EDITABLE = """
import helper
from tinyformer_path import build as healthy


def build(cfg):
    return healthy(cfg)
"""


def test_editing_a_module_the_model_file_imports_recomputes_the_claim(pytester: pytest.Pytester) -> None:
    _claim(pytester, units=3)
    pytester.makepyfile(
        model=EDITABLE,
        helper="SCALE = 1.0\n",
        tinyformer_path=f"import sys\nsys.path.insert(0, {str(EXAMPLE)!r})\nfrom claim_adapter import build\n",
    )
    cache = f"--claim-cache-dir={pytester.path / 'cache'}"
    spec = f"--claim-model={pytester.path / 'model.py'}:build"

    def computed() -> int:
        pytester.runpytest(spec, cache, "--claim-report=r.md")
        counters = json.loads((pytester.path / "r.json").read_text())["counters"]
        return int(counters.get("training results computed", 0))

    first = computed()
    assert first == 6  # 3 seeds, trained for the claim and for its control
    assert computed() == 0  # served from the cache
    (pytester.path / "helper.py").write_text("SCALE = 1.0  # an edit no probe at d = 6 can see\n")
    assert computed() == first


FIRST_SCREEN_CLAIM = """
import pytest

@pytest.mark.claim("C9", "a toy claim of the paper", "Sec. 9")
def test_claim(claim_record, claim_seed):
    claim_record.check("s", 0.5, "<=", 1.0)
    claim_record.check("s", 2.0, "<=", 1.0, control="c")
"""


@pytest.mark.parametrize(
    ("mutant", "premise"),
    [
        ("causal_mask", "a causal mask (yes (found by the probe"),
        ("layernorm", "LayerNorm (LayerNorm found by the probe"),
        ("two_heads", "2 (S per head, found by the probe) attention heads"),
    ],
)
def test_the_first_screen_names_the_model_and_the_premises_it_breaks_in_the_claims_row(
    pytester: pytest.Pytester, mutant: str, premise: str
) -> None:
    pytester.makepyfile(test_toy=FIRST_SCREEN_CLAIM)
    pytester.runpytest(f"--claim-model={EXAMPLE / 'mutants.py'}:{mutant}", "--claim-report")
    text = (pytester.path / "reports" / "claim-report.md").read_text()
    screen = text.split("## Environment")[0]
    row = next(line for line in screen.splitlines() if line.startswith("| [C9]"))
    assert "**Model outside the claim's premises:** " in row and premise in row
    assert f"**Model under test**: `{EXAMPLE / 'mutants.py'}:{mutant}`: heads: " in screen
    assert "was earned on the paper's model (qin2025.engine.model); it says nothing yet about this model" in screen


@pytest.mark.slow
def test_a_reseeded_edit_passes_the_strict_gate_with_a_reserve(pytester: pytest.Pytester) -> None:
    # the control's loss statistics past the bound are inf or NaN on every unit in both runs: they agree
    # (claimcheck/gate/paired.py), so the strict gate decides on the finite statistics with the added units
    _claim(pytester)
    pytester.runpytest(HEALTHY, "--claim-report=base.md", "--claim-cache=off", "--claim-gate-cap=16")
    result = pytester.runpytest(
        f"--claim-model={EXAMPLE / 'benign.py'}:reseeded",
        "--claim-report=now.md",
        "--claim-baseline=base.json",
        "--claim-baseline-fail",
        "--claim-cache=off",
    )
    assert result.ret == 0, (pytester.path / "now.md").read_text()
    result.stdout.fnmatch_lines(["claim baseline: PASS — *, 0 undecided*"])
    gate = json.loads((pytester.path / "now.json").read_text())["gate"]
    assert any(s["units"] == 0 and s["not_finite_both"] > 0 for s in gate["statistics"]), gate
