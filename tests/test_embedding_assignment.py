"""The plain-Python assignment of the Hungarian baselines against SciPy's, which the reference
implementation uses: the same columns on every matrix, ties included."""

import numpy as np
import pytest
from socialsim.agents.embedding.assignment import max_assignment

scipy_optimize = pytest.importorskip("scipy.optimize")


def scipy_columns(score: np.ndarray) -> list[int]:
    return [int(c) for c in scipy_optimize.linear_sum_assignment(-score)[1]]


def matrices(rng: np.random.Generator, n: int):
    """Matrices of the shapes the games make, most with ties: all zeros (a turn-1
    interceptor), zero columns (keywords with no history), equal rows (out-of-vocabulary hints
    share one vector), few distinct values, and generic ones."""
    yield np.zeros((3, 4))
    for i in range(n):
        shape = (3, 4) if i % 7 else (int(rng.integers(1, 4)), int(rng.integers(3, 6)))
        score = rng.random(shape)
        kind = i % 5
        if kind == 1:
            score = rng.integers(0, 3, shape).astype(float)
        elif kind == 2:
            score[:, rng.random(shape[1]) < 0.5] = 0.0
        elif kind == 3 and shape[0] >= 2:
            first, second = rng.choice(shape[0], 2, replace=False)
            score[second] = score[first]
            score[:, rng.random(shape[1]) < 0.3] = 0.0
        elif kind == 4:
            score = np.round(rng.normal(size=shape), 1)
        yield score


def test_max_assignment_equals_scipy_on_every_matrix_ties_included():
    rng = np.random.default_rng(7)
    differing = [
        (score.tolist(), scipy_columns(score), max_assignment(score.tolist()))
        for score in matrices(rng, 20_000)
        if max_assignment(score.tolist()) != scipy_columns(score)
    ]
    assert differing == []


def test_max_assignment_exact_answers():
    assert max_assignment(np.zeros((3, 4)).tolist()) == [0, 1, 2]  # the turn-1 interceptor: 1-2-3
    # a tie between columns 1 and 2 for the first row: the column scanned last (2) is taken
    assert max_assignment(
        [[0.3, 0.0, 0.0, 0.12], [0.67, 0.0, 0.0, 0.38], [1.0, 0.0, 0.0, 0.65]]
    ) == [
        2,
        3,
        0,
    ]
    assert max_assignment([[0.9, 0.8, 0.0, 0.0], [1.0, 0.0, 0.0, 0.1], [0.0, 0.0, 1.0, 0.0]]) == [
        1,
        0,
        2,
    ]


def test_max_assignment_refuses_more_rows_than_columns():
    with pytest.raises(ValueError, match="score: 3 rows for 2 columns"):
        max_assignment([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
