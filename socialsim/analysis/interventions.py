"""What the interventions of a run changed (:mod:`socialsim.interventions`), per cell: a pure
function of the records. Their effect is in the report's contrasts: an experiment whose grid
crosses ``interventions`` (``[[], [{...}]]``) plays the same seeds with and without them, and
:mod:`~socialsim.analysis.contrasts` pairs the two by seed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from socialsim.interventions import ACTIONS
from socialsim.records import EpisodeRecord, cell_id


def interventions_table(records: list[EpisodeRecord]) -> list[dict[str, Any]]:
    """Per cell with any: its episodes, the labels of its interventions and the messages each
    action changed or added (totals over the cell's episodes)."""
    cells: dict[str, dict[str, Any]] = {}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(ACTIONS, 0))
    for record in records:
        if record.status != "done" or not record.interventions:
            continue
        key = cell_id(record.cell)
        row = cells.setdefault(key, {"cell": record.cell, "episodes": 0})
        row["episodes"] += 1
        for note in record.interventions:
            counts[key][note["action"]] += 1
    return [
        {
            "cell": ", ".join(f"{k}={v}" for k, v in row["cell"].items() if k != "interventions")
            or "(all)",
            "episodes": row["episodes"],
            **{f"messages_{action}": counts[key][action] for action in ACTIONS},
        }
        for key, row in cells.items()
    ]
