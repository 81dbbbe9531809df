"""``socialsim report DIR``: the text report of an experiment's log, and its CSV and PNG files.

The episode counts and mean returns of every grid cell and seat, then the tables of each game
family present in the log: the cooperation tables for the gossip games (records whose
``summary["game"]`` is a game of the gossip protocol), the outcomes and theory-of-mind scores for
Decrypto.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from socialsim import records
from socialsim.analysis import figures, tables, tom
from socialsim.envs.gossip.protocol import GAMES


def report(directory: str | Path, write_files: bool = True) -> str:
    """What ``socialsim report DIR`` prints; with ``write_files``, every table as CSV and the
    figures as PNG in ``DIR``."""
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
        table = tables.returns_table(done)
        lines += [
            "",
            "mean return per seat:",
            _fmt(table),
        ]
        if write_files:
            table.to_csv(directory / "returns.csv", index=False)
    gossip = [r for r in done if r.summary.get("game") in GAMES]
    if gossip:
        lines += ["", gossip_report(gossip, directory if write_files else None)]
    if any(r.env_id == "decrypto_v0" for r in done):
        lines += [
            "",
            decrypto_report(
                [r for r in done if r.env_id == "decrypto_v0"], directory if write_files else None
            ),
        ]
    return "\n".join(lines)


def _fmt(frame: pd.DataFrame) -> str:
    return frame.to_string(index=False, float_format=lambda x: f"{x:.4g}")


def gossip_report(recs: list[records.EpisodeRecord], directory: Path | None) -> str:
    """Cooperation tables per grid cell; with a directory, every table as CSV and the figures."""
    cooperation = tables.cooperation_report(recs)
    cells = cooperation["cells"]
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
    kinds = cooperation["kinds"]
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
        for name, table in cooperation.items():
            table.to_csv(directory / f"cooperation_{name}.csv", index=False)
        written = figures.plot_cooperation(cooperation, directory)
        lines.append("figures: " + ", ".join(p.name for p in written))
    return "\n".join(lines)


def decrypto_report(recs: list[records.EpisodeRecord], directory: Path | None) -> str:
    """Decrypto outcomes per cell, the competitive grid and the ToM scores where probed."""
    by_cell: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        by_cell.setdefault(tables.cell_label(record.cell), []).append(record)
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
