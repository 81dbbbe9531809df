"""The manifest of a results directory (``manifest.json``): what it holds (the resolved
config, its cells, the number of episodes), how it was made (package versions, git commit,
start time, command, LLM models and their reply caches), and how it grew."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.config import ConfigError, Experiment

PACKAGES = (
    "socialsim",
    "pettingzoo",
    "gymnasium",
    "mesa",
    "litellm",
    "numpy",
    "matplotlib",
    "pandas",
)


def package_versions() -> dict[str, str | None]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = _version(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _version(dist: metadata.Distribution) -> str | None:
    """The distribution's version, read from its metadata's headers: ``dist.version`` parses
    the whole file as an e-mail message (several ms for a long description)."""
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
        if not line:  # the headers end at the first blank line
            break
    return dist.version


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def llm_models(experiment: Experiment, out: Path) -> list[dict]:
    """Each distinct LLM model table named by a seat, with where its reply cache lives.
    (An agent spec that carries a ``model`` table is an LLM seat; the key is never recorded,
    only the name of the variable that holds it.)"""
    seen: list[dict] = []
    for _, cell in experiment.cells:
        for spec in cell["seats"].values():
            model = spec.get("model")
            if isinstance(model, str):
                model = {"model": model}
            if isinstance(model, dict) and model not in [m["config"] for m in seen]:
                from socialsim.llm.build import cache_path

                cache = cache_path(model.get("cache", True), out)
                seen.append({"config": model, "cache": str(cache) if cache else None})
    return seen


def made(experiment: Experiment, out: Path, total: int) -> dict[str, Any]:
    """The manifest of ``experiment``'s directory ``out`` as a run starts it now."""
    return {
        "config": experiment.config,
        "cells": [cell for cell, _ in experiment.cells],
        "episodes_total": total,
        "llm": llm_models(experiment, out),
        "versions": package_versions(),
        "git_commit": git_commit(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": sys.argv,
    }


def write(
    experiment: Experiment, out: Path, held: dict | None, grown: dict[str, Any], total: int
) -> None:
    """Write the manifest of a new directory, or of one that grows (the first run's facts stay;
    the growth is recorded)."""
    manifest = made(experiment, out, total)
    if held is not None:
        manifest = {
            **held,
            **{k: manifest[k] for k in ("config", "cells", "episodes_total", "llm")},
            "grown": [*held.get("grown", []), {**grown, "at": manifest["started"]}],
        }
    records.write_manifest(out, manifest)


#: Keys that say how a run is played, not what is played: they may change between the runs of
#: one directory (the manifest records the latest, and what changed).
HOW_KEYS = ("workers", "max_concurrent", "backend", "cache", "decision_timeout", "episode_timeout")


def grown_from(held: dict | None, experiment: Experiment, out: Path) -> dict[str, Any]:
    """``{}`` when ``out`` holds this experiment (or nothing); what grew or changed when only
    ``episodes`` grew, grid values were added (the same axes, every old cell kept) or a
    :data:`HOW_KEYS` setting changed; a config error naming the keys that differ otherwise."""
    if held is None or held.get("config") == experiment.config:
        return {}
    old, new = held.get("config", {}), experiment.config
    differ = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    changed = [k for k in differ if k not in HOW_KEYS]
    growth: dict[str, Any] = {}
    problem = None
    if "episodes" in changed:
        if new.get("episodes", 1) > old.get("episodes", 1):
            growth["episodes"] = [old.get("episodes", 1), new["episodes"]]
        else:
            problem = "episodes can only grow"
    if "grid" in changed:
        cells = [cell for cell, _ in experiment.cells]
        kept = all(cell in cells for cell in held.get("cells", []))
        if kept and set(old.get("grid", {})) == set(new.get("grid", {})):
            growth["cells"] = [len(held.get("cells", [])), len(cells)]
        else:
            problem = "grid values can only be added (the same axes, every old value kept)"
    if "evolution" in changed:  # more generations: each born of the log's last one
        before, after = old.get("evolution") or {}, new.get("evolution") or {}
        rest = [{k: v for k, v in t.items() if k != "generations"} for t in (before, after)]
        if before and after and rest[0] == rest[1] and after["generations"] > before["generations"]:
            growth["generations"] = [before["generations"], after["generations"]]
        else:
            problem = "of the [evolution] table only generations may grow"
    if any(k not in ("episodes", "grid", "evolution") for k in changed):
        problem = "only episodes and grid values may grow in place" + (
            " (and an [evolution] table's generations)" if "evolution" in new else ""
        )
    if problem is not None:
        raise ConfigError(
            f"--out {out}: the directory holds a different experiment (keys that differ: "
            f"{', '.join(changed)}); {problem}; choose another directory"
        )
    settings = {k: [old.get(k), new.get(k)] for k in differ if k in HOW_KEYS}
    return {**growth, **({"settings": settings} if settings else {})}
