"""How seeds are derived. Nothing in socialsim touches a global RNG.

* Episode ``i`` of an experiment with base seed ``s`` has seed ``s + i``. Every grid cell uses
  the same episode seeds (common random numbers, so that cells are compared on the same draws).
  This also reproduces the Decrypto paper's scheme ``seed = episode + env_seed * episodes_per_seed``:
  base seed 0 with 96 episodes gives seeds 0-95, blocks of 32 being its env seeds 0, 1, 2.
* The agent in seat ``seat`` of an episode with seed ``e`` gets :func:`agent_seed` ``(e, seat)``,
  a 63-bit integer from ``numpy.random.SeedSequence``, independent of the env's stream.
"""

from __future__ import annotations

import hashlib

import numpy as np


def episode_seed(base_seed: int, index: int) -> int:
    return int(base_seed) + int(index)


def agent_seed(episode_seed: int, seat: str) -> int:
    seat_key = int.from_bytes(hashlib.sha256(seat.encode()).digest()[:8], "little")
    state = np.random.SeedSequence([int(episode_seed) & (2**63 - 1), seat_key]).generate_state(
        2, np.uint32
    )
    return int((int(state[0]) << 31) ^ int(state[1]))
