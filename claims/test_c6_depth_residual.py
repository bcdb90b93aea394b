"""C6: pretrained Transformers truncated to L layers fit SST-2 better with residuals, more so as L grows.

The encoder is all-MiniLM-L6-v2 (6-layer BERT, d = 384), first proven equal to the reference
implementation (fixtures/minilm_reference.json). For each seed: one label-balanced sample of SST-2
training sentences and one head initialisation; for each depth L of the grid the encoder is
truncated to its first L layers and trained twice from the same start, with both residual adds
of every layer on (beta = gamma = 1) and off (beta = gamma = 0, the post-LNs stay: LN(sublayer(x))).
What trains: every weight of the L kept layers and a linear head on the mean-pooled output; the
embeddings are frozen. Loss: 1/(2N) sum (f_i - y_i)^2 on y = +-1. Full-batch GD, T steps, step
size 0.5 * 2/rho with rho = max |eigenvalue| of each model's own Hessian at its start.

The metric is the training error (the fraction of sentences with sign(f) != y), measured after
every step and averaged over steps 1..T: the area under the training-error curve, divided by T.
Both variants reach zero training error within the horizon on the exploratory seeds, so the error
at T alone would be a tie at zero; the mean over the run says which fit the sample sooner and
with fewer errors on the way. The loss is reported beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

from claimcheck.budget import Budget
from claimcheck.errors import DataUnavailable
from claimcheck.protocol import ClaimProtocol, Control, Part, Seeds, Stat
from claimcheck.record import ClaimRecorder
from claimcheck.settings import Settings
from claimcheck.store import ResultCache
from qin2025.calibration.depth import advantage_families, trend_families
from qin2025.data.sst2 import balanced_sample, find_sst2, load_sst2
from qin2025.data.sst2_sanity import check_sst2_data
from qin2025.decisions import TREND as SLOPE
from qin2025.decisions import advantage_decision, advantage_name, mean_step_error, trend_decision
from qin2025.encoder import EncoderConfig, Pretrained, load_pretrained
from qin2025.finetune import FinetuneConfig, FinetuneRun, cached_finetune, check_reference, prepare
from qin2025.trainer import Trainer

DEPTHS = (1, 2, 3, 4, 5, 6)  # every depth any budget runs; a budget's grid picks some
ADVANTAGE = Part(
    "advantage per L",
    "with residual connections the training error is lower than without, at every depth L of the grid: "
    "per seed, the training error averaged over steps 1..T is lower with residuals at each L",
    tuple(
        Stat(
            advantage_name(L),
            ">",
            0.0,
            why="'lower' read literally: a tie (equal mean error, e.g. both fit from the first step) is no advantage",
        )
        for L in DEPTHS
    ),
    bar=0.8,  # "consistently": the typical seed, a pass rate shown above 0.8
    decision=advantage_decision,
    calibration=advantage_families(depths=(1, 6), n=24, steps=60),  # the ci grid, GRIDS[0]
)
TREND = Part(
    "trend",
    "the advantage holds or grows as L increases: per seed, the least-squares slope of the advantage "
    "over the grid's depths is not negative",
    (Stat(SLOPE, ">=", 0.0, why="'holds or grows': the advantage does not fall with L"),),
    bar=0.8,
    decision=trend_decision,
    calibration=trend_families(depths=(1, 6), n=24, steps=60),
)
CONTROL = "residual vs residual, other head seed"
TREND_CONTROL = "residual vs residual, other head seed: trend"
PROTOCOL = ClaimProtocol(
    "C6",
    2,
    (ADVANTAGE, TREND),
    (
        Control(
            CONTROL,
            ADVANTAGE.name,
            "both runs keep every residual and differ only in the head's seed, so neither should fit better: "
            "an 'advantage' of one over the other comes about half the time, and must come less often than "
            "the claim's bar 0.8 asks of the real comparison",
            max_pass_rate=0.8,
            kind="sanity",  # two exchangeable runs: which one is 'better' is a coin flip by construction
        ),
        Control(
            TREND_CONTROL,
            TREND.name,
            "the same residual-vs-residual pairs at the control's depths (two or more: standard and paper "
            "budgets only); a slope of a null advantage is as often negative as not",
            max_pass_rate=0.8,
            kind="sanity",  # exchangeable runs, as above
        ),
    ),
    Seeds(
        "C6-v2",
        260000,
        {"ci": 3, "standard": 20, "paper": 20},
        exploratory="v1 runs (base seeds 0, 3, 10 at ci, L = 2..5 on seeds 0-2); seeds 0-2 at N=24, 12 tokens, "
        "T=60, L = 1 and 6 on CPU; seeds 0, 2, 4, 6 at N=64 and 128, 8 tokens, T=300, L = 1..6 on a GPU "
        "(error and loss curves), 2026-12-01",
    ),
    regime="all-MiniLM-L6-v2 truncated to L layers, residual adds all on (1) or all off (0), post-LN kept; "
    "all layer weights + linear head train, embeddings frozen; float32 (the checkpoint's precision); "
    "mu = 0.5 * 2/rho, rho = max |eig| of each model's own Hessian at its start (a proxy for a step-size bound)",
    horizon="ci: N=24 sentences, 8 tokens, L in (1, 6), T=60; standard: N=64, 16 tokens, L = 1..6, T=200; "
    "paper: N=128, 32 tokens, L = 1..6, T=300",
)
CLAIM = pytest.mark.claim(
    "C6",
    "Pretrained Transformers truncated to their first L layers and trained on SST-2 reach a lower "
    "training error with residual connections than without, and the advantage holds or grows with L",
    "Sec. IV, SST-2 experiment",
    protocol=PROTOCOL,
)
pytestmark = pytest.mark.claim_needs("paper-model")

REFERENCE = Path(__file__).resolve().parents[1] / "fixtures" / "minilm_reference.json"


@dataclass(frozen=True)
class Grid:
    """What one budget scale runs: sample size, token cap, depths, steps, and the control's depths."""

    n_sentences: int  # N, label-balanced
    max_tokens: int  # truncation, [CLS] and [SEP] included
    depths: tuple[int, ...]  # L values compared
    steps: int  # GD steps T
    control_depths: tuple[int, ...]  # L values at which residual is compared with residual


