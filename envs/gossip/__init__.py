"""The ALIGN gossip games: donation game, prisoner's dilemma, trust game and product market.

``core`` holds the pure rules and schedules, ``norms`` the assessment norms of indirect
reciprocity (pure functions shared by scripted agents and the analysis), ``env`` the
PettingZoo adapters. The versioned shims are ``socialsim.envs.donation_v0``, ``prisoners_v0``,
``trust_v0`` and ``market_v0``.
"""
