"""AgileRL's documented path over socialsim: an ``IPPO`` agent trained on the donation game's
Parallel form by ``train_multi_agent_on_policy``; then a rollout of Decrypto.

The socialsim pieces: ``numeric_infos`` (AgileRL reads each seat's mask from its info, as a
plain array) under ``box_observations`` (AgileRL asserts that no observation holds an
``action_mask``). Decrypto needs no padding: IPPO takes a space per seat.

Not in CI's matrix: current AgileRL requires PettingZoo < 1.27, which socialsim excludes, so pip
installs an older release beside socialsim (2.7.1 here), whose install took 18 minutes and
2.4 GB on this machine (docs/marl_libraries.md). Its vectorized env
(``AsyncPettingZooVecEnv``) stacks the infos' masks into arrays, which its own mask check
(``None in masks``) cannot read: train on the plain Parallel env, as here.

What it prints, last: one JSON line, ``{"library", "donation": {"steps", "cooperation": [before,
after]}, "decrypto": {"steps", "rewards"}}``.

    .venv-agilerl/bin/python experiments/train/libraries/with_agilerl.py --steps 3000
"""

from __future__ import annotations

import matrix
import numpy as np
import torch
from agilerl.algorithms import IPPO
from agilerl.training.train_multi_agent_on_policy import train_multi_agent_on_policy
from socialsim.envs import decrypto_v0, donation_v0

from socialsim.rl.plain import box_observations, numeric_infos


def plain(parallel_env):
    return box_observations(numeric_infos(parallel_env))


def ippo(env) -> IPPO:
    return IPPO(
        observation_spaces=[env.observation_space(a) for a in env.possible_agents],
        action_spaces=[env.action_space(a) for a in env.possible_agents],
        agent_ids=list(env.possible_agents),
        learn_step=128,
        batch_size=64,
        lr=1e-3,
        gamma=0.0,
        ent_coef=0.0,
    )


def play(agent: IPPO, env, seed: int) -> tuple[int, int, dict, int]:
    """One episode of ``agent``: (donations made, cooperations, rewards summed, steps)."""
    observations, infos = env.reset(seed=seed)
    made = cooperated = steps = 0
    totals: dict[str, float] = {}
    while env.agents:
        actions, *_ = agent.get_action(observations, infos)
        chosen = {a: int(np.asarray(actions[a]).reshape(-1)[0]) for a in env.agents}
        deciding = [a for a in env.agents if infos[a]["deciding"]]
        made += len(deciding)
        cooperated += sum(chosen[a] == 1 for a in deciding)
        observations, rewards, _, _, infos = env.step(chosen)
        for seat, reward in rewards.items():
            totals[seat] = totals.get(seat, 0.0) + float(reward)
        steps += 1
    return made, cooperated, totals, steps


def cooperation(agent: IPPO, episodes: int = 20) -> float:
    made = cooperated = 0
    for seed in range(episodes):
        env = plain(donation_v0.parallel_env(n_agents=4, gossip=False))
        m, c, _, _ = play(agent, env, seed)
        made, cooperated = made + m, cooperated + c
    return cooperated / made


def main(argv: list[str] | None = None) -> dict:
    budget = matrix.steps(argv, __doc__.splitlines()[0], 3000)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = plain(donation_v0.parallel_env(n_agents=4, gossip=False))
    env.reset(seed=0)
    agent = ippo(env)
    before = cooperation(agent)
    population, _ = train_multi_agent_on_policy(
        env,
        "donation_v0",
        "IPPO",
        [agent],
        max_steps=budget,
        evo_steps=budget,
        verbose=False,
    )
    after = cooperation(population[0])
    decrypto = plain(decrypto_v0.parallel_env())
    _, _, rewards, steps = play(ippo(decrypto), decrypto, 0)
    decrypto_result = {"steps": steps, "rewards": rewards}
    return matrix.report("agilerl", budget, [before, after], decrypto_result)


if __name__ == "__main__":
    main()
