"""Print the tables of docs/performance.md from a pytest-benchmark JSON file.

    pytest benchmarks --benchmark-only --benchmark-json=bench.json
    python benchmarks/table.py bench.json

Times are medians over rounds. Engine rows give the median and the paired ratio against the
hand-written step; sweep rows the ratio of one-at-a-time to batched; scaling rows the step's
matmul FLOPs, GFLOP/s and the share of ``test_peak``'s GFLOP/s at the same thread count; the suite
row the cold run, the warm median and their ratio.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

DIMS = ("N", "n", "d", "d_qk", "L")
Bench = dict[str, Any]


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in body)]


def _ms(b: Bench, key: str = "median") -> str:
    return f"{1e3 * b['stats'][key]:.3f}"


def engine_rows(benches: list[Bench]) -> list[str]:
    """Return the engine-overhead table: median per round and paired ratio to the hand-written step."""
    rows = [
        [str(i["size"]), str(i["threads"]), str(i["loop"]), _ms(b), _ms(b, "iqr"), str(i["paired_ratio"])]
        for b in benches
        if "paired_ratio" in (i := b["extra_info"])
    ]
    return _table(["size", "threads", "loop", "median ms/round", "IQR ms", "paired ratio to hand"], rows)


def sweep_rows(benches: list[Bench]) -> list[str]:
    """Return the batched-sweep table: medians of both ways and their ratio, per thread count."""
    sweeps = [b for b in benches if b["name"].startswith("test_c5_sweep")]
    rows = []
    for group in sorted({b["group"] for b in sweeps}):
        time = {b["name"].split("[")[1].split("-")[0]: b["stats"]["median"] for b in sweeps if b["group"] == group}
        if {"batched", "one_at_a_time"} <= set(time):
            ratio = time["one_at_a_time"] / time["batched"]
            rows.append([group, f"{time['one_at_a_time']:.2f}", f"{time['batched']:.2f}", f"{ratio:.2f}"])
    return _table(["group", "one at a time s", "batched s", "speed-up"], rows)


def scaling_rows(benches: list[Bench]) -> list[str]:
    """Return the scaling table: FLOPs per step, time, GFLOP/s and share of the measured peak."""
    timed = [b for b in benches if "flops" in b["extra_info"]]
    rate = {b["name"]: b["extra_info"]["flops"] / b["stats"]["median"] for b in timed}
    peak = {b["extra_info"]["threads"]: rate[b["name"]] for b in timed if b["extra_info"].get("peak")}
    rows = []
    for b in timed:
        info, r = b["extra_info"], rate[b["name"]]
        float64 = info["threads"] in peak and not info.get("peak_float32")
        share = f"{100 * r / peak[info['threads']]:.1f}" if float64 else ""
        dims = [str(info.get(k, "")) for k in DIMS]
        rows.append(
            [b["name"], str(info["threads"]), *dims, f"{info['flops'] / 1e6:.2f}", _ms(b), f"{r / 1e9:.2f}", share]
        )
    return _table(["benchmark", "threads", *DIMS, "MFLOP/step", "ms/step", "GFLOP/s", "% of peak"], rows)


def suite_rows(benches: list[Bench]) -> list[str]:
    """Return the cold-then-warm suite table: cold seconds, warm median, speed-up, load, targets met."""
    rows = [
        [
            f"{i['cold_s']:.1f}",
            f"{i['warm_median_s']:.2f}",
            ", ".join(f"{w:.2f}" for w in i["warm_walls_s"]),
            f"{i['speed_up']:.1f}",
            " -> ".join(f"{x:.2f}" for x in i["load"]),
            "yes" if i["targets_met"] else "no",
        ]
        for b in benches
        if "warm_median_s" in (i := b["extra_info"])
    ]
    return _table(["cold s", "warm median s", "warm rounds s", "speed-up", "load", "targets met"], rows)


if __name__ == "__main__":
    benches = json.loads(Path(sys.argv[1]).read_text())["benchmarks"]
    for section in (engine_rows, sweep_rows, scaling_rows, suite_rows):
        print("\n".join(section(benches)), end="\n\n")
