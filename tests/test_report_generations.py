"""The report of an [evolution] run: generations.csv per cell and generation over the seeds,
and the figures of cooperation, resources and strategy shares by generation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_evolution_experiment import SMALL

import socialsim
from socialsim.analysis.report import build
from socialsim.records import read_records


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("evolved")
    socialsim.run(SMALL, directory)
    build(directory)
    return directory


def test_generations_csv_gives_each_cell_and_generation_over_its_seeds(evolved):
    table = pd.read_csv(evolved / "generations.csv")
    assert list(table[["cell", "generation"]].itertuples(index=False, name=None)) == [
        (f"gossip_reach={q}", g) for q in ("0.5", "1.0") for g in range(4)
    ]
    assert (table["n"] == 2).all()
    shares = [c for c in table.columns if c.startswith("share_") and c.count("_") == 2]
    kinds = {s["kind"] for r in read_records(evolved) for s in r.seats.values()}
    assert shares == sorted(f"share_{kind}" for kind in kinds)  # mutants' strategies too
    np.testing.assert_allclose(table[shares].sum(axis=1), 1.0)
    first = table.iloc[0]
    assert (first["share_always_cooperate"], first["share_stern_judging"]) == (0.3, 0.4)
    # the means are the records' own: cooperation is the share of donations that cooperated
    records = [
        r
        for r in read_records(evolved)
        if r.cell == {"env.kwargs.gossip_reach": 0.5, "generation": 2}
    ]
    shares_of = [
        np.mean([i["action"] == "cooperate" for i in r.summary["interactions"]]) for r in records
    ]
    stocks = [np.mean(list(r.summary["resources"].values())) for r in records]
    row = table[(table["cell"] == "gossip_reach=0.5") & (table["generation"] == 2)].iloc[0]
    assert row["cooperation"] == pytest.approx(np.mean(shares_of))
    assert row["cooperation_se"] == pytest.approx(np.std(shares_of, ddof=1) / np.sqrt(2))
    assert row["mean_resources"] == pytest.approx(np.mean(stocks))
    assert row["cooperation_low"] <= row["cooperation"] <= row["cooperation_high"]


def test_the_report_draws_the_generations_and_a_run_without_them_draws_none(evolved, tmp_path):
    for name in ("cooperation", "resources", "shares"):
        assert (evolved / f"generations_{name}.png").stat().st_size > 10_000
    assert "generations_cooperation.png" in (evolved / "report.html").read_text()
    socialsim.run("matching_pennies", tmp_path, ["episodes=1"])
    build(tmp_path)
    assert not (tmp_path / "generations.csv").exists()


def test_the_generation_figures_are_paper_grade(evolved, tmp_path, monkeypatch):
    """As every figure of the report: PNG, PDF and SVG, no text leaving the figure, no two texts
    overlapping (matplotlib's renderer measures each)."""
    from socialsim.analysis import figure_style, generations

    problems: dict[str, list[str]] = {}
    save = figure_style.save

    def checked(figure, path):
        problems[path.stem] = figure_style.layout_problems(figure)
        return save(figure, path)

    monkeypatch.setattr(figure_style, "save", checked)
    table = generations.generations_table(read_records(evolved))
    paths = generations.plot_generations(table, tmp_path)
    assert [p.name for p in paths] == [
        "generations_cooperation.png",
        "generations_resources.png",
        "generations_shares.png",
    ]
    assert problems == {p.stem: [] for p in paths}
    for path in paths:
        assert all(path.with_suffix(f".{fmt}").is_file() for fmt in ("png", "pdf", "svg"))


def test_a_constant_share_over_ten_seeds_has_no_float_noise_and_a_zero_spread(evolved):
    import dataclasses

    from socialsim.analysis.generations import generations_table

    first = next(r for r in read_records(evolved) if r.cell["generation"] == 0)
    ten = [dataclasses.replace(first, episode=seed) for seed in range(10)]
    row = generations_table(ten).iloc[0]
    # summed in floats, ten shares of 0.3 make 2.9999999999999996: the mean was 0.2999...93
    assert (row["share_always_cooperate"], row["share_always_cooperate_se"]) == (0.3, 0.0)
    assert (row["share_stern_judging"], row["share_stern_judging_se"]) == (0.4, 0.0)


def test_each_seed_s_shares_are_in_a_table_and_its_last_generation_drawn_per_seed(evolved):
    seeds = pd.read_csv(evolved / "generations_seeds.csv")
    assert list(seeds.columns[:4]) == ["cell", "generation", "seed", "cooperation"]
    assert len(seeds) == 2 * 4 * 2  # cells x generations x seeds
    shares = [c for c in seeds.columns if c.startswith("share_")]
    np.testing.assert_allclose(seeds[shares].sum(axis=1), 1.0)
    assert (evolved / "generations_final_shares.png").stat().st_size > 10_000
