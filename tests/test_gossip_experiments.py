"""The bundled gossip-game experiment files load, and the quickstart shows the paper's finding."""

from __future__ import annotations

import pytest

from socialsim import config
from socialsim.runner import play_episode

FILES = [
    "align_quickstart",
    "align_donation_grid",
    "align_prisoners",
    "align_trust",
    "align_market",
]


@pytest.mark.parametrize("name", FILES)
def test_experiment_file_loads_and_one_episode_per_cell_plays(name):
    experiment = config.load(name, ["episodes=1"])
    specs = experiment.specs()
    assert len(specs) == len(experiment.cells) >= 2
    for spec in specs[:: max(1, len(specs) // 6)]:
        assert play_episode(spec).status == "done"


def test_quickstart_gossip_starves_the_entrant_and_silence_rewards_it():
    experiment = config.load("align_quickstart", ["episodes=3"])
    entrant = {True: [], False: []}
    pool = {True: [], False: []}
    for spec in experiment.specs():
        record = play_episode(spec)
        gossip = spec.cell["env.kwargs.gossip"]
        entrant[gossip].append(record.returns.get("agent_8", 0.0))
        pool[gossip].extend(record.returns.get(f"agent_{i}", 0.0) for i in range(8))

    def mean(xs):
        return sum(xs) / len(xs)

    assert mean(entrant[True]) < mean(pool[True])  # with gossip defection does not pay
    assert mean(entrant[False]) > mean(pool[False])  # without gossip it does
