"""``socialsim report DIR``: the text report of an experiment's log, its CSV and JSON files, its
figures (PNG, PDF and SVG: :mod:`~socialsim.analysis.figure_style`) and ``report.html``.

The report is a list of :class:`Section` (a title, a table or text, and a note with the units),
printed as text and rendered by :mod:`~socialsim.analysis.page` as one self-contained HTML file:
the episode counts, failures by reason, invalid actions, invalid answers and fallbacks, LLM
health per seat (:mod:`~socialsim.analysis.health`), the mean return per cell and seat, then
the tables of each game family in the log: cooperation for the gossip games (residents, towards
the entrant and by the entrant apart; :mod:`~socialsim.analysis.entrant`), outcomes, grids and
theory-of-mind scores for Decrypto (:mod:`~socialsim.analysis.decrypto_report`); per cell
metric its mean, SEM and 95% bootstrap confidence interval; the contrasts between the cells of
every grid factor (:mod:`~socialsim.analysis.contrasts`, ``contrasts.csv``); and the calls,
tokens, cost and wall time per cell and run (``cost.csv``). Cells are labelled by the grid keys
that vary (:func:`~socialsim.analysis.tables.shorten_cells`). Every table's note states the one
convention (:data:`~socialsim.analysis.stats.CONVENTION`); undefined values follow
:mod:`~socialsim.analysis.stats`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from socialsim import directory_lock, records
from socialsim.analysis import (
    align_figures,
    contrasts,
    figure_style,
    figures,
    health,
    stats,
    tables,
)
from socialsim.analysis.decrypto_report import decrypto_sections, is_decrypto
from socialsim.analysis.generations import chosen_generations, generations_report
from socialsim.analysis.gossip_tom import gossip_tom_sections
from socialsim.analysis.interventions import interventions_table
from socialsim.analysis.order import in_order
from socialsim.analysis.sections import Report, Section
from socialsim.envs.gossip.protocol import GAMES


def build(directory: str | Path, write_files: bool = True) -> Report:
    """Every section of the report; with ``write_files``, the CSV, JSON and PNG files too."""
    directory = Path(directory)
    recs = records.read_records(directory, include_failed=True)
    manifest = records.read_manifest(directory) or {}
    return build_from(recs, manifest, directory, directory if write_files else None)


def run_state(manifest: dict, done: int, directory: Path) -> str:
    """What a reader must know before any number: what a fork's directory was forked from and
    how it changed, ``running (pid N): D of M episodes so far`` while a run holds the
    directory, ``partial: D of M episodes`` when fewer than the manifest's are done; ``""``
    for a finished run."""
    total = manifest.get("episodes_total")
    fork = manifest.get("fork")
    if isinstance(fork, dict):  # socialsim fork's directory: where it came from, what changed
        changes = "; ".join(map(str, fork.get("set") or [])) or "no change"
        return (
            f"fork of {fork.get('run')} episode {fork.get('episode')} (cell "
            f"{fork.get('cell')}) replayed to turn {fork.get('at')}, then: {changes}"
        )
    holder = directory_lock.holder(directory)
    if holder is not None:
        return f"running (pid {holder or '?'}): {done} of {total or '?'} episodes so far"
    if isinstance(total, int) and done < total:
        return f"partial: {done} of {total} episodes"
    return ""


def build_from(
    recs: list[records.EpisodeRecord], manifest: dict, directory: Path, out: Path | None
) -> Report:
    """The report of ``recs`` (read from ``directory``); files go to ``out`` unless ``None``.
    A partial or running run says so in its first line, under every figure's title and in a
    first ``state`` column of every CSV file (:func:`run_state`)."""
    state = run_state(manifest, sum(r.status == "done" for r in recs), directory)
    started = time.time_ns()
    short = state if len(state) <= 70 else state[:67] + "..."  # a line under a title; the
    with figure_style.stamped(short):  # page and the CSV files hold it whole
        result = _build(recs, manifest, directory, out, state)
    if state and out is not None:
        for path in out.glob("*.csv"):
            if path.stat().st_mtime_ns >= started:
                stamp_csv(path, state)
    return result


def stamp_csv(path: Path, state: str) -> None:
    """A first column ``state`` in the CSV file at ``path``."""
    try:
        frame = pd.read_csv(path, keep_default_na=False, dtype=str)
    except pd.errors.EmptyDataError:
        return
    frame.insert(0, "state", state)
    frame.to_csv(path, index=False)


def _build(
    recs: list[records.EpisodeRecord],
    manifest: dict,
    directory: Path,
    out: Path | None,
    state: str,
) -> Report:
    recs = tables.shorten_cells(recs)
    done = [r for r in recs if r.status == "done"]
    failed = [r for r in recs if r.status != "done"]
    totals = health.invalid_totals(recs)
    head = [
        *(
            [f"state: {state}; every table and figure holds the episodes done so far"]
            if state
            else []
        ),
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
        returns = in_order(tables.returns_table(done))
        shown = returns.drop(columns=[c for c in returns.columns if c.startswith("cell.")])
        if shown["cell"].eq("(all)").all():
            shown = shown.drop(columns="cell")
        per = "seat" if "seat" in shown.columns else "agent kind"
        result.sections.append(
            Section(
                f"mean return per {per}", shown, note=f"{return_units(done)}; {stats.CONVENTION}"
            )
        )
        if out is not None:
            returns.to_csv(out / "returns.csv", index=False)
    per_episode = []
    gossip = [r for r in done if r.summary.get("game") in GAMES]
    if gossip:
        per_episode.append((gossip_sections(result, gossip, out), GOSSIP_CONTRASTS))
        gossip_tom_sections(result, gossip, out)
    for title, table, note, plots in generations_report(done, out):  # [evolution] runs
        result.sections.append(Section(title, table, note=note))
        result.figures += plots
    decrypto = [r for r in done if is_decrypto(r.env_id)]
    if decrypto:
        per_episode.append((decrypto_sections(result, decrypto, out), DECRYPTO_CONTRASTS))
    intervened = interventions_table(done)
    if intervened:
        result.sections.append(
            Section(
                "interventions",
                pd.DataFrame(intervened),
                note="messages hidden, injected or changed on the bus, summed over each cell's "
                "episodes (the record lists each); their effect is in the contrasts, paired by seed",
            )
        )
    contrast_section(result, per_episode, out)
    cost_section(result, recs, out)
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
    figures as PNG, PDF and SVG and ``report.html`` in ``DIR``."""
    return build(directory, write_files).text()


