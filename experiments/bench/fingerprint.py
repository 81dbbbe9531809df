"""Fingerprint of what the envs produce, to check that a speed change changes no result.

Two parts, each printed as one SHA-256 per item:

* **experiments**: bundled experiments played by ``socialsim run`` at their own seed with a few
  episodes each; the hash covers every ``episodes.jsonl`` record (sorted, the ``timing`` field
  left out, as it is the only part that differs between runs).
* **rollouts**: every env in both forms, stepped with seeded random legal actions for a few
  episodes; the hash covers every observation (arrays by dtype, shape and bytes), reward,
  termination, truncation, info and the bus log of each episode.

    python experiments/bench/fingerprint.py > before.txt    # on the unchanged code
    python experiments/bench/fingerprint.py | diff before.txt -

It prints the hashes and asserts nothing; equal output before and after a change is the check.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

EXPERIMENTS = {
    "align_quickstart": 2,
    "align_market": 2,
    "align_trust": 2,
    "align_prisoners": 2,
    "decrypto_quickstart": 3,
    "matching_pennies": 3,
}

ENVS = {
    "donation_v0": {},
    "donation_v0 random": {"schedule": "random", "n_agents": 12, "rounds": 6},
    "donation_v0 joins": {"entrant": "joins", "rounds": 10},
    "prisoners_v0": {},
    "trust_v0": {},
    "market_v0": {},
    "decrypto_v0": {},
    "matching_pennies_v0": {},
}


class Hasher:
    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def add(self, value: Any) -> None:
        self.digest.update(_canonical(value))

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


def _canonical(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        return b"A" + str((value.dtype.str, value.shape)).encode() + value.tobytes()
    if isinstance(value, dict) or hasattr(value, "items"):
        parts = [b"{"]
        for key in sorted(value, key=str):
            parts += [repr(key).encode(), b":", _canonical(value[key]), b","]
        return b"".join(parts) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_canonical(v) for v in value) + b"]"
    if isinstance(value, np.generic):
        return b"S" + repr(value.item()).encode()
    return repr(value).encode()


def random_action(env, agent: str, observation: Any, rng: np.random.Generator) -> Any:
    space = env.action_space(agent)
    mask = observation.get("action_mask") if isinstance(observation, dict) else None
    if isinstance(mask, tuple):  # one mask per position of a MultiDiscrete action
        return np.array([int(rng.choice(np.flatnonzero(m))) for m in mask], dtype=np.int64)
    legal = np.flatnonzero(mask) if mask is not None else np.arange(space.n)
    return int(legal[rng.integers(len(legal))])


def rollout_parallel(env, episodes: int, seed: int, hasher: Hasher) -> None:
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        observations, infos = env.reset(seed=seed + episode)
        hasher.add((observations, infos))
        while env.agents:
            acting = [a for a in env.agents if infos[a].get("decision")]
            actions = {a: random_action(env, a, observations[a], rng) for a in acting}
            result = env.step(actions)
            observations, infos = result[0], result[4]
            hasher.add(result)
        hasher.add([m.to_json() for m in env.unwrapped.bus.log])
        hasher.add(env.unwrapped.summary())


def rollout_aec(env, episodes: int, seed: int, hasher: Hasher) -> None:
    rng = np.random.default_rng(seed)
    for episode in range(episodes):
        env.reset(seed=seed + episode)
        for agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            hasher.add((agent, observation, reward, termination, truncation, info))
            if termination or truncation:
                env.step(None)
                continue
            env.step(random_action(env, agent, observation, rng))
            hasher.add((env.rewards, env.infos))
        hasher.add([m.to_json() for m in env.unwrapped.bus.log])
        hasher.add(env.unwrapped.summary())


def rollouts(episodes: int) -> dict[str, str]:
    import importlib

    out = {}
    for label, kwargs in ENVS.items():
        module = importlib.import_module(f"socialsim.envs.{label.split()[0]}")
        for form in ("parallel", "aec"):
            hasher = Hasher()
            if form == "parallel":
                rollout_parallel(module.parallel_env(**kwargs), episodes, 7, hasher)
            else:
                rollout_aec(module.env(**kwargs), episodes, 7, hasher)
            out[f"rollout {label} {form}"] = hasher.hexdigest()
    return out


def experiments(names: dict[str, int]) -> dict[str, str]:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, episodes in names.items():
            directory = Path(tmp) / name
            command = [sys.executable, "-m", "socialsim.cli", "run", name, "--quiet"]
            command += ["--out", str(directory), "--set", f"episodes={episodes}"]
            subprocess.run(command, check=True, env=os.environ, stdout=subprocess.DEVNULL)
            lines = []
            for line in (directory / "episodes.jsonl").read_text().splitlines():
                record = json.loads(line)
                record.pop("timing", None)
                lines.append(json.dumps(record, sort_keys=True))
            out[f"experiment {name} ({len(lines)} records)"] = hashlib.sha256(
                "\n".join(sorted(lines)).encode()
            ).hexdigest()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=3, help="rollout episodes per env [3]")
    parser.add_argument("--no-experiments", action="store_true", help="rollouts only")
    args = parser.parse_args(argv)
    hashes = rollouts(args.episodes)
    if not args.no_experiments:
        hashes.update(experiments(EXPERIMENTS))
    for name, digest in hashes.items():
        print(f"{digest}  {name}")


if __name__ == "__main__":
    main()
