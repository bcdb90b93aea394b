"""claimcheck: check a paper's empirical claims as pytest tests, with a markdown report."""

from __future__ import annotations

__version__ = "0.1.0"
