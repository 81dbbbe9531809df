"""The society's kernels (socialsim.society.kernels): the compiled shuffle is numpy's
``Generator.shuffle`` exactly (the permutation and the Generator's state after, buffered 32-bit
half included); the compiled round and selection equal the numpy code; the society plays the
same with and without numba. The loops are also run uncompiled, by Python, on small sizes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from socialsim.society import kernels
from socialsim.society.evolution import Evolution
from socialsim.society.generations import EvolvingSociety
from socialsim.society.pair_tables import BINS, CODE, PAIR_TABLES, RECORD, VALENCE
from socialsim.society.population import STRATEGIES
from socialsim.society.vectorised import ReplicatedSociety

compiled = kernels.compiled()
needs_numba = pytest.mark.skipif(compiled is None, reason="numba is not installed")


@pytest.fixture
def numpy_only(monkeypatch):
    """The numpy path everywhere (as without numba), for one test."""
    monkeypatch.setenv("SOCIALSIM_NUMBA", "0")
    kernels.compiled.cache_clear()
    yield
    monkeypatch.undo()
    kernels.compiled.cache_clear()


def generator(seed: int, buffered: bool) -> np.random.Generator:
    """A PCG64 Generator; with ``buffered``, holding the high half of a 64-bit output (as an
    odd number of 32-bit draws leaves it)."""
    rng = np.random.default_rng(seed)
    if buffered:
        rng.shuffle(np.arange(2))  # one 32-bit word
        assert rng.bit_generator.state["has_uint32"] == 1
    return rng


def assert_same_shuffle(shuffle, seed: int, n: int, buffered: bool, dtype) -> None:
    expected_rng, rng = generator(seed, buffered), generator(seed, buffered)
    expected, x = np.arange(n), np.arange(n, dtype=dtype)
    expected_rng.shuffle(expected)
    shuffle(rng, x)
    np.testing.assert_array_equal(x, expected)
    assert rng.bit_generator.state == expected_rng.bit_generator.state
    np.testing.assert_array_equal(rng.random(3), expected_rng.random(3))


@needs_numba
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("buffered", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 255, 256, 257, 1000, 4095, 4096, 4097, 65_537, 200_003])
def test_compiled_shuffle_is_numpys_permutation_and_leaves_its_generator_state(n, buffered, dtype):
    for seed in range(8 if n < 100_000 else 2):
        assert_same_shuffle(kernels.shuffle, seed, n, buffered, dtype)


@pytest.mark.parametrize("buffered", [False, True])
@pytest.mark.parametrize("n", [2, 3, 17, 300, 1025])
def test_the_fisher_yates_loop_run_by_python_is_numpys_shuffle(n, buffered):
    def by_python(rng, x):
        kernels.shuffle_by(kernels.fisher_yates_loop, rng, x)

    for seed in range(5):
        assert_same_shuffle(by_python, seed, n, buffered, np.int64)


def test_a_shuffle_that_needs_several_chunks_of_outputs_is_numpys(monkeypatch):
    monkeypatch.setattr(kernels, "RAW_CHUNK", 7)  # every call runs out of outputs

    def by_python(rng, x):
        kernels.shuffle_by(kernels.fisher_yates_loop, rng, x)

    for seed in range(5):
        assert_same_shuffle(by_python, seed, 500, seed % 2 == 1, np.int64)


def test_permutation_is_numpys_permutation():
    for seed, n in [(0, 10), (1, 1000), (2, 100_001)]:
        expected_rng, rng = np.random.default_rng(seed), np.random.default_rng(seed)
        np.testing.assert_array_equal(kernels.permutation(rng, n), expected_rng.permutation(n))
        assert rng.bit_generator.state == expected_rng.bit_generator.state


def pair_arguments(seed: int, replicates: int, n: int, error: float, reach: float, counting):
    """Arguments of play_pairs_loop for random but well-formed states."""
    rng = np.random.default_rng(seed)
    codes = (
        rng.integers(0, len(STRATEGIES), (replicates, n)) * 4
        + rng.integers(0, 2, (replicates, n)) * 2
    )
    record = rng.integers(-40, 40, (replicates, n)) * VALENCE + codes
    assert (record & CODE == codes).all()
    state = (record * RECORD + rng.integers(0, 100, (replicates, n))).reshape(-1)
    helps = rng.integers(0, 100, replicates * n)
    order = np.stack([rng.permutation(n) + r * n for r in range(replicates)])
    effect, count_bin = PAIR_TABLES[bool(seed % 2)]
    bins = math.prod(BINS) if counting else 0
    return [
        order,
        state,
        helps,
        effect,
        rng.random((replicates, n // 2)),
        error,
        rng.random((replicates, n // 2)),
        reach,
        count_bin,
        np.zeros((replicates, bins), dtype=np.int64),
        kernels.NO_RULES,  # no decisions drawn
        kernels.NO_RULES,
    ]


def played(play, arguments, *extra):
    arguments = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
    play(*arguments, *extra)
    return arguments[1], arguments[2], arguments[9]  # state, helps received, counts


PLAYS = [
    (seed, replicates, n, error, reach, counting)
    for seed, (replicates, n) in enumerate([(1, 2), (1, 3), (1, 101), (3, 64), (2, 1001)])
    for error, reach in [(0.0, 1.0), (0.1, 1.0), (0.0, 0.6), (0.2, 0.5)]
    for counting in (False, True)
]


@pytest.mark.parametrize(("seed", "replicates", "n", "error", "reach", "counting"), PLAYS)
def test_a_round_played_by_the_loop_is_the_numpy_round(seed, replicates, n, error, reach, counting):
    arguments = pair_arguments(seed, replicates, n, error, reach, counting)
    buffers = kernels.PairBuffers(replicates, n // 2)
    expected = played(kernels.play_pairs_numpy, arguments, buffers)
    for got, want in zip(played(kernels.play_pairs_loop, arguments), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    if compiled is not None:
        for got, want in zip(played(compiled.play_pairs, arguments), expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_round_of_cooperators_gives_every_pair_a_help_and_a_good_tone():
    n, rng = 1000, np.random.default_rng(3)
    record = rng.integers(-40, 40, n) * VALENCE  # always cooperate (code 0), good standing
    state, helps = record * RECORD, np.zeros(n, dtype=np.int64)
    order = rng.permutation(n)[None]
    effect, count_bin = PAIR_TABLES[True]
    counts = np.zeros((1, math.prod(BINS)), dtype=np.int64)
    draws = np.zeros((1, n // 2))
    kernels.play_pairs_loop(
        order,
        state,
        helps,
        effect,
        draws,
        0.0,
        draws,
        1.0,
        count_bin,
        counts,
        kernels.NO_RULES,
        kernels.NO_RULES,
    )
    donors, recipients = order[0, 0::2], order[0, 1::2]
    np.testing.assert_array_equal(state[donors] & (RECORD - 1), 1)  # one help given
    np.testing.assert_array_equal(state[donors] >> 32, record[donors] + VALENCE)  # a +1 tone
    np.testing.assert_array_equal(state[recipients], record[recipients] * RECORD)
    np.testing.assert_array_equal(helps[recipients], 1)
    np.testing.assert_array_equal(helps[donors], 0)
    assert counts.sum() == n // 2


SELECTIONS = [
    (seed, n, kept, values)
    for seed, (n, kept) in enumerate(
        [(2, 1), (3, 1), (10, 5), (101, 50), (1000, 250), (5000, 4999)]
    )
    for values in (2, 7, 1_000_000)  # few values: many ties at the cut
]


@pytest.mark.parametrize(("seed", "n", "kept", "values"), SELECTIONS)
def test_selection_lineage_by_the_loop_is_the_numpy_lineage(seed, n, kept, values):
    rng = np.random.default_rng(seed)
    fitness = rng.integers(0, values, n) * 5.0 - 3.0
    order = rng.permutation(n)
    cut = np.partition(fitness, n - kept)[n - kept]
    lineage, places = kernels.selection_lineage_numpy(fitness, order, cut, kept)
    assert len(places) == n - kept
    ways = [kernels.selection_lineage_loop]
    if compiled is not None:
        ways.append(compiled.selection_lineage)
    for way in ways:
        got_lineage, got_places = way(fitness, order.astype(np.int32), cut, kept)
        np.testing.assert_array_equal(got_lineage, lineage)
        np.testing.assert_array_equal(got_places, places)


POPULATION = {"always_cooperate": 3000, "always_defect": 3000, "stern_judging": 4001}


def society_run(parallel: bool, seeds=(3, 4)):
    """Two replicates split between processes when parallel, one drawn ahead in a thread."""
    society = ReplicatedSociety(POPULATION, seeds=seeds, error=0.05, gossip_reach=0.8)
    table = society.run(20, parallel=parallel)
    return table, society.state.copy(), society.helps_received.copy(), society.rngs[0]


def evolving_run():
    run = EvolvingSociety(
        POPULATION,
        seeds=[5],
        rounds=10,
        gossip_reach=0.9,
        evolution=Evolution("selection", mutation=0.05, pool=tuple(POPULATION)),
    )
    return run.run(4, parallel=False), run.parents.copy()


@needs_numba
def test_the_society_plays_the_same_rounds_compiled_and_with_numpy(numpy_only):
    numpy_table, numpy_state, numpy_helps, numpy_rng = society_run(parallel=False)
    lone = society_run(False, seeds=[7])
    numpy_generations, numpy_parents = evolving_run()
    kernels.compiled.cache_clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOCIALSIM_NUMBA", "1")
        assert kernels.compiled() is not None
        for parallel in (False, True):
            table, state, helps, rng = society_run(parallel)
            assert table.equals(numpy_table)
            np.testing.assert_array_equal(state, numpy_state)
            np.testing.assert_array_equal(helps, numpy_helps)
            assert rng.bit_generator.state == numpy_rng.bit_generator.state
        table, state, helps, rng = society_run(True, seeds=[7])
        assert table.equals(lone[0])
        np.testing.assert_array_equal(state, lone[1])
        assert rng.bit_generator.state == lone[3].bit_generator.state
        generations, parents = evolving_run()
        assert generations.equals(numpy_generations)
        np.testing.assert_array_equal(parents, numpy_parents)
