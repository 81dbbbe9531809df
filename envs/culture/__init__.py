"""The donor game of cultural evolution (Vallinder & Hughes 2024): donations as fractions of
the donor's resources, a trace of the recipient's past, optional costly punishment.
``protocol.py`` is its vocabulary, ``core.py`` its rules, ``env.py`` the PettingZoo adapter."""
