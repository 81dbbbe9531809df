"""Benchmark: the message bus alone, posting and reading as a gossip game's env and seats do.

Nine agents, four of them a team, every seat reading once before the first step (so that each
message is made as it is posted). Per step the env posts one public message and one to two
agents (a donor and its recipient); then, with ``--mode read``, each of the two reads its inbox
twice (the second read finds nothing new). ``--mode empty`` times an empty read alone.

    python experiments/bench/bus_bench.py [--mode post|read|empty] [--steps 2000] [--reps 15]

It prints the best time per step of ``--reps`` runs. The figures below are instruction counts,
which do not depend on the load: valgrind callgrind of ``--reps 6`` less ``--reps 1`` (10,000
steps; imports and setup cancel), ``--mode empty`` with 21,000 reads less 1,000.

2026-12-05, the bus as plain data (a stream a list of message ids, an inbox a [stream, read
count] pair per stream followed, the messages a list by id) against d416f47 (per-stream lists of
the messages made, kept in step with the streams, and [stream, made, count] cursors):

| mode | before | after |
|---|---|---|
| post (two posts a step) | 34.8 k | 30.2 k |
| read (two posts and four reads a step) | 54.3 k | 55.4 k |
| empty (one read) | 2.97 k | 2.35 k |

A read that finds messages pays about 1 k more than before (its ids are turned into their
messages, where a cursor sliced a list of messages kept beside its stream); a post pays 2.3 k
less (no such list to extend). An inbox as a dict stream name -> read count was tried: an empty
read cost about 40% more than before (a lookup of the stream per stream followed), so the
inbox holds the streams themselves.
"""

from __future__ import annotations

import argparse
import time

from socialsim.bus import EVERYONE, MessageBus


def run(mode: str, steps: int) -> float:
    agents = [f"agent_{i}" for i in range(9)]
    bus = MessageBus(agents, teams={"red": agents[:4]})
    for agent in agents:
        bus.read(agent)
    payload = {"author": "agent_0", "tone": "neutral"}
    start = time.perf_counter()
    if mode == "empty":
        for _ in range(steps):
            bus.read("agent_1")
        return time.perf_counter() - start
    for step in range(steps):
        bus.post(step, EVERYONE, "public", "gossip", payload)
        donor, recipient = agents[step % 9], agents[(step + 1) % 9]
        bus.post(step, (donor, recipient), "private", "match", payload)
        if mode == "read":
            for agent in (donor, recipient):
                bus.read(agent)
                bus.read(agent)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["post", "read", "empty"], default="read")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    best = min(run(args.mode, args.steps) for _ in range(args.reps))
    print(f"{args.mode}: {best / args.steps * 1e6:.2f} us per step, best of {args.reps}")


if __name__ == "__main__":
    main()
