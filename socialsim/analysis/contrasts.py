"""Differences between the cells of a grid (and between runs, in ``socialsim report A B``): for
every factor that varies, each of its values against the factor's first value, the other
factors held fixed, for every metric — the difference of means, its 95% bootstrap interval
(paired by seed where both cells played the same seeds) and a permutation-test p-value
(:func:`~socialsim.analysis.stats.contrast`). Written as ``contrasts.csv``.

The number of comparisons in the table is stated in every row (``comparisons``), with the
Bonferroni-adjusted p-value beside the raw one: a table of many contrasts holds some small
p-values by chance.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import pandas as pd

from socialsim.analysis import stats
from socialsim.analysis.tables import factor_name, readable

NOTE = (
    "treatment - baseline (the factor's first value), the other factors held fixed; 95% "
    f"percentile bootstrap interval ({stats.BOOTSTRAP_RESAMPLES} resamples) and permutation test "
    f"({stats.PERMUTATIONS} permutations), paired by seed where both cells played the same seeds, "
    "seeded; p_bonferroni = p x comparisons; one_replicate: a side whose episodes are all "
    "identical (one effective replicate, its interval says nothing about chance)"
)


def factors(episodes: pd.DataFrame) -> list[str]:
    """The ``cell.<path>`` columns whose value varies."""
    return [
        c for c in episodes.columns if c.startswith("cell.") and episodes[c].map(str).nunique() > 1
    ]


def _in_order(factor: str, values: pd.Series) -> list[str]:
    """The distinct values: runs in the order they were named, other factors sorted (false
    before true, numbers by value), so that the baseline does not depend on the log's order."""
    distinct = list(dict.fromkeys(values))
    if factor == "cell.run":
        return distinct
    return sorted(distinct, key=_natural)


def _natural(text: str) -> tuple:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return (2, text)
    if isinstance(value, bool | int | float):
        return (0, float(value), text)
    return (1, text)


def contrasts(episodes: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """One row per (factor, context, treatment value, metric); ``episodes`` has one row per
    episode with its ``cell.<path>`` columns, ``seed`` and the metrics."""
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
            values = _in_order(factor, block[factor])
            base = block[block[factor] == values[0]]
            for value in values[1:]:
                treated = block[block[factor] == value]
                one = any(
                    distinct[_cell_key(varying, part)] == 1 and len(part) > 1
                    for part in (base, treated)
                )
                for metric in present:
                    if base[metric].isna().all() or treated[metric].isna().all():
                        continue
                    rows.append(
                        {
                            "factor": factor_name(factor[5:]),
                            "context": context or "(all)",
                            "baseline": readable(values[0]),
                            "treatment": readable(value),
                            "metric": metric,
                            **stats.contrast(_by_seed(base, metric), _by_seed(treated, metric)),
                            "one_replicate": one,
                        }
                    )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table["comparisons"] = len(table)
    table["p_bonferroni"] = (table["p_value"] * len(table)).clip(upper=1.0)
    return table


def _cell_key(varying: list[str], part: pd.DataFrame) -> tuple:
    first = part.iloc[0]
    return tuple(first[f] for f in varying)


def _by_seed(block: pd.DataFrame, metric: str) -> dict:
    if block["seed"].is_unique:
        return dict(zip(block["seed"], block[metric], strict=True))
    # the same seed twice in one cell (never from one run): keep them apart, unpaired
    return {(id(block), i): v for i, v in enumerate(block[metric])}
