"""The ALIGN gossip games: donation game, prisoner's dilemma, trust game and product market.

``protocol`` holds the vocabulary, ``options`` the checked constructor options, ``core`` the
pure rules and ``schedules`` who meets whom, ``norms`` the assessment norms of indirect
reciprocity (pure functions shared by scripted agents and the analysis), ``env`` the
PettingZoo adapters. The versioned shims are ``socialsim.envs.donation_v0``, ``prisoners_v0``,
``trust_v0`` and ``market_v0``.
"""
