"""The society's hot loops, compiled by numba when it is installed (the ``fast`` extra), and
the numpy code that does the same work, value for value, when it is not.

| function | what it does | without numba |
|---|---|---|
| :func:`shuffle` | ``rng.shuffle(x)`` for a 1-D array: the same permutation, the Generator left in the same state | ``rng.shuffle(x)`` |
| :func:`permutation` | ``rng.permutation(n)`` (``shuffle`` of ``arange(n)``), as int32 | ``rng.permutation(n)`` |
| :func:`play_pairs` | one round of donations of every replicate, from its drawn pairs (see :mod:`.vectorised`), with the agents' decisions when they draw | about twenty array calls |
| :func:`decide` | what each agent of a distilled strategy decides in a round, one byte each (see :mod:`.distilled`) | array calls |
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

from socialsim.society.decide import DECIDED_BIT, decide_loop, decide_numpy
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
        decide = staticmethod(jit(decide_loop))
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


#: pairs a round reads before it plays them (their states in a core's cache): the reads of a
#: chunk are independent, so many are in flight at once
PAIR_CHUNK = 256
#: the rules of a round whose agents do not draw (scripted strategies only)
NO_RULES = np.zeros(0, dtype=np.uint8)


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
    help_rule: np.ndarray,
    tone_rule: np.ndarray,
) -> None:
    """One round: in each row of ``order`` (flat agent indices), ``order[2k]`` donates to
    ``order[2k + 1]``; the pair's key (see :mod:`.pair_tables`) is read from the two states,
    the slip (``slip_draws[r, k] < error``) and whether the donor is unaware
    (``reach_draws[r, k] >= gossip_reach``); the donor's state gains ``effect[key]``, the
    recipient's helps received its low bit; with ``counts`` (one row per replicate), the pair's
    ``count_bin[key]`` is counted. Every agent is in one pair: reads see the round's start, so
    a chunk of pairs reads its states and helps received first, then plays.

    With rules (a society with distilled strategies, :mod:`.distilled`; :data:`NO_RULES` for
    none), the key gains ``HELP_DRAWN`` for a help and ``TONE_DRAWN`` times the recipient's
    valence class: ``help_rule[key]`` is 0 (refuse) or 1 (help) for a scripted donor, 2 for a
    distilled one (its decided byte's bit at the cell of what it saw: bad image * 2 + bad
    standing, a stranger's 0); ``tone_rule[key + HELP_DRAWN * helping]`` is the class (0-2) for
    a scripted recipient, 12 for a distilled one (two bits of its decided byte, at whether it
    was helped: helping and not slipped)."""
    slips, unsure, counting = error > 0, gossip_reach < 1, counts.shape[1] > 0
    drawing, help_drawn = len(help_rule) > 0, 2 * UNAWARE  # HELP_DRAWN: one more key space
    donors, recipients = np.empty(PAIR_CHUNK, np.int64), np.empty(PAIR_CHUNK, np.int64)
    received = np.empty(PAIR_CHUNK, np.int64)
    pairs = order.shape[1] // 2
    for r in range(order.shape[0]):
        for start in range(0, pairs, PAIR_CHUNK):
            chunk = min(pairs - start, PAIR_CHUNK)
            for i in range(chunk):
                donors[i] = state[order[r, 2 * (start + i)]]
                recipient = order[r, 2 * (start + i) + 1]
                recipients[i], received[i] = state[recipient], helps_received[recipient]
            for i in range(chunk):
                k = start + i
                donor_state, recipient_state = donors[i], recipients[i]
                key = ((donor_state >> (32 - 5)) & (CODE * VALENCE)) | (
                    (recipient_state >> 32) & CODE
                )
                key |= (recipient_state >> 63) & 1  # a bad image; no branch on random data
                slipped, aware = 0, 1
                if slips:
                    slipped = int(slip_draws[r, k] < error)
                    key |= SLIPPED * slipped
                if unsure:
                    aware = int(reach_draws[r, k] < gossip_reach)
                    key |= UNAWARE * (1 - aware)
                if drawing:
                    rule = help_rule[key]
                    cell = (((key & 1) << 1) | ((key >> 1) & 1)) * aware
                    helping = (rule & 1) | ((rule >> 1) & (donor_state >> (DECIDED_BIT + cell)))
                    key += help_drawn * helping
                    rule = tone_rule[key]
                    drawn = recipient_state >> (DECIDED_BIT + 4 + 2 * (helping & (1 - slipped)))
                    key += 2 * help_drawn * ((drawn & (rule >> 2)) | (rule & 3))
                change = effect[key]
                state[order[r, 2 * k]] = donor_state + change
                helps_received[order[r, 2 * k + 1]] = received[i] + (change & 1)
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
    help_rule: np.ndarray,
    tone_rule: np.ndarray,
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
    if len(help_rule):
        aware = 1 - ((key >> 11) & 1)  # UNAWARE's bit
        cell = (((key & 1) << 1) | ((key >> 1) & 1)) * aware
        rule = help_rule[key].astype(np.intp)
        helping = (rule & 1) | ((rule >> 1) & (donor >> (DECIDED_BIT + cell)))
        key += 2 * UNAWARE * helping
        rule = tone_rule[key].astype(np.intp)
        drawn = recipient >> (DECIDED_BIT + 4 + 2 * (helping & (1 - ((key >> 10) & 1))))
        key += 4 * UNAWARE * ((drawn & (rule >> 2)) | (rule & 3))
    change = effect.take(key, mode="wrap")
    np.add.at(state, donors, change)
    helped = np.bitwise_and(change, 1, out=b.helped.reshape(-1))
    np.add.at(helps_received, recipients, helped)
    if counts.shape[1]:
        bins = counts.shape[1]
        count_bin = count_bin.take(key, mode="wrap").reshape(counts.shape[0], -1)
        count_bin += np.arange(counts.shape[0])[:, None] * bins
        counts += np.bincount(count_bin.reshape(-1), minlength=counts.size).reshape(counts.shape)


# --- what distilled agents decide --------------------------------------------------------


def decide(*arguments: Any) -> None:
    """:func:`~socialsim.society.decide.decide_loop` (its arguments), compiled, or as array
    calls."""
    kernels = compiled()
    if kernels is None:
        decide_numpy(*arguments)
    else:
        kernels.decide(*arguments)


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
