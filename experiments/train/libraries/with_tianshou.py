"""Tianshou 2's documented path over socialsim (its tic-tac-toe example's): ``PettingZooEnv`` on
the AEC form, one DQN per seat in a ``MultiAgentOffPolicyAlgorithm``, trained on the donation
game with an ``OffPolicyTrainer``; then a rollout of Decrypto.

The socialsim pieces: ``numeric_infos`` (Tianshou keeps every info in its buffer and reads
``None`` as NaN, which stops the trainer) and, for Decrypto, ``padded_roles`` (Tianshou asserts
that every agent has the first agent's spaces).

What it prints, last: one JSON line, ``{"library", "donation": {"steps", "cooperation": [first
quarter, last quarter]}, "decrypto": {"steps", "rewards"}}``: the share of donations that
cooperate in the replay buffer, from the random warm-up (about a half) to the learned play.

    .venv-marl/bin/python experiments/train/libraries/with_tianshou.py --steps 2000
"""

from __future__ import annotations

import matrix
import numpy as np
import torch
from socialsim.envs import decrypto_v0, donation_v0
from tianshou.algorithm import (
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from socialsim.rl.plain import numeric_infos, padded_roles


def donation() -> PettingZooEnv:
    return PettingZooEnv(numeric_infos(donation_v0.env(n_agents=4, gossip=False)))


def train_donation(steps: int, warm_up: int = 400) -> list[float]:
    """Cooperation over the first and the last quarter of the donations in the buffer."""
    env = donation()

    def dqn() -> DQN:
        vector = env.observation_space["observation"]
        net = Net(state_shape=vector.shape, action_shape=env.action_space.n, hidden_sizes=[64, 64])
        policy = DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1)
        return DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=0.0)

    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[dqn() for _ in env.agents], env=env)
    envs = DummyVectorEnv([donation for _ in range(4)])
    envs.seed(0)
    buffer = VectorReplayBuffer(steps + warm_up, len(envs))
    collector = Collector[CollectStats](algorithm, envs, buffer, exploration_noise=True)
    # the buffer warmed up by masked random play (the example's random opponent, every seat)
    random = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    warm = MultiAgentOffPolicyAlgorithm(algorithms=[random for _ in env.agents], env=env)
    Collector[CollectStats](warm, envs, buffer).collect(n_step=warm_up, reset_before_collect=True)
    collector.reset(reset_buffer=False)
    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=1,
            epoch_num_steps=steps,
            collection_step_num_env_steps=40,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
        )
    )
    # the donations (0 defect, 1 cooperate) of each env's buffer, interleaved in play order
    parts = [b.act[: len(b)] for b in buffer.buffers]
    order = np.concatenate([np.arange(len(p)) for p in parts]).argsort(kind="stable")
    played = np.concatenate(parts)[order]
    quarter = len(played) // 4
    return [float(played[:quarter].mean()), float(played[-quarter:].mean())]


def roll_out_decrypto(seed: int = 0) -> dict:
    """Random legal play of Decrypto through Tianshou's env (one space for every seat)."""
    env = PettingZooEnv(numeric_infos(padded_roles(decrypto_v0.env())))
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps, done = 0, False
    while not done:
        action = int(rng.choice(np.flatnonzero(observation["mask"])))
        observation, rewards, terminated, truncated, _ = env.step(action)
        steps, done = steps + 1, terminated or truncated
    return {"steps": steps, "rewards": dict(zip(env.agents, rewards, strict=True))}


def main(argv: list[str] | None = None) -> dict:
    budget = matrix.steps(argv, __doc__.splitlines()[0], 2000)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    return matrix.report("tianshou", budget, train_donation(budget), roll_out_decrypto())


if __name__ == "__main__":
    main()
