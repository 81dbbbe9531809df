"""``socialsim report DIR``: the text report of an experiment's log, its CSV, JSON and PNG files,
and ``report.html``.

The report is a list of :class:`Section` (a title, a table or text, and a note with the units),
printed as text and rendered by :mod:`~socialsim.analysis.page` as one self-contained HTML file:
the episode counts, failures by reason, invalid actions, invalid answers and fallbacks, LLM
health per seat (:mod:`~socialsim.analysis.health`), the mean return per cell and seat, then
the tables of each game family in the log: cooperation for the gossip games (residents, towards
the entrant and by the entrant apart; :mod:`~socialsim.analysis.entrant`), outcomes, grids and
theory-of-mind scores for Decrypto; and per cell metric its mean, SEM and 95% bootstrap
confidence interval. Undefined values follow :mod:`~socialsim.analysis.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from socialsim import records
from socialsim.analysis import decrypto_figures, figures, health, stats, tables, tom
from socialsim.analysis.generations import generations_report
from socialsim.envs.gossip.protocol import GAMES

DECRYPTO = "decrypto_v0"


@dataclass
class Section:
    """One block of the report: a table (or text) with a note saying what its numbers are."""

    title: str
    table: pd.DataFrame | None = None
    text: str = ""
    note: str = ""
    printed: bool = True  # False: in report.html and the CSV files only (a long table)


@dataclass
class Report:
    manifest: dict
    sections: list[Section] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)

    def text(self) -> str:
        lines: list[str] = []
        for section in self.sections:
            if not section.printed:
                continue
            if section.title:
                lines += ["", f"{section.title}:"] if lines else [f"{section.title}:"]
            if section.note:
                lines.append(f"  ({section.note})")
            if section.table is not None:
                lines.append(fmt(section.table))
            if section.text:
                lines.append(section.text)
        if self.figures:
            lines += ["", "figures: " + ", ".join(p.name for p in self.figures)]
        return "\n".join(lines)


def fmt(frame: pd.DataFrame) -> str:
    """A table as text, with :func:`~socialsim.analysis.stats.number` for every value."""
    if frame.empty:
        return "  (none)"
    formatters = {}
    for column in frame.columns:
        if frame[column].map(type).eq(str).all():
            width = int(frame[column].str.len().max())
            formatters[column] = lambda v, w=width: str(v).ljust(w)  # text reads left to right
        else:
            formatters[column] = stats.number
    return frame.to_string(index=False, na_rep=stats.UNDEFINED, formatters=formatters)


def build(directory: str | Path, write_files: bool = True) -> Report:
    """Every section of the report; with ``write_files``, the CSV, JSON and PNG files too."""
    directory = Path(directory)
    recs = records.read_records(directory, include_failed=True)
    manifest = records.read_manifest(directory) or {}
    return build_from(recs, manifest, directory, directory if write_files else None)


def build_from(
    recs: list[records.EpisodeRecord], manifest: dict, directory: Path, out: Path | None
) -> Report:
    """The report of ``recs`` (read from ``directory``); files go to ``out`` unless ``None``."""
    done = [r for r in recs if r.status == "done"]
    failed = [r for r in recs if r.status != "done"]
    totals = health.invalid_totals(recs)
    head = [
        f"experiment: {manifest.get('config', {}).get('name', '?')}",
        f"episodes: {len(done)} done, {len(failed)} failed (of {manifest.get('episodes_total', '?')})",
        "invalid actions: {invalid_actions}, invalid answers: {invalid_answers}, "
        "fallbacks: {fallbacks}".format(**totals),
    ]
    if not recs:
        head.append(
            f"no episode is logged yet in {directory / records.EPISODES}: run the experiment first"
        )
    result = Report(manifest, [Section("", text="\n".join(head))])
    reasons = health.failures_by_reason(recs)
    if reasons:
        frame = pd.DataFrame([{"episodes": n, "reason": r} for r, n in reasons.items()])
        result.sections.append(Section("failed episodes by reason", frame))
    llm = health.llm_health(recs)
    if llm:
        frame = pd.DataFrame(llm, columns=list(health.COLUMNS))
        result.sections.append(
            Section(
                "LLM health per seat",
                frame,
                note="tokens and cost (US$) of fresh replies; latency in seconds; "
                "cache_hit_rate a share of calls",
            )
        )
        if out is not None:
            frame.to_csv(out / "llm_health.csv", index=False)
    if done:
        returns = tables.returns_table(done)
        shown = returns.drop(columns=[c for c in returns.columns if c.startswith("cell.")])
        if shown["cell"].eq("(all)").all():
            shown = shown.drop(columns="cell")
        result.sections.append(
            Section("mean return per seat", shown, note="mean and sem over episodes, ddof=0")
        )
        if out is not None:
            returns.to_csv(out / "returns.csv", index=False)
    gossip = [r for r in done if r.summary.get("game") in GAMES]
    if gossip:
        gossip_sections(result, gossip, out)
    for title, table, note, plots in generations_report(done, out):  # [evolution] runs
        result.sections.append(Section(title, table, note=note))
        result.figures += plots
    decrypto = [r for r in done if r.env_id == DECRYPTO]
    if decrypto:
        decrypto_sections(result, decrypto, out)
    if out is not None and recs:
        from socialsim.analysis import transcript

        name = str(manifest.get("config", {}).get("name", directory.name))
        (out / "transcripts.html").write_text(transcript.render(recs, name), encoding="utf-8")
        result.sections.append(
            Section(
                "transcripts",
                text=f"transcripts.html: the bus log of up to {transcript.EPISODES_PER_CELL} "
                "episodes per cell, turn by turn, in everyone's view or one seat's",
            )
        )
    if out is not None:
        from socialsim.analysis import page

        (out / "report.html").write_text(page.render(result), encoding="utf-8")
    return result


def report(directory: str | Path, write_files: bool = True) -> str:
    """What ``socialsim report DIR`` prints; with ``write_files``, every table as CSV, the
    figures as PNG and ``report.html`` in ``DIR``."""
    return build(directory, write_files).text()


HEADLINE = [
    "cell",
    "game",
    "n",
    "cooperation_residents",
    "cooperation_residents_se",
    "cooperation_to_entrant",
    "cooperation_by_entrant",
    "cooperation_to_entrant_before",
    "cooperation_to_entrant_after",
    "ostracism",
    "social_welfare",
    "social_welfare_se",
    "reputation_accuracy",
    "deal_rate",
    "welfare_per_round",
]
CELL_METRICS = [
    "cooperation_residents",
    "cooperation_to_entrant",
    "cooperation_by_entrant",
    "ostracism",
    "social_welfare",
    "mean_return",
    "reputation_accuracy",
    "deal_rate",
    "welfare_per_round",
]


def cell_statistics(episodes: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
    """Per (cell, metric): n (episodes where it is defined), mean, SEM (ddof=1) and the 95%
    bootstrap confidence interval of the mean (:func:`~socialsim.analysis.stats.summary`)."""
    rows = []
    for cell, block in episodes.groupby("cell", sort=True):
        for metric in metrics:
            if metric in block.columns:
                rows.append({"cell": cell, "metric": metric, **stats.summary(block[metric])})
    return pd.DataFrame(rows)


def gossip_sections(result: Report, recs: list[records.EpisodeRecord], out: Path | None) -> None:
    cooperation = tables.cooperation_report(recs)
    cells = cooperation["cells"]
    shown = cells[[c for c in HEADLINE if c in cells.columns]]
    shown = shown.dropna(axis="columns", how="all")
    result.sections.append(
        Section(
            "cooperation per cell",
            shown,
            note="shares of cooperate/defect choices (0-1): residents with residents, residents "
            "towards the entrant, the entrant's own; before/after its first gossiped defection; "
            "ostracism = share refused after it; mean and se (ddof=0) over episodes; "
            "social welfare in resource units",
        )
    )
    same = tables.identical_cells(cooperation["episodes"])
    if same:
        result.sections.append(
            Section(
                "identical cells",
                text="\n".join("  " + "\n    = ".join(group) for group in same),
                note="every episode of these cells has the same metrics to the last bit",
            )
        )
    kinds = cooperation["kinds"]
    kind_cols = [
        c
        for c in ("cell", "kind", "n", "return", "return_se", "image_score", "discounted_return")
        if c in kinds.columns
    ]
    result.sections.append(
        Section("per agent kind", kinds[kind_cols], note="resource units; mean and se over agents")
    )
    statistics = cell_statistics(cooperation["episodes"], CELL_METRICS)
    result.sections.append(
        Section(
            "cell metrics: mean, SEM and 95% bootstrap CI",
            statistics,
            note="over episodes where defined; sem ddof=1; percentile bootstrap, 2000 resamples, "
            "seed 0; also in cooperation_statistics.csv",
            printed=False,
        )
    )
    if out is not None:
        for name, table in cooperation.items():
            table.to_csv(out / f"cooperation_{name}.csv", index=False)
        statistics.to_csv(out / "cooperation_statistics.csv", index=False)
        result.figures += figures.plot_cooperation(cooperation, out, same)
        dynamics = tables.dynamics_report(recs)
        for name, table in dynamics.items():
            table.to_csv(out / f"cooperation_{name}_by_round.csv", index=False)
        result.figures += figures.plot_dynamics(dynamics, cells, out)


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
                "cell": tables.cell_label(record.cell),
                "episode": record.episode,
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


def tom_scores(recs: list[records.EpisodeRecord]) -> dict:
    """The scores of the probes that ran (a probe with no scored episode is left out)."""
    return {
        name: table
        for name, table in (
            ("perspective_taking", tom.perspective_taking(recs)),
            ("representational_change", tom.representational_change(recs)),
        )
        if table["episodes"]
    }


def decrypto_sections(result: Report, recs: list[records.EpisodeRecord], out: Path | None) -> None:
    outcomes = decrypto_outcomes(recs).rename(columns=OUTCOME_UNITS)
    result.sections.append(
        Section(
            "Decrypto outcomes per cell",
            outcomes,
            note="IR% / MR%: interceptions / miscommunications per two tokens a game, in percent; "
            "endings are game counts",
        )
    )
    competitive = grid_frame(tom.competitive_grid(recs), "team", "interceptor")
    if not competitive.empty:
        result.sections.append(
            Section(
                "competitive grid: interception-loss rate",
                competitive,
                note="team = encoder = decoder; loss rate a share of games, mean and sem over "
                f"seed blocks of {tom.EPISODES_PER_BLOCK}; turns mean and sem over games",
            )
        )
    grids = cooperative_grids(recs)
    cooperative = pd.concat(
        [grid_frame(g, "encoder", "decoder").assign(interceptor=eve) for eve, g in grids.items()],
        ignore_index=True,
    )
    result.sections.append(
        Section(
            "cooperative grid: miscommunication-loss rate",
            cooperative,
            note="per interceptor, every encoder x decoder; loss rate a share of games, mean "
            f"and sem over seed blocks of {tom.EPISODES_PER_BLOCK}",
        )
    )
    statistics = cell_statistics(
        decrypto_episodes(recs),
        ["survived", "interception_loss", "miscommunication_loss", "turns"],
    )
    result.sections.append(
        Section(
            "cell metrics: mean, SEM and 95% bootstrap CI",
            statistics,
            note="per game; shares of games, turns in turns; sem ddof=1; percentile bootstrap, "
            "2000 resamples, seed 0; also in decrypto_statistics.csv",
            printed=False,
        )
    )
    scores: dict = {}
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
                note="shares; all cells pooled, then by_cell; null = undefined",
            )
        )
    if out is not None:
        outcomes.to_csv(out / "decrypto_outcomes.csv", index=False)
        competitive.to_csv(out / "decrypto_competitive_grid.csv", index=False)
        cooperative.to_csv(out / "decrypto_cooperative_grid.csv", index=False)
        statistics.to_csv(out / "decrypto_statistics.csv", index=False)
        if scores:
            (out / "decrypto_tom.json").write_text(stats.strict_json(scores) + "\n")
        result.figures += decrypto_figures.plot_decrypto(
            decrypto_outcomes(recs), competitive, cooperative, scores, out
        )
