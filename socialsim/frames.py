"""Tidy pandas frames of episode records (:func:`socialsim.load` gives them for a results
directory): every frame carries ``cell.*``, ``episode`` and ``seed`` columns to join on."""

from __future__ import annotations

from collections.abc import Iterable

from socialsim.records import EpisodeRecord


def episode_rows_frame(records: Iterable[EpisodeRecord]):
    """One row per episode: cell values, seed, status, error, and the env's summary
    (``summary.KEY`` columns for its plain values)."""
    import pandas as pd

    rows = []
    for record in records:
        row = {f"cell.{k}": v for k, v in record.cell.items()}
        row.update(
            episode=record.episode,
            seed=record.seed,
            env_id=record.env_id,
            status=record.status,
            error=record.error,
            wall_s=record.timing.get("wall_s"),
        )
        row.update(
            {
                f"summary.{k}": v
                for k, v in record.summary.items()
                if isinstance(v, (str, int, float, bool)) or v is None
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def llm_calls_frame(records: Iterable[EpisodeRecord]):
    """One row per logged LLM call (an ``llm_call`` event): episode, seat and the call's fields
    (model, tokens, cost, latency, cached, error...)."""
    import pandas as pd

    rows = []
    for record in records:
        for seat, events in record.events.items():
            for index, event in enumerate(events):
                if event.get("type") != "llm_call":
                    continue
                row = {f"cell.{k}": v for k, v in record.cell.items()}
                row.update(episode=record.episode, seed=record.seed, seat=seat, event=index)
                row.update({k: v for k, v in event.items() if k != "type"})
                rows.append(row)
    return pd.DataFrame(rows)


def episodes_frame(records: Iterable[EpisodeRecord]):
    """One row per (episode, seat): cell values, seed, seat, agent kind, return, counters."""
    import pandas as pd

    rows = []
    for record in records:
        for seat, spec in record.seats.items():
            row = {f"cell.{k}": v for k, v in record.cell.items()}
            row.update(
                episode=record.episode,
                seed=record.seed,
                env_id=record.env_id,
                status=record.status,
                seat=seat,
                kind=spec.get("kind"),
                ret=record.returns.get(seat, 0.0),
            )
            row.update({f"counter.{k}": v for k, v in record.counters.get(seat, {}).items()})
            rows.append(row)
    return pd.DataFrame(rows)


def messages_frame(records: Iterable[EpisodeRecord]):
    """One row per bus message: episode, seed, cell values and the message fields."""
    import pandas as pd

    rows = []
    for record in records:
        for message in record.messages:
            row = {f"cell.{k}": v for k, v in record.cell.items()}
            row.update(
                episode=record.episode,
                seed=record.seed,
                **{k: message[k] for k in ("id", "turn", "sender", "to", "channel", "kind")},
            )
            row["payload"] = message["payload"]
            rows.append(row)
    return pd.DataFrame(rows)


def steps_frame(records: Iterable[EpisodeRecord]):
    """One row per (step, acting agent): its action, reward and whether it was invalid."""
    import pandas as pd

    rows = []
    for record in records:
        for index, step in enumerate(record.steps):
            for agent, action in step["actions"].items():
                row = {f"cell.{k}": v for k, v in record.cell.items()}
                row.update(
                    episode=record.episode,
                    seed=record.seed,
                    step=index,
                    turn=step["turn"],
                    agent=agent,
                    action=action,
                    reward=step["rewards"].get(agent, 0.0),
                    invalid=agent in step.get("invalid", {}),
                )
                rows.append(row)
    return pd.DataFrame(rows)
