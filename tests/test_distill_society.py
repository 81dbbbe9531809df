"""Distilled strategies played by the population engine: the same rounds and generations as in
the donation env for one seed, scripted tables that play as the scripted strategies, and the
draws that make both agree."""

from __future__ import annotations

import numpy as np
import pytest

import socialsim
from socialsim.config import ConfigError
from socialsim.distill.strategy import Strategy, save
from socialsim.episode import EpisodeSpec
from socialsim.records import read_records
from socialsim.runner import play_episode
from socialsim.seeding import agent_seed, agent_seeds
from socialsim.society import kernels
from socialsim.society.decide import decide_loop, decide_numpy
from socialsim.society.episodes import evolve_in_env, helps
from socialsim.society.evolution import Evolution
from socialsim.society.generations import EvolvingSociety
from socialsim.society.vectorised import ReplicatedSociety
from socialsim.web.uploads import check_upload


def stern_judging_tables() -> Strategy:
    """Stern judging's tables exactly: help unless the standing is bad; praise helping the good
    and refusing the bad, criticise the rest."""
    strategy = Strategy("stern", smoothing=0.0)
    strategy.donate[:, 0, 1] = 5
    strategy.donate[:, 1, 0] = 5
    strategy.gossip[1, 0, 0] = strategy.gossip[0, 1, 0] = 5
    strategy.gossip[1, 1, 2] = strategy.gossip[0, 0, 2] = 5
    return strategy


def mixed_tables() -> Strategy:
    """A strategy that chooses by chance in every cell (counts of no norm)."""
    strategy = Strategy("mixed", smoothing=0.5)
    strategy.donate[:] = [[[2, 9], [6, 4]], [[7, 3], [9, 1]]]
    strategy.gossip[:] = [[[1, 2, 8], [5, 1, 3]], [[9, 1, 1], [3, 3, 4]]]
    return strategy


@pytest.mark.parametrize("episode_seed", [0, 7, 2**40 + 3, 2**63 - 1])
def test_agent_seeds_on_arrays_are_the_env_seats_seeds(episode_seed):
    assert agent_seeds(episode_seed, 200).tolist() == [
        agent_seed(episode_seed, f"agent_{i}") for i in range(200)
    ]
    assert agent_seeds(episode_seed, ["x", "agent_3"]).tolist() == [
        agent_seed(episode_seed, "x"),
        agent_seed(episode_seed, "agent_3"),
    ]


@pytest.mark.parametrize(("reach", "error"), [(1.0, 0.0), (0.6, 0.1)])
def test_stern_judgings_tables_play_as_stern_judging_in_the_society(reach, error):
    population = {"stern_judging": 30, "always_defect": 15, "image_scoring": 5}
    distilled = {"stern": 30, "always_defect": 15, "image_scoring": 5}
    options = {"seeds": range(3), "gossip_reach": reach, "error": error}
    scripted = ReplicatedSociety(population, **options)
    played = ReplicatedSociety(distilled, distilled={"stern": stern_judging_tables()}, **options)
    a, b = scripted.run(30), played.run(30)
    assert np.array_equal(scripted.helps_received, played.helps_received)
    assert np.array_equal(scripted.helps_given, played.helps_given)
    assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True)
    assert list(b.columns)[2:] == ["payoff_stern", "payoff_always_defect", "payoff_image_scoring"]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize(("error", "reach"), [(0.0, 1.0), (0.2, 0.5)])
def test_the_compiled_loops_and_the_array_calls_play_a_drawn_round_alike(error, reach):
    society = ReplicatedSociety(
        {"mixed": 40, "stern_judging": 20},
        seeds=[3, 4],
        distilled={"mixed": mixed_tables()},
        error=error,
        gossip_reach=reach,
    )
    society.play(5)  # some tones, so that reputations differ
    society._draw()
    t = society._drawn.tables
    rounds = []
    # the loops as Python runs them (numba compiles the same code), wrapping as uint64 does
    for decide, play in (
        (decide_loop, kernels.play_pairs_loop),
        (decide_numpy, lambda *a: kernels.play_pairs_numpy(*a, kernels.PairBuffers(2, 30))),
    ):
        state, received = (
            society.state.reshape(-1).copy(),
            society.helps_received.reshape(-1).copy(),
        )
        decide(state, society._drawn.agent_seeds, t.help_cuts, t.tone_cuts, t.codes, 6)
        counts = np.zeros((2, 6 * 36), dtype=np.int64)
        play(
            society._order[0], state, received, t.effect, society._uniforms[0], error,
            society._reach[0], reach, t.count_bin, counts, t.help_rule, t.tone_rule,
        )  # fmt: skip
        rounds.append((state, received, counts))
    decided = (rounds[0][0] >> 24) & 255
    assert len(np.unique(decided)) > 10  # the agents decide unlike each other
    for a, b in zip(*rounds, strict=True):
        assert np.array_equal(a, b)


