"""PettingZoo's action-mask tutorial over socialsim: the AEC form seen as one Gymnasium env (the
selected seat's observation at each step, one shared policy for every seat) under sb3-contrib's
``ActionMasker``, and ``MaskablePPO`` trained on the donation game; then a rollout of Decrypto.

The tutorial gives every seat the first seat's spaces, which in Decrypto are the encoder's: the
socialsim piece is ``padded_roles`` (one space for every seat, the masks padded). The donation
game needs none.

What it prints, last: one JSON line, ``{"library", "donation": {"steps", "cooperation": [before,
after]}, "decrypto": {"steps", "rewards"}}``: the share of donations the policy makes that
cooperate over 20 episodes, untrained and trained (cooperating costs 1 at once).

    python experiments/train/libraries/with_maskable_ppo.py --steps 3000
"""

from __future__ import annotations

import gymnasium
import matrix
import torch
from pettingzoo.utils import BaseWrapper
from sb3_contrib import MaskablePPO
from sb3_contrib.common.wrappers import ActionMasker
from socialsim.envs import decrypto_v0, donation_v0

from socialsim.rl.plain import padded_roles


class OneSeatAtATime(BaseWrapper, gymnasium.Env):
    """The tutorial's wrapper: the AEC env as a single-agent env whose observation is the
    selected seat's and whose reward is the reward of the seat that just acted."""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        first = self.possible_agents[0]
        self.observation_space = super().observation_space(first)["observation"]
        self.action_space = super().action_space(first)
        return self.observe(self.agent_selection), {}

    def step(self, action):
        acting = self.agent_selection
        super().step(action)
        return (
            self.observe(self.agent_selection),
            self._cumulative_rewards[acting],
            self.terminations[acting],
            self.truncations[acting],
            self.infos[acting],
        )

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


def masked(aec_env) -> ActionMasker:
    env = OneSeatAtATime(aec_env)
    env.reset(seed=0)  # as the tutorial: the spaces are set at the first reset
    return ActionMasker(env, lambda env: env.action_mask())


def cooperation(model: MaskablePPO, episodes: int = 20) -> float:
    """The share of the donations the policy makes that cooperate (action 1)."""
    made = cooperated = 0
    for seed in range(episodes):
        env = masked(donation_v0.env(n_agents=4, gossip=False))
        (observation, _), done = env.reset(seed=seed), False
        while not done:
            action, _ = model.predict(observation, action_masks=env.action_masks())
            made, cooperated = made + 1, cooperated + int(action == 1)
            observation, _, terminated, truncated, _ = env.step(int(action))
            done = terminated or truncated
    return cooperated / made


def main(argv: list[str] | None = None) -> dict:
    budget = matrix.steps(argv, __doc__.splitlines()[0], 3000)
    torch.set_num_threads(1)
    env = masked(donation_v0.env(n_agents=4, gossip=False))
    model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, gamma=0.0, seed=0)
    before = cooperation(model)
    model.learn(total_timesteps=budget)
    after = cooperation(model)
    decrypto = masked(padded_roles(decrypto_v0.env()))
    player = MaskablePPO("MlpPolicy", decrypto, seed=0)  # untrained: it rolls out
    observation, _ = decrypto.reset(seed=0)
    steps, done, rewards = 0, False, {}
    while not done:
        action, _ = player.predict(observation, action_masks=decrypto.action_masks())
        observation, _, terminated, truncated, _ = decrypto.step(int(action))
        steps, done = steps + 1, terminated or truncated
        rewards = dict(decrypto.unwrapped._cumulative_rewards)
    decrypto_result = {"steps": steps, "rewards": {a: float(r) for a, r in rewards.items()}}
    return matrix.report("sb3-contrib MaskablePPO", budget, [before, after], decrypto_result)


if __name__ == "__main__":
    main()
