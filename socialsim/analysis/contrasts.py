"""Differences between the cells of a grid (and between runs, in ``socialsim report A B``): for
every factor that varies, each of its values against the factor's first value, the other
factors held fixed, for every metric — the difference of means, its 95% bootstrap interval
(paired by seed where both cells played the same seeds) and a permutation-test p-value
(:func:`~socialsim.analysis.stats.contrast`). Written as ``contrasts.csv``.

The factor's first value is the experiment file's: the first of its grid list (``grid``, the
manifest's), the first run named for ``run``; a factor the file does not list (``generation``)
is in natural order (false before true, numbers by value), so that the baseline never depends
on the log's order.

Metrics that are one measure in two units in the cells compared give one row: where metric
``b``'s episode values are ``k`` times ``a``'s plus one constant in both cells (the same values
when ``k`` is 1; a mean return that is a fixed multiple of the cooperation, a welfare that is
the mean return times the seats), the two give the same test and interval, ``b``'s difference
``k`` times ``a``'s, and the row is ``a``'s, named ``a = b / k`` (``a = b`` for the same
values): a family counts each comparison once.

The family is the whole table: ``comparisons`` (in every row) counts its rows with a p-value,
and ``p_holm`` is the raw ``p_value`` adjusted by Holm's step-down method over them
(:func:`~socialsim.analysis.stats.holm`): a table of many contrasts holds some small raw
p-values by chance.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from socialsim.analysis import stats
from socialsim.analysis.tables import factor_name, readable

NOTE = (
    "treatment - baseline (the factor's first value in the file), the other factors held fixed; 95% "
    f"percentile bootstrap interval ({stats.BOOTSTRAP_RESAMPLES} resamples) and permutation test "
    f"({stats.PERMUTATIONS} permutations), paired by seed where both cells played the same seeds, "
    "seeded; p_holm: Holm-adjusted over the table's comparisons (the family: every row); "
    "metric a = b / k: b is k times a plus a constant in both cells (one test, one row); "
    "one_replicate: a side whose episodes are all "
    "identical (one effective replicate, its interval says nothing about chance)"
)


def factors(episodes: pd.DataFrame) -> list[str]:
    """The ``cell.<path>`` columns whose value varies."""
    return [
        c for c in episodes.columns if c.startswith("cell.") and episodes[c].map(str).nunique() > 1
    ]


def _in_order(factor: str, values: pd.Series, grid: Mapping[str, Any]) -> list[str]:
    """The distinct values: runs in the order they were named, a grid factor's in the file's
    order (values the file does not list after them), others sorted (false before true,
    numbers by value), so that the baseline does not depend on the log's order."""
    distinct = list(dict.fromkeys(values))
    if factor == "cell.run":
        return distinct
    listed = grid.get(factor[len("cell.") :])
    named = [str(v) for v in listed] if isinstance(listed, list) else []
    return sorted(
        distinct,
        key=lambda v: (named.index(v), ()) if v in named else (len(named), _natural(v)),
    )


def _natural(text: str) -> tuple:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return (2, text)
    if isinstance(value, bool | int | float):
        return (0, float(value), text)
    return (1, text)


