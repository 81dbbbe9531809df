"""What the agents of distilled strategies decide in a round (:mod:`.distilled`), one byte each
in their states, in passes over the agents in their order.

An agent's draws are :func:`~socialsim.envs.gossip.cues.decision_uniform` of its seed, the
round and the decision: ``m * 2**-53`` for a 53-bit integer ``m``, so "the draw is below ``p``"
is ``m < ceil(p * 2**53)`` and the thresholds are integers (:func:`thresholds`). The byte
(:data:`~.pair_tables.DECIDED` in the state) holds, in bit ``c``, whether the agent helps when
what it sees of a recipient is cell ``c`` (bad image * 2 + bad standing), and in bits 4-5 and
6-7 the valence class it publishes when not helped and when helped. Its own standing is read
from the state at the round's start (every agent is in one pair a round).

One pass per distilled strategy: within a pass every threshold is a constant, so the loop has
no table reads and compiles to vector code (a single pass that read each agent's thresholds
from a table took 4.8 ms for 10^6 agents; a pass takes about 0.6 ms, hash included).
"""

from __future__ import annotations

import numpy as np

from socialsim.envs.gossip.cues import DONATE, GOSSIP, decision_uniform, hash_constants
from socialsim.society.pair_tables import DECIDED

DECIDED_BIT = DECIDED.bit_length() - 1  #: the decided byte's place in the state
DECIDED_BYTE = 255 * DECIDED

# decision_uniform's constants as uint64 scalars (numba keeps uint64 arithmetic uint64 only
# between uint64 operands)
_GOLDEN, _ROUND, _DONATE, _GOSSIP, _MIX1, _MIX2 = (
    np.uint64(c) for c in hash_constants(DONATE, GOSSIP)
)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_ONE, _TWO, _THREE, _FOUR, _SIX = (np.uint64(b) for b in (1, 2, 3, 4, 6))


def thresholds(p: np.ndarray) -> np.ndarray:
    """``ceil(p * 2**53)`` as uint64: a 53-bit ``m`` is below it exactly when ``m * 2**-53``
    is below ``p`` (the scaling by a power of two is exact)."""
    return np.ceil(np.asarray(p, dtype=np.float64) * 2.0**53).astype(np.uint64)


def decide_loop(
    state: np.ndarray,
    seeds: np.ndarray,
    help_cuts: np.ndarray,
    tone_cuts: np.ndarray,
    codes: np.ndarray,
    round_: int,
) -> None:
    """Put in the state of every agent whose strategy is one of ``codes`` what it decides in
    round ``round_``: it helps in cell ``c`` when its donation draw's integer is below
    ``help_cuts[code, c]``; its valence class is how many of ``tone_cuts[code, helped,
    standing]`` its gossip draw's integer reaches (thresholds from :func:`thresholds`)."""
    mixed = np.uint64(round_) * _ROUND
    for code in codes:
        h0, h1, h2, h3 = (
            help_cuts[code, 0],
            help_cuts[code, 1],
            help_cuts[code, 2],
            help_cuts[code, 3],
        )
        # a recipient's four cuts (two not helped, two helped) in good and in bad standing
        good = (
            tone_cuts[code, 0, 0, 0],
            tone_cuts[code, 0, 0, 1],
            tone_cuts[code, 1, 0, 0],
            tone_cuts[code, 1, 0, 1],
        )
        bad = (
            tone_cuts[code, 0, 1, 0],
            tone_cuts[code, 0, 1, 1],
            tone_cuts[code, 1, 1, 0],
            tone_cuts[code, 1, 1, 1],
        )
        for a in range(len(state)):
            own = state[a]
            z = (seeds[a] ^ mixed ^ _DONATE) + _GOLDEN
            z = (z ^ (z >> _S30)) * _MIX1
            z = (z ^ (z >> _S27)) * _MIX2
            z ^= z >> _S31
            m = z >> _S11
            byte = np.uint64(m < h0) | (np.uint64(m < h1) << _ONE)
            byte |= (np.uint64(m < h2) << _TWO) | (np.uint64(m < h3) << _THREE)
            z = (seeds[a] ^ mixed ^ _GOSSIP) + _GOLDEN
            z = (z ^ (z >> _S30)) * _MIX1
            z = (z ^ (z >> _S27)) * _MIX2
            z ^= z >> _S31
            m = z >> _S11
            is_bad = ((own >> 33) & 1) == 1  # its standing: the record's bit 1
            c0, c1, c2, c3 = bad if is_bad else good
            byte |= (np.uint64(m >= c0) + np.uint64(m >= c1)) << _FOUR
            byte |= (np.uint64(m >= c2) + np.uint64(m >= c3)) << _SIX
            decided = (own & ~DECIDED_BYTE) | (np.int64(byte) << DECIDED_BIT)
            state[a] = decided if ((own >> 34) & 7) == code else own


def decide_numpy(state, seeds, help_cuts, tone_cuts, codes, round_) -> None:  # fmt: skip
    """:func:`decide_loop` as array calls."""
    code, bad = (state >> 34) & 7, (state >> 33) & 1
    mine = np.isin(code, codes)
    m = (decision_uniform(seeds, round_, DONATE) * 2.0**53).astype(np.uint64)
    byte = ((m[:, None] < help_cuts[code]) << np.arange(4)).sum(axis=1)
    m = (decision_uniform(seeds, round_, GOSSIP) * 2.0**53).astype(np.uint64)
    for helped in range(2):
        cuts = tone_cuts[code, helped, bad]
        byte |= ((m >= cuts[:, 0]).astype(np.int64) + (m >= cuts[:, 1])) << (4 + 2 * helped)
    decided = (state & ~DECIDED_BYTE) | (byte << DECIDED_BIT)
    state[mine] = decided[mine]
