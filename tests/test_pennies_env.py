"""The matching pennies env (matching_pennies_v0): PettingZoo API in both forms, the rules
message, masks, render and state."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from socialsim.envs import matching_pennies_v0


def test_parallel_api_test_passes():
    parallel_api_test(matching_pennies_v0.parallel_env(), num_cycles=100)


def test_aec_api_test_passes():
    api_test(matching_pennies_v0.env(), num_cycles=100)


def test_seed_tests_pass():
    seed_test(matching_pennies_v0.env, num_cycles=50)
    parallel_seed_test(matching_pennies_v0.parallel_env, num_cycles=50)


def test_raw_env_is_the_aec_class():
    assert issubclass(matching_pennies_v0.raw_env, AECEnv)
    assert isinstance(matching_pennies_v0.parallel_env(), matching_pennies_v0.PenniesEnv)


def test_rules_message_is_first_and_states_the_rounds():
    env = matching_pennies_v0.parallel_env(rounds=4)
    env.reset(seed=0)
    first = env.bus.log[0]
    assert (first.turn, first.kind, first.to, first.channel) == (1, "rules", "*", "public")
    assert first.to_json()["payload"] == {
        "game": "matching_pennies",
        "rounds": 4,
        "agents": ["matcher", "mismatcher"],
    }
    assert [m.kind for m in env.bus.log[1:]] == ["lucky_face", "lucky_face"]


def test_agents_without_a_decision_may_play_only_the_no_op():
    env = matching_pennies_v0.parallel_env(rounds=1)
    observations, _ = env.reset(seed=0)
    assert observations["matcher"]["action_mask"].tolist() == [1, 1]
    observations, _, terminations, _, infos = env.step({"matcher": 0, "mismatcher": 1})
    assert all(terminations.values()) and infos["matcher"]["decision"] is None
    assert observations["matcher"]["action_mask"].tolist() == [1, 0]


def test_aec_form_asks_the_matcher_then_the_mismatcher_and_pays_the_round_together():
    env = matching_pennies_v0.env(rounds=2)
    env.reset(seed=0)
    order = []
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        order.append(agent)
        env.step(None if termination or truncation else 0)
    assert order == ["matcher", "mismatcher"] * 2 + ["matcher", "mismatcher"]
    assert env.unwrapped.summary() == {"score": {"matcher": 2, "mismatcher": -2}}


def test_render_ansi_shows_the_round_the_last_faces_and_the_score(capsys):
    env = matching_pennies_v0.parallel_env(rounds=3, render_mode="ansi")
    env.reset(seed=0)
    assert env.render().splitlines() == [
        "Matching pennies, round 1 of 3",
        "no round played yet",
        "score: matcher 0, mismatcher 0",
    ]
    env.step({"matcher": 0, "mismatcher": 1})
    assert env.render().splitlines() == [
        "Matching pennies, round 2 of 3",
        "last round: matcher heads, mismatcher tails",
        "score: matcher -1, mismatcher 1",
    ]
    human = matching_pennies_v0.parallel_env(render_mode="human")
    human.reset(seed=0)
    assert human.render() is None
    assert capsys.readouterr().out == (
        "Matching pennies, round 1 of 10\nno round played yet\nscore: matcher 0, mismatcher 0\n"
    )


def test_unknown_render_mode_is_an_error_naming_the_allowed_values():
    with pytest.raises(ValueError, match="render_mode: must be one of ansi, human or None"):
        matching_pennies_v0.parallel_env(render_mode="rgb_array")


def test_state_is_the_round_and_the_last_faces():
    env = matching_pennies_v0.parallel_env()
    env.reset(seed=0)
    assert env.state().tolist() == [1, 2, 2]
    env.step({"matcher": 1, "mismatcher": 0})
    assert env.state().tolist() == [2, 1, 0]
    assert env.state_space.contains(env.state())
    assert env.observation_space("matcher") is env.observation_space("mismatcher")
    assert isinstance(env.observe("matcher")["observation"], np.ndarray)
