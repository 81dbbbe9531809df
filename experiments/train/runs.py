"""What the training scripts share: their command line and order of work (:class:`Script`), the
training curve's figure and the evaluation's experiment file.

Imported by the scripts beside it (``python experiments/train/donor.py`` puts this folder first
on ``sys.path``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from socialsim import cli


@dataclass(frozen=True)
class Script:
    """One training script: train a policy, save it and its curve, evaluate it beside baselines
    with ``socialsim run`` into ``OUT/eval``, summarise the records into ``OUT/result.json``,
    print a line per evaluated kind and the verdict; exit status 0 on success, 1 if the
    thresholds are not met, the run's status if the evaluation fails."""

    description: str
    policy: str  #: the saved policy's file name in ``--out``
    timesteps: int
    episodes: int
    out: Path
    #: (args, out) -> (model, [(learner step, episode return)])
    train: Callable[[argparse.Namespace, Path], tuple[Any, list[tuple[int, float]]]]
    curve_title: str
    curve_label: str
    #: (experiment path, args, saved policy path) writes the evaluation experiment
    write_eval: Callable[[Path, argparse.Namespace, Path], None]
    summarise: Callable[[Path], dict[str, Any]]
    row: Callable[[str, dict[str, Any]], str]  #: one printed line per evaluated kind
    success: Callable[[dict[str, Any], argparse.Namespace], bool]
    verdict: tuple[str, str]  #: what is printed on success, and otherwise
    extra_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    units: str = "steps"  #: what ``--timesteps`` counts, as printed

    def main(self, argv: list[str] | None = None) -> int:
        parser = argparse.ArgumentParser(description=self.description)
        parser.add_argument("--timesteps", type=int, default=self.timesteps)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--episodes", type=int, default=self.episodes, help="evaluation episodes per kind"
        )
        parser.add_argument("--out", type=Path, default=self.out)
        if self.extra_arguments:
            self.extra_arguments(parser)
        args = parser.parse_args(argv)
        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        model, curve = self.train(args, out)
        trained = time.perf_counter() - started
        model.save(out / self.policy)
        plot_curve(curve, out / "training_curve.png", self.curve_title, self.curve_label)
        experiment = out / "eval.toml"
        self.write_eval(experiment, args, out / self.policy)
        status = cli.main(["run", str(experiment), "--out", str(out / "eval"), "--quiet"])
        if status != 0:
            print("evaluation run failed", file=sys.stderr)
            return status
        result = self.summarise(out / "eval")
        (out / "result.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"trained {args.timesteps} {self.units} in {trained:.0f} s (seed {args.seed})")
        for kind, row in result.items():
            print(self.row(kind, row))
        ok = self.success(result, args)
        print(self.verdict[0] if ok else self.verdict[1])
        return 0 if ok else 1


def maskable_ppo(envs: Any, seed: int, *, n_steps: int, batch_size: int, gamma: float) -> Any:
    """The scripts' learner: MaskablePPO with a 64 x 64 policy on the CPU, one torch thread (so
    that the same seed trains the same policy), 10 epochs, learning rate 1e-3, no entropy bonus;
    the rollout length, batch and discount are each script's."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    return MaskablePPO(
        "MultiInputPolicy",
        envs,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=10,
        gamma=gamma,
        learning_rate=1e-3,
        ent_coef=0.0,
        policy_kwargs={"net_arch": [64, 64]},
        seed=seed,
        device="cpu",
        verbose=0,
    )


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


def against_baselines(
    name: str,
    env: str,
    env_kwargs: Mapping[str, Any],
    seats: Mapping[str, Mapping[str, Any]],
    seat: str,
    baselines: Sequence[str],
    seed: int,
) -> Callable[[Path, argparse.Namespace, Path], None]:
    """A :attr:`Script.write_eval` that plays the saved policy and each of the ``baselines``
    kinds in ``seat`` beside ``seats``, on the evaluation seeds from ``seed``."""

    def write(path: Path, args: argparse.Namespace, policy: Path) -> None:
        learners = [{"kind": "rl", "path": str(policy.resolve())}]
        learners += [{"kind": kind} for kind in baselines]
        write_eval_experiment(
            path, name, env, env_kwargs, seats, seat, learners, args.episodes, seed
        )

    return write
