"""The society's hot loops, compiled by numba when it is installed (the ``fast`` extra), and
the numpy code that does the same work, value for value, when it is not.

| function | what it does | without numba |
|---|---|---|
| :func:`shuffle` | ``rng.shuffle(x)`` for a 1-D array: the same permutation, the Generator left in the same state | ``rng.shuffle(x)`` |
| :func:`permutation` | ``rng.permutation(n)`` (``shuffle`` of ``arange(n)``), as int32 | ``rng.permutation(n)`` |
| :func:`play_pairs` | one round of donations of every replicate, from its drawn pairs (see :mod:`.vectorised`) | about twenty array calls |
| :func:`play_drawn_pairs` | the same with distilled strategies, whose decisions draw (see :mod:`.distilled`) | about forty array calls |
| :func:`selection_lineage` | who survives selection and whose child each newborn is (see :mod:`.evolution`) | array calls |

Exactness of :func:`shuffle`. numpy's ``Generator.shuffle`` is Fisher-Yates from the last
place down, place ``i`` swapped with ``j = random_interval(bitgen, i)``: 32-bit words masked to
the smallest all-ones mask covering ``i``, rejected while above ``i`` (``distributions.c``). A
PCG64 ``next_uint32`` returns the low half of a 64-bit output and keeps the high half for the
next call (``has_uint32`` and ``uinteger`` in ``bit_generator.state``). The compiled shuffle
takes 64-bit outputs from ``bit_generator.random_raw`` in chunks, consumes them 32 bits at a
time exactly so, then steps the generator back over the outputs it did not use
(``advance(-unused)``) and sets the buffered half as numpy would have left it (a consumed
half stays in ``uinteger``, as numpy leaves it). Other bit generators go to numpy.

``SOCIALSIM_NUMBA=0`` in the environment makes every function take the numpy path;
:func:`compiled` says which path is taken. The numba functions release the GIL, so a thread
can draw the next round while another plays this one (:mod:`.parallel`), and are cached on
disk (the first call of a fresh install compiles them, a few seconds).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import numpy as np

from socialsim.envs.gossip.cues import DONATE, GOSSIP, decision_uniform, hash_constants
from socialsim.society.pair_tables import CODE, SLIPPED, UNAWARE, VALENCE

# 64-bit outputs drawn per call of the compiled Fisher-Yates: 512 kB, a core's cache
RAW_CHUNK = 1 << 16
# Arrays shorter than this are shuffled by numpy (the state round trip costs ~20 us)
COMPILED_MIN_LENGTH = 256


@functools.cache
def compiled() -> Any:
    """The compiled kernels (a namespace of numba functions), or ``None``: numba is not
    installed, or ``SOCIALSIM_NUMBA=0``."""
    if os.environ.get("SOCIALSIM_NUMBA", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None
    jit = numba.njit(nogil=True, cache=True)

    class Kernels:
        fisher_yates = staticmethod(jit(fisher_yates_loop))
        play_pairs = staticmethod(jit(play_pairs_loop))
        play_drawn_pairs = staticmethod(jit(play_drawn_pairs_loop))
        selection_lineage = staticmethod(jit(selection_lineage_loop))

    return Kernels


# --- shuffle -------------------------------------------------------------------------------


def fisher_yates_loop(
    x: np.ndarray, raw: np.ndarray, place: int, buffered: bool, half: int
) -> tuple[int, int, bool, int]:
    """numpy's ``_shuffle_raw`` on ``x`` from place ``place`` down to place 1, its 32-bit words
    taken from ``raw`` (64-bit outputs as int64, low half first, the high half kept:
    ``buffered``, ``half``). Stops when ``raw`` runs out; returns the next place still to draw
    (0 when done), the outputs used, and the buffered half's flag and value."""
    used = 0
    while place > 0:
        mask = place
        mask |= mask >> 1
        mask |= mask >> 2
        mask |= mask >> 4
        mask |= mask >> 8
        mask |= mask >> 16
        while True:
            if buffered:
                word = half
                buffered = False
            else:
                if used == len(raw):
                    return place, used, buffered, half
                output = raw[used]
                used += 1
                word = output & 0xFFFFFFFF
                half = (output >> 32) & 0xFFFFFFFF
                buffered = True
            value = word & mask
            if value <= place:
                break
        held = x[value]
        x[value] = x[place]
        x[place] = held
        place -= 1
    return place, used, buffered, half


