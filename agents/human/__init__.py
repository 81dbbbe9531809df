"""The ``human`` agent kind: a person in any seat, through a terminal or browser front end."""

KINDS = {
    "human": "socialsim.agents.human.agent:Human",
    "decrypto_replay_encoder": "socialsim.agents.human.replay:ReplayEncoder",
    "decrypto_replay_guesser": "socialsim.agents.human.replay:ReplayGuesser",
}
