"""``socialsim report A B [...]``: runs side by side (gossip on vs off in two directories, two
models, two versions of an agent). Each run's records get one more grid factor, ``run`` (the
directory's name, made unique), so every table, figure and ``report.html`` of the combined
report shows the runs apart: the figures facet by it like any other factor.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from socialsim import records
from socialsim.analysis.report import Report, build_from

RUN = "run"


def run_labels(directories: Sequence[Path]) -> list[str]:
    """Each directory's name, with its parent's prepended where two names collide."""
    labels = [d.resolve().name for d in directories]
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            labels[i] = f"{directories[i].resolve().parent.name}/{label}"
    return labels


def compare(directories: Sequence[str | Path], out: str | Path | None = None) -> Report:
    """The combined report of several runs; with ``out``, its files are written there."""
    paths = [Path(d) for d in directories]
    labels = run_labels(paths)
    combined: list[records.EpisodeRecord] = []
    runs = []
    for path, label in zip(paths, labels, strict=True):
        manifest = records.read_manifest(path) or {}
        runs.append({"run": label, "directory": str(path), "manifest": manifest})
        for record in records.read_records(path, include_failed=True):
            record.cell = {RUN: label, **record.cell}
            combined.append(record)
    names = [str(r["manifest"].get("config", {}).get("name", r["run"])) for r in runs]
    total = sum(int(r["manifest"].get("episodes_total", 0) or 0) for r in runs)
    manifest = {
        "config": {"name": "comparison: " + " vs ".join(labels), "experiments": names},
        "episodes_total": total,
        "runs": runs,
    }
    target = Path(out) if out is not None else None
    if target is not None:
        target.mkdir(parents=True, exist_ok=True)
    return build_from(combined, manifest, paths[0], target)
