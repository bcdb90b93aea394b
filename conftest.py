"""Plug this paper's suite (``qin2025``) into claimcheck's core when it is installed.

The core (``claimcheck``) serves any suite on its own; without the ``qin2025`` package, sessions
rooted here run with the core alone (its tests and ``examples/gdfacts`` need nothing else).
"""

from __future__ import annotations

import importlib.util


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # the package is there but cannot be imported (or is shadowed by a stub)
        return False


pytest_plugins = ["qin2025.plugin"] if _installed("qin2025.plugin") else []
