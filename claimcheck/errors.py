"""Exceptions raised by claimcheck; every message says what, which value, and what to do."""

from __future__ import annotations


class ClaimcheckError(Exception):
    """Base class of every error claimcheck raises on purpose."""


class ConfigError(ClaimcheckError, ValueError):
    """A configuration value (option, ini setting, dataclass field) is invalid."""


class DataError(ClaimcheckError):
    """A data file is missing, malformed or fails validation."""


class DataUnavailable(ClaimcheckError):
    """A dataset or model is not present; claims that need it are skipped, not failed."""
