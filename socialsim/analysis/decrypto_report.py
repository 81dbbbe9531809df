"""The Decrypto part of ``socialsim report``: outcomes per cell, the competitive and cooperative
grids (per run, when runs are compared: never pooled across runs), per-game statistics and the
theory-of-mind scores, each beside its tricks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from socialsim import records, registry
from socialsim.analysis import decrypto_figures, decrypto_tricks, stats, tables, tom
from socialsim.analysis.sections import Report, Section
from socialsim.envs.decrypto.protocol import GAME as DECRYPTO_GAME

RUN = "run"


def is_decrypto(env_id: str) -> bool:
    """Whether ``env_id`` is a Decrypto env, of any version (not the literal ``decrypto_v0``:
    a ``decrypto_v1`` is reported too); an env that is not installed is not."""
    try:
        return registry.env_family(env_id) == DECRYPTO_GAME
    except ValueError:
        return False


OUTCOME_UNITS = {
    "interception_rate": "IR (%)",
    "miscommunication_rate": "MR (%)",
    "win_rate": "win_rate (share)",
    "avg_turns": "avg_turns (turns)",
    "avg_interception_turn": "avg_interception_turn (turn)",
    "avg_miscommunication_turn": "avg_miscommunication_turn (turn)",
}


def grid_frame(grid: dict[tuple[str, str], tom.GridCell], row: str, column: str) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                row: a,
                column: b,
                "loss_rate": c.mean,
                "loss_rate_sem": c.sem,
                "blocks": c.blocks,
                "games": c.games,
                "avg_turns": c.avg_turns,
                "avg_turns_sem": c.turns_sem,
            }
            for (a, b), c in grid.items()
        ]
    )


def decrypto_outcomes(recs: list[records.EpisodeRecord]) -> pd.DataFrame:
    by_cell: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        by_cell.setdefault(tables.cell_label(record.cell), []).append(record)
    rows = []
    for cell, group in by_cell.items():
        out = tom.outcomes(group)
        encoder, decoder, eve = (tom.agent_label(group[0].seats[s]) for s in tom.SEATS)
        rows.append(
            {
                "cell": cell,
                "matchup": f"{encoder} + {decoder} vs {eve}",
                **{k: v for k, v in out.items() if not isinstance(v, dict)},
                **out.get("endings", {}),
            }
        )
    return pd.DataFrame(rows)


def decrypto_episodes(recs: list[records.EpisodeRecord]) -> pd.DataFrame:
    """One row per game: its cell, whether the team survived, lost to interceptions or to
    miscommunications (a game ending ``both`` counts for both), and its turns."""
    rows = []
    for record in recs:
        ending = record.summary["ending"]
        rows.append(
            {
                **{f"cell.{k}": v for k, v in record.cell.items()},
                "cell": tables.cell_label(record.cell),
                "episode": record.episode,
                "seed": record.seed,
                "fingerprint": tables.fingerprint(record),
                "survived": float(ending == "survived"),
                "interception_loss": float(ending in ("intercept", "both")),
                "miscommunication_loss": float(ending in ("miscomm", "both")),
                "turns": float(record.summary["turns"]),
            }
        )
    return pd.DataFrame(rows)


def cooperative_grids(recs: list[records.EpisodeRecord]) -> dict[str, dict]:
    """Interceptor label -> its encoder x decoder grid."""
    interceptors = sorted({tom.agent_label(r.seats["interceptor"]) for r in recs})
    return {eve: tom.cooperative_grid(recs, interceptor=eve) for eve in interceptors}


def _cooperative_frame(recs: list[records.EpisodeRecord]) -> pd.DataFrame:
    grids = cooperative_grids(recs)
    return pd.concat(
        [grid_frame(g, "encoder", "decoder").assign(interceptor=eve) for eve, g in grids.items()],
        ignore_index=True,
    )


def _by_run(recs: list[records.EpisodeRecord]) -> dict[str, list[records.EpisodeRecord]]:
    """The records of each compared run (one group, ``""``, for a single run): the grids are
    keyed by agent labels, so two runs' same-named cells must not pool into one."""
    runs: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        runs.setdefault(str(record.cell.get(RUN, "")), []).append(record)
    return runs


def _per_run(runs: dict[str, list[records.EpisodeRecord]], make) -> pd.DataFrame:
    frames = [make(group).assign(run=run) for run, group in runs.items()]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    frame = pd.concat(frames, ignore_index=True)
    if len(runs) == 1:
        return frame.drop(columns=RUN)
    return frame[[RUN, *[c for c in frame.columns if c != RUN]]]


PROBED_SEAT = {"perspective_taking": "encoder", "representational_change": "interceptor"}


