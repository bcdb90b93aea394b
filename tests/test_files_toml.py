"""The fast TOML reader (rtoml) reads what tomllib reads, and bad text still raises tomllib's error."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from claimcheck.files import loads_toml

ROOT = Path(__file__).resolve().parents[1]
TRICKY = '''
[[entry]]
kind = "register"
text = "quotes \\" and \\\\ backslashes, tabs\\t, unicode \\u00e9 \u2014 \U0001f600, a newline\\n"
literal = 'C:\\path\\no escapes'
multi = """
two
lines"""
big = 9223372036854775807
neg = -17
float = 1e-300
tiny = 5e-324
inf = inf
nan_free = 0.1
when = 2026-12-08
stamp = 2026-12-08T00:15:15Z
nested = { a = [1, 2.5, "x"], b = { c = true } }
'''


@pytest.mark.parametrize("path", sorted((ROOT / "claims" / "ledger").glob("*.toml")), ids=lambda p: p.name)
def test_the_committed_ledger_reads_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert loads_toml(text) == tomllib.loads(text)


def test_escapes_numbers_and_dates_read_the_same() -> None:
    assert loads_toml(TRICKY) == tomllib.loads(TRICKY)


@pytest.mark.parametrize("text", ["a = ", "[[entry]\nx = 1", 'a = "open', "a = 1\na = 2"])
def test_bad_text_raises_the_standard_librarys_error(text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        loads_toml(text)


def test_text_only_tomllib_reads_is_read_by_it() -> None:
    text = "n = 123456789012345678901234567890"  # past 64 bits: tomllib reads it, rtoml refuses it
    assert loads_toml(text) == {"n": 123456789012345678901234567890}
