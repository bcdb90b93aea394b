"""Datasets the claims train on: synthetic token matrices and real-data loaders."""

from __future__ import annotations

from qin2025.data.synthetic import TensorData, make_synthetic

__all__ = ["TensorData", "make_synthetic"]
