"""Replicates in one array program: replicate r of a ReplicatedSociety is the run seeded seeds[r]."""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pytest

from socialsim.society.mesa_model import SocietyModel, run_society
from socialsim.society.vectorised import (
    PARALLEL_MIN_WORK,
    ReplicatedSociety,
    VectorSociety,
    statistic_columns,
)

MIXED = {
    "always_cooperate": 3,
    "always_defect": 4,
    "image_scoring": 5,
    "simple_standing": 6,
    "stern_judging": 7,
}  # 25 agents: an odd one sits out every round


@pytest.mark.parametrize(
    "population, kwargs",
    [
        (MIXED, {}),
        (MIXED, {"error": 0.1}),
        ({"stern_judging": 12, "always_defect": 6}, {"error": 0.05, "cost": 0.3, "benefit": 1.7}),
        ({"simple_standing": 10, "always_defect": 10}, {"gossip": False}),
        ({"image_scoring": 2}, {}),
        ({"always_defect": 0, "image_scoring": 9, "stern_judging": 0}, {"error": 0.2}),
        (MIXED, {"error": 0.1, "gossip_reach": 0.3}),
    ],
)
def test_each_replicate_is_the_single_run_with_its_seed(population, kwargs):
    seeds = [7, 0, 123, 7]
    batch = ReplicatedSociety(population, seeds=seeds, **kwargs)
    stats = batch.run(30)
    assert list(stats.index.names) == ["replicate", "round"]
    assert list(stats.index) == [(r, t) for r in range(len(seeds)) for t in range(1, 31)]
    assert list(stats.columns) == statistic_columns(population)
    for r, seed in enumerate(seeds):
        single = VectorSociety(population, seed=seed, **kwargs)
        pd.testing.assert_frame_equal(stats.loc[r], single.run(30), check_exact=True)
        np.testing.assert_array_equal(batch.payoff[r], single.payoff)
        np.testing.assert_array_equal(batch.strategy[r], single.strategy)
        assert batch.rngs[r].bit_generator.state == single.rng.bit_generator.state
    # the same seed twice: the same replicate, whatever plays beside it
    pd.testing.assert_frame_equal(stats.loc[0], stats.loc[3], check_exact=True)


def test_a_replicate_is_the_mesa_model_with_its_seed():
    batch = ReplicatedSociety(MIXED, seeds=[3, 4], error=0.2, cost=0.3, benefit=1.7)
    stats = batch.run(25)
    for r, seed in enumerate([3, 4]):
        model = SocietyModel(MIXED, error=0.2, cost=0.3, benefit=1.7, seed=seed)
        for _ in range(25):
            model.step()
        pd.testing.assert_frame_equal(stats.loc[r], model.statistics(), check_exact=True)
        payoffs = np.array([agent.payoff for agent in model.members])
        np.testing.assert_array_equal(batch.payoff[r], payoffs)
        assert batch.rngs[r].bit_generator.state == model.rng.bit_generator.state


def test_each_agents_helps_and_valence_sum_are_the_mesa_agents():
    # helps given and the record share one int64 per agent: read apart, each is Mesa's count
    batch = ReplicatedSociety(MIXED, seeds=[5, 6], error=0.2)
    batch.run(40)
    for r, seed in enumerate([5, 6]):
        model = SocietyModel(MIXED, error=0.2, seed=seed)
        for _ in range(40):
            model.step()
        for name in ("helps_given", "helps_received", "valence_sum"):
            expected = [getattr(agent, name) for agent in model.members]
            np.testing.assert_array_equal(getattr(batch, name)[r], expected)


def test_step_returns_one_value_per_replicate_as_the_single_runs_do():
    seeds = [1, 2, 3]
    batch = ReplicatedSociety(MIXED, seeds=seeds, error=0.1)
    singles = [VectorSociety(MIXED, seed=seed, error=0.1) for seed in seeds]
    for _ in range(12):
        row = batch.step()
        assert list(row) == statistic_columns(MIXED)
        for r, single in enumerate(singles):
            assert {name: float(values[r]) for name, values in row.items()} == single.step()
    assert batch.round == 12


