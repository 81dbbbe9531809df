"""The main job's headline from enough seeds: an evolution file's cells played in the numpy
society give the env run's generations for the same seeds, and the headline's figures."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from socialsim.experiments.align_evolution_seeds import headline, last_generation

from socialsim import records
from socialsim.cli import main
from socialsim.config import load
from socialsim.society.companion import arms

SMALL = ["episodes=2", "evolution.generations=3"]


@pytest.mark.slow
def test_the_society_plays_the_env_runs_generations_for_the_same_seeds(tmp_path, capsys):
    out = tmp_path / "run"
    overrides = [x for o in SMALL for x in ("--set", o)]
    assert main(["run", "align_evolution", "--out", str(out), "--quiet", *overrides]) == 0
    capsys.readouterr()
    played = {
        arm.cell["env.kwargs.gossip"]: arm.run(2) for arm in arms(load("align_evolution", SMALL))
    }
    compared = 0
    for record in records.read_records(out):
        row = played[record.cell["env.kwargs.gossip"]].loc[
            (record.episode, record.cell["generation"])
        ]
        acts = [i["action"] for i in record.summary["interactions"]]
        assert row["cooperation"] == acts.count("cooperate") / len(acts)
        kinds = [seat["kind"] for seat in record.seats.values()]
        for kind in set(kinds):
            assert row[f"share_{kind}"] == kinds.count(kind) / len(kinds)
        compared += 1
    assert compared == 2 * 2 * 3  # arms x replicates x generations


def test_the_arms_are_the_files_cells_in_its_order_with_its_population():
    gossip_on, gossip_off = arms(load("align_evolution"))
    assert (gossip_on.label, gossip_off.label) == ("gossip=True", "gossip=False")
    assert gossip_on.population == {"always_cooperate": 6, "always_defect": 6, "stern_judging": 8}
    assert (gossip_on.rounds, gossip_on.generations, gossip_on.first_seed) == (30, 15, 0)
    assert gossip_on.evolution.mutation == 0.02


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("env.kwargs.schedule=align", "env.kwargs.schedule: the society pairs at random"),
        ("seats.agent_19.kind=always_cooperate", "seats.agent_19.kind: the society lays"),
        ("env.kwargs.initial_resources=5.0", "env.kwargs.initial_resources: the society has no"),
    ],
)
def test_a_cell_the_society_cannot_play_is_refused_naming_the_field(override, message):
    with pytest.raises(ValueError, match=message):
        arms(load("align_evolution", [override]))


def _seeds(cooperation: list[float], defectors: list[float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "seed": range(len(cooperation)),
            "generation": 4,
            "cooperation": cooperation,
            "share_always_defect": defectors,
        }
    )


def test_the_headline_counts_a_defectors_majority_as_a_win_with_an_exact_interval():
    off = last_generation(_seeds([0.0, 0.1, 0.0, 0.2], [1.0, 0.9, 0.95, 0.5]))
    on = last_generation(_seeds([1.0, 0.9, 0.0, 0.8], [0.0, 0.05, 0.55, 0.1]))
    table = headline({"gossip=False": off, "gossip=True": on}).set_index("arm")
    assert list(table["defectors_win"][:2]) == [3, 1]  # 0.5 is no majority
    assert table.loc["gossip=True", "defectors_win_low"] == pytest.approx(0.00630946, abs=1e-8)
    difference = table.loc["gossip=True - gossip=False"]
    assert difference["cooperation"] == pytest.approx(0.6)
    # differences 1, 0.8, 0, 0.6: 4 of the 16 sign patterns reach |mean| 0.6
    assert "permutation p = 0.25 (every sign pattern)" in difference["cooperation_method"]
    assert math.isnan(difference["defectors_win_share"])