def policy_file(tmp_path) -> str:
    path = tmp_path / "policy.json"
    save(path, {"mixed": mixed_tables()}, {"runs": []})
    return str(path)


@pytest.mark.parametrize("reach", [1.0, 0.5])
def test_a_distilled_file_plays_the_same_rounds_in_the_env_and_the_society(tmp_path, reach):
    policy = policy_file(tmp_path)
    kinds = ["always_defect"] * 3 + ["stern_judging"] * 3 + ["distilled"] * 6
    seats = {
        f"agent_{i}": {"kind": k} if k != "distilled" else {"kind": k, "policy": policy}
        for i, k in enumerate(kinds)
    }
    options = {"n_agents": 12, "schedule": "random", "rounds": 25, "initial_resources": 25.0}
    spec = EpisodeSpec("donation_v0", 11, seats, {**options, "gossip_reach": reach})
    record = play_episode(spec)
    given, received = helps(record, 12)
    society = ReplicatedSociety(
        {"always_defect": 3, "stern_judging": 3, "mixed": 6},
        seeds=[11],
        gossip_reach=reach,
        distilled={"mixed": mixed_tables()},
    )
    society.run(25)
    assert given.tolist() == society.helps_given[0].tolist()
    assert received.tolist() == society.helps_received[0].tolist()
    assert 0 < given[6:].sum() < 6 * 25  # the distilled seats both helped and refused


@pytest.mark.parametrize("rule", ["selection", "imitation"])
def test_a_distilled_file_evolves_the_same_generations_in_the_env_and_the_society(tmp_path, rule):
    policy = policy_file(tmp_path)
    population = {"always_defect": 4, "stern_judging": 4, "mixed": 6}
    evolution = Evolution(rule)
    in_env, _, _ = evolve_in_env(
        population,
        seed=5,
        rounds=20,
        generations=4,
        evolution=evolution,
        gossip_reach=0.8,
        distilled={"mixed": policy},
    )
    society = EvolvingSociety(
        population,
        seeds=[5],
        rounds=20,
        evolution=evolution,
        gossip_reach=0.8,
        distilled={"mixed": mixed_tables()},
    )
    assert np.array_equal(in_env.to_numpy(), society.run(4, parallel=False).to_numpy())
    assert "share_mixed" in in_env.columns


def test_an_evolution_file_of_distilled_and_scripted_seats_passes_the_file_to_children(tmp_path):
    policy = policy_file(tmp_path)
    text = f"""
name = "distilled_evolution"
description = "distilled seats among defectors"
episodes = 1
seed = 0
[env]
id = "donation_v0"
[env.kwargs]
n_agents = 6
schedule = "random"
rounds = 10
initial_resources = 10.0
[seats."*"]
kind = "always_defect"
[seats.agent_0]
kind = "distilled"
policy = "{policy}"
[seats.agent_1]
kind = "distilled"
policy = "{policy}"
[evolution]
generations = 3
"""
    (tmp_path / "evolution.toml").write_text(text)
    socialsim.run(str(tmp_path / "evolution.toml"), out=tmp_path / "run", progress=False)
    records = read_records(tmp_path / "run")
    assert [r.cell["generation"] for r in records] == [0, 1, 2]
    for record in records:
        for spec in record.seats.values():
            assert spec["kind"] in ("always_defect", "distilled")
            if spec["kind"] == "distilled":
                assert spec["policy"] == policy


def test_an_upload_may_not_name_a_policy_file():
    table = {
        "name": "x",
        "env": {"id": "donation_v0"},
        "seats": {"*": {"kind": "distilled", "policy": "/etc/passwd"}},
    }
    with pytest.raises(ConfigError, match="policy"):
        check_upload(table, ["donation_v0"])


def test_a_society_of_distilled_strategies_needs_integer_seeds():
    with pytest.raises(ValueError, match="seeds: a society with distilled strategies"):
        ReplicatedSociety({"mixed": 4}, seeds=[None], distilled={"mixed": mixed_tables()}).run(1)
    with pytest.raises(ValueError, match="at most 3 distilled"):
        ReplicatedSociety({"a": 2}, seeds=[0], distilled={k: mixed_tables() for k in "abcd"})


def test_a_generation_longer_than_the_helps_bits_hold_is_refused():
    society = ReplicatedSociety({"mixed": 4}, seeds=[1], distilled={"mixed": mixed_tables()})
    society.round = 2**24 - 2
    society.play(1)  # the last round the 24 bits hold
    with pytest.raises(
        ValueError,
        match=r"rounds: must be at most 0 \(a generation holds 16,777,215 rounds: 24 bits of helps given\), got 1",
    ):
        society.play(1)
    assert society.helps_given.max() <= 2**24 - 1
