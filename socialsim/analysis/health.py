"""LLM health per seat and model, from what the records hold: every agent's ``counters``
(``llm_calls``, ``invalid_answers``, ``fallbacks``, ``tom_*``, the runner's ``invalid_actions``)
and its ``events`` (one ``llm_call`` entry per reply, with tokens, cost, latency, ``cached``,
``answer_attempt`` and ``invalid`` when the answer could not be read; one ``fallback`` entry per
fallback).

| column | meaning |
|---|---|
| ``calls`` | LLM replies received (cached or not) |
| ``errors`` | calls the provider never answered (the episode failed) |
| ``prompt_tokens``, ``completion_tokens`` | summed over the fresh replies |
| ``cost`` | summed over the fresh priced replies, in US dollars (``unpriced`` counts the others) |
| ``cache_hits``, ``cache_hit_rate`` | replies read from the disk cache, and their share of ``calls`` |
| ``invalid_answers`` | replies the agent could not read as an answer |
| ``reprompts`` | calls made after an invalid answer (``answer_attempt`` > 1) |
| ``fallbacks`` | decisions that ended in the logged fallback |
| ``invalid_actions`` | actions the env refused (the runner's count) |
| ``latency_p50_s``, ``latency_p95_s`` | request latency percentiles of the fresh replies |

Failed episodes count too: their calls were made and paid for.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from socialsim.records import EpisodeRecord

COLUMNS = (
    "seat",
    "kind",
    "model",
    "episodes",
    "calls",
    "errors",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "unpriced",
    "cache_hits",
    "cache_hit_rate",
    "invalid_answers",
    "reprompts",
    "fallbacks",
    "invalid_actions",
    "latency_p50_s",
    "latency_p95_s",
)


def _calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "llm_call"]


def llm_health(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    """One row per (seat, kind, model) with LLM calls or invalid answers, in seat order."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    latencies: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for record in records:
        for seat in sorted(set(record.counters) | set(record.events)):
            counters = record.counters.get(seat, {})
            events = record.events.get(seat, [])
            calls = _calls(events)
            counted = counters.get("llm_calls", 0) + counters.get("invalid_answers", 0)
            if not calls and not counted:
                continue
            kind = str((record.seats.get(seat) or {}).get("kind", "?"))
            models = sorted({str(e.get("model")) for e in calls}) or ["?"]
            key = (seat, kind, ", ".join(models))
            row = rows.setdefault(key, dict.fromkeys(COLUMNS, 0))
            row.update(seat=seat, kind=kind, model=key[2])
            row["episodes"] += 1
            answered = [e for e in calls if e.get("error") is None and e.get("reply") is not None]
            fresh = [e for e in answered if not e.get("cached")]
            row["calls"] += len(answered)
            row["errors"] += len(calls) - len(answered)
            row["prompt_tokens"] += sum(int(e.get("prompt_tokens") or 0) for e in fresh)
            row["completion_tokens"] += sum(int(e.get("completion_tokens") or 0) for e in fresh)
            row["cost"] += sum(float(e["cost"]) for e in fresh if e.get("cost") is not None)
            row["unpriced"] += sum(e.get("cost") is None for e in fresh)
            row["cache_hits"] += len(answered) - len(fresh)
            row["invalid_answers"] += counters.get("invalid_answers", 0) + counters.get(
                "tom_invalid_answers", 0
            )
            row["reprompts"] += sum(int(e.get("answer_attempt") or 1) > 1 for e in calls)
            row["fallbacks"] += counters.get("fallbacks", 0) + counters.get("tom_fallbacks", 0)
            row["invalid_actions"] += counters.get("invalid_actions", 0)
            latencies[key] += [
                float(e["latency_s"]) for e in fresh if e.get("latency_s") is not None
            ]
    out = []
    for key, row in rows.items():
        row["cache_hit_rate"] = row["cache_hits"] / row["calls"] if row["calls"] else math.nan
        values = latencies[key]
        row["latency_p50_s"] = float(np.percentile(values, 50)) if values else math.nan
        row["latency_p95_s"] = float(np.percentile(values, 95)) if values else math.nan
        out.append(row)
    return out


def invalid_totals(records: Iterable[EpisodeRecord]) -> dict[str, int]:
    """Totals over every seat: the env's ``invalid_actions`` and the agents' own
    ``invalid_answers`` and ``fallbacks`` (ToM side questions included)."""
    totals = {"invalid_actions": 0, "invalid_answers": 0, "fallbacks": 0}
    for record in records:
        for counters in record.counters.values():
            totals["invalid_actions"] += int(counters.get("invalid_actions", 0))
            totals["invalid_answers"] += int(
                counters.get("invalid_answers", 0) + counters.get("tom_invalid_answers", 0)
            )
            totals["fallbacks"] += int(
                counters.get("fallbacks", 0) + counters.get("tom_fallbacks", 0)
            )
    return totals


def failures_by_reason(records: Iterable[EpisodeRecord]) -> dict[str, int]:
    """Failed episodes counted by their error's first line (the seat, the exception and its
    message, as the runner writes it)."""
    reasons: dict[str, int] = defaultdict(int)
    for record in records:
        if record.status != "done":
            lines = (record.error or "").strip().splitlines()
            reasons[lines[0][:300] if lines else "unknown error"] += 1
    return dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0])))


COST_COLUMNS = (
    "cell",
    "episodes",
    "calls",
    "fresh_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "unpriced",
    "wall_s",
)


def cost_totals(records: Iterable[EpisodeRecord], label) -> list[dict[str, Any]]:
    """Per cell (``label(record.cell)``) and for the whole run: episodes, LLM calls (fresh ones
    apart: cached replies cost nothing), the fresh replies' tokens and priced cost (US$;
    ``unpriced`` counts fresh replies without a price) and the episodes' summed wall time (s;
    the sum over episodes, which ran concurrently when workers > 1). Failed episodes count."""
    rows: dict[str, dict[str, Any]] = {}
    total = dict.fromkeys(COST_COLUMNS, 0)
    total["cell"] = "(run total)"
    total["cost"] = 0.0
    total["wall_s"] = 0.0
    for record in records:
        cell = label(record.cell)
        row = rows.setdefault(cell, {**dict.fromkeys(COST_COLUMNS, 0), "cell": cell})
        row["cost"] = float(row["cost"])
        calls = [e for events in record.events.values() for e in _calls(events)]
        answered = [e for e in calls if e.get("error") is None and e.get("reply") is not None]
        fresh = [e for e in answered if not e.get("cached")]
        add = {
            "episodes": 1,
            "calls": len(answered),
            "fresh_calls": len(fresh),
            "prompt_tokens": sum(int(e.get("prompt_tokens") or 0) for e in fresh),
            "completion_tokens": sum(int(e.get("completion_tokens") or 0) for e in fresh),
            "cost": sum(float(e["cost"]) for e in fresh if e.get("cost") is not None),
            "unpriced": sum(e.get("cost") is None for e in fresh),
            "wall_s": float(record.timing.get("wall_s") or 0.0),
        }
        for key, value in add.items():
            row[key] += value
            total[key] += value
    return [*rows.values(), total]
