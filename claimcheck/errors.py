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


QUOTE_LIMIT = 200  # the most characters of a file's text an error message quotes


def quote_line(text: str, limit: int = QUOTE_LIMIT) -> str:
    """Return ``text`` quoted (``repr``) for an error message: its first line (LF, CR or CRLF), at most ``limit``
    characters, and how many characters were left out."""
    first = text.replace("\r\n", "\n").replace("\r", "\n").split("\n", 1)[0]
    cut = first[:limit]
    rest = len(text) - len(cut)
    return repr(cut) + (f" (and {rest:,} more characters)" if rest > 0 else "")