def shuffle(rng: np.random.Generator, x: np.ndarray) -> None:
    """Shuffle the 1-D array ``x`` in place exactly as ``rng.shuffle(x)`` does, leaving ``rng``
    in the state ``rng.shuffle`` leaves it (see the module docstring). Unlike numpy's, the
    compiled shuffle does not hold the Generator's lock throughout: no other thread may draw
    from ``rng`` meanwhile (the society draws from each Generator in one thread at a time)."""
    kernels = compiled()
    if (
        kernels is None
        or type(rng.bit_generator) is not np.random.PCG64
        or x.ndim != 1
        or len(x) < COMPILED_MIN_LENGTH
    ):
        rng.shuffle(x)
    else:
        shuffle_by(kernels.fisher_yates, rng, x)


def shuffle_by(fisher_yates: Any, rng: np.random.Generator, x: np.ndarray) -> None:
    """:func:`shuffle` of a PCG64 Generator's ``x`` by ``fisher_yates`` (the compiled
    :func:`fisher_yates_loop`, or the loop itself)."""
    bitgen = rng.bit_generator
    state = bitgen.state
    buffered, half = bool(state["has_uint32"]), int(state["uinteger"])
    place, unused = len(x) - 1, 0
    while place > 0:
        # a place takes 1.4 32-bit words on average: place + 64 outputs (twice the words) all
        # but always finish; the last call's unused outputs are stepped back over below
        raw = bitgen.random_raw(min(RAW_CHUNK, place + 64)).view(np.int64)
        place, used, buffered, half = fisher_yates(x, raw, place, buffered, half)
        unused = len(raw) - used
    if unused:
        bitgen.advance(-unused)  # (advance forgets the buffered half: set below)
    state = bitgen.state
    state["has_uint32"], state["uinteger"] = int(buffered), int(half)
    bitgen.state = state


def permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """``rng.permutation(n)``: compiled, as int32 when ``n`` allows (numpy's is ``shuffle`` of
    ``arange(n)``, and the permutation does not depend on the values' type)."""
    if n < COMPILED_MIN_LENGTH or n >= 2**31 or compiled() is None:  # small: numpy's own
        return rng.permutation(n)
    order = np.arange(n, dtype=np.int32)
    shuffle(rng, order)
    return order


# --- one round of donations ---------------------------------------------------------------


