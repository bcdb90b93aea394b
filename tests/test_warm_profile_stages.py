"""The warm-rerun profile names each stage by a function of the code: a rename must not leave a stage reading 0 s."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_every_stage_of_the_warm_profile_names_a_function_that_exists() -> None:
    spec = importlib.util.spec_from_file_location("warm_profile", ROOT / "benchmarks" / "warm_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = []
    for stage, (suffix, name) in module.STAGES.items():
        if not suffix.startswith("claimcheck/"):
            continue  # Python's and pytest's own functions
        tree = ast.parse((ROOT / suffix).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        if name not in defined:
            missing.append(f"{stage}: {suffix} has no {name}")
    assert not missing, missing
