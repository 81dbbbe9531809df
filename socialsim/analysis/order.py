"""The order a reader expects of a factor's levels and of cell labels: numbers by their value
(generation 2 before generation 10, not after it as text), then text, each run of digits inside
a label read as a number; a missing value (``nan``) last."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

_DIGITS = re.compile(r"(\d+)")


def level_key(value: Any) -> tuple:
    """The sort key of a level or a cell label (see the module docstring)."""
    text = str(value)
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None and number == number:
        return (0, number, ())
    if number is not None or text == "None":
        return (2, 0.0, ())
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in _DIGITS.split(text) if p)
    return (1, 0.0, parts)


def ordered(values: Iterable[Any]) -> list[str]:
    """The distinct values as text, in :func:`level_key` order."""
    return sorted({str(v) for v in values}, key=level_key)


def numeric(values: Sequence[str]) -> bool:
    """Whether every level is a number (a sequential colour map then shows their order)."""
    return bool(values) and all(level_key(v)[0] == 0 for v in values)


def in_order(frame: pd.DataFrame, column: str = "cell") -> pd.DataFrame:
    """``frame``'s rows with ``column`` in :func:`level_key` order, the rows of one value in
    the order they were (a stable sort)."""
    if frame.empty or column not in frame.columns:
        return frame
    return frame.sort_values(column, key=lambda c: c.map(level_key), kind="stable").reset_index(
        drop=True
    )
