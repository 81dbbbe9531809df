"""TorchRL's documented path over socialsim: ``PettingZooWrapper`` on the Parallel form, a
parameter-shared masked PPO (``MultiAgentMLP``, ``MaskedCategorical``, ``ClipPPOLoss``) trained
on the donation game, then a rollout of Decrypto (one TorchRL group per role).

The one socialsim piece: ``numeric_infos(env, action_mask=False)``. TorchRL makes a tensor of
every info value (socialsim's rich infos hold strings and ``None``) and reads the mask from the
observation only (one also in the infos makes it fail).

What it prints, last: one JSON line, ``{"library", "donation": {"steps", "cooperation": [first
batch, last batch]}, "decrypto": {"steps", "rewards"}}``. The donors learn to keep their
stock (cooperating costs 1 at once, and this learner sees no reputation yet): cooperation falls
from about a half, the untrained policy's, towards 0.

    .venv-marl/bin/python experiments/train/libraries/with_torchrl.py --steps 3000
"""

from __future__ import annotations

import matrix
import torch
from socialsim.envs import decrypto_v0, donation_v0
from tensordict.nn import TensorDictModule
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, MultiAgentMLP, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

from socialsim.rl.plain import numeric_infos


def make(parallel_env) -> PettingZooWrapper:
    return PettingZooWrapper(
        env=numeric_infos(parallel_env, action_mask=False),
        use_mask=True,
        categorical_actions=True,
        done_on_any=False,
        seed=0,
    )


def train_donation(steps: int, n_agents: int = 4) -> list[float]:
    """The share of donations that cooperate in each collected batch of ``steps`` in all."""
    env = make(donation_v0.parallel_env(n_agents=n_agents, gossip=False))
    group = "agent"
    seen = (group, "observation", "observation")  # the vector of socialsim's Dict observation
    n_obs = env.observation_spec[seen].shape[-1]
    n_act = env.full_action_spec[group, "action"].space.n
    mlp = {"n_agents": n_agents, "centralised": False, "share_params": True, "depth": 2}
    actor = ProbabilisticActor(
        TensorDictModule(MultiAgentMLP(n_obs, n_act, **mlp), [seen], [(group, "logits")]),
        in_keys={"logits": (group, "logits"), "mask": (group, "action_mask")},
        out_keys=[(group, "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = TensorDictModule(MultiAgentMLP(n_obs, 1, **mlp), [seen], [(group, "state_value")])
    loss = ClipPPOLoss(actor, critic, entropy_coeff=0.0, normalize_advantage=True)
    loss.set_keys(
        reward=(group, "reward"),
        action=(group, "action"),
        value=(group, "state_value"),
        done=(group, "done"),
        terminated=(group, "terminated"),
        sample_log_prob=(group, "action_log_prob"),
    )
    loss.make_value_estimator(ValueEstimators.GAE, gamma=0.0, lmbda=0.9)
    optimizer = torch.optim.Adam(loss.parameters(), lr=3e-3)
    cooperation = []
    for batch in Collector(env, actor, frames_per_batch=300, total_frames=steps):
        donating = batch[group, "info", "deciding"].bool() & (batch[group, "action"] <= 1)
        cooperation.append(float((batch[group, "action"] == 1)[donating].float().mean()))
        with torch.no_grad():
            loss.value_estimator(
                batch,
                params=loss.critic_network_params,
                target_params=loss.target_critic_network_params,
            )
        for _ in range(4):
            losses = loss(batch)
            optimizer.zero_grad()
            (losses["loss_objective"] + losses["loss_critic"]).backward()
            optimizer.step()
    return cooperation


def roll_out_decrypto() -> dict:
    """A rollout of random legal play (TorchRL's masked random actions), one group per role."""
    env = make(decrypto_v0.parallel_env())
    rollout = env.rollout(100)
    rewards = {group: float(rollout["next", group, "reward"].sum()) for group in env.group_map}
    return {"steps": int(rollout.batch_size[0]), "rewards": rewards}


def main(argv: list[str] | None = None) -> dict:
    budget = matrix.steps(argv, __doc__.splitlines()[0], 3000)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    cooperation = train_donation(budget)
    first_and_last = [cooperation[0], cooperation[-1]]
    return matrix.report("torchrl", budget, first_and_last, roll_out_decrypto())


if __name__ == "__main__":
    main()
