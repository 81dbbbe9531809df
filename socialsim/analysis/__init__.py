"""Analysis: pure functions from episode records to numbers, then tables and figures.

Nothing here re-runs a game. ``report(directory)`` is what ``socialsim report DIR`` prints: the
episode counts and mean returns of every grid cell and seat, plus the game family's own tables
(``cooperation`` for the gossip games, ``tom`` for Decrypto) where that module is installed.
"""

from __future__ import annotations

from pathlib import Path

from socialsim import records


def returns_table(recs: list[records.EpisodeRecord]):
    """Mean and standard error (ddof=0) of each seat's return, per grid cell."""
    frame = records.episodes_frame(recs)
    if frame.empty:
        return frame
    cell_cols = [c for c in frame.columns if c.startswith("cell.")]
    groups = frame.groupby([*cell_cols, "seat", "kind"], dropna=False)["ret"]
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
    for family in _families(done):
        lines += ["", family.report(done, directory if write_files else None)]
    return "\n".join(lines)


def _families(recs: list[records.EpisodeRecord]):
    """The installed game-family analysis modules that apply to these records."""
    import importlib

    env_ids = {r.env_id for r in recs}
    wanted = []
    if env_ids & {"donation_v0", "prisoners_v0", "trust_v0", "market_v0"}:
        wanted.append("socialsim.analysis.cooperation")
    if "decrypto_v0" in env_ids:
        wanted.append("socialsim.analysis.tom")
    modules = []
    for name in wanted:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        if hasattr(module, "report"):
            modules.append(module)
    return modules