def test_runs_in_pieces_and_steps_add_up_to_one_run():
    whole = ReplicatedSociety(MIXED, seeds=[5, 6], error=0.1)
    pieces = ReplicatedSociety(MIXED, seeds=[5, 6], error=0.1)
    pieces.run(7)
    pieces.step()
    pd.testing.assert_frame_equal(whole.run(20), pieces.run(12), check_exact=True)


def assert_same_batches(one: ReplicatedSociety, other: ReplicatedSociety) -> None:
    pd.testing.assert_frame_equal(one.statistics(), other.statistics(), check_exact=True)
    np.testing.assert_array_equal(one.state, other.state)
    np.testing.assert_array_equal(one.helps_received, other.helps_received)
    for one_rngs, other_rngs in ((one.rngs, other.rngs), (one.reach_rngs, other.reach_rngs)):
        assert [g.bit_generator.state for g in one_rngs] == [
            g.bit_generator.state for g in other_rngs
        ]
    assert one.round == other.round


@pytest.mark.parametrize("replicates", [2, 3, 5])
def test_splitting_the_replicates_between_two_processes_changes_nothing(replicates):
    # The fork plays the first half (rounded up), this process the rest; in pieces, from where
    # a step and an earlier run left them.
    seeds = [40 + r for r in range(replicates)]
    plain = ReplicatedSociety(MIXED, seeds=seeds, error=0.1, gossip_reach=0.6)
    split = ReplicatedSociety(MIXED, seeds=seeds, error=0.1, gossip_reach=0.6)
    for batch, parallel in ((plain, False), (split, True)):
        batch.step()
        batch.run(4, parallel=parallel)
        batch.run(9, parallel=parallel)
    assert_same_batches(plain, split)
    assert split.round == 14


@pytest.mark.parametrize("block_agents", [25, 50, 75, 10_000])
@pytest.mark.parametrize("parallel", [False, True])
def test_runs_played_in_blocks_of_replicates_are_the_rounds_played_together(block_agents, parallel):
    # 25 agents: blocks of 1, 2 and 3 replicates, and one block of all 7; then a split.
    seeds = [70 + r for r in range(7)]
    together = ReplicatedSociety(MIXED, seeds=seeds, error=0.1)
    blocks = ReplicatedSociety(MIXED, seeds=seeds, error=0.1)
    for _ in range(6):
        together.step()
    blocks.run(6, parallel=parallel, block_agents=block_agents)
    assert_same_batches(together, blocks)
    for _ in range(3):
        together.step()
    blocks.run(2, parallel=parallel, block_agents=block_agents)
    blocks.step()
    assert_same_batches(together, blocks)


def spy(monkeypatch, function: str) -> list[int]:
    """The rounds of every call ``run`` makes of ``parallel.<function>`` in this process, from
    now."""
    import socialsim.society.vectorised as vectorised

    calls, real = [], getattr(vectorised, function)
    monkeypatch.setattr(
        vectorised,
        function,
        lambda society, rounds, *rest: calls.append(rounds) or real(society, rounds, *rest),
    )
    return calls


def test_large_runs_are_split_by_default_with_the_same_results(monkeypatch):
    splits = spy(monkeypatch, "run_split")
    population = {name: 40 * n for name, n in MIXED.items()}  # 1,000 agents
    rounds = PARALLEL_MIN_WORK // (4 * 1_000)  # 4 replicates: exactly the threshold
    plain = ReplicatedSociety(population, seeds=range(4), error=0.01)
    plain.run(rounds, parallel=False)
    below = ReplicatedSociety(population, seeds=range(4), error=0.01)
    below.run(rounds - 1)
    below.run(1)
    assert splits == []
    assert_same_batches(plain, below)
    default = ReplicatedSociety(population, seeds=range(4), error=0.01)
    default.run(rounds)
    assert splits == (
        [rounds] if len(os.sched_getaffinity(0)) > 1 and sys.platform == "linux" else []
    )
    assert_same_batches(plain, default)