def return_units(recs: list[records.EpisodeRecord]) -> str:
    """What a return counts in the games of ``recs``: resources in the gossip games (and the
    culture donor game), a game's win or loss in Decrypto; the env's rewards otherwise."""
    decrypto = {is_decrypto(r.env_id) for r in recs}
    if decrypto == {True}:
        return "a Decrypto game's return: +1 won, -1 lost (0: not over)"
    if decrypto == {False} and all(
        r.summary.get("game") in GAMES or "resources" in r.summary for r in recs
    ):
        return "resource units"
    if decrypto == {False}:
        return "the env's reward units"
    return "resource units in the gossip games, +1 won / -1 lost in Decrypto"


HEADLINE = [
    "cell",
    "game",
    "n",
    "replicates",
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
GOSSIP_CONTRASTS = [
    "cooperation_residents",
    "cooperation_to_entrant",
    "cooperation_by_entrant",
    "entrant_return",
    "residents_return",
    "mean_return",
    "social_welfare",
    "reputation_accuracy",
    "deal_rate",
    "welfare_per_round",
]
DECRYPTO_CONTRASTS = ["survived", "interception_loss", "miscommunication_loss", "turns"]


def contrast_section(
    result: Report, per_episode: list[tuple[pd.DataFrame, list[str]]], out: Path | None
) -> None:
    """Differences between the cells of every grid factor (and between runs), with their
    intervals and tests (:mod:`~socialsim.analysis.contrasts`), as ``contrasts.csv``."""
    grid = result.manifest.get("config", {}).get("grid") or {}  # the file's order of values
    tables_ = [contrasts.contrasts(frame, metrics, grid) for frame, metrics in per_episode]
    table = (
        pd.concat([t for t in tables_ if not t.empty], ignore_index=True)
        if any(not t.empty for t in tables_)
        else pd.DataFrame()
    )
    if table.empty:
        return
    table = contrasts.family(table)  # one family: every contrast of the run
    shown = table[
        [
            "factor",
            "context",
            "baseline",
            "treatment",
            "metric",
            "n_baseline",
            "n_treatment",
            "paired",
            "difference",
            "ci_low",
            "ci_high",
            "p_value",
            "p_holm",
            "one_replicate",
        ]
    ]
    differ = shown[shown["difference"].ne(0.0)]
    result.sections.append(
        Section(
            f"contrasts between cells ({len(table)} comparisons)",
            shown,
            note=f"{contrasts.NOTE}; {stats.CONVENTION}; also in contrasts.csv",
            printed=False,
        )
    )
    result.sections.append(  # the text report: the contrasts that differ at all
        Section(
            f"contrasts between cells ({len(table)} comparisons; the {len(differ)} that differ)",
            differ,
            note=f"{len(table) - len(differ)} contrasts with a difference of exactly 0 are in "
            "contrasts.csv and report.html only; " + contrasts.NOTE,
            in_page=False,
        )
    )
    if out is not None:
        table.to_csv(out / "contrasts.csv", index=False)


def cost_section(result: Report, recs: list[records.EpisodeRecord], out: Path | None) -> None:
    """Calls, tokens, cost and wall time per cell and for the run (:func:`health.cost_totals`)."""
    frame = pd.DataFrame(health.cost_totals(recs, tables.cell_label), columns=health.COST_COLUMNS)
    if frame.empty:
        return
    if frame["calls"].sum() == 0:
        frame = frame.drop(
            columns=[
                "calls",
                "fresh_calls",
                "prompt_tokens",
                "completion_tokens",
                "cost",
                "unpriced",
            ]
        )
    result.sections.append(
        Section(
            "cost and time",
            frame,
            note="LLM calls (fresh = not from the reply cache), tokens and cost (US$) of the fresh "
            "replies, unpriced = fresh replies without a price; wall_s = the episodes' wall "
            "times summed (seconds; episodes overlap when several run at once); failed "
            "episodes count",
        )
    )
    if out is not None:
        frame.to_csv(out / "cost.csv", index=False)


def gossip_sections(
    result: Report, recs: list[records.EpisodeRecord], out: Path | None
) -> pd.DataFrame:
    cooperation = {name: in_order(t) for name, t in tables.cooperation_report(recs).items()}
    cells = cooperation["cells"]
    shown = cells[[c for c in HEADLINE if c in cells.columns]]
    shown = shown.dropna(axis="columns", how="all")
    result.sections.append(
        Section(
            "cooperation per cell",
            shown,
            note="shares of cooperate/defect choices (0-1): residents with residents, residents "
            "towards the entrant, the entrant's own; before/after its first gossiped defection; "
            "ostracism = share refused after it; social welfare in resource units; "
            f"replicates = distinct episodes; {stats.CONVENTION}",
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
        for c in (
            "cell",
            "kind",
            "n",
            "replicates",
            "return",
            "return_se",
            "image_score",
            "discounted_return",
        )
        if c in kinds.columns
    ]
    result.sections.append(
        Section("per agent kind", kinds[kind_cols], note=f"resource units; {stats.CONVENTION}")
    )
    statistics = tables.cell_statistics(cooperation["episodes"], CELL_METRICS)
    result.sections.append(
        Section(
            "cell metrics: mean, SEM and 95% bootstrap CI",
            statistics,
            note=f"over episodes where defined; {stats.CONVENTION}; percentile bootstrap, "
            "2000 resamples, seed 0; also in cooperation_statistics.csv",
            printed=False,
        )
    )
    if out is not None:
        for name, table in cooperation.items():
            table.to_csv(out / f"cooperation_{name}.csv", index=False)
        statistics.to_csv(out / "cooperation_statistics.csv", index=False)
        dynamics = {name: in_order(t) for name, t in tables.dynamics_report(recs).items()}
        for name, table in dynamics.items():
            table.to_csv(out / f"cooperation_{name}_by_round.csv", index=False)
        drawn, note = chosen_generations(recs)  # an evolution run's: its first, middle and last
        if note:
            result.sections.append(Section("figures of an evolution run", text=note))
            cooperation = {k: in_order(t) for k, t in tables.cooperation_report(drawn).items()}
            dynamics = {k: in_order(t) for k, t in tables.dynamics_report(drawn).items()}
            cells = cooperation["cells"]
        result.figures += figures.plot_cooperation(cooperation, out, same)
        result.figures += figures.plot_dynamics(dynamics, cells, out)
        groups = result.manifest.get("config", {}).get("model_groups")
        result.figures += align_figures.plot_align(cells, out, groups)
    return cooperation["episodes"]
