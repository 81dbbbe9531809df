"""What the training scripts share: the training curve's figure and the evaluation's experiment file.

Imported by the scripts beside it (``python experiments/train/donor.py`` puts this folder first
on ``sys.path``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def episode_curve(monitors: Sequence[Any], n_envs: int) -> list[tuple[int, float]]:
    """(learner steps so far, episode return) of every finished training episode, in order, from
    the SB3 ``Monitor`` of each of ``n_envs`` environments stepped together."""
    curve = []
    for monitor in monitors:
        steps = np.cumsum(monitor.get_episode_lengths()) * n_envs
        curve += list(zip(steps.tolist(), monitor.get_episode_rewards(), strict=True))
    return sorted(curve)


def plot_curve(curve: list[tuple[int, float]], path: Path, title: str, ylabel: str) -> None:
    """The episode returns against learner steps, with their running mean, as a PNG."""
    import matplotlib.pyplot as plt

    steps = np.array([s for s, _ in curve])
    returns = np.array([r for _, r in curve])
    window = max(1, len(returns) // 20)
    smooth = np.convolve(returns, np.ones(window) / window, mode="valid")
    figure, axes = plt.subplots(figsize=(6, 3.5))
    axes.plot(steps, returns, ".", alpha=0.2, label="episode")
    axes.plot(steps[window - 1 :], smooth, label=f"mean of {window}")
    axes.set_xlabel("learner steps")
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def toml_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def write_eval_experiment(
    path: Path,
    name: str,
    env: str,
    env_kwargs: Mapping[str, Any],
    seats: Mapping[str, Mapping[str, Any]],
    seat: str,
    learners: Sequence[Mapping[str, Any]],
    episodes: int,
    seed: int,
) -> None:
    """An experiment file that plays each of ``learners`` in ``seat`` (a grid over the seat)
    beside ``seats`` on the same ``episodes`` seeds."""
    lines = [
        f"name = {json.dumps(name)}",
        f"episodes = {episodes}",
        f"seed = {seed}",
        "\n[env]",
        f"id = {json.dumps(env)}",
        "\n[env.kwargs]",
        *(f"{k} = {toml_value(v)}" for k, v in env_kwargs.items()),
        "\n[seats]",
        *(f"{agent} = {toml_value(spec)}" for agent, spec in {seat: learners[0], **seats}.items()),
        "\n[grid]",
        f'"seats.{seat}" = [{", ".join(toml_value(s) for s in learners)}]',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