def tom_scores(recs: list[records.EpisodeRecord]) -> dict:
    """The scores of the probes that ran (a probe with no scored episode is left out), each with
    the probed seat's agents and ``reference_scores_it``: false when a probed agent is a
    baseline (not a language model), whose scores the Decrypto reference skips."""
    scores = {}
    told = tom.told_false_belief(recs)
    told["told_episodes"] = told.pop("episodes")
    gopnik = tom.representational_change(recs)
    if told["told_episodes"]:
        gopnik.update(told)
    for name, table in (
        ("perspective_taking", tom.perspective_taking(recs)),
        ("representational_change", gopnik),
    ):
        if not table["episodes"]:
            continue
        seat = PROBED_SEAT[name]
        kinds = sorted({str(r.seats.get(seat, {}).get("kind", "?")) for r in recs})
        scores[name] = {
            **table,
            "probed": ", ".join(kinds),
            "reference_scores_it": all(k.startswith("llm") for k in kinds),
        }
    return scores


TRICKS_NOTE = (
    "per cell, each score of the tested agent beside the answerers that hold no beliefs, scored "
    "on the same asked turns (socialsim.analysis.decrypto_tricks), and the oracle; origin: "
    "paper = the reference's score, new = ours; normalised = (tested - best trick) / (oracle - "
    "best trick), null where the tricks reach the oracle (the score cannot tell a mind from a "
    "trick) or the score is descriptive; also in decrypto_tom_tricks.csv"
)


def tom_tricks(recs: list[records.EpisodeRecord]) -> pd.DataFrame:
    """One row per cell, probe and score: the tested agent, its tricks, the oracle, the best
    trick and the normalised score (:func:`~socialsim.analysis.decrypto_tricks.tricks_rows`)."""
    by_cell: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        by_cell.setdefault(tables.cell_label(record.cell), []).append(record)
    rows = [
        {"cell": cell, **row}
        for cell, group in by_cell.items()
        for row in decrypto_tricks.tricks_rows(group)
    ]
    return pd.DataFrame(rows)


def decrypto_sections(
    result: Report, recs: list[records.EpisodeRecord], out: Path | None
) -> pd.DataFrame:
    per_cell = decrypto_outcomes(recs)
    outcomes = per_cell.rename(columns=OUTCOME_UNITS)
    result.sections.append(
        Section(
            "Decrypto outcomes per cell",
            outcomes,
            note="IR% / MR%: interceptions / miscommunications per two tokens a game, in percent; "
            "endings are game counts",
        )
    )
    runs = _by_run(recs)
    competitive = _per_run(
        runs, lambda group: grid_frame(tom.competitive_grid(group), "team", "interceptor")
    )
    if not competitive.empty:
        result.sections.append(
            Section(
                "competitive grid: interception-loss rate",
                competitive,
                note="team = encoder = decoder; loss rate a share of games, mean and sem over "
                f"seed blocks of {tom.EPISODES_PER_BLOCK}; turns mean and sem over games",
            )
        )
    cooperative = _per_run(runs, _cooperative_frame)
    result.sections.append(
        Section(
            "cooperative grid: miscommunication-loss rate",
            cooperative,
            note="per interceptor, every encoder x decoder; loss rate a share of games, mean "
            f"and sem over seed blocks of {tom.EPISODES_PER_BLOCK}",
        )
    )
    statistics = tables.cell_statistics(
        decrypto_episodes(recs),
        ["survived", "interception_loss", "miscommunication_loss", "turns"],
    )
    result.sections.append(
        Section(
            "cell metrics: mean, SEM and 95% bootstrap CI",
            statistics,
            note=f"per game; shares of games, turns in turns; {stats.CONVENTION}; percentile "
            "bootstrap, 2000 resamples, seed 0; also in decrypto_statistics.csv",
            printed=False,
        )
    )
    scores: dict = {}
    tricks = pd.DataFrame()
    if any(r.probes for r in recs):
        scores = tom_scores(recs)
        by_cell: dict[str, list[records.EpisodeRecord]] = {}
        for record in recs:
            by_cell.setdefault(tables.cell_label(record.cell), []).append(record)
        if len(by_cell) > 1:
            scores["by_cell"] = {cell: tom_scores(group) for cell, group in by_cell.items()}
        result.sections.append(
            Section(
                "theory of mind",
                text=stats.strict_json(scores),
                note="shares; all cells pooled, then by_cell; null = undefined; answered = share "
                "of asked turns answered with words (abstentions: 'unknown', empty, a refusal, "
                "are not answers and pass no score); reference_scores_it false: a baseline, "
                "which the reference leaves out",
            )
        )
        tricks = tom_tricks(recs)
        if not tricks.empty:
            result.sections.append(
                Section(
                    "theory of mind beside its tricks",
                    tricks,
                    note=TRICKS_NOTE,
                )
            )
    if out is not None:
        outcomes.to_csv(out / "decrypto_outcomes.csv", index=False)
        competitive.to_csv(out / "decrypto_competitive_grid.csv", index=False)
        cooperative.to_csv(out / "decrypto_cooperative_grid.csv", index=False)
        statistics.to_csv(out / "decrypto_statistics.csv", index=False)
        if scores:
            (out / "decrypto_tom.json").write_text(stats.strict_json(scores) + "\n")
        if not tricks.empty:
            tricks.to_csv(out / "decrypto_tom_tricks.csv", index=False)
        result.figures += decrypto_figures.plot_decrypto(
            per_cell, competitive, cooperative, scores, out, statistics, tricks
        )
    return decrypto_episodes(recs)
