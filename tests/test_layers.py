"""The layer contract: the generic claim core never imports a suite, and a suite uses the core's public face.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked by import-linter,
which follows every import of both packages (``from x import y``, ``import x.y``, relative imports,
imports inside functions). The fast tests run the contracts, and show that they can fail: a copy of
the tree with one planted import breaks the contract it should. The slow test hides ``qin2025``
altogether and runs the core's tests and the example suite without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted(
    ".".join(p.relative_to(ROOT / "claimcheck").with_suffix("").parts)
    for p in (ROOT / "claimcheck").rglob("*.py")
    if p.name != "__init__.py" and p.parent.name != "pytest"
)  # every core module outside the pytest package; the slow test imports each with qin2025 hidden
LINT = [
    sys.executable,
    "-c",
    "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
]


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the packages under ``tree`` with its pyproject's contracts."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(LINT, cwd=tree, env=env, capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for name in ("claimcheck", "qin2025"):
        shutil.copytree(ROOT / name, tree / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_layer_contracts_hold() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "planted", "contract"),
    [
        ("claimcheck/decide/stats.py", "from qin2025 import model  # noqa", "claimcheck never imports qin2025"),
        (
            "claimcheck/decide/verdicts.py",
            "def _late():\n    import qin2025.engine.train  # noqa",
            "claimcheck never imports qin2025",
        ),
        (
            "qin2025/c2/monotone.py",
            "from claimcheck.pytest.core import CORE  # noqa",
            "not the plugin's internals",
        ),
        ("claimcheck/report/markdown.py", "import pytest  # noqa", "only claimcheck.pytest imports pytest"),
        ("claimcheck/cli/ledger.py", "import _pytest.nodes  # noqa", "only claimcheck.pytest imports pytest"),
        (
            "claimcheck/decide/verdicts.py",
            "def _late():\n    from claimcheck.report import rundata  # noqa",
            "packages are layers",
        ),
        ("claimcheck/store/cache.py", "from claimcheck.pytest.options import Settings  # noqa", "packages are layers"),
    ],
)
def test_a_planted_import_breaks_its_contract(tmp_path: Path, module: str, planted: str, contract: str) -> None:
    tree = _copy(tmp_path)
    path = tree / module
    path.write_text(path.read_text(encoding="utf-8") + "\n\n" + planted + "\n", encoding="utf-8")
    done = _lint(tree)
    assert done.returncode != 0, done.stdout[-2000:]
    broken = done.stdout.split("Broken contracts", 1)[-1]
    assert contract in " ".join(broken.split()), done.stdout[-3000:]


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
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hide), os.environ.get("PYTHONPATH", "")])}
    hidden = subprocess.run([sys.executable, "-c", "import qin2025"], env=env, capture_output=True, text=True, cwd=ROOT)
    assert hidden.returncode != 0 and "hidden by the layer contract test" in hidden.stderr
    imports = (
        "; ".join(f"import claimcheck.{m}" for m in CORE) + "; import claimcheck.pytest.plugin, claimcheck.cli.main"
    )
    done = subprocess.run([sys.executable, "-c", imports], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    tests = [sys.executable, "-m", "pytest", "tests", "--ignore=tests/paper", "-q", "-p", "no:randomly", "-x"]
    done = subprocess.run([*tests, "-m", "not slow"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "qin2025" not in done.stdout.splitlines()[0]  # the header names no suite plugin
    suite = [sys.executable, "-m", "pytest", "-c", "examples/gdfacts/pytest.ini", "examples/gdfacts", "-q"]
    done = subprocess.run([*suite, "--claim-cache=off"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:]
