"""Decrypto: the rules (``core``), the word lists (``words``), the PettingZoo env (``env``) and
the theory-of-mind probes (``tom``). The env id is ``decrypto_v0``."""
