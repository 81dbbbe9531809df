"""The best assignment of a few rows to distinct columns, in plain Python.

The Hungarian baselines choose the code maximising the summed similarity of a 3 x 4 matrix. The
reference implementation uses SciPy's ``linear_sum_assignment``; importing ``scipy.optimize``
takes most of a second, longer than a whole run of baseline games, so this module solves the
same problem with the same method: shortest augmenting paths (Crouse, "On implementing 2D
rectangular assignment algorithms", IEEE TAES 2016), one row at a time, with dual potentials.
Ties are where methods differ (a turn-1 interceptor's matrix is all zeros), so this one scans
the columns in the same order and breaks equal path costs the same way: among equal costs the
column found last in the scan, unless an earlier one is still free. Its answers equal SciPy's on
every matrix of ``tests/test_embedding_assignment.py``, ties included.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def max_assignment(score: Sequence[Sequence[float]]) -> list[int]:
    """For each row of ``score`` (no more rows than columns), its column, distinct per row,
    so that the summed score is the largest."""
    cost = [[-float(x) for x in row] for row in score]
    rows = len(cost)
    columns = len(cost[0]) if rows else 0
    if rows > columns:
        raise ValueError(f"score: {rows} rows for {columns} columns; at most one row per column")
    u = [0.0] * rows  # dual potential of each row
    v = [0.0] * columns  # and of each column
    row_of = [-1] * columns
    column_of = [-1] * rows
    for start in range(rows):
        path = [-1] * columns
        dist = [math.inf] * columns
        rows_seen = [False] * rows
        columns_seen = [False] * columns
        unseen = list(range(columns - 1, -1, -1))  # scanned from the last column down
        found, reached = -1, 0.0
        row = start
        while found == -1:
            rows_seen[row] = True
            best, lowest = -1, math.inf
            for k, column in enumerate(unseen):
                through = reached + cost[row][column] - u[row] - v[column]
                if through < dist[column]:
                    path[column], dist[column] = row, through
                if dist[column] < lowest or (dist[column] == lowest and row_of[column] == -1):
                    best, lowest = k, dist[column]
            reached = lowest
            column = unseen[best]
            columns_seen[column] = True
            unseen[best] = unseen[-1]
            unseen.pop()
            if row_of[column] == -1:
                found = column
            else:
                row = row_of[column]
        u[start] += reached
        for other in range(rows):
            if rows_seen[other] and other != start:
                u[other] += reached - dist[column_of[other]]
        for column in range(columns):
            if columns_seen[column]:
                v[column] -= reached - dist[column]
        column = found
        while True:  # flip the path's assignments back to the starting row
            row = path[column]
            row_of[column] = row
            column_of[row], column = column, column_of[row]
            if row == start:
                break
    return column_of