# The horizon runs past the start-up: on the exploratory seeds at ci, 17 of 18 runs reached zero
# training error before T = 60 (residual runs by step 18; L = 6 without residuals at 32 and 49, and
# seed 2 ends at 1/24); at N = 64 every run was at zero by step 200.
GRIDS = {
    0: Grid(24, 8, (1, 6), 60, (1,)),  # ci: about 77 s cold on one core (3 seeds)
    1: Grid(64, 16, DEPTHS, 200, (1, 6)),
    2: Grid(128, 32, DEPTHS, 300, DEPTHS),
}
LR_FRACTION = 0.5  # mu = 0.5 * 2 / rho(Hessian at the start), each model its own rho
DTYPE = "float32"  # the checkpoint's precision; the reference check below holds to 1e-4 in it
# The compact encoder must reproduce the reference mean-pooled embeddings (float32 rounding only);
# a miss is an error of the test (the premise that this is BERT fails), not a verdict.
ENCODER_TOL = 1e-4
CONTROL_HEAD_OFFSET = 1000  # the control's second residual run draws its head from seed + 1000
FIGURE = "C6 mean training error over the run vs L"
LOSS_FIGURE = "C6 final training loss vs L"


@dataclass(frozen=True)
class SeedRuns:
    """The runs of one seed: per L, with and without residuals, and the control's second residual run."""

    seed: int
    with_res: dict[int, FinetuneRun]
    without_res: dict[int, FinetuneRun]
    control: dict[int, FinetuneRun]


@pytest.fixture(scope="module")
def pretrained(claim_settings: Settings) -> Pretrained:
    """Load all-MiniLM-L6-v2 or skip C6 with the fix."""
    try:
        return load_pretrained(claim_settings.model_dir)
    except DataUnavailable as e:
        pytest.skip(f"C6 needs the pretrained encoder all-MiniLM-L6-v2: {e}")


