"""The layer contract: the generic claim core never imports this paper's engine.

The core (protocols, recording, verdicts, ledger, expectations, report, figures, run files, store,
history) must serve any suite, so none of its modules may import, directly or through another
module, the paper's model, training, data or model protocol. The plugin and the command line are
where the two meet, and are left out until the engine moves into a package of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = (
    "claimprotocol", "record", "results", "ledger", "expectations", "report", "figures", "runfile",
    "session", "baseline", "stability", "history", "store", "memo", "hookspecs", "settings", "budget",
    "files", "stats", "runs", "errors", "executor",
)  # fmt: skip
ENGINE = (
    "model", "train", "batched", "matrixwise", "cache", "spectral", "checks", "encoder", "finetune",
    "protocol", "probe", "facts", "data", "fetch", "sources", "mutation",
)  # fmt: skip


def _imports(module: str) -> set[str]:
    path = ROOT / "claimcheck" / f"{module}.py"
    if not path.exists():
        path = ROOT / "claimcheck" / module / "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("claimcheck."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("claimcheck."))
    return found


@pytest.mark.parametrize("module", CORE)
def test_a_core_module_does_not_reach_the_papers_engine(module: str) -> None:
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += sorted(_imports(name))
    reached = sorted(seen & set(ENGINE))
    assert not reached, f"claimcheck.{module} imports the paper's engine through {reached}"


BLOCKER = """
import sys


class _HideTheSuite:
    \"\"\"Make qin2025 unimportable, wherever it lies on sys.path: as if its package were deleted.\"\"\"

    def find_spec(self, name, path=None, target=None):
        if name == "qin2025" or name.startswith("qin2025."):
            raise ModuleNotFoundError(f"No module named {name!r} (hidden by the layer contract test)", name=name)
        return None


sys.meta_path.insert(0, _HideTheSuite())
"""


@pytest.mark.slow
def test_without_the_papers_package_the_core_tests_and_the_example_suite_pass(tmp_path: Path) -> None:
    """Delete the paper's package (a sitecustomize hides it from every import) and run the core alone."""
    import os
    import subprocess
    import sys

    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hide), os.environ.get("PYTHONPATH", "")])}
    hidden = subprocess.run([sys.executable, "-c", "import qin2025"], env=env, capture_output=True, text=True, cwd=ROOT)
    assert hidden.returncode != 0 and "hidden by the layer contract test" in hidden.stderr
    imports = "; ".join(f"import claimcheck.{m}" for m in CORE) + "; import claimcheck.plugin, claimcheck.cli"
    done = subprocess.run([sys.executable, "-c", imports], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    tests = [sys.executable, "-m", "pytest", "tests", "--ignore=tests/paper", "-q", "-p", "no:randomly", "-x"]
    done = subprocess.run([*tests, "-m", "not slow"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "qin2025" not in done.stdout.splitlines()[0]  # the header names no suite plugin
    suite = [sys.executable, "-m", "pytest", "-c", "examples/gdfacts/pytest.ini", "examples/gdfacts", "-q"]
    done = subprocess.run([*suite, "--claim-cache=off"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
