"""Samplers shared by the calibration families: log-uniform draws and loss-curve shapes."""

from __future__ import annotations

import math

import numpy as np


def log_uniform(rng: np.random.Generator, low: float, high: float) -> float:
    """Return a draw whose log is uniform on [log low, log high]."""
    return float(math.exp(rng.uniform(math.log(low), math.log(high))))


def jitter(rng: np.random.Generator, curve: np.ndarray, sigma: float) -> np.ndarray:
    """Return ``curve`` times exp(sigma * N(0, 1)) per step, the first value kept (L_0 is measured exactly)."""
    noise = rng.normal(0.0, sigma, curve.size)
    noise[0] = 0.0
    return np.asarray(curve * np.exp(noise))


def modes(
    rng: np.random.Generator, steps: int, slowest: float, fastest: float, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return (weights, per-step rates) of ``k`` exponential modes: rates from ``slowest`` up, Dirichlet weights.

    GD on a quadratic: L_t = sum_i w_i exp(-r_i t), every step contracting by at least exp(-slowest).
    """
    rates = np.exp(np.sort(rng.uniform(math.log(slowest), math.log(fastest), k)))
    rates[0] = slowest
    weights = rng.dirichlet(np.ones(k))
    return weights, rates


def mixture(t: np.ndarray, weights: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Return sum_i w_i exp(-r_i t) at the steps ``t``."""
    return np.asarray(np.exp(-np.outer(t, rates)) @ weights)
