"""Inputs are checked against what the report claims: all of C5's features, and error messages that quote a line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from test_jena import csv_text

from claimcheck.errors import quote_line
from qin2025.c5.residual_speed import prepare_jena
from qin2025.data.jena import FEATURES, KERAS_NAME, JenaHeaderError
from qin2025.data.sst2 import Sst2FormatError, load_sst2


def test_c5_refuses_a_jena_file_without_the_features_its_protocol_names(tmp_path: Path) -> None:
    folder = tmp_path / "jena"
    folder.mkdir()

    def cell(i: int, j: int) -> str:  # p (mbar), T (degC), Tpot (K): weather that passes the sanity checks
        p, t = 990.0 + 3 * math.sin(0.3 * i), 5.0 + 3 * math.sin(0.3 * i + 1)
        return f"{(p, t, (t + 273.15) * (1000 / p) ** 0.286)[j]:.2f}"

    (folder / KERAS_NAME).write_text(csv_text(rows=2000, columns=FEATURES[:3], cell=cell))
    with pytest.raises(JenaHeaderError) as caught:
        prepare_jena(tmp_path, n_windows=4, n_tokens=8)
    message = str(caught.value)
    assert KERAS_NAME in message and "has 3 of them" in message
    assert all(name in message for name in FEATURES[3:]) and "claimcheck-fetch jena" in message


def test_an_sst2_file_with_cr_only_line_ends_gets_an_error_of_one_short_line(tmp_path: Path) -> None:
    path = tmp_path / "train.tsv"
    path.write_bytes(b"sentence\tlabel\r" + b"a gripping , funny film\t1\r" * 20000)
    with pytest.raises(Sst2FormatError) as caught:
        load_sst2(path)
    message = str(caught.value)
    assert len(message) < 600 and "\r" not in message.replace("\\r", "")
    assert "more characters" in message


def test_a_quoted_line_is_its_first_line_cut_to_200_characters() -> None:
    assert quote_line("short") == "'short'"
    assert quote_line("a\rb") == "'a' (and 2 more characters)"
    long = quote_line("x" * 1000)
    assert long.startswith("'" + "x" * 200 + "'") and "800 more characters" in long
