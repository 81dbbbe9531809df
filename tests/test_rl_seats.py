"""SharedSeats: the learner seats of several games as one SB3 VecEnv (parameter sharing)."""

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from socialsim.rl.seats import SharedSeats  # noqa: E402

KWARGS = {"n_agents": 4, "schedule": "random", "rounds": 3}


def first_legal(masks):
    return np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks])


def play(seats, steps):
    observations = seats.reset()
    trace = []
    for _ in range(steps):
        observations, rewards, dones, infos = seats.step(first_legal(seats.action_masks()))
        trace.append((observations["observation"].tolist(), rewards.tolist(), dones.tolist()))
    return trace


def test_every_seat_of_every_game_is_a_slot_and_the_others_have_only_the_no_op():
    seats = SharedSeats("donation_v0", 2, features=["counterpart"], **KWARGS)
    observations = seats.reset()
    assert seats.num_envs == 8
    assert observations["observation"].shape == (8, 1 + 2 + 4 + 5 * 4)
    assert observations["counterpart"].shape == (8, 11)
    game = seats._games[0]
    deciding = [bool(game.infos[a]["decision"]) for a in game.env.possible_agents]
    no_op = [True] + [False] * 6
    assert [row.tolist() != no_op for row in seats.action_masks()[:4]] == deciding
    assert 0 < sum(deciding) < 4  # random matching: donors first, recipients wait
    assert np.stack(seats.env_method("action_masks")).tolist() == seats.action_masks().tolist()


def test_a_game_ends_for_all_its_seats_at_once_and_restarts():
    seats = SharedSeats("donation_v0", 1, **KWARGS)
    seats.reset()
    ended_at = None
    for step in range(50):
        _, _, dones, infos = seats.step(first_legal(seats.action_masks()))
        if dones.any():
            ended_at = step
            break
    assert ended_at is not None and dones.all()
    # 3 rounds of a donation step and a gossip step
    assert ended_at == 5
    assert all("terminal_observation" in info for info in infos)
    assert all(info["TimeLimit.truncated"] is False for info in infos)
    assert infos[0]["terminal_observation"]["action_mask"].tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert seats.action_masks().any()  # the next episode's first decisions


def test_a_seeded_shared_env_plays_the_same_episodes_twice():
    one = SharedSeats("donation_v0", 2, **KWARGS)
    two = SharedSeats("donation_v0", 2, **KWARGS)
    one.seed(7)
    two.seed(7)
    assert play(one, 20) == play(two, 20)
    other = SharedSeats("donation_v0", 2, **KWARGS)
    other.seed(8)
    assert play(other, 20) != play(one, 20)


def test_scripted_others_play_their_seats_and_the_learners_get_their_rewards():
    seats = SharedSeats(
        "donation_v0", 1, ["agent_0", "agent_1"], {"kind": "always_cooperate"}, **KWARGS
    )
    seats.reset()
    assert seats.num_envs == 2
    total = np.zeros(2)
    for _ in range(6):
        masks = seats.action_masks()
        _, rewards, dones, _ = seats.step(np.zeros(2, dtype=int))  # defect, or praise
        total += rewards
    assert dones.all()
    # the learners never pay, the cooperators give 5 whenever they are a learner's donor
    assert (total >= 0).all() and total.sum() > 0 and total.sum() % 5 == 0
    assert masks.shape == (2, 7)


def test_bad_learners_name_the_seats():
    with pytest.raises(ValueError, match=r"learners: \['agent_9'\] must be seats of donation_v0"):
        SharedSeats("donation_v0", 1, ["agent_9"], {"kind": "stern_judging"}, **KWARGS)
    with pytest.raises(ValueError, match="others"):
        SharedSeats("donation_v0", 1, ["agent_0"], None, **KWARGS)
    with pytest.raises(ValueError, match="n_games: must be an integer >= 1"):
        SharedSeats("donation_v0", 0, **KWARGS)
