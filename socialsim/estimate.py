"""What an experiment's LLM seats will spend, printed by ``socialsim run FILE --check`` before a
grid runs: calls, tokens and cost per cell and in total.

Calls are counted, not guessed: one episode of each cell with LLM seats is played with every
LLM seat taken by a scripted stand-in of its family (:data:`STAND_INS`), and each decision and
theory-of-mind question of those seats is one call (an invalid answer adds a re-prompt: the
figure is a floor). Tokens and cost per call come from the calls this results directory (or its
shared reply cache's run) already logged, where there are any; otherwise the completion tokens
are bounded by the seat's ``max_tokens`` and the cost by litellm's price for the model (prompt
tokens are not known before a prompt is sent, and are said to be unknown).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

from socialsim import records, runner
from socialsim.config import Experiment
from socialsim.envs.decrypto.protocol import GOPNIK, PIAGET, SIDE_QUESTIONS
from socialsim.episode import EpisodeSpec
from socialsim.registry import env_family

STAND_INS: dict[str, dict[str, str]] = {
    "decrypto": {"encoder": "decrypto_random_encoder", "*": "decrypto_random_guesser"},
    "gossip": {"*": "random_donor"},
}
# probe -> the seat it asks by default, and the questions one entry of its log answers
PROBED = {PIAGET: ("encoder", 1), GOPNIK: ("interceptor", len(SIDE_QUESTIONS["interceptor"]))}
DEFAULT_MAX_TOKENS = 1024  # the larger of the LLM kinds' defaults (Decrypto 750, gossip 1024)


def _model(spec: Mapping[str, Any]) -> dict[str, Any] | None:
    model = spec.get("model")
    if isinstance(model, str):
        return {"model": model}
    return dict(model) if isinstance(model, Mapping) else None


def _stand_in(family: str, seat: str) -> dict[str, Any] | None:
    table = STAND_INS.get(family)
    if table is None:
        return None
    return {"kind": table.get(seat, table["*"])}


def calls_per_episode(spec: EpisodeSpec) -> dict[str, int] | None:
    """LLM seat -> its decisions and questions in one episode of ``spec`` played with stand-ins
    (``None`` when its family has no stand-in or the stand-ins cannot play it)."""
    family = env_family(spec.env_id) or ""
    llm = [seat for seat, agent in spec.seats.items() if _model(agent) is not None]
    seats = dict(spec.seats)
    for seat in llm:
        stand_in = _stand_in(family, seat)
        if stand_in is None:
            return None
        seats[seat] = stand_in
    try:
        record = runner.play_episode(dataclasses.replace(spec, seats=seats))
    except Exception:  # a stand-in that cannot play this variant: no estimate, never an error
        return None
    if record.status != "done":
        return None
    counts = dict.fromkeys(llm, 0)
    for step in record.steps:
        for seat in step.get("actions", {}):
            if seat in counts:
                counts[seat] += 1
    seat_of = {
        p["name"]: p.get("seat", PROBED[p["name"]][0]) for p in spec.probes if p["name"] in PROBED
    }
    for entry in record.probes:
        name = entry.get("probe")
        if name in seat_of and seat_of[name] in counts:
            # a gopnik entry holds an answer per question asked (the told one can be off)
            asked = sum(q in entry for q in SIDE_QUESTIONS["interceptor"])
            counts[seat_of[name]] += asked if name == GOPNIK else PROBED[name][1]
    return counts


def _logged_per_call(directory) -> dict[str, float] | None:
    calls = [
        event
        for record in records.read_records(directory, include_failed=True)
        for events in record.events.values()
        for event in events
        if event.get("type") == "llm_call" and not event.get("cached")
    ]
    if not calls:
        return None
    priced = [float(e["cost"]) for e in calls if e.get("cost") is not None]
    return {
        "calls": len(calls),
        "prompt_tokens": sum(int(e.get("prompt_tokens") or 0) for e in calls) / len(calls),
        "completion_tokens": sum(int(e.get("completion_tokens") or 0) for e in calls) / len(calls),
        "cost": sum(priced) / len(priced) if priced else math.nan,
    }


def _completion_price(model: Mapping[str, Any]) -> float | None:
    """litellm's price per completion token for a model reached by name (None when unpriced or
    served from an ``api_base``)."""
    if model.get("api_base"):
        return None
    from socialsim.llm.litellm_model import load_litellm

    info = load_litellm().model_cost.get(str(model.get("model", "")).split("/", 1)[-1]) or {}
    price = info.get("output_cost_per_token")
    return float(price) if price is not None else None


def estimate(
    experiment: Experiment, todo: Iterable[EpisodeSpec], directory
) -> list[dict[str, Any]]:
    """One row per cell with LLM seats (and a total): episodes to run, calls, tokens, cost."""
    todo = list(todo)
    logged = _logged_per_call(directory)
    rows = []
    for cell, _ in experiment.cells:
        specs = [s for s in todo if s.cell == cell]
        first = next((s for s in experiment.specs() if s.cell == cell), None)
        if first is None or not any(_model(a) for a in first.seats.values()):
            continue
        counts = calls_per_episode(first)
        models = [m for m in (_model(a) for a in first.seats.values()) if m]
        calls = None if counts is None else sum(counts.values()) * len(specs)
        row = {
            "cell": cell,
            "episodes": len(specs),
            "calls": calls,
            "prompt_tokens": None,
            "completion_tokens": None,
            "cost": None,
            "basis": "",
        }
        if calls is not None and logged is not None:
            row.update(
                prompt_tokens=round(calls * logged["prompt_tokens"]),
                completion_tokens=round(calls * logged["completion_tokens"]),
                cost=calls * logged["cost"] if logged["cost"] == logged["cost"] else None,
                basis=f"per call as the {logged['calls']} fresh calls logged here",
            )
        elif calls is not None:
            bound = max(int(m.get("max_tokens") or DEFAULT_MAX_TOKENS) for m in models)
            prices = [_completion_price(m) for m in models]
            row.update(
                completion_tokens=calls * bound,
                cost=calls * bound * max(prices) if all(p is not None for p in prices) else None,
                basis=f"completion at most max_tokens ({bound}) per call; prompt tokens unknown",
            )
        rows.append(row)
    return rows


def lines(rows: list[dict[str, Any]]) -> list[str]:
    """The estimate as ``--check`` prints it."""
    if not rows:
        return []
    out = [
        "  LLM estimate (calls: one per decision and question of the LLM seats, counted on one",
        "  episode per cell with scripted stand-ins: a floor, as re-prompts and games longer",
        "  than the stand-ins' add calls):",
    ]
    total_calls = 0
    for row in rows:
        calls = "unknown" if row["calls"] is None else f"{row['calls']:,}"
        total_calls += row["calls"] or 0
        tokens = (
            f"{row['completion_tokens']:,} completion tokens"
            if row["completion_tokens"] is not None
            else "tokens unknown"
        )
        if row["prompt_tokens"] is not None:
            tokens = f"{row['prompt_tokens']:,} prompt + {tokens}"
        logged = row["prompt_tokens"] is not None
        if row["cost"] is None:
            cost = "cost unpriced"
        else:
            cost = f"about ${row['cost']:.2f}" if logged else f"at most ${row['cost']:.2f}"
        label = row["cell"] or "(no grid)"
        out.append(
            f"    cell {label}: {row['episodes']} episodes, {calls} calls, {tokens}, {cost}"
            + (f" ({row['basis']})" if row["basis"] else "")
        )
    out.append(f"    total: {total_calls:,} calls")
    return out
