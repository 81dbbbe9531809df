"""What ``socialsim run --check`` prints: the plan of a run, checked and not played (its cells,
its episodes, where they go, how they are played, what they would cost)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialsim import config as config_module
from socialsim import estimate, manifest
from socialsim.config import Experiment
from socialsim.episode import EpisodeSpec


def plan_lines(
    experiment: Experiment,
    out: Path,
    total: int,
    todo: int,
    grown: dict[str, Any],
    todo_specs: Sequence[EpisodeSpec] = (),
    done: set[tuple[str, int]] = frozenset(),
) -> list[str]:
    """What a run would do: its cells, its episodes, where they go and how they are played;
    an evolution run's (its generation 0 checked) every generation's."""
    name, times = experiment.name, ""
    if hasattr(experiment, "generation"):
        from socialsim.society import experiment as evolving

        name = experiment.config["name"]
        times = f" x {evolving.generations(experiment)} generations"
        total, todo_specs = evolving.plan(experiment, done)
        todo = len(todo_specs)
    lines = [
        f"{name}: checked; nothing written",
        f"  {len(experiment.cells)} cells x {experiment.config.get('episodes', 1)} episodes"
        f"{times} = {total} episodes, {total - todo} already logged in {out}, {todo} to run",
        f"  backend {experiment.backend}, "
        f"{f'{experiment.workers} workers' if experiment.workers else 'in this process'}, "
        f"{experiment.max_concurrent} episodes at once per worker",
    ]
    for cell, config in experiment.cells:
        kinds = sorted({seat["kind"] for seat in config_module.resolve_seats(config).values()})
        lines.append(f"  cell {cell or '(no grid)'}: {config['env']['id']} with {', '.join(kinds)}")
    for model in manifest.llm_models(experiment, out):
        lines.append(f"  LLM {model['config'].get('model')}: reply cache {model['cache']}")
    if grown:
        lines.append(f"  the directory grows: {grown}")
    return lines + estimate.lines(estimate.estimate(experiment, todo_specs, out))