def contrasts(
    episodes: pd.DataFrame, metrics: Sequence[str], grid: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """One row per (factor, context, treatment value, metric); ``episodes`` has one row per
    episode with its ``cell.<path>`` columns, ``seed`` and the metrics; ``grid`` is the
    experiment file's (dotted path -> its values in order), which orders the factors' values."""
    present = [m for m in metrics if m in episodes.columns]
    varying = factors(episodes)
    if not varying or not present:
        return pd.DataFrame()
    frame = episodes.copy()
    for column in varying:
        frame[column] = frame[column].map(str)
    distinct = {  # distinct games per cell (their fingerprints), else distinct measures
        cell if isinstance(cell, tuple) else (cell,): (
            int(block["fingerprint"].nunique())
            if "fingerprint" in block.columns
            else stats.replicates(block[present].to_numpy().tolist())
        )
        for cell, block in frame.groupby(varying, sort=False)
    }
    rows = []
    for factor in varying:
        others = [f for f in varying if f != factor]
        blocks = frame.groupby(others, sort=False) if others else [((), frame)]
        for key, block in blocks:
            key = key if isinstance(key, tuple) else (key,)
            context = ", ".join(
                f"{factor_name(f[5:])}={readable(v)}" for f, v in zip(others, key, strict=True)
            )
            values = _in_order(factor, block[factor], grid or {})
            base = block[block[factor] == values[0]]
            for value in values[1:]:
                treated = block[block[factor] == value]
                one = any(
                    distinct[_cell_key(varying, part)] == 1 and len(part) > 1
                    for part in (base, treated)
                )
                for name, (a, b) in _distinct_metrics(base, treated, present):
                    rows.append(
                        {
                            "factor": factor_name(factor[5:]),
                            "context": context or "(all)",
                            "baseline": readable(values[0]),
                            "treatment": readable(value),
                            "metric": name,
                            **stats.contrast(a, b),
                            "one_replicate": one,
                        }
                    )
    return family(pd.DataFrame(rows))


def family(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` as one family: ``comparisons`` (its rows with a p-value) and ``p_holm`` (the
    raw p-values adjusted by Holm's method over them) in every row."""
    if table.empty:
        return table
    table = table.copy()
    table["comparisons"] = int(table["p_value"].notna().sum())
    table["p_holm"] = stats.holm(table["p_value"])
    return table


def _distinct_metrics(
    base: pd.DataFrame, treated: pd.DataFrame, metrics: Sequence[str]
) -> list[tuple[str, tuple[dict, dict]]]:
    """The metrics defined in both cells, those that rescale an earlier one merged into its row
    (:func:`_rescaling`): (the row's name, (baseline by seed, treatment by seed)), in
    ``metrics``' order."""
    rows: list[tuple[list[str], tuple[dict, dict]]] = []
    for metric in metrics:
        if base[metric].isna().all() or treated[metric].isna().all():
            continue
        pair = (_by_seed(base, metric), _by_seed(treated, metric))
        for names, first in rows:
            scale = _rescaling(first, pair)
            if scale is not None:
                names.append(metric if scale == 1.0 else f"{metric} / {stats.number(scale)}")
                break
        else:
            rows.append(([metric], pair))
    return [(" = ".join(names), pair) for names, pair in rows]


def _rescaling(first: tuple[dict, dict], other: tuple[dict, dict]) -> float | None:
    """``k`` when ``other``'s values are ``k`` times ``first``'s plus one constant, episode by
    episode in both cells (1.0 when they are the same values), else ``None``: the two give the
    same test and interval, the difference scaled by ``k``."""
    if any(a.keys() != b.keys() for a, b in zip(first, other, strict=True)):
        return None
    x = np.asarray([v for side in first for v in side.values()], dtype=float)
    y = np.asarray([v for side in other for v in side.values()], dtype=float)
    if np.array_equal(x, y, equal_nan=True):
        return 1.0
    if np.isnan(x).any() or np.isnan(y).any() or np.ptp(x) == 0.0:
        return None
    scale = float(np.cov(x, y)[0, 1] / np.var(x, ddof=1))
    fitted = scale * (x - x.mean()) + y.mean()
    if scale == 0.0 or not np.allclose(y, fitted, rtol=1e-9, atol=1e-9 * np.abs(y).max()):
        return None
    return scale


def _cell_key(varying: list[str], part: pd.DataFrame) -> tuple:
    first = part.iloc[0]
    return tuple(first[f] for f in varying)


def _by_seed(block: pd.DataFrame, metric: str) -> dict:
    if block["seed"].is_unique:
        return dict(zip(block["seed"], block[metric], strict=True))
    # the same seed twice in one cell (never from one run): keep them apart, unpaired
    return {(id(block), i): v for i, v in enumerate(block[metric])}
