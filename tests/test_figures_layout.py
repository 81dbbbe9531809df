"""Every figure of every bundled experiment's report, as a paper would take it: PNG, PDF and SVG,
column or page wide, no text leaving the figure and no two texts overlapping (matplotlib's own
renderer measures every title, label, tick label, legend entry and annotation). The LLM files
play against the shipped playground server; every file plays a few episodes."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from socialsim import analysis, config
from socialsim.analysis import figure_style
from socialsim.cli import main
from socialsim.testing.llm_server import ScriptedChatServer
from socialsim.testing.playground import PlayPolicy, play_overrides

#: a few episodes of each file: enough for every figure (two replicates for the intervals; an
#: evolution run's first, middle and last generations)
SMALL = {
    "align_evolution": ["episodes=2", "evolution.generations=4", "env.kwargs.rounds=6"],
    "llm_cultural_evolution": ["evolution.generations=3", "env.kwargs.rounds=4"],
}

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
            "cooperation_by_agent",
        },
    ),
    "align_trust": (2, {"trust_gini", "returns_by_kind"}),
    "align_market": (2, {"market_outcomes"}),
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

    # every module imported first, so that none imports the patched function as its own
    modules = [
        importlib.import_module(f"socialsim.analysis.{info.name}")
        for info in pkgutil.iter_modules(analysis.__path__)
    ]
    for module in modules:  # figure_style, and each module that imported save by name
        if getattr(module, "save", None) is save:
            monkeypatch.setattr(module, "save", checked)
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


def test_models_labelled_by_the_experiment_are_grouped_reasoning_beside_chat(tmp_path, drawn):
    import pandas as pd

    from socialsim.analysis import align_figures

    models = ["openai/gpt-4o-mini", "openai/o4-mini", "openai/gpt-4o"]
    cells = pd.DataFrame(
        [
            {
                "cell.env.kwargs.gossip": str(gossip),
                "cell.seats.*.model.model": model,
                "cell": f"gossip={gossip}, model={model}",
                "game": "donation",
                "n": 3,
                "cooperation_residents": 0.5,
                "cooperation_residents_se": 0.1,
            }
            for model in models
            for gossip in (True, False)
        ]
    )
    groups = {"openai/o4-mini": "reasoning", "openai/gpt-4o-mini": "chat", "openai/gpt-4o": "chat"}
    figure_holder = {}
    original = align_figures.save

    def keep(figure, path):
        figure_holder["figure"] = figure
        return original(figure, path)

    align_figures.save = keep
    try:
        align_figures.plot_align(cells, tmp_path, groups)
    finally:
        align_figures.save = original
    labels = [t.get_text() for t in figure_holder["figure"].axes[0].get_yticklabels()]
    # the groups in the order the experiment names them, the models by name within each
    assert labels == [
        "openai/o4-mini [reasoning]",
        "openai/gpt-4o [chat]",
        "openai/gpt-4o-mini [chat]",
    ]
    assert drawn["cooperation_by_agent"] == []


def test_a_factor_one_run_lacks_sorts_with_the_others_under_pandas_3():
    import numpy as np
    import pandas as pd

    from socialsim.analysis import figures

    # pandas 3 keeps NaN through astype(str); sorting it beside strings raised a TypeError
    frame = pd.DataFrame({"cell.env.kwargs.gossip": [True, np.nan, False]})
    assert figures._values(frame, "cell.env.kwargs.gossip") == ["False", "True", "nan"]


@pytest.mark.slow
@pytest.mark.parametrize("name", config.bundled_experiments())
def test_every_bundled_experiment_reports_with_no_text_clipped_or_overlapping(
    tmp_path, capsys, drawn, monkeypatch, fresh_models, name
):
    monkeypatch.setattr(figure_style, "FORMATS", ("png",))  # the layout is the same in each
    monkeypatch.setattr(figure_style, "DPI", 40)  # text extents are measured in points
    out = tmp_path / name
    with ScriptedChatServer(PlayPolicy()) as server:
        sets = play_overrides(name, server.url) if name.startswith(("llm_", "smollm2_")) else []
        sets += SMALL.get(name, [] if sets else ["episodes=2"])
        if "episodes=1" in sets and name not in SMALL:
            sets.append("episodes=2")  # the later --set wins: two replicates
        arguments = ["run", name, "--out", str(out), "--quiet"]
        assert main([*arguments, *(x for s in sets for x in ("--set", s))]) == 0
    assert main(["report", str(out)]) == 0
    capsys.readouterr()
    assert set(drawn) == {path.stem for path in out.glob("*.png")}  # every figure was measured
    assert {stem: problems for stem, problems in drawn.items() if problems} == {}
