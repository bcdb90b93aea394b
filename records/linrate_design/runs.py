"""Train the exploratory runs of the C1/C8 v4 design (records/claims/c1.md, c8.md): loss curves and lambda_max(t).

Exploration code, not part of the test suite; seeds from the exploratory range only (0-999).

    python records/linrate_design/runs.py c1 --fraction 0.5 --steps 1500 --seeds 0-29 --sizes 4,8,64,16 2,16,96,32
    python records/linrate_design/runs.py c8 --layers 4 --fraction 0.3333333 --steps 6000 --seeds 0-15 [--beta 0]

``c1`` trains without a floor stop (rel_floor 1e-40) to show where float64 bottoms out; ``c8``
replays the batch step by step and measures lambda_max at 22 checkpoints (the engine's
``top_eigenvalues``). Each writes one .npz to --out.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from qin2025.data import make_synthetic
from qin2025.engine.batched import Run, _initial, top_eigenvalues, train_batch
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig, step_size

MARKS = (0, 5, 10, 20, 35, 50, 75, 100, 150, 200, 300, 400, 600, 800, 1000, 1500, 2000, 3000, 4000, 5000, 6000, 8000)


def _seeds(text: str) -> list[int]:
    lo, hi = (int(v) for v in text.split("-"))
    if hi >= 1000:
        raise SystemExit("exploratory seeds only: 0-999")
    return list(range(lo, hi + 1))


def c1(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Return each size's and seed's loss curve (key 'N,n,d,dqk/seed') and [lambda_max(0), mu] ('.../lam')."""
    out = {}
    for text in args.sizes:
        n_samples, n_tokens, d, d_qk = (int(v) for v in text.split(","))
        tcfg = TrainConfig(steps=args.steps, lr_fraction=args.fraction, rel_floor=1e-40)
        cfg = ModelConfig(d=d, d_qk=d_qk, d_out=1)
        runs = [Run(cfg, tcfg, make_synthetic(n_samples, n_tokens, d, 1, s), s) for s in args.seeds]
        for run, traj in zip(runs, train_batch(runs), strict=True):
            out[f"{text}/{run.seed}"] = traj.loss
            out[f"{text}/{run.seed}/lam"] = np.array([traj.lambda_max, traj.lr])
    return out


def c8(args: argparse.Namespace) -> dict[str, np.ndarray]:
    """Return the batch's losses (runs x steps + 1), step sizes, and lambda_max at ``MARKS`` (marks x runs)."""
    cfg = ModelConfig(d=64, d_qk=16, d_out=1, n_layers=args.layers, beta=args.beta)
    runs = [
        Run(cfg, TrainConfig(steps=args.steps, lr_fraction=args.fraction), make_synthetic(4, 8, 64, 1, s), s)
        for s in args.seeds
    ]
    marks = [m for m in MARKS if m <= args.steps]
    stack, _ = _initial(runs)
    lams = top_eigenvalues(stack, cfg, runs)
    lrs = [step_size(r.train, lam)[0] for r, lam in zip(runs, lams, strict=True)]
    stack = stack.with_lr(lrs)
    losses = np.zeros((len(runs), args.steps + 1))
    lam_t = {0: lams}
    for step in range(args.steps + 1):
        if step in marks and step > 0:
            lam_t[step] = top_eigenvalues(stack.keep(list(range(len(runs)))), cfg, runs)
        leaves = [p.requires_grad_(True) for p in stack.params.values()]
        values, _ = stack.losses(cfg, dict(zip(stack.params, leaves, strict=True)))
        losses[:, step] = values.detach().numpy()
        if step == args.steps:
            break
        grads = torch.autograd.grad(values.sum(), leaves)
        with torch.no_grad():
            for leaf, g in zip(leaves, grads, strict=True):
                leaf.sub_(stack.lr * g)
    lam = np.array([lam_t[m] for m in sorted(lam_t)])
    return {
        "seeds": np.array(args.seeds),
        "loss": losses,
        "lr": np.array(lrs),
        "marks": np.array(sorted(lam_t)),
        "lam": lam,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("claim", choices=["c1", "c8"])
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--seeds", type=_seeds, default=_seeds("0-7"))
    parser.add_argument("--sizes", nargs="*", default=["4,8,64,16", "2,16,96,32"])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--beta", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/linrate_design"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.time()
    data = c1(args) if args.claim == "c1" else c8(args)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = f"L{args.layers}_b{args.beta}" if args.claim == "c8" else "c1"
    path = args.out / f"{args.claim}_{tag}_f{args.fraction:.4f}_{args.steps}_{args.seeds[0]}_{args.seeds[-1]}.npz"
    np.savez(path, **data)  # type: ignore[arg-type]
    print(f"wrote {path} in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
