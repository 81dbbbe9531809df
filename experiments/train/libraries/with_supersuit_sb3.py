"""PettingZoo's SB3 vector-env tutorial over socialsim: SuperSuit's
``pettingzoo_env_to_vec_env_v1`` and ``concat_vec_envs_v1`` turn the Parallel form into one
Stable-Baselines3 ``VecEnv`` (every seat a slot of one shared policy), and SB3's PPO with an
``MlpPolicy`` trains on the donation game; then a rollout of Decrypto the same way.

The socialsim pieces: ``box_observations`` (``MlpPolicy`` takes only Box observations;
socialsim's are Dicts) and, for Decrypto, ``padded_roles`` first (SuperSuit's vector env needs
one space for every seat). PPO cannot mask: the mask is only an input, and a forbidden choice is
played as the decision's fallback (a donor's tone as defect). The tutorial's ``black_death_v3``
is left out: it is for agents that leave before the end, which socialsim's never do, and
SuperSuit 3.11's ends an episode only when every agent is both terminated *and* truncated, so
under it an episode that terminates (every socialsim episode) never ends.

What it prints, last: one JSON line, ``{"library", "donation": {"steps", "cooperation": [before,
after]}, "decrypto": {"steps", "rewards"}}``: the share of donations the policy makes that
cooperate over 20 episodes, untrained (about 1/7: one action of seven) and trained.

    .venv-marl/bin/python experiments/train/libraries/with_supersuit_sb3.py --steps 3000
"""

from __future__ import annotations

import matrix
import numpy as np
import supersuit as ss
import torch
from socialsim.envs import decrypto_v0, donation_v0
from stable_baselines3 import PPO

from socialsim.rl.plain import box_observations, padded_roles


def vector_env(parallel_env, copies: int = 2):
    env = ss.pettingzoo_env_to_vec_env_v1(parallel_env)
    return ss.concat_vec_envs_v1(env, copies, num_cpus=1, base_class="stable_baselines3")


def cooperation(model: PPO, episodes: int = 20) -> float:
    """The share of the donations the policy makes that cooperate (action 1)."""
    env = box_observations(donation_v0.parallel_env(n_agents=4, gossip=False))
    made = cooperated = 0
    for seed in range(episodes):
        observations, infos = env.reset(seed=seed)
        while env.agents:
            donors = [a for a in env.agents if infos[a]["decision"] == "donate"]
            batch = np.stack([observations[a] for a in donors])
            actions, _ = model.predict(batch, deterministic=False)
            made, cooperated = made + len(donors), cooperated + int((actions == 1).sum())
            observations, _, _, _, infos = env.step(
                dict(zip(donors, actions.tolist(), strict=True))
            )
    return cooperated / made


def main(argv: list[str] | None = None) -> dict:
    budget = matrix.steps(argv, __doc__.splitlines()[0], 3000)
    torch.set_num_threads(1)
    # SB3's seed= calls VecEnv.seed, which SuperSuit's concatenated env lacks: seed torch here
    torch.manual_seed(0)
    env = vector_env(box_observations(donation_v0.parallel_env(n_agents=4, gossip=False)))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=128, gamma=0.0, device="cpu")
    before = cooperation(model)
    model.learn(total_timesteps=budget)
    after = cooperation(model)
    decrypto = vector_env(box_observations(padded_roles(decrypto_v0.parallel_env())), copies=1)
    player = PPO("MlpPolicy", decrypto, device="cpu")  # untrained: it rolls out
    observations = decrypto.reset()
    steps, rewards = 0, np.zeros(decrypto.num_envs)
    while True:
        actions, _ = player.predict(observations)
        observations, step_rewards, dones, _ = decrypto.step(actions)
        steps, rewards = steps + 1, rewards + step_rewards
        if dones.all():
            break
    decrypto_result = {"steps": steps, "rewards": rewards.tolist()}
    return matrix.report("supersuit+sb3", budget, [before, after], decrypto_result)


if __name__ == "__main__":
    main()
