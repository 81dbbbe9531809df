"""Learner steps per second through a SeatView against the raw Parallel env doing the same work.

The game: ``donation_v0`` with gossip, random matching, 8 agents, 20 rounds; the learner in
``agent_0`` takes its first legal action, seven ``stern_judging`` agents play the other seats.
The *raw* loop is the bare minimum the same episode needs: the Parallel env, the same agents
built by the runner's ``build_agents``, each fed its observation, inbox and info, and no
record. The *view* is ``SeatView`` (which also keeps the runner's step log for the record).
``--vector`` adds two copies of each side: ``SyncVectorEnv`` of two views against the raw loop
in one process, and ``AsyncVectorEnv`` of two views against two processes running the raw
loop.

Measured on this machine (2 cores shared with other work; ``python
experiments/bench/seat_view_bench.py --seconds 5``)::

    single   raw loop     1091 learner steps/s
    single   SeatView     1079 learner steps/s  (+1% per step)
    vector-2 raw loop     1212 learner steps/s (2 processes)
    vector-2 SeatView     1037 learner steps/s (SyncVectorEnv, +5% per step against the raw loop in one process)
    vector-2 SeatView      483 learner steps/s (AsyncVectorEnv, +151% per step against the raw loop in 2 processes)

(load average 4.4 on the 2 cores; an earlier run gave -9%, -13% and +68%). The view is within
the noise of the raw loop in one process, well inside the 20% goal: a learner step costs about
1 ms, nearly all of it the env and the seven scripted agents. ``AsyncVectorEnv`` misses the
goal: each step pays Gymnasium's pipe round trip and the merging of the infos into arrays, a
large share of a 1 ms step, and the two workers compete for cores that other work holds.

What the view costs per step beyond the raw loop: the learner's observation dict (and its
features, none here), its inbox read, the runner's step log (``log_step``) and an env per
episode (agents are built per episode on both sides, as the runner does).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

import numpy as np

from socialsim import registry
from socialsim.rl.view import SeatView
from socialsim.runner import EpisodeSpec, build_agents

ENV = "donation_v0"
KWARGS = {"n_agents": 8, "gossip": True, "schedule": "random", "rounds": 20}
SEAT = "agent_0"
OTHER = {"kind": "stern_judging"}


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def raw_steps(seconds: float, seed: int = 0) -> tuple[int, float]:
    """Learner decisions played by the bare loop in about ``seconds``: (steps, elapsed)."""
    env = registry.make_env(ENV, "parallel", **KWARGS)
    seats = {a: OTHER for a in env.possible_agents if a != SEAT}
    steps, episode = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        spec = EpisodeSpec(ENV, seed + episode, seats, KWARGS)
        env = registry.make_env(ENV, "parallel", **KWARGS)
        agents = build_agents(spec, list(seats))
        observations, infos = env.reset(seed=spec.seed)
        bus = env.bus
        while env.agents:
            actions = {}
            for agent in env.agents:
                if infos[agent]["decision"]:
                    if agent == SEAT:
                        actions[agent] = first_legal(observations[agent]["action_mask"])
                        bus.read(agent)
                        steps += 1
                    else:
                        actions[agent] = agents[agent].act(
                            observations[agent], bus.read(agent), infos[agent]
                        )
            observations, _, _, _, infos = env.step(actions)
        episode += 1
    return steps, time.perf_counter() - start


def view_steps(seconds: float, seed: int = 0) -> tuple[int, float]:
    view = SeatView(ENV, SEAT, OTHER, **KWARGS)
    steps = 0
    observation, _ = view.reset(seed=seed)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        observation, _, terminated, truncated, _ = view.step(
            first_legal(observation["action_mask"])
        )
        steps += 1
        if terminated or truncated:
            observation, _ = view.reset()
    return steps, time.perf_counter() - start


def _raw_worker(seconds: float, seed: int, queue) -> None:
    queue.put(raw_steps(seconds, seed))


def raw_vector_steps(seconds: float, copies: int = 2) -> float:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [
        context.Process(target=_raw_worker, args=(seconds, 1000 * i, queue)) for i in range(copies)
    ]
    for process in processes:
        process.start()
    results = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    return sum(steps / elapsed for steps, elapsed in results)


def make_view() -> SeatView:
    return SeatView(ENV, SEAT, OTHER, **KWARGS)


def view_vector_steps(seconds: float, copies: int = 2, vector: str = "AsyncVectorEnv") -> float:
    import gymnasium

    envs = getattr(gymnasium.vector, vector)([make_view] * copies)
    try:
        observations, _ = envs.reset(seed=list(range(copies)))
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = observations["action_mask"]
            actions = np.array([first_legal(m) if m.any() else 0 for m in masks])
            observations, *_ = envs.step(actions)
            steps += copies
        return steps / (time.perf_counter() - start)
    finally:
        envs.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--vector", action="store_true", help="also two copies in parallel")
    args = parser.parse_args()
    raw = raw_steps(args.seconds)
    view = view_steps(args.seconds)
    raw_rate, view_rate = raw[0] / raw[1], view[0] / view[1]
    print(f"single   raw loop {raw_rate:8.0f} learner steps/s")
    print(
        f"single   SeatView {view_rate:8.0f} learner steps/s  ({raw_rate / view_rate - 1:+.0%} per step)"
    )
    if args.vector:
        raw_vector = raw_vector_steps(args.seconds)
        print(f"vector-2 raw loop {raw_vector:8.0f} learner steps/s (2 processes)")
        for vector, against in (("SyncVectorEnv", raw_rate), ("AsyncVectorEnv", raw_vector)):
            rate = view_vector_steps(args.seconds, vector=vector)
            print(
                f"vector-2 SeatView {rate:8.0f} learner steps/s ({vector}, "
                f"{against / rate - 1:+.0%} per step against the raw loop "
                f"{'in one process' if vector == 'SyncVectorEnv' else 'in 2 processes'})"
            )


if __name__ == "__main__":
    main()
