"""Cultural evolution of scripted strategies: the rules' exact draws, and the donation env and
the society playing the same generations for the same seed."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from socialsim.experiments.evolution_demo import play_arm

from socialsim.analysis.stats import summary
from socialsim.society.episodes import evolve_in_env
from socialsim.society.evolution import Evolution, fermi
from socialsim.society.generations import EvolvingSociety, generation_seed, update_generator
from socialsim.society.population import STRATEGIES
from socialsim.society.vectorised import ReplicatedSociety

# codes: 0 always_cooperate, 1 always_defect, 2 image_scoring, 3 simple_standing, 4 stern_judging
CODES = np.array([0, 1, 2, 3, 4, 0, 1, 2])
FITNESS = np.array([5.0, 1, 5, 0, 3, 2, 2, 4])


def test_selection_keeps_the_top_half_in_place_and_gives_each_survivor_one_child():
    # the top 4 of fitness 5 1 5 0 3 2 2 4 are agents 0, 2, 7 (above the cut, 3) and 4 (at it);
    # permutation(8) of default_rng(1) is [5 0 1 4 2 6 3 7], which orders the parents 0 4 2 7:
    # the places 1 3 5 6 go to their children
    new, parents = Evolution("selection").update(CODES, FITNESS, np.random.default_rng(1))
    assert new.tolist() == [0, 0, 2, 4, 4, 2, 2, 2]
    assert parents.tolist() == [0, 0, 2, 4, 4, 2, 7, 7]


def test_ties_at_the_cut_survive_in_the_permutations_order():
    # everyone ties: the first half of permutation(8) = 5 0 1 4 survives, and its children
    # take the places 2 3 6 7 in that order
    new, parents = Evolution("selection").update(CODES, np.zeros(8), np.random.default_rng(1))
    assert parents.tolist() == [0, 1, 5, 0, 4, 5, 1, 4]
    assert new.tolist() == [0, 1, 0, 0, 4, 0, 1, 4]


def test_a_mutant_child_takes_a_uniformly_drawn_other_strategy():
    # after the permutation: random(4) = .42 .83 .41 .55 (children 1 and 5 mutate, below 0.5)
    # and integers(0, 4, 4) = 0 0 3 3: child at 1 (always_cooperate, 0) draws 0, skips its own
    # and takes 1; child at 5 (image_scoring, 2) draws 3 >= 2 and takes 4
    new, parents = Evolution("selection", mutation=0.5).update(
        CODES, FITNESS, np.random.default_rng(1)
    )
    assert new.tolist() == [0, 1, 2, 4, 4, 4, 2, 2]
    assert parents.tolist() == [0, 0, 2, 4, 4, 2, 7, 7]  # a mutant keeps its parent


def test_imitation_adopts_a_random_models_strategy_by_the_fermi_rule():
    # integers(0, 7, 8) of default_rng(2) = 5 1 0 2 2 5 3 0, shifted past each agent itself:
    # models 6 2 0 2 2 6 3 0; random(8) = .60 .73 .19 .06 .28 .66 .56 .15 against
    # fermi(f_model - f_own): .05 .98 .5 .99 .88 .5 .12 .73
    new, parents = Evolution("imitation", beta=1.0).update(CODES, FITNESS, np.random.default_rng(2))
    assert new.tolist() == [0, 2, 0, 2, 2, 0, 1, 0]
    assert parents.tolist() == [0, 2, 0, 2, 2, 5, 6, 0]


def test_fermi_is_a_coin_at_beta_0_and_the_better_strategy_at_large_beta():
    assert fermi(np.array([-3.0, 0.0, 3.0]), 0.0).tolist() == [0.5, 0.5, 0.5]
    assert fermi(np.array([-1.0, 1.0]), 1e6).tolist() == [0.0, 1.0]
    sure, _ = Evolution("imitation", beta=1e6).update(CODES, FITNESS, np.random.default_rng(2))
    models = np.array([6, 2, 0, 2, 2, 6, 3, 0])
    better, tied = FITNESS[models] > FITNESS, FITNESS[models] == FITNESS
    assert tied.tolist() == [False, False, True, False, False, True, False, False]
    # the ties (agents 2 and 5) stay coins: draws .19 (adopt) and .66 (keep)
    expected = np.where(better, CODES[models], CODES)
    expected[2] = CODES[models[2]]
    assert sure.tolist() == expected.tolist()


def test_mutation_only_draws_from_the_pool_and_needs_the_mutants_own_strategy_there():
    pool = ("always_defect", "stern_judging")
    codes = np.array([1, 4] * 50)
    new, _ = Evolution("imitation", beta=0.0, mutation=1.0, pool=pool).update(
        codes, np.zeros(100), np.random.default_rng(0)
    )
    assert set(new.tolist()) == {1, 4}
    with pytest.raises(ValueError, match=r"pool: a mutant's own strategy must be in the pool"):
        Evolution("imitation", mutation=1.0, pool=pool).update(
            CODES, FITNESS, np.random.default_rng(0)
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rule": "moran"}, "rule: unknown rule 'moran'; allowed: selection, imitation"),
        ({"survive": 0}, r"survive: must be a number in \(0, 1\]"),
        ({"mutation": 1.5}, r"mutation: must be a number in \[0, 1\]"),
        ({"beta": -1}, "beta: must be a number >= 0"),
        ({"pool": ("always_defect",)}, "pool: a mutant needs another strategy"),
        ({"pool": ("always_defect", "tit_for_tat")}, "pool: must list strategies among"),
    ],
)
def test_bad_evolution_parameters_are_errors_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Evolution(**kwargs)


POPULATION = {"always_cooperate": 3, "always_defect": 3, "stern_judging": 3, "image_scoring": 2}


@pytest.mark.parametrize(
    "evolution, options",
    [
        (Evolution("selection", mutation=0.2), {"gossip_reach": 0.6}),
        (Evolution("imitation", beta=0.5, mutation=0.1), {}),
        (Evolution("selection", survive=0.3), {"gossip": False}),
        (Evolution("imitation", beta=2.0), {"gossip_reach": 0.0, "cost": 0.5, "benefit": 3.0}),
    ],
)
def test_the_env_and_the_society_play_the_same_generations_for_the_same_seed(evolution, options):
    # Same permutations (the env's random schedule and the society pair them alike), the same
    # reach stream, the same norms, the same update draws: the same donations in every
    # generation, hence the same payoffs, strategies and statistics, value for value.
    for seed in (4, 17):
        society = EvolvingSociety(
            POPULATION, seeds=[seed], rounds=6, evolution=evolution, **options
        )
        from_society = society.run(5)
        from_env, records, lineage = evolve_in_env(
            POPULATION, seed=seed, rounds=6, generations=5, evolution=evolution, **options
        )
        pd.testing.assert_frame_equal(from_society, from_env, check_exact=True)
        final = [STRATEGIES.index(seat["kind"]) for seat in records[-1].seats.values()]
        assert society.society.strategy[0].tolist() == final
        assert [r.seed for r in records] == [generation_seed(seed, g) for g in range(5)]
        assert lineage[-1].tolist() == society.parents[0].tolist()
    assert from_society["share_always_defect"].nunique() > 1  # the population did change


def test_each_replicate_evolves_as_the_run_with_its_seed_alone():
    evolution = Evolution("selection", mutation=0.05)
    together = EvolvingSociety(POPULATION, seeds=[3, 8, 3], rounds=5, evolution=evolution)
    table = together.run(4)
    for r, seed in enumerate([3, 8, 3]):
        alone = EvolvingSociety(POPULATION, seeds=[seed], rounds=5, evolution=evolution)
        pd.testing.assert_frame_equal(table.loc[r], alone.run(4).loc[0], check_exact=True)


def test_a_generation_is_born_afresh_and_draws_from_its_own_seed():
    evolution = Evolution("selection", mutation=0.1)
    run = EvolvingSociety(POPULATION, seeds=[6], rounds=4, evolution=evolution)
    run.run(2)
    strategies, payoff = run.society.strategy.copy(), run.society.payoff.copy()
    born, _ = evolution.update(strategies[0], payoff[0], update_generator(generation_seed(6, 1)))
    run.step()
    fresh = ReplicatedSociety(POPULATION, seeds=[generation_seed(6, 2)])
    fresh.newborn(born[np.newaxis], [generation_seed(6, 2)])
    fresh.play(4)
    np.testing.assert_array_equal(run.society.state, fresh.state)
    np.testing.assert_array_equal(run.society.helps_received, fresh.helps_received)
    with pytest.raises(ValueError, match="statistics: no per-round counts kept"):
        run.society.statistics()


def test_cooperation_evolves_with_gossip_and_collapses_without_it():
    # the demonstration's arms, from the same first generation and seeds: an emergent result
    last = {arm: play_arm(arm).xs(29, level="generation") for arm in ("q = 1", "gossip off")}
    known, silent = (summary(last[arm]["cooperation"]) for arm in ("q = 1", "gossip off"))
    assert known["ci_low"] > silent["ci_high"]
    assert known["mean"] > 0.95 and silent["mean"] < 0.05
    first = {arm: play_arm(arm, generations=1) for arm in ("q = 1", "gossip off")}
    shares = [c for c in first["q = 1"].columns if c.startswith("share_")]
    pd.testing.assert_frame_equal(first["q = 1"][shares], first["gossip off"][shares])


@pytest.mark.skipif(sys.platform != "linux", reason="the split forks on Linux only")
def test_generations_split_between_two_processes_are_the_same():
    # the society keeps no per-round counts while evolving: the fork hands back none, and
    # the round and Generators' states still come back
    evolution = Evolution("imitation", beta=0.1, mutation=0.02)
    kwargs = {"seeds": [1, 2, 3], "rounds": 7, "evolution": evolution, "gossip_reach": 0.7}
    split = EvolvingSociety(POPULATION, **kwargs)
    plain = EvolvingSociety(POPULATION, **kwargs)
    for _ in range(3):
        split.step(parallel=True)
        plain.step(parallel=False)
        assert split.society.round == 7
    pd.testing.assert_frame_equal(split.statistics(), plain.statistics(), check_exact=True)
    np.testing.assert_array_equal(split.society.state, plain.society.state)
    for rngs in ("rngs", "reach_rngs"):
        states = [
            [g.bit_generator.state for g in getattr(run.society, rngs)] for run in (split, plain)
        ]
        assert states[0] == states[1]


@pytest.mark.skipif(sys.platform != "linux", reason="the split forks on Linux only")
def test_a_run_split_once_for_all_its_generations_is_the_same(monkeypatch):
    # the fork plays the first two replicates' generations and updates, then hands back
    # their state, rows, lineage and Generators; the run goes on from there as if unsplit
    import socialsim.society.generations as generations

    splits, real = [], generations.split
    monkeypatch.setattr(
        generations, "split", lambda whole, play: splits.append(whole) or real(whole, play)
    )
    evolution = Evolution("selection", mutation=0.1)
    kwargs = {"seeds": [5, 6, 7], "rounds": 6, "evolution": evolution, "gossip_reach": 0.8}
    split, plain = EvolvingSociety(POPULATION, **kwargs), EvolvingSociety(POPULATION, **kwargs)
    split.run(3, parallel=True)
    plain.run(3, parallel=False)
    split.run(2, parallel=True)
    plain.run(2, parallel=False)
    assert splits == [split, split]
    pd.testing.assert_frame_equal(split.statistics(), plain.statistics(), check_exact=True)
    assert split.generation == plain.generation == 4
    np.testing.assert_array_equal(split.parents, plain.parents)
    np.testing.assert_array_equal(split.society.state, plain.society.state)
    for rngs in ("rngs", "reach_rngs"):
        states = [[g.bit_generator.state for g in getattr(r.society, rngs)] for r in (split, plain)]
        assert states[0] == states[1]
