"""RLlib's multi-agent API over the envs (socialsim.rl.rllib): masks, agents without a decision,
rewards between observations, and PPO with one shared policy learning on donation_v0.

Runs where the ``rllib`` extra is installed (CI: a venv of its own, as RLlib pins gymnasium
1.2.2); skipped elsewhere."""

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from socialsim import registry  # noqa: E402
from socialsim.rl.rllib import (  # noqa: E402
    RLlibSeats,
    greedy_actions,
    mean_return,
    random_legal,
    shared_ppo,
)

DONATION = {"env": "donation_v0", "reward": "own"}


def test_every_learner_is_observed_at_the_reset_with_the_masking_modules_layout():
    env = RLlibSeats(DONATION)
    observations, _ = env.reset(seed=0)
    assert list(observations) == [f"agent_{i}" for i in range(9)]
    first = observations["agent_0"]
    assert set(first) == {"action_mask", "observations"}
    assert first["action_mask"].dtype == np.float32
    assert env.observation_spaces["agent_0"].contains(first)
    # the round's first donor; the others wait, their masks allowing only the no-op 0
    # (the convention of envs/__init__.py)
    deciding = [s for s, seen in observations.items() if seen["action_mask"].sum() > 1]
    assert deciding == ["agent_0"]
    assert all(seen["action_mask"].tolist() == [1, 0, 0, 0, 0, 0, 0] for s, seen in
               observations.items() if s != "agent_0")  # fmt: skip


def test_after_the_reset_only_the_deciding_learners_are_observed_and_all_at_the_end():
    env = RLlibSeats(DONATION)
    observations, _ = env.reset(seed=0)
    choose = random_legal(0)
    while True:
        observations, rewards, done, cut, _ = env.step(choose(observations))
        assert set(rewards) == set(observations) and not cut["__all__"]
        if done["__all__"]:
            break
        assert observations and all(seen["action_mask"].any() for seen in observations.values())
    assert sorted(observations) == sorted(env.learners)
    assert all(done[seat] for seat in env.learners)


def test_every_reward_the_env_gives_reaches_its_learner():
    """The returns RLlib is handed equal the env's own for the same episode and actions: the
    rewards a learner gets between its observations (as a recipient) are not dropped."""
    env = RLlibSeats(DONATION)
    observations, _ = env.reset(seed=7)
    choose = random_legal(1)
    taken, paid = [], dict.fromkeys(env.learners, 0.0)
    while True:
        actions = choose(observations)
        deciding = {s: a for s, a in actions.items() if observations[s]["action_mask"].any()}
        taken.append(deciding)
        observations, rewards, done, _, _ = env.step(actions)
        for seat, reward in rewards.items():
            paid[seat] += reward
        if done["__all__"]:
            break
    episode_seed = int(np.random.default_rng(7).integers(2**31))  # reset(seed=7)'s first episode
    raw = registry.make_env("donation_v0", "parallel")
    raw.reset(seed=episode_seed)
    returns = dict.fromkeys(raw.possible_agents, 0.0)
    for actions in taken:
        _, rewards, _, _, _ = raw.step(actions)
        for seat, reward in rewards.items():
            returns[seat] += reward
    assert paid == returns
    assert sum(returns.values()) != 0  # some donations were made and received


def test_the_mean_reward_pays_each_learner_the_mean_of_the_step():
    own = mean_return(DONATION, random_legal(0), episodes=3, seed=3)
    mean = mean_return({**DONATION, "reward": "mean"}, random_legal(0), episodes=3, seed=3)
    assert mean == pytest.approx(own)  # the mean over seats is the same welfare


def test_other_seats_are_played_by_their_agents():
    env = RLlibSeats({**DONATION, "learners": ["agent_0"], "others": {"kind": "always_cooperate"}})
    observations, _ = env.reset(seed=0)
    assert list(observations) == ["agent_0"]
    total = 0.0
    choose = random_legal(0)
    while True:
        observations, rewards, done, _, _ = env.step(choose(observations))
        total += rewards.get("agent_0", 0.0)
        if done["__all__"]:
            break
    assert total > 0  # the cooperators gave to it


def test_features_are_appended_to_the_observation():
    plain = RLlibSeats(DONATION)
    featured = RLlibSeats({**DONATION, "features": ["counterpart"]})
    size = plain.observation_spaces["agent_0"]["observations"].shape[0]
    assert featured.observation_spaces["agent_0"]["observations"].shape == (size + 11,)
    observations, _ = featured.reset(seed=0)
    assert featured.observation_spaces["agent_0"].contains(observations["agent_0"])


@pytest.mark.slow  # about a minute on two busy cores
def test_ppo_with_one_shared_policy_learns_donation_beyond_random_legal_play():
    torch.set_num_threads(1)
    config = {"env": "donation_v0", "reward": "mean"}
    algorithm = (
        shared_ppo(config, seed=0)
        .training(train_batch_size_per_learner=1000, minibatch_size=200, num_epochs=6, lr=3e-4)
        .build_algo()
    )
    try:
        for _ in range(5):
            algorithm.train()
        module = algorithm.get_module("shared")
        trained = mean_return(config, lambda seen: greedy_actions(module, seen), 10, seed=1000)
    finally:
        algorithm.stop()
    random = mean_return(config, random_legal(0), 10, seed=1000)
    # measured (seed 0): 16.00 per seat (every donor gives) against 8.36 for random legal play
    assert trained > random + 4.0
