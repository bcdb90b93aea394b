"""Count the matmul FLOPs each claim computes at a budget, by running its tests under torch's FLOP counter.

``python benchmarks/claim_flops.py --budget ci [claims/test_c1_linear_rate.py ...]`` runs the claim
tests in this process with the result cache off (everything is computed), each test's call inside
``torch.utils.flop_counter.FlopCounterMode``, and prints one JSON line per claim: its FLOPs, its
units at the budget (the protocol's), FLOPs per unit, and the seconds its tests took under the
counter (slower than a plain run: the counter sees every op). The counter counts the products
(mm, bmm, addmm, baddbmm, attention kernels), forward, backward and Hessian-vector products alike;
elementwise work, SVDs and numpy are not counted. ``docs/performance.md`` divides these FLOPs by a
plain run's seconds and the measured peak (``test_peak``) for the share of peak.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Generator
from typing import Any

import pytest
from torch.utils.flop_counter import FlopCounterMode


class CountFlops:
    """A pytest plugin that counts each test call's matmul FLOPs and seconds."""

    def __init__(self) -> None:
        self.flops: dict[str, int] = {}
        self.seconds: dict[str, float] = {}
        self.units: dict[str, int] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        claim = _claim(item.nodeid)
        counter = FlopCounterMode(display=False)
        start = time.perf_counter()
        with counter:
            result = yield
        self.flops[claim] = self.flops.get(claim, 0) + counter.get_total_flops()
        self.seconds[claim] = self.seconds.get(claim, 0.0) + time.perf_counter() - start
        proto = getattr(item.module, "PROTOCOL", None)  # type: ignore[attr-defined]
        if proto is not None:
            budget = item.config.getoption("claim_budget") or "ci"
            self.units[claim] = int(proto.seeds.units.get(budget, 0))
        return result


def _claim(nodeid: str) -> str:
    m = re.search(r"test_(c\d+)_", nodeid)
    return m.group(1).upper() if m else "other"


def main(argv: list[str]) -> int:
    """Run the claim tests named in ``argv`` (default: all) and print one JSON line per claim."""
    budget = "ci"
    if "--budget" in argv:
        i = argv.index("--budget")
        budget, argv = argv[i + 1], argv[:i] + argv[i + 2 :]
    plugin = CountFlops()
    args = [*(argv or ["claims"]), "-q", "-p", "no:cacheprovider", f"--claim-budget={budget}", "--claim-cache=off"]
    code = pytest.main(args, plugins=[plugin])
    for claim in sorted(plugin.flops, key=lambda c: (len(c), c)):
        units = plugin.units.get(claim, 0)
        flops = plugin.flops[claim]
        row = {"claim": claim, "budget": budget, "flops": flops, "units": units}
        row |= {"flops_per_unit": flops // units if units else None, "counted_s": round(plugin.seconds[claim], 1)}
        print(json.dumps(row), flush=True)
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
