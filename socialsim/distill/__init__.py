"""Strategies distilled from records: from the decisions of any donation-game run (LLM, human,
RL or scripted seats), each with the cues its seat had (:mod:`socialsim.envs.gossip.cues`), a
behavioural strategy as conditional probability tables (:mod:`.strategy`), its fidelity on
held-out episodes beside a constant and the scripted norms (:mod:`.fidelity`), and the
``socialsim distill`` command (:mod:`.command`). The ``distilled`` seat kind plays the file in
the donation env.
"""