@pytest.fixture(scope="module")
def sst2_path(claim_settings: Settings, pretrained: Pretrained, claim_store: ResultCache) -> Path:
    """Find SST-2's train split in the data directory or skip C6 with the fix; check its labels carry sentiment."""
    try:
        path = find_sst2(claim_settings.data_dir, "train")
    except DataUnavailable as e:
        pytest.skip(f"C6 needs SST-2 (data dir {claim_settings.data_dir}, from {claim_settings.data_dir_source}): {e}")
    # Sst2SanityError: C6 errors with the reason
    check_sst2_data(pretrained, claim_settings.data_dir, path, claim_store)
    return path


def error_curve(run: FinetuneRun) -> np.ndarray:
    """Return the run's training error after each step, all NaN when the run diverged (what the decisions take)."""
    return np.full(run.error.shape, np.nan) if run.diverged_at is not None else run.error


def mean_error(run: FinetuneRun) -> float:
    """Return the training error averaged over steps 1..T (NaN when the run diverged)."""
    return mean_step_error(error_curve(run))


def _final(run: FinetuneRun) -> float:
    return math.nan if run.diverged_at is not None else float(run.loss[-1])


def _run_seed(pre: Pretrained, path: Path, grid: Grid, seed: int, trainer: Trainer) -> SeedRuns:
    sample = balanced_sample(load_sst2(path), grid.n_sentences, seed)
    data = prepare(pre, sample, grid.max_tokens)
    cfg = FinetuneConfig(steps=grid.steps, lr_fraction=LR_FRACTION, dtype=DTYPE)
    runs = SeedRuns(seed, {}, {}, {})
    for L in grid.depths:
        runs.with_res[L] = cached_finetune(trainer, pre, EncoderConfig.uniform(L, 1.0), cfg, data, seed)
        runs.without_res[L] = cached_finetune(trainer, pre, EncoderConfig.uniform(L, 0.0), cfg, data, seed)
    for L in grid.control_depths:
        head = seed + CONTROL_HEAD_OFFSET
        runs.control[L] = cached_finetune(trainer, pre, EncoderConfig.uniform(L, 1.0), cfg, data, head)
    return runs


def _check_encoder(rec: ClaimRecorder, pre: Pretrained, trainer: Trainer) -> None:
    """Hold the compact encoder to the reference embeddings; a miss raises (the premise fails)."""
    found = check_reference(trainer, pre, REFERENCE, 6)
    on, off = found.on, found.off
    rec.note(
        f"encoder: max |embedding - reference| at 6 layers, mean-pooled, vs transformers.BertModel: {on:.3g} "
        f"(tolerance {ENCODER_TOL:g}); with residuals off it misses by {off:.3g}, so the comparison can fail"
    )
    if not on <= ENCODER_TOL:
        raise AssertionError(f"the compact encoder misses the reference by {on:.3g} > {ENCODER_TOL:g}: not BERT")
    if not found.same_weights:
        rec.note(f"model.safetensors in {pre.directory} is not the file the reference was made from")


def _record_pairs(
    rec: ClaimRecorder, better: dict[int, FinetuneRun], worse: dict[int, FinetuneRun], seed: int, control: str | None
) -> None:
    """Record the advantage at each depth of ``better`` over ``worse``, and its slope over L."""
    depths = tuple(sorted(worse))
    up, down = ({L: error_curve(runs[L]) for L in depths} for runs in (better, worse))
    for L in depths:  # one depth at a time, so that each check is labelled with its L
        rec.score(
            {"better": {L: up[L]}, "worse": {L: down[L]}},
            part=ADVANTAGE.name,
            control=control,
            unit=seed,
            label=f"L={L}",
        )
    if len(depths) >= 2:
        trend_control = None if control is None else TREND_CONTROL
        rec.score({"better": up, "worse": down}, part=TREND.name, control=trend_control, unit=seed, label=str(depths))


