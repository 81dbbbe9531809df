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
import os
import time
from pathlib import Path

import gymnasium
import numpy as np

from socialsim import registry
from socialsim.rl.vector import ProcessVectorEnv
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
    started = time.process_time()
    steps, elapsed = raw_steps(seconds, seed)
    queue.put((steps, elapsed, time.process_time() - started))


def raw_vector_steps(seconds: float, copies: int = 2) -> tuple[float, float]:
    """The raw loop in ``copies`` processes at once: (learner steps/s, CPU us per step)."""
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
    steps = sum(r[0] for r in results)
    return sum(r[0] / r[1] for r in results), 1e6 * sum(r[2] for r in results) / steps


def make_view() -> SeatView:
    return SeatView(ENV, SEAT, OTHER, **KWARGS)


def family_cpu() -> float:
    """CPU seconds of this process and its live children (the vector envs' workers)."""
    total, me = time.process_time(), str(os.getpid())
    tick = os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if fields[1] == me:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def vector_steps(make_envs, seconds: float) -> tuple[float, float]:
    """A vector env of views, first legal actions: (learner steps/s, CPU us per step)."""
    envs = make_envs()
    try:
        observations, _ = envs.reset(seed=0)
        steps = 0
        cpu = family_cpu()
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = observations["action_mask"]
            actions = np.array([first_legal(m) if m.any() else 0 for m in masks])
            observations, *_ = envs.step(actions)
            steps += envs.num_envs
        elapsed = time.perf_counter() - start
        return steps / elapsed, 1e6 * (family_cpu() - cpu) / steps
    finally:
        envs.close()


VECTORS = {
    "SyncVectorEnv, 2 views": lambda: gymnasium.vector.SyncVectorEnv([make_view] * 2),
    "AsyncVectorEnv, 2 views": lambda: gymnasium.vector.AsyncVectorEnv([make_view] * 2),
    "AsyncVectorEnv, 2 views, no shared memory, no copy": lambda: gymnasium.vector.AsyncVectorEnv(
        [make_view] * 2, shared_memory=False, copy=False
    ),
    "ProcessVectorEnv, 2 workers x 4 views": lambda: ProcessVectorEnv([make_view] * 8, workers=2),
}


#: row -> the raw loop it is measured against: in one process, or in two for the multi-process rows
PEERS = {
    "SeatView": "raw loop",
    "SyncVectorEnv, 2 views": "raw loop",
    **{name: "raw loop, 2 processes" for name in VECTORS if "Sync" not in name},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="per trial and row")
    parser.add_argument("--trials", type=int, default=3, help="interleaved; the best is shown")
    parser.add_argument("--vector", action="store_true", help="also the vector envs")
    args = parser.parse_args()
    best: dict[str, tuple[float, float]] = {}

    def keep(name: str, rate: float, cpu: float) -> None:
        old_rate, old_cpu = best.get(name, (0.0, float("inf")))
        best[name] = (max(old_rate, rate), min(old_cpu, cpu))

    for _ in range(args.trials):
        for name, play in (("raw loop", raw_steps), ("SeatView", view_steps)):
            started = time.process_time()
            steps, elapsed = play(args.seconds)
            keep(name, steps / elapsed, 1e6 * (time.process_time() - started) / steps)
        if args.vector:
            keep("raw loop, 2 processes", *raw_vector_steps(args.seconds))
            for name, make_envs in VECTORS.items():
                keep(name, *vector_steps(make_envs, args.seconds))
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.trials} trials of each row")
    print(f"{'':52s} {'steps/s':>8s} {'CPU us/step':>12s}  CPU per step over the peer")
    for name, (rate, cpu) in best.items():
        peer = PEERS.get(name)
        against = f"{cpu / best[peer][1] - 1:+.0%} against the {peer}" if peer else "(a peer)"
        print(f"{name:52s} {rate:8.0f} {cpu:12.0f}  {against}")


if __name__ == "__main__":
    main()
