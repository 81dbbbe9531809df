"""Every figure of the bundled quickstarts, as a paper would take it: PNG, PDF and SVG, column or
page wide, no text leaving the figure and no two texts overlapping (matplotlib's own renderer
measures every title, label, tick label, legend entry and annotation)."""

from __future__ import annotations

import pytest

from socialsim.analysis import figure_style
from socialsim.cli import main

QUICKSTARTS = {
    "align_quickstart": (
        4,
        {
            "cooperation_by_round",
            "returns_by_kind",
            "tones_by_action",
            "entrant",
            "gini_by_round",
            "reputation_accuracy_by_round",
            "reputation",
        },
    ),
    "decrypto_quickstart": (
        6,
        {"decrypto_competitive", "decrypto_cooperative", "decrypto_outcomes"},
    ),
    "decrypto_gopnik": (3, {"decrypto_tom"}),
}


@pytest.fixture
def drawn(monkeypatch):
    """Every figure the report saves, with its layout problems."""
    found: dict[str, list[str]] = {}
    save = figure_style.save

    def checked(figure, path):
        found[path.stem] = figure_style.layout_problems(figure)
        return save(figure, path)

    monkeypatch.setattr(figure_style, "save", checked)
    for module in ("figures", "decrypto_figures"):
        monkeypatch.setattr(f"socialsim.analysis.{module}.save", checked)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(QUICKSTARTS))
def test_every_figure_is_written_in_three_formats_with_no_text_clipped_or_overlapping(
    tmp_path, capsys, drawn, name
):
    episodes, expected = QUICKSTARTS[name]
    out = tmp_path / name
    assert main(["run", name, "--out", str(out), "--quiet", "--set", f"episodes={episodes}"]) == 0
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    assert expected <= set(drawn)
    for stem in drawn:
        for suffix in figure_style.FORMATS:
            assert (out / f"{stem}.{suffix}").stat().st_size > 0
    assert {stem: problems for stem, problems in drawn.items() if problems} == {}


def test_the_layout_check_finds_a_clipped_title_and_overlapping_labels():
    from matplotlib.figure import Figure

    figure = Figure(figsize=(figure_style.COLUMN, 2))
    axes = figure.add_subplot()
    axes.set_title("a title far too long for one column of a paper, cut at both of its edges")
    axes.text(0.5, 0.5, "one label")
    axes.text(0.5, 0.5, "another label")
    problems = figure_style.layout_problems(figure)
    assert any("leaves the figure" in p for p in problems)
    assert "'one label' overlaps 'another label'" in problems
