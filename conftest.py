"""Plug this paper's suite (``qin2025``) into claimcheck's core when it is installed.

The core (``claimcheck``) serves any suite on its own; without the ``qin2025`` package, sessions
rooted here run with the core alone (its tests and ``examples/gdfacts`` need nothing else).
"""

from __future__ import annotations

import importlib.util

pytest_plugins = ["qin2025.plugin"] if importlib.util.find_spec("qin2025") is not None else []