def play_pairs_loop(
    order: np.ndarray,
    state: np.ndarray,
    helps_received: np.ndarray,
    effect: np.ndarray,
    slip_draws: np.ndarray,
    error: float,
    reach_draws: np.ndarray,
    gossip_reach: float,
    count_bin: np.ndarray,
    counts: np.ndarray,
) -> None:
    """One round: in each row of ``order`` (flat agent indices), ``order[2k]`` donates to
    ``order[2k + 1]``; the pair's key (see :mod:`.pair_tables`) is read from the two states,
    the slip (``slip_draws[r, k] < error``) and whether the donor is unaware
    (``reach_draws[r, k] >= gossip_reach``); the donor's state gains ``effect[key]``, the
    recipient's helps received its low bit; with ``counts`` (one row per replicate), the pair's
    ``count_bin[key]`` is counted. Every agent is in one pair: reads see the round's start."""
    slips, unsure, counting = error > 0, gossip_reach < 1, counts.shape[1] > 0
    for r in range(order.shape[0]):
        for k in range(order.shape[1] // 2):
            donor, recipient = order[r, 2 * k], order[r, 2 * k + 1]
            donor_state, recipient_state = state[donor], state[recipient]
            key = ((donor_state >> (32 - 5)) & (CODE * VALENCE)) | ((recipient_state >> 32) & CODE)
            key |= (recipient_state >> 63) & 1  # a bad image; no branch on random data
            if slips:
                key |= SLIPPED * (slip_draws[r, k] < error)
            if unsure:
                key |= UNAWARE * (reach_draws[r, k] >= gossip_reach)
            change = effect[key]
            state[donor] = donor_state + change
            helps_received[recipient] += change & 1
            if counting:
                counts[r, count_bin[key]] += 1


class PairBuffers:
    """The numpy path's per-round buffers for ``(replicates, pairs)`` pairs, allocated once."""

    def __init__(self, replicates: int, pairs: int):
        shape = (replicates, pairs)
        self.donors = np.empty(shape, dtype=np.intp)
        self.recipients = np.empty(shape, dtype=np.intp)
        self.key = np.empty(shape, dtype=np.intp)
        self.bits = np.empty(shape, dtype=np.intp)
        self.flags = np.empty(shape, dtype=bool)
        self.helped = np.empty(shape, dtype=np.int64)


def play_pairs(*arguments: Any, buffers: PairBuffers | None) -> None:
    """:func:`play_pairs_loop` (its arguments; ``state`` and ``helps_received`` flat, ``counts``
    zeros ``(replicates, bins)`` or ``(replicates, 0)`` for no counts), compiled, or as array
    calls into ``buffers`` (:func:`play_pairs_numpy`)."""
    kernels = compiled()
    if kernels is None:
        play_pairs_numpy(*arguments, buffers)
    else:
        kernels.play_pairs(*arguments)


def play_pairs_numpy(
    order: np.ndarray,
    state: np.ndarray,
    helps_received: np.ndarray,
    effect: np.ndarray,
    slip_draws: np.ndarray,
    error: float,
    reach_draws: np.ndarray,
    gossip_reach: float,
    count_bin: np.ndarray,
    counts: np.ndarray,
    buffers: PairBuffers,
) -> None:
    """:func:`play_pairs_loop` as array calls into ``buffers``."""
    paired = 2 * (order.shape[1] // 2)
    b = buffers
    np.copyto(b.donors, order[:, 0:paired:2])  # contiguous: np.add.at's fast path
    np.copyto(b.recipients, order[:, 1:paired:2])
    donors, recipients = b.donors.reshape(-1), b.recipients.reshape(-1)
    # Every index is in range by construction, so take's modes agree: "wrap" is the cheapest.
    key, bits = b.key.reshape(-1), b.bits.reshape(-1)
    donor, recipient = state.take(donors, mode="wrap"), state.take(recipients, mode="wrap")
    # unsigned views where only bits are moved: numpy's logical shifts are SIMD loops
    np.right_shift(donor.view(np.uint64), 32 - 5, out=key.view(np.uint64))
    key &= CODE * VALENCE  # (the donor's record & CODE) * VALENCE
    np.right_shift(recipient.view(np.uint64), 32, out=bits.view(np.uint64))
    bits &= CODE
    key |= bits
    np.right_shift(recipient.view(np.uint64), 63, out=bits.view(np.uint64))  # bad image
    key |= bits
    if error > 0:
        slipped = np.less(slip_draws, error, out=b.flags)
        key |= np.multiply(slipped.reshape(-1), SLIPPED, out=bits)  # no masked loop: faster
    if gossip_reach < 1:
        unaware = np.greater_equal(reach_draws, gossip_reach, out=b.flags)
        key |= np.multiply(unaware.reshape(-1), UNAWARE, out=bits)
    change = effect.take(key, mode="wrap")
    np.add.at(state, donors, change)
    helped = np.bitwise_and(change, 1, out=b.helped.reshape(-1))
    np.add.at(helps_received, recipients, helped)
    if counts.shape[1]:
        bins = counts.shape[1]
        count_bin = count_bin.take(key, mode="wrap").reshape(counts.shape[0], -1)
        count_bin += np.arange(counts.shape[0])[:, None] * bins
        counts += np.bincount(count_bin.reshape(-1), minlength=counts.size).reshape(counts.shape)


# --- one round with distilled strategies ---------------------------------------------------

# decision_uniform's constants as uint64 scalars (numba keeps uint64 arithmetic uint64 only
# between uint64 operands)
_GOLDEN, _ROUND, _DONATE, _GOSSIP, _MIX1, _MIX2 = (
    np.uint64(c) for c in hash_constants(DONATE, GOSSIP)
)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


#: pairs a drawn round reads ahead of its draws (their lines stay in a core's cache)
DRAWN_CHUNK = 1024


def play_drawn_pairs_loop(
    order: np.ndarray,
    state: np.ndarray,
    helps_received: np.ndarray,
    p_help: np.ndarray,
    cuts: np.ndarray,
    effect: np.ndarray,
    slip_draws: np.ndarray,
    error: float,
    reach_draws: np.ndarray,
    gossip_reach: float,
    count_bin: np.ndarray,
    counts: np.ndarray,
    seeds: np.ndarray,
    round_: int,
) -> None:
    """:func:`play_pairs_loop` where the donor's help and the recipient's valence are drawn
    (:mod:`.distilled`): the donor's ``decision_uniform(seeds[donor], round_, DONATE)`` below
    ``p_help[key]`` adds ``HELP_DRAWN`` to the key, the recipient's draw the number of
    ``cuts[:, key]`` it reaches times ``TONE_DRAWN``. Pairs are read a chunk at a time before
    they are played (the draws' arithmetic would otherwise leave few reads in flight)."""
    slips, unsure, counting = error > 0, gossip_reach < 1, counts.shape[1] > 0
    mixed = np.uint64(round_) * _ROUND
    help_drawn, tone_drawn = len(p_help), 2 * len(p_help)
    donors, recipients = np.empty(DRAWN_CHUNK, np.int64), np.empty(DRAWN_CHUNK, np.int64)
    donor_seeds = np.empty(DRAWN_CHUNK, np.uint64)
    recipient_seeds = np.empty(DRAWN_CHUNK, np.uint64)
    pairs = order.shape[1] // 2
    for r in range(order.shape[0]):
        for start in range(0, pairs, DRAWN_CHUNK):
            chunk = min(pairs - start, DRAWN_CHUNK)
            for i in range(chunk):
                donor, recipient = order[r, 2 * (start + i)], order[r, 2 * (start + i) + 1]
                donors[i], recipients[i] = state[donor], state[recipient]
                donor_seeds[i], recipient_seeds[i] = seeds[donor], seeds[recipient]
            for i in range(chunk):
                k = start + i
                donor_state, recipient_state = donors[i], recipients[i]
                key = ((donor_state >> (32 - 5)) & (CODE * VALENCE)) | (
                    (recipient_state >> 32) & CODE
                )
                key |= (recipient_state >> 63) & 1
                if slips:
                    key |= SLIPPED * (slip_draws[r, k] < error)
                if unsure:
                    key |= UNAWARE * (reach_draws[r, k] >= gossip_reach)
                z = (donor_seeds[i] ^ mixed ^ _DONATE) + _GOLDEN
                z = (z ^ (z >> _S30)) * _MIX1
                z = (z ^ (z >> _S27)) * _MIX2
                z ^= z >> _S31
                drawn = np.float64(z >> _S11) * 2.0**-53
                key += help_drawn * (drawn < p_help[key])
                z = (recipient_seeds[i] ^ mixed ^ _GOSSIP) + _GOLDEN
                z = (z ^ (z >> _S30)) * _MIX1
                z = (z ^ (z >> _S27)) * _MIX2
                z ^= z >> _S31
                drawn = np.float64(z >> _S11) * 2.0**-53
                key += tone_drawn * (int(drawn >= cuts[0, key]) + int(drawn >= cuts[1, key]))
                change = effect[key]
                state[order[r, 2 * k]] = donor_state + change
                helps_received[order[r, 2 * k + 1]] += change & 1
                if counting:
                    counts[r, count_bin[key]] += 1


def play_drawn_pairs(*arguments: Any) -> None:
    """:func:`play_drawn_pairs_loop` (its arguments, as :func:`play_pairs` takes its own),
    compiled, or as array calls."""
    kernels = compiled()
    if kernels is None:
        play_drawn_pairs_numpy(*arguments)
    else:
        kernels.play_drawn_pairs(*arguments)


def play_drawn_pairs_numpy(
    order, state, helps_received, p_help, cuts, effect, slip_draws, error, reach_draws,
    gossip_reach, count_bin, counts, seeds, round_,
) -> None:  # fmt: skip
    """:func:`play_drawn_pairs_loop` as array calls."""
    paired = 2 * (order.shape[1] // 2)
    donors, recipients = order[:, 0:paired:2].reshape(-1), order[:, 1:paired:2].reshape(-1)
    donor, recipient = state[donors], state[recipients]
    key = ((donor.view(np.uint64) >> np.uint64(32 - 5)).view(np.int64) & (CODE * VALENCE)) | (
        (recipient.view(np.uint64) >> np.uint64(32)).view(np.int64) & CODE
    )
    key |= (recipient.view(np.uint64) >> np.uint64(63)).view(np.int64)
    if error > 0:
        key |= SLIPPED * (slip_draws.reshape(-1) < error)
    if gossip_reach < 1:
        key |= UNAWARE * (reach_draws.reshape(-1) >= gossip_reach)
    key += len(p_help) * (decision_uniform(seeds[donors], round_, DONATE) < p_help[key])
    drawn = decision_uniform(seeds[recipients], round_, GOSSIP)
    key += 2 * len(p_help) * ((drawn >= cuts[0, key]).astype(np.intp) + (drawn >= cuts[1, key]))
    change = effect[key]
    np.add.at(state, donors, change)
    np.add.at(helps_received, recipients, change & 1)
    if counts.shape[1]:
        bins = counts.shape[1]
        index = count_bin[key].reshape(counts.shape[0], -1)
        index += np.arange(counts.shape[0])[:, None] * bins
        counts += np.bincount(index.reshape(-1), minlength=counts.size).reshape(counts.shape)


# --- selection ------------------------------------------------------------------------------


def selection_lineage_loop(
    fitness: np.ndarray, order: np.ndarray, cut: float, kept: int
) -> tuple[np.ndarray, np.ndarray]:
    """Selection's survivors and parents (see :mod:`.evolution`): the agents fitter than
    ``cut`` survive, and those at ``cut`` in ``order``'s order until ``kept`` survive; the
    places of the others, increasing, go to the survivors in ``order``'s order, cycling.
    Returns each agent's lineage and the newborns' places."""
    n = len(fitness)
    # 2 fitter than the cut, 1 at it, 0 below (then 2 a survivor): the random reads in the
    # permutation's order go to this byte array, not to the fitness; no branches (the agents
    # are in random order: a branch would be mispredicted half the time)
    rank = np.empty(n, dtype=np.int8)
    ties = kept
    for agent in range(n):
        rank[agent] = 2 if fitness[agent] > cut else 1 if fitness[agent] == cut else 0
        ties -= rank[agent] == 2
    parents = np.empty(kept + 1, dtype=np.intp)
    found = 0
    for agent in order:
        level = rank[agent]
        survives = (level == 2) | ((level == 1) & (ties > 0))
        ties -= survives & (level == 1)
        rank[agent] = 2 if survives else level
        parents[found] = agent
        found += survives
    places = np.empty(n - kept + 1, dtype=np.intp)
    lineage = np.empty(n, dtype=np.intp)
    born = parent = 0
    for agent in range(n):
        newborn = rank[agent] != 2
        places[born] = agent
        lineage[agent] = parents[parent] if newborn else agent
        born += newborn
        parent += newborn
        parent = 0 if parent == kept else parent  # cycling, without a division
    places = places[:born]
    return lineage, places


def selection_lineage(
    fitness: np.ndarray, order: np.ndarray, cut: float, kept: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`selection_lineage_loop`, compiled or as array calls (a small population's: the
    env's generations need no compiler, nor its import)."""
    kernels = compiled() if len(fitness) >= COMPILED_MIN_LENGTH else None
    if kernels is not None:
        return kernels.selection_lineage(fitness, order, cut, kept)
    return selection_lineage_numpy(fitness, order, cut, kept)


def selection_lineage_numpy(
    fitness: np.ndarray, order: np.ndarray, cut: float, kept: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`selection_lineage_loop` as array calls."""
    alive = fitness > cut
    tied = order[fitness[order] == cut]  # in the permutation's order
    alive[tied[: kept - np.count_nonzero(alive)]] = True
    parents = order[alive[order]]
    places = np.flatnonzero(~alive)
    lineage = np.arange(len(fitness))
    lineage[places] = parents[np.arange(len(places)) % kept]
    return lineage, places
