"""Cost and time in the report: calls, tokens, cost (where priced) and wall time per cell and
per run, summed from the records' LLM-call events."""

import pandas as pd
import pytest

from socialsim.analysis import health, tables
from socialsim.records import EpisodeRecord


def _record(episode, cell, calls, wall):
    return EpisodeRecord(
        experiment="x",
        cell=cell,
        episode=episode,
        seed=episode,
        env_id="decrypto_v0",
        env_kwargs={},
        form="parallel",
        seats={"encoder": {"kind": "llm_decrypto"}},
        events={"encoder": calls},
        timing={"wall_s": wall},
    )


def call(prompt, completion, cost=None, cached=False, reply="ok"):
    return {
        "type": "llm_call",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cost": cost,
        "cached": cached,
        "reply": reply,
    }


def test_cost_totals_sum_fresh_calls_per_cell_and_for_the_run():
    a, b = {"model": "m1"}, {"model": "m2"}
    recs = [
        _record(0, a, [call(100, 10, 0.01), call(50, 5, cached=True)], 1.5),
        _record(1, a, [call(200, 20, 0.02)], 2.0),
        _record(0, b, [call(10, 1), call(10, 1, reply=None)], 0.5),  # unpriced; one errored
    ]
    rows = pd.DataFrame(health.cost_totals(recs, tables.cell_label)).set_index("cell")
    assert rows.loc["model=m1", "calls"] == 3 and rows.loc["model=m1", "fresh_calls"] == 2
    assert rows.loc["model=m1", "prompt_tokens"] == 300
    assert rows.loc["model=m1", "completion_tokens"] == 30
    assert (
        rows.loc["model=m1", "cost"] == pytest.approx(0.03)
        and rows.loc["model=m1", "wall_s"] == 3.5
    )
    assert rows.loc["model=m2", "calls"] == 1 and rows.loc["model=m2", "unpriced"] == 1
    total = rows.loc["(run total)"]
    assert total["episodes"] == 3 and total["calls"] == 4 and total["prompt_tokens"] == 310
    assert total["cost"] == pytest.approx(0.03) and total["wall_s"] == 4.0
