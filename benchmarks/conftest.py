"""Shared fixtures of the engine benchmarks (run with ``pytest benchmarks --benchmark-only``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

# Torch's own default on this machine (its core count), read before any benchmark changes it.
DEFAULT_THREADS = torch.get_num_threads()


@pytest.fixture
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    """Run the benchmark with torch's intra-op thread count set to the parameter, then restore it.

    Parametrize indirectly with an int, or with None for torch's default on this machine.
    """
    wanted = getattr(request, "param", None) or DEFAULT_THREADS
    before = torch.get_num_threads()
    torch.set_num_threads(wanted)
    yield wanted
    torch.set_num_threads(before)
