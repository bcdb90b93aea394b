"""Figures a reader can trust: scatters, labelled axes, broken gaps, thresholds, undrawable values, failures."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PathCollection

from claimcheck.decide.record import ClaimRecorder, Curve
from claimcheck.decide.verdicts import TestOutcome
from claimcheck.report import figures
from claimcheck.report.figures import axis_labels, break_gaps, draw, draw_figures, figure, kind_of
from claimcheck.report.rundata import RunData


def _run(*curves: Curve, claim: str = "C1") -> RunData:
    rec = ClaimRecorder(claim, seed=0)
    rec.check("s", 0.5, "<=", 1.0)
    rec.curves.extend(curves)
    return RunData("r", {}, [TestOutcome("t.py::t", claim, "t", "s", "passed", rec)])  # type: ignore[arg-type]


def _draw(title: str, *curves: Curve, threshold: float | None = None) -> tuple[plt.Axes, int]:
    fig, left_out = figure(title, curves, threshold=threshold)
    plt.close(fig)
    return fig.axes[0], left_out


def test_a_curve_of_configurations_is_drawn_as_points_not_a_line() -> None:
    c = Curve("median rate per configuration", [0.03, 0.01, 0.05], [-8.0, -4.0, -1.0], group="rate vs kinv")
    ax, _ = _draw("C7: rate vs kinv", c)
    assert kind_of(c) == "scatter"
    assert [type(col) for col in ax.collections] == [PathCollection]
    assert not [line for line in ax.lines if len(line.get_xdata()) > 1]


def test_unordered_x_or_an_explicit_kind_makes_a_scatter() -> None:
    assert kind_of(Curve("a", [1.0, 2.0, 3.0], [3.0, 1.0, 2.0])) == "scatter"
    assert kind_of(Curve("a", [1.0, 2.0], [1.0, 2.0])) == "line"
    marked = SimpleNamespace(name="a", y=[1.0, 2.0], x=[1.0, 2.0], group="g", xlabel="", ylabel="", kind="scatter")
    assert kind_of(marked) == "scatter"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("group", "curve", "labels"),
    [
        ("training loss per GD step", Curve("loss", [1.0, 0.5]), ("GD step", "training loss")),
        (
            "C4: stable rank vs log2(d_QK), n=16 d=64",
            Curve("xavier", [2.0, 1.0], [1.0, 2.0]),
            ("log2(d_QK)", "stable rank"),
        ),
        ("C5 loss per beta", Curve("beta=0", [1.0, 0.5]), ("GD step", "value")),
        ("g", Curve("a", [1.0], [1.0], xlabel="L (blocks)", ylabel="loss (MSE)"), ("L (blocks)", "loss (MSE)")),
    ],
)
def test_every_axis_is_labelled(group: str, curve: Curve, labels: tuple[str, str]) -> None:
    assert axis_labels(group, [curve]) == labels
    ax, _ = _draw(group, curve)
    assert (ax.get_xlabel(), ax.get_ylabel()) == labels


def test_a_gap_in_a_sweep_breaks_the_line() -> None:
    x, y = break_gaps(np.array([1.0, 2.0, 3.0, 6.0]), np.array([4.0, 3.0, 2.0, 1.0]))
    assert x.tolist() == [1.0, 2.0, 3.0, 4.5, 6.0]
    assert np.isnan(y[3]) and y[[0, 1, 2, 4]].tolist() == [4.0, 3.0, 2.0, 1.0]
    ax, _ = _draw("C6 final loss vs L", Curve("residual", [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 6.0]))
    (line,) = ax.lines
    assert np.isnan(np.asarray(line.get_ydata(), dtype=float)).sum() == 1
    assert line.get_marker() == "o"  # a sparse sweep shows its points


def test_runs_of_different_lengths_are_aligned_on_x_and_missing_values_break_the_line() -> None:
    a = Curve("beta=1", [1.0, 0.5, 0.25], group="g")
    b = Curve("beta=1", [2.0, math.nan], group="g")
    x, med, lo, hi, left_out = figures.band([a, b])
    assert lo.tolist() == [1.0, 0.5, 0.25]
    assert x.tolist() == [0.0, 1.0, 2.0] and left_out == 0
    assert med.tolist() == [1.5, 0.5, 0.25] and hi.tolist() == [2.0, 0.5, 0.25]


def test_the_threshold_is_a_horizontal_line() -> None:
    ax, _ = _draw("C1: T log10 c vs seed", Curve("T log10 c", [-3.0, -2.5], [0.0, 1.0]), threshold=-2.0)
    (level,) = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert list(level.get_ydata()) == [-2.0, -2.0]
    assert "threshold -2" in [t.get_text() for t in ax.get_legend().get_texts()]
    marked = SimpleNamespace(name="a", y=[1.0, 2.0], x=None, group="g", xlabel="", ylabel="", threshold=1.5)
    ax, _ = _draw("g", marked)  # type: ignore[arg-type]
    assert any(list(line.get_ydata()) == [1.5, 1.5] for line in ax.lines)


def test_values_that_cannot_be_drawn_are_left_out_with_a_note(tmp_path: Path) -> None:
    wild = Curve("loss", [1.0, math.inf, 1e272, 0.5, -1e300], group="C5 loss per beta")
    ax, left_out = _draw("C5 loss per beta", wild)
    assert left_out == 3
    assert any("3 value(s) left out" in t.get_text() for t in ax.texts)
    result = draw_figures(_run(wild, claim="C5"), tmp_path)
    assert [p.name for p in result.written] == ["C5-c5-loss-per-beta.png"]
    assert result.notes == ["C5: figure 'C5 loss per beta': 3 value(s) left out (inf or beyond ±1e+150)"]
    assert result.problems == []


def test_a_figure_that_fails_is_reported_and_the_others_are_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = figures.figure

    def fragile(title: str, curves: list[Curve], **kw: float | None) -> tuple[object, int]:
        if "bad" in title:
            raise OverflowError("cannot convert float infinity to integer")
        return real(title, curves, **kw)

    monkeypatch.setattr(figures, "figure", fragile)
    run = _run(Curve("a", [1.0, 2.0], group="good"), Curve("a", [1.0, 2.0], group="bad"))
    result = draw_figures(run, tmp_path)
    assert [p.name for p in result.written] == ["C1-good.png"]
    assert result.problems == ["C1: figure 'bad' not drawn: OverflowError: cannot convert float infinity to integer"]
    with pytest.warns(UserWarning, match="figure 'bad' not drawn"):
        assert draw(run, tmp_path / "again") == [tmp_path / "again" / "C1-good.png"]


def test_figures_can_be_turned_off(tmp_path: Path) -> None:
    result = draw_figures(_run(Curve("a", [1.0, 2.0])), tmp_path / "figs", enabled=False)
    assert result.written == [] and not (tmp_path / "figs").exists()
    assert draw(_run(Curve("a", [1.0, 2.0])), tmp_path / "figs", enabled=False) == []


def test_an_unchanged_figure_is_copied_from_the_cache_not_drawn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    curves = [Curve("loss", [1.0, 0.5, 0.25]), Curve("loss", [1.0, float("inf"), 0.2])]
    png, left_out = figures.cached_group("C1: loss per GD step", curves, cache=tmp_path)
    assert png.startswith(b"\x89PNG") and left_out == 1

    def no_drawing(*args: object, **kwargs: object) -> tuple[bytes, int]:
        raise AssertionError("drawn again")

    monkeypatch.setattr(figures, "draw_group", no_drawing)
    assert figures.cached_group("C1: loss per GD step", curves, cache=tmp_path) == (png, 1)
    with pytest.raises(AssertionError, match="drawn again"):  # other data: another figure
        figures.cached_group("C1: loss per GD step", [Curve("loss", [1.0, 0.4])], cache=tmp_path)
    with pytest.raises(AssertionError, match="drawn again"):  # another threshold
        figures.cached_group("C1: loss per GD step", curves, threshold=0.5, cache=tmp_path)


def test_a_damaged_cached_figure_is_drawn_again(tmp_path: Path) -> None:
    curves = [Curve("loss", [1.0, 0.5])]
    png, _ = figures.cached_group("C1: loss per GD step", curves, cache=tmp_path)
    (entry,) = tmp_path.glob("*.png")
    entry.write_bytes(b"0\nnot a png")
    assert figures.cached_group("C1: loss per GD step", curves, cache=tmp_path) == (png, 0)
    assert entry.read_bytes().endswith(png)


def test_drawing_figures_with_a_cache_writes_the_same_files(tmp_path: Path) -> None:
    run = _run(
        Curve("loss", [1.0, 0.5], group="loss per GD step"), Curve("rate", [0.1, 0.2], [1.0, 2.0], group="rate vs d")
    )
    plain = draw_figures(run, tmp_path / "plain")
    cold = draw_figures(run, tmp_path / "cold", cache=tmp_path / "cache")
    warm = draw_figures(run, tmp_path / "warm", cache=tmp_path / "cache")
    names = [[p.name for p in f.written] for f in (plain, cold, warm)]
    assert names[0] == names[1] == names[2] and names[0]
    for a, b in zip(cold.written, warm.written, strict=True):
        assert a.read_bytes() == b.read_bytes()
