"""Draw the parameters of a challenge world: ranges, log-uniform scales, and draws kept only inside a band.

Every challenge family is a world whose truth is set by its parameters; where a family's label
depends on a property computed from the draw (a rate's fall over the scored steps, a floor reached
or not), ``until`` redraws until the property lies in the family's band, so no case of a family
sits outside what its ``why`` says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np

T = TypeVar("T")
TRIES = 400  # redraws before a band is declared empty (a bug in the family, not a case)


class EmptyBand(RuntimeError):
    """A family's band held no draw in ``TRIES`` tries: its grid and its band do not meet."""


def uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """Return a draw uniform on [low, high]."""
    return float(rng.uniform(low, high))


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """Return a draw whose logarithm is uniform on [log low, log high]."""
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def until(rng: np.random.Generator, make: Callable[[np.random.Generator], T], keep: Callable[[T], bool]) -> T:
    """Return the first ``make(rng)`` that ``keep`` accepts; raise EmptyBand after ``TRIES`` draws."""
    for _ in range(TRIES):
        out = make(rng)
        if keep(out):
            return out
    raise EmptyBand(f"no draw of {getattr(make, '__name__', make)!r} fell in its band in {TRIES} tries")
