"""Analysis: pure functions from episode records to numbers, then tables and figures.

Nothing here re-runs a game. ``report(directory)`` is what ``socialsim report DIR`` prints: the
episode counts and mean returns of every grid cell and seat, plus the game family's own tables
(``cooperation`` for the gossip games, ``tom`` for Decrypto) where that module is installed.
"""

from __future__ import annotations

from pathlib import Path

from socialsim import records


def returns_table(recs: list[records.EpisodeRecord]):
    """Mean and standard error (ddof=0) of the return per grid cell and seat (games with at
    most four seats) or agent kind (larger populations)."""
    frame = records.episodes_frame(recs)
    if frame.empty:
        return frame
    cell_cols = [c for c in frame.columns if c.startswith("cell.")]
    frame[cell_cols] = frame[cell_cols].astype(str)  # a grid may cross whole agent tables
    by = ["seat", "kind"] if frame["seat"].nunique() <= 4 else ["kind"]
    groups = frame.groupby([*cell_cols, *by], dropna=False)["ret"]
    table = groups.agg(["count", "mean", "std"]).reset_index()
    table["sem"] = groups.std(ddof=0).to_numpy() / table["count"].pow(0.5)
    return table.drop(columns="std")


def report(directory: str | Path, write_files: bool = True) -> str:
    directory = Path(directory)
    recs = records.read_records(directory, include_failed=True)
    done = [r for r in recs if r.status == "done"]
    failed = [r for r in recs if r.status != "done"]
    manifest = records.read_manifest(directory) or {}
    lines = [
        f"experiment: {manifest.get('config', {}).get('name', '?')}",
        f"episodes: {len(done)} done, {len(failed)} failed (of {manifest.get('episodes_total', '?')})",
    ]
    invalid = sum(c.get("invalid_actions", 0) for r in done for c in r.counters.values())
    lines.append(f"invalid actions: {invalid}")
    if done:
        table = returns_table(done)
        lines += [
            "",
            "mean return per seat:",
            table.to_string(index=False, float_format=lambda x: f"{x:.4g}"),
        ]
        if write_files:
            table.to_csv(directory / "returns.csv", index=False)
    if done and {r.env_id for r in done} & GOSSIP_ENVS:
        lines += [
            "",
            gossip_report(
                [r for r in done if r.env_id in GOSSIP_ENVS], directory if write_files else None
            ),
        ]
    if any(r.env_id == "decrypto_v0" for r in done):
        lines += [
            "",
            decrypto_report(
                [r for r in done if r.env_id == "decrypto_v0"], directory if write_files else None
            ),
        ]
    return "\n".join(lines)


GOSSIP_ENVS = {"donation_v0", "prisoners_v0", "trust_v0", "market_v0"}


def cell_label(cell: dict) -> str:
    """A grid cell as ``key=value`` pairs on the last part of each path, or ``(all)``."""
    return (
        ", ".join(
            f"{key.split('.')[-2] if key.endswith('.kind') else key.split('.')[-1]}={value}"
            for key, value in cell.items()
        )
        or "(all)"
    )


def _fmt(frame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.4g}")


def gossip_report(recs: list[records.EpisodeRecord], directory: Path | None) -> str:
    """Cooperation tables per grid cell; with a directory, every table as CSV and the figures."""
    from socialsim.analysis import cooperation

    tables = cooperation.cooperation_report(recs)
    cells = tables["cells"]
    wanted = [
        "cell",
        "game",
        "n",
        "cooperation_rate",
        "cooperation_rate_se",
        "social_welfare",
        "social_welfare_se",
        "ostracism",
        "reputation_accuracy",
        "deal_rate",
        "welfare_per_round",
    ]
    shown = cells[[c for c in wanted if c in cells.columns]]
    kinds = tables["kinds"]
    kind_cols = [
        c
        for c in ("cell", "kind", "n", "return", "return_se", "image_score", "discounted_return")
        if c in kinds.columns
    ]
    lines = [
        "cooperation per cell (mean, standard error over episodes):",
        _fmt(shown),
        "",
        "per agent kind:",
        _fmt(kinds[kind_cols]),
    ]
    if directory is not None:
        for name, table in tables.items():
            table.to_csv(directory / f"cooperation_{name}.csv", index=False)
        figures = cooperation.plot_cooperation(recs, directory)
        lines.append("figures: " + ", ".join(p.name for p in figures))
    return "\n".join(lines)


def decrypto_report(recs: list[records.EpisodeRecord], directory: Path | None) -> str:
    """Decrypto outcomes per cell, the competitive grid and the ToM scores where probed."""
    import json

    from socialsim.analysis import tom

    by_cell: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        by_cell.setdefault(cell_label(record.cell), []).append(record)
    rows = []
    for cell, group in by_cell.items():
        out = tom.outcomes(group)
        rows.append(
            {
                "cell": cell,
                **{k: v for k, v in out.items() if not isinstance(v, dict)},
                **out.get("endings", {}),
            }
        )
    import pandas as pd

    outcomes = pd.DataFrame(rows)
    lines = ["Decrypto outcomes per cell:", _fmt(outcomes)]
    grid = tom.competitive_grid(recs)
    if grid:
        lines += [
            "",
            "competitive grid, interception-loss rate (team = encoder = decoder, mean +- SEM over seed blocks of 32):",
        ]
        lines += [
            f"  {team:>24s} vs {eve:<24s} {c.mean:.3f} +- {c.sem:.3f}  ({c.games} games, {c.avg_turns:.2f} turns)"
            for (team, eve), c in grid.items()
        ]
    scores = {}
    if any(r.probes for r in recs):
        scores = {
            "perspective_taking": tom.perspective_taking(recs),
            "representational_change": tom.representational_change(recs),
        }
        lines += ["", "theory of mind:", json.dumps(scores, indent=2)]
    if directory is not None:
        outcomes.to_csv(directory / "decrypto_outcomes.csv", index=False)
        if scores:
            (directory / "decrypto_tom.json").write_text(json.dumps(scores, indent=2) + "\n")
    return "\n".join(lines)
