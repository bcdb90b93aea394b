"""The code identity in every cache key: which files it covers, and that editing one recomputes."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import claimcheck
from qin2025.engine.codeid import NOT_RESULTS, code_identity, engine_modules, identity_of, import_closure

ROOT = Path(claimcheck.__file__).resolve().parent.parent  # the folder above the packages

# Trains a tiny model and reads a memo entry through the cache in ``argv[1]``; prints keys and counts.
PROBE = """
import json, sys
from pathlib import Path
import qin2025
from qin2025.engine.trainer import Trainer, train_key
from qin2025.engine.train import train as train_fn
from claimcheck.store.cache import ResultCache
from qin2025.data import make_synthetic
from qin2025.engine.model import ModelConfig
from qin2025.engine.train import TrainConfig

model, train = ModelConfig(d=4, d_qk=2), TrainConfig(steps=3, power_iters=5)
data = make_synthetic(2, 3, 4, 1, seed=0)
trainer = Trainer(ResultCache(Path(sys.argv[1])))
loss = trainer(model, train, data, 0).loss.tolist()
trainer.memo({"kind": "other"}, lambda: ({}, {"x": 1}), train_fn)
print(json.dumps({"package": qin2025.__file__, "key": trainer.key(train_key(model, train, data, 0), train_fn).digest,
                  "computed": trainer.counts.computed, "cached": trainer.counts.cached, "loss": loss}))
"""


def _copy_package(dest: Path) -> Path:
    for package in ("claimcheck", "qin2025"):
        shutil.copytree(ROOT / package, dest / package, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _probe(package_root: Path, cache: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(package_root), "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(cache)],
        cwd=package_root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    assert str(result["package"]).startswith(str(package_root))  # the copy ran, not the installed package
    return result


def test_editing_the_model_changes_every_cache_key_so_the_result_is_recomputed(tmp_path: Path) -> None:
    original = _copy_package(tmp_path / "original")
    edited = _copy_package(tmp_path / "edited")
    model_py = edited / "qin2025" / "engine" / "model.py"
    source = model_py.read_text()
    assert "        h = f + gamma * z\n" in source
    model_py.write_text(source.replace("        h = f + gamma * z\n", "        h = 3.0 * f + gamma * z\n"))
    cache = tmp_path / "cache"

    first = _probe(original, cache)
    again = _probe(original, cache)
    after_edit = _probe(edited, cache)

    assert (first["computed"], first["cached"]) == (2, 0)
    assert (again["computed"], again["cached"]) == (0, 2) and again["key"] == first["key"]
    assert (after_edit["computed"], after_edit["cached"]) == (2, 0)  # nothing stale was read
    assert after_edit["key"] != first["key"] and after_edit["loss"] != first["loss"]


def test_the_identity_covers_the_engine_and_not_the_report(tmp_path: Path) -> None:
    files = set(code_identity().files)
    engine = ("model", "train", "batched", "matrixwise", "spectral", "encoder", "finetune", "usermodel", "trainer")
    assert {f"qin2025/engine/{name}.py" for name in engine} <= files
    assert {"qin2025/data/jena.py", "qin2025/data/sst2.py", "qin2025/data/synthetic.py"} <= files
    assert not any(f.startswith("claimcheck/") for f in files) and "qin2025/plugin.py" not in files

    copy = _copy_package(tmp_path)
    before = identity_of(copy)
    (copy / "claimcheck" / "report.py").write_text("# a report edit decides no result\n")
    assert identity_of(copy) == before
    with (copy / "qin2025" / "data" / "jena.py").open("a") as f:
        f.write("\n# any engine edit is a new identity\n")
    assert identity_of(copy).digest != before.digest


def test_every_module_the_engine_loads_is_covered_or_decides_no_result() -> None:
    """Fail when an engine module starts importing a module the identity does not cover.

    The engine's own modules must all be covered; of the core's, it may load only those that decide
    no number (where and how a result is stored, errors, settings and what they import).
    """
    code = "import json, sys; import qin2025.engine.trainer, qin2025.engine.finetune, qin2025.engine.spectral, "
    code += "qin2025.data;"
    code += "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('claimcheck', 'qin2025'))))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, ""], env=env, capture_output=True, text=True, check=True)
    loaded = set(json.loads(out.stdout))
    covered = set(engine_modules(ROOT)) | set(import_closure(ROOT, tuple(NOT_RESULTS)))
    assert {m for m in loaded if m.startswith("qin2025")} - covered - {"qin2025"} == set()
    direct = {
        node.module
        for path in engine_modules(ROOT).values()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("claimcheck")
    }
    allowed = {
        "claimcheck.errors",
        "claimcheck.store.keys",
        "claimcheck.store.cache",
        "claimcheck.pytest.options",
        "claimcheck.files",
        "claimcheck.pytest.executor",
        "claimcheck.pytest.deadline",  # stops a run past --claim-timeout; a result it lets through is the same
        "claimcheck.provenance.environment",  # names the numerics a key holds (kernels, CPU, threads); computes nothing
    }
    assert direct <= allowed, direct  # the executor decides where a result is computed, not its value


def test_the_report_says_what_the_code_identity_covers() -> None:
    from types import SimpleNamespace

    from qin2025.engine.usermodel import PAPER
    from qin2025.plugin import MODEL_KEY, pytest_claimcheck_environment

    config = SimpleNamespace(stash={MODEL_KEY: PAPER})
    line = pytest_claimcheck_environment(config)["code identity"]  # type: ignore[arg-type]
    identity = code_identity()
    assert line.startswith(f"{identity.digest[:12]} over {len(identity.files)} engine files in qin2025/: ")
    assert "model" in line