def test_a_lone_replicate_draws_ahead_in_a_thread_with_the_same_results(monkeypatch):
    ahead = spy(monkeypatch, "run_drawing_ahead")
    plain = ReplicatedSociety(MIXED, seeds=[3], error=0.1)
    asked = ReplicatedSociety(MIXED, seeds=[3], error=0.1)
    plain.run(8, parallel=False)
    asked.run(8, parallel=True)
    assert ahead == [8]
    assert_same_batches(plain, asked)
    asked.run(1, parallel=True)  # one round: nothing to draw ahead
    assert ahead == [8]


@pytest.mark.skipif(sys.platform != "linux", reason="the split forks on Linux only")
def test_a_fork_that_dies_is_an_error_naming_it_not_a_hang(monkeypatch):
    import socialsim.society.parallel as parallel

    monkeypatch.setattr(parallel, "_play_part", lambda *args: os._exit(3))
    batch = ReplicatedSociety(MIXED, seeds=range(4))
    with pytest.raises(RuntimeError, match=r"replicates 0-1 ended \(exit code 3\)"):
        batch.run(5, parallel=True)


def test_cooperators_help_every_round_in_every_replicate():
    stats = ReplicatedSociety({"always_cooperate": 11}, seeds=range(4)).run(5)
    assert (stats["cooperation_rate"] == 1.0).all()
    assert (stats["payoff_always_cooperate"] == (5 * 5.0 - 5 * 1.0) / 11).all()
    assert (stats["reputation_accuracy"] == 1.0).all()


def test_replicates_average_like_run_society_per_seed():
    batch = ReplicatedSociety(MIXED, seeds=range(3), error=0.1).run(10)
    singles = [run_society(MIXED, 10, seed=s, error=0.1, engine="numpy") for s in range(3)]
    expected = sum(singles) / 3
    mean = batch.groupby("round").mean()
    np.testing.assert_allclose(mean.to_numpy(), expected.to_numpy(), rtol=1e-12)


def test_zero_rounds_give_an_empty_table_with_the_columns():
    stats = ReplicatedSociety({"image_scoring": 3}, seeds=[0, 1]).run(0)
    assert stats.empty and list(stats.columns) == statistic_columns({"image_scoring": 3})


@pytest.mark.parametrize("seeds", [[], "seed", 3, {"a": 1}])
def test_seeds_must_be_a_non_empty_sequence(seeds):
    with pytest.raises(ValueError, match="^seeds"):
        ReplicatedSociety(MIXED, seeds=seeds)


@pytest.mark.skipif(sys.platform != "linux", reason="the split forks on Linux only")
def test_a_fork_that_cannot_start_raises_its_own_error(monkeypatch):
    import multiprocessing

    def no_fork(self):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(type(multiprocessing.get_context("fork").Process()), "start", no_fork)
    batch = ReplicatedSociety(MIXED, seeds=range(4))
    with pytest.raises(OSError, match="Cannot allocate memory"):
        batch.run(5, parallel=True)
    assert batch.round == 0
    pd.testing.assert_frame_equal(
        batch.run(5, parallel=False), ReplicatedSociety(MIXED, seeds=range(4)).run(5)
    )


def test_bad_run_arguments_are_rejected_naming_the_parameter():
    batch = ReplicatedSociety(MIXED, seeds=[0])
    with pytest.raises(ValueError, match="^rounds"):
        batch.run(-1)
    with pytest.raises(ValueError, match="^parallel"):
        batch.run(2, parallel="yes")
    for block_agents in (0, 2.5, True):
        with pytest.raises(ValueError, match="^block_agents: must be an integer >= 1, got"):
            batch.run(2, block_agents=block_agents)
    with pytest.raises(ValueError, match="^error"):
        ReplicatedSociety(MIXED, seeds=[0], error=2.0)
