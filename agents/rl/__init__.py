"""RL agents: a trained policy plays its seat like any other agent."""

KINDS = {"rl": "socialsim.agents.rl.policy:PolicyAgent"}
