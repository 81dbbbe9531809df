"""How seeds are derived. Nothing in socialsim touches a global RNG.

* Episode ``i`` of an experiment with base seed ``s`` has seed ``s + i``. Every grid cell uses
  the same episode seeds (common random numbers, so that cells are compared on the same draws).
  This also reproduces the Decrypto paper's scheme ``seed = episode + env_seed * episodes_per_seed``:
  base seed 0 with 96 episodes gives seeds 0-95, blocks of 32 being its env seeds 0, 1, 2.
* The agent in seat ``seat`` of an episode with seed ``e`` gets :func:`agent_seed` ``(e, seat)``,
  a 63-bit integer from ``numpy.random.SeedSequence``, independent of the env's stream.
"""

from __future__ import annotations

import functools
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


# numpy's SeedSequence (bit_generator.pyx), for arrays of seats: its hash constants
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R, _POOL = 0xCA01F9DD, 0x4973F715, 4


def _words(n: int) -> list[int]:
    """``n`` as SeedSequence takes an int: 32-bit words, least significant first ([0] for 0)."""
    words = [n & 0xFFFFFFFF]
    while n >> 32:
        n >>= 32
        words.append(n & 0xFFFFFFFF)
    return words


@functools.cache
def _agent_keys(n: int) -> np.ndarray:
    """The seat keys of ``agent_0`` ... ``agent_{n-1}`` (their hashes cost ~1.7 us a seat)."""
    keys = _seat_keys([f"agent_{i}" for i in range(n)])
    keys.flags.writeable = False
    return keys


def _seat_keys(seats: list[str]) -> np.ndarray:
    return np.fromiter(
        (int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little") for s in seats),
        dtype=np.uint64,
        count=len(seats),
    )


def agent_seeds(episode_seed: int, seats: int | list[str]) -> np.ndarray:
    """``[agent_seed(episode_seed, seat) for seat in seats]`` as ``uint64`` (``seats`` an int
    ``n``: ``agent_0`` ... ``agent_{n-1}``), SeedSequence's mixing done on arrays, for a
    million seats at once (``tests/test_distill_society.py`` checks it against
    :func:`agent_seed`)."""
    if isinstance(seats, int):
        keys, name = _agent_keys(seats), "agent_{}".format
    else:
        keys, name = _seat_keys(seats), seats.__getitem__
    head = _words(int(episode_seed) & (2**63 - 1))
    out = np.empty(len(keys), dtype=np.uint64)
    wide = keys >= np.uint64(1 << 32)  # the seats whose key is two words (all but 2^-32)
    entropy = [np.full(int(wide.sum()), w, dtype=np.uint32) for w in head]
    entropy += [(keys[wide] & np.uint64(0xFFFFFFFF)).astype(np.uint32)]
    entropy += [(keys[wide] >> np.uint64(32)).astype(np.uint32)]
    if len(entropy) <= _POOL:
        out[wide] = _generate_two(_mix_entropy(entropy))
    else:
        wide[:] = False
    for i in np.flatnonzero(~wide):
        out[i] = agent_seed(episode_seed, name(i))
    return out


def _mix_entropy(entropy: list[np.ndarray]) -> list[np.ndarray]:
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & 0xFFFFFFFF
        value = value * np.uint32(hash_const)
        return value ^ (value >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
        return result ^ (result >> np.uint32(16))

    zeros = np.zeros_like(entropy[0])
    with np.errstate(over="ignore"):
        mixer = [hashmix(entropy[i] if i < len(entropy) else zeros) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    mixer[dst] = mix(mixer[dst], hashmix(mixer[src]))
    return mixer


def _generate_two(pool: list[np.ndarray]) -> np.ndarray:
    """``generate_state(2, uint32)`` of each pool, folded as :func:`agent_seed` folds it."""
    hash_const = _INIT_B
    words = []
    with np.errstate(over="ignore"):
        for i in range(2):
            value = pool[i] ^ np.uint32(hash_const)
            hash_const = (hash_const * _MULT_B) & 0xFFFFFFFF
            value = value * np.uint32(hash_const)
            words.append(value ^ (value >> np.uint32(16)))
    return (words[0].astype(np.uint64) << np.uint64(31)) ^ words[1].astype(np.uint64)
