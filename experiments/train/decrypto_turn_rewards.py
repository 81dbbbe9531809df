"""Decrypto's learning signal: a MaskablePPO interceptor trained on the env's own shaped rewards.

``decrypto_v0(turn_rewards=1)`` pays the interceptor +1 at each reveal it intercepts (and the
team +-1 for each code read or miscommunication), on top of the +-1 at the end; the rules and
the outcome are unchanged. Here the env's reward is all the learner gets (no reward wrapper, as
``interceptor.py`` has): sb3-contrib's MaskablePPO plays the ``interceptor`` seat of a
:class:`~socialsim.rl.view.SeatView` against the GloVe team, seeing the ``hint_history``
feature (:mod:`socialsim.agents.rl.decrypto`) and its action mask.

Without the option the only reward is the end's +-1, which the team's play decides as much as
the interceptor's guesses (untrained, most games last all 8 turns), so a good guess is paid, if
at all, turns later and mixed with the rest; with it each interception counts at once.

What it writes to ``--out``: ``training_curve.png`` (interceptions per training game against
learner steps) and ``result.json`` (the mean over the first and the last quarter of the
training games of each game's interceptions per guess). Exit status 0 when the last quarter's
mean is at least three times the first's.

Measured on this machine (2 shared cores, loaded), seed 0, interceptions per guess over the
first -> the last quarter of the training games (a random guess intercepts 1/24 = 0.04):

===============  ==================================  ==================================
steps            ``--turn-rewards 1`` (the option)   ``--turn-rewards 0`` (end only)
===============  ==================================  ==================================
16,000           0.07 -> 0.46 (2,695 games)          0.05 -> 0.10 (2,096 games)
4,000            0.06 -> 0.07 (519 games)            0.06 -> 0.05 (515 games)
===============  ==================================  ==================================

    python experiments/train/decrypto_turn_rewards.py --out results/decrypto_turn_rewards
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import gymnasium
import runs
from gymnasium.wrappers import FilterObservation
from socialsim.agents.rl.decrypto import HintHistory

from socialsim.rl.view import SeatView

SEAT = "interceptor"
TEAM = {"encoder": {"kind": "glove_encoder"}, "decoder": {"kind": "glove_decoder"}}
KEYS = ["action_mask", HintHistory.name]


def make_view(turn_rewards: float) -> FilterObservation:
    view = SeatView("decrypto_v0", SEAT, TEAM, [HintHistory()], turn_rewards=turn_rewards)
    return FilterObservation(view, KEYS)


class Games(gymnasium.Wrapper):
    """Keeps ``(learner steps so far, interceptions per guess)`` of each game that ends."""

    def __init__(self, env: gymnasium.Env):
        super().__init__(env)
        self.steps, self.guesses, self.games = 0, 0, []

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        self.guesses += 1
        if terminated or truncated:
            self.games.append((self.steps, info["interceptions"] / self.guesses))
            self.guesses = 0
        return observation, reward, terminated, truncated, info


def train(timesteps: int, seed: int, turn_rewards: float, n_envs: int = 4):
    """(model, [(learner step, the game's interceptions per guess)]) after ``timesteps``."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    envs = DummyVecEnv([lambda: Games(make_view(turn_rewards)) for _ in range(n_envs)])
    model = runs.maskable_ppo(envs, seed, n_steps=128, batch_size=128, gamma=0.0)
    model.learn(total_timesteps=timesteps)
    # each env's steps times the envs stepped together: the learner's steps so far
    curve = [(steps * n_envs, value) for env in envs.envs for steps, value in env.games]
    return model, sorted(curve)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=16_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--turn-rewards", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=Path("results/decrypto_turn_rewards"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    _, curve = train(args.timesteps, args.seed, args.turn_rewards)
    quarter = max(1, len(curve) // 4)
    first = sum(v for _, v in curve[:quarter]) / quarter
    last = sum(v for _, v in curve[-quarter:]) / quarter
    runs.plot_curve(
        curve,
        args.out / "training_curve.png",
        f"MaskablePPO interceptor, turn_rewards={args.turn_rewards:g}",
        "interceptions per guess",
    )
    result = {
        "timesteps": args.timesteps,
        "seed": args.seed,
        "turn_rewards": args.turn_rewards,
        "games": len(curve),
        "first_quarter_interceptions_per_guess": first,
        "last_quarter_interceptions_per_guess": last,
    }
    (args.out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    print(
        f"{len(curve)} games: interceptions per guess {first:.2f} (first quarter) -> "
        f"{last:.2f} (last quarter)"
    )
    return 0 if last >= 3 * first else 1


if __name__ == "__main__":
    sys.exit(main())
