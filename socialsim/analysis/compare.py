"""``socialsim report A B [...]``: runs side by side (gossip on vs off in two directories, two
models, two versions of an agent). Each run's records get one more grid factor, ``run`` (the
directory's name, made unique), so every table, figure and ``report.html`` of the combined
report keys its cells by run and cell, never merging two runs' same-named cells; the contrasts
set each run against the first.

A factor that one run sweeps and another fixes (the quickstart's gossip axis beside a run made
with ``--set env.kwargs.gossip=false``) takes, in the run that fixes it, the value its manifest
resolved, so the runs line up on it. Runs of different game families are refused before
anything is written, and the files are written into a temporary directory moved into place
only when the whole report is made: a failure leaves no half-written comparison.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from socialsim import records, registry
from socialsim.analysis.report import build_from
from socialsim.analysis.sections import Report

RUN = "run"
UNSET = "(unset)"


class MixedFamilies(ValueError):
    """Runs of different game families: their measures do not line up."""


def run_labels(directories: Sequence[Path]) -> list[str]:
    """Each directory's name, with its parent's prepended where two names collide."""
    labels = [d.resolve().name for d in directories]
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            labels[i] = f"{directories[i].resolve().parent.name}/{label}"
    return labels


def family(manifest: Mapping[str, Any]) -> str:
    """The game family of a run (``gossip``, ``decrypto``, ...), from its manifest's env id."""
    env_id = str(manifest.get("config", {}).get("env", {}).get("id", "?"))
    try:
        return registry.env_family(env_id) or env_id
    except Exception:  # an env no longer installed: its id is all we know
        return env_id


def check_families(directories: Sequence[Path], manifests: Sequence[Mapping[str, Any]]) -> None:
    families = [family(m) for m in manifests]
    if len(set(families)) > 1:
        named = ", ".join(f"{d} is {f}" for d, f in zip(directories, families, strict=True))
        raise MixedFamilies(
            f"DIR: runs of different game families cannot be compared ({named}); "
            "compare runs of one family"
        )


def _resolved(config: Mapping[str, Any], path: str) -> Any:
    value: Any = config
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return UNSET
        value = value[key]
    return value


def compare(directories: Sequence[str | Path], out: str | Path | None = None) -> Report:
    """The combined report of several runs; with ``out``, its files are written there (all of
    them or none)."""
    paths = [Path(d) for d in directories]
    manifests = [records.read_manifest(path) or {} for path in paths]
    check_families(paths, manifests)
    labels = run_labels(paths)
    per_run = [records.read_records(path, include_failed=True) for path in paths]
    factors = list(dict.fromkeys(k for recs in per_run for r in recs for k in r.cell))
    combined: list[records.EpisodeRecord] = []
    runs = []
    for path, label, manifest, recs in zip(paths, labels, manifests, per_run, strict=True):
        runs.append({"run": label, "directory": str(path), "manifest": manifest})
        config = manifest.get("config", {})
        for record in recs:
            filled = {k: record.cell.get(k, _resolved(config, k)) for k in factors}
            record.cell = {RUN: label, **filled}
            combined.append(record)
    names = [str(r["manifest"].get("config", {}).get("name", r["run"])) for r in runs]
    total = sum(int(r["manifest"].get("episodes_total", 0) or 0) for r in runs)
    groups: dict[str, str] = {}  # every run's model labels (reasoning, chat), for the figures
    for run in runs:
        groups.update(run["manifest"].get("config", {}).get("model_groups", {}))
    manifest = {
        "config": {
            "name": "comparison: " + " vs ".join(labels),
            "experiments": names,
            **({"model_groups": groups} if groups else {}),
        },
        "episodes_total": total,
        "runs": runs,
    }
    if out is None:
        return build_from(combined, manifest, paths[0], None)
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        report = build_from(combined, manifest, paths[0], scratch)
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
        scratch.rename(target)
        if old is not None:
            shutil.rmtree(old)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    report.figures = [target / p.name for p in report.figures]
    return report