@CLAIM
def test_c6_residuals_win_as_depth_grows(
    claim_record: ClaimRecorder,
    claim_budget: Budget,
    claim_settings: Settings,
    claim_train: Trainer,
    claim_seeds: list[int],
    pretrained: Pretrained,
    sst2_path: Path,
) -> None:
    rec, grid, seeds = claim_record, GRIDS[claim_budget.scale], claim_seeds
    _check_encoder(rec, pretrained, claim_train)
    all_runs = [_run_seed(pretrained, sst2_path, grid, s, claim_train) for s in seeds]
    rec.set_regime(
        "SST-2",
        encoder=pretrained.describe(),
        data=f"{sst2_path} ({claim_settings.data_dir_source})",
        sample=f"per seed s: {grid.n_sentences} label-balanced training sentences drawn with seed s",
        max_tokens=grid.max_tokens,
        depths=list(grid.depths),
        seeds=seeds,
        steps=grid.steps,
        metric="training error (sign(f) != y) after every step, averaged over steps 1..T; loss reported beside it",
        trains="all weights of the kept layers (Q/K/V/output, both LayerNorms, FFN) + linear head; embeddings frozen",
        residual_off="beta = gamma = 0 in every kept layer: x = LN(Attn(x)), x = LN(FFN(x))",
        loss="1/(2N) sum (f_i - y_i)^2, y = +-1; f = head(mean-pooled output)",
        step_size=f"mu = {LR_FRACTION} * 2/rho, rho = max |eig| of each model's Hessian at its start",
        head_init="w ~ N(0, 1/d) from the seed, b = 0; the same head for both variants",
        control=f"residual with head seed s + {CONTROL_HEAD_OFFSET} vs residual with head seed s at L in "
        f"{list(grid.control_depths)}",
        dtype=DTYPE,
        device=claim_settings.device,
        cpu_threads=torch.get_num_threads(),
    )
    for r in all_runs:
        _record_pairs(rec, r.with_res, r.without_res, r.seed, None)
        _record_pairs(rec, r.with_res, r.control, r.seed, CONTROL)  # the advantage of head s over head s + 1000
    for L in grid.depths:
        w = [r.with_res[L] for r in all_runs]
        wo = [r.without_res[L] for r in all_runs]
        rec.note(
            f"L={L} (per seed {seeds}): mean training error over steps 1..T with residual "
            f"{_fmt([mean_error(x) for x in w])}, without {_fmt([mean_error(x) for x in wo])}; "
            f"training error at T with {_fmt([x.final_error for x in w], 3)}, without "
            f"{_fmt([x.final_error for x in wo], 3)}; first step at zero error with {_firsts(w)}, without "
            f"{_firsts(wo)}; loss at T with {_fmt([_final(x) for x in w])}, without {_fmt([_final(x) for x in wo])}; "
            f"Hessian radius at start with {_fmt([x.hessian_radius for x in w], 4)}, without "
            f"{_fmt([x.hessian_radius for x in wo], 4)}"
        )
        for r in all_runs:
            for variant, run in (("with residual", r.with_res[L]), ("without residual", r.without_res[L])):
                rec.curve(variant, run.error.tolist(), group=f"C6 training error, L={L}")
                rec.curve(variant, run.loss.tolist(), group=f"C6 training loss, L={L}")
                if run.diverged_at is not None:
                    rec.note(f"seed {r.seed}, L={L}, {variant}: loss not finite at step {run.diverged_at}")
    for L in grid.control_depths:
        ctl = [r.control[L] for r in all_runs]
        rec.note(
            f"control L={L}: mean training error over steps 1..T, residual with head seed + {CONTROL_HEAD_OFFSET} "
            f"{_fmt([mean_error(x) for x in ctl])}, loss at T {_fmt([_final(x) for x in ctl])}"
        )

    depths = [float(L) for L in grid.depths]
    for r in all_runs:
        for variant, runs in (("with residual", r.with_res), ("without residual", r.without_res)):
            rec.curve(variant, [mean_error(runs[L]) for L in grid.depths], x=depths, group=FIGURE)
            rec.curve(variant, [_final(runs[L]) for L in grid.depths], x=depths, group=LOSS_FIGURE)


def _firsts(runs: list[FinetuneRun]) -> str:
    hits = [np.flatnonzero(r.error == 0) for r in runs]
    return "[" + ", ".join(str(int(h[0])) if h.size else "never" for h in hits) + "]"


def _fmt(values: list[float], digits: int = 4) -> str:
    return "[" + ", ".join(f"{v:.{digits}g}" for v in np.asarray(values, dtype=np.float64)) + "]"
