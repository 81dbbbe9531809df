"""Seats share nothing outside the bus: in every env and both forms, an agent that mutates
everything it is handed (its observation's writable arrays, its info's lists and dicts, its
inbox) changes nothing that another seat or a later step is handed.

Each env is played twice with the same seeds and the same moves: once by agents that only
record what they are handed, once by agents that record it and then mutate all of it. What every
seat was handed at every decision must be the same in both plays, and so must the records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from socialsim.agent import Agent
from socialsim.runner import EpisodeSpec, play_episode

MARK = "leaked"

ENVS = {
    "donation_v0": ({"n_agents": 5, "rounds": 4}, [f"agent_{i}" for i in range(5)]),
    "prisoners_v0": ({"n_agents": 4}, [f"agent_{i}" for i in range(4)]),
    "trust_v0": ({"n_agents": 4}, [f"agent_{i}" for i in range(4)]),
    "market_v0": ({"n_sellers": 2, "n_buyers": 2}, [f"agent_{i}" for i in range(4)]),
    "decrypto_v0": ({}, ["encoder", "decoder", "interceptor"]),
    "matching_pennies_v0": ({}, ["matcher", "mismatcher"]),
}


def snapshot(value: Any) -> Any:
    """A deep, plain copy of ``value`` (arrays with their dtype), to compare plays."""
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.tolist())
    if isinstance(value, Mapping):
        return {str(k): snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snapshot(v) for v in value]
    if hasattr(value, "payload") and hasattr(value, "kind"):  # a bus message
        return ("message", value.sender, value.kind, snapshot(value.payload))
    return value


def mutate(value: Any, depth: int = 0) -> int:
    """Change everything writable in ``value``; return how many things were changed."""
    changed = 0
    if depth > 6:
        return 0
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            value.fill(7)
            return 1
        return 0
    if isinstance(value, Mapping):
        for item in list(value.values()):
            changed += mutate(item, depth + 1)
        if isinstance(value, dict):
            value[MARK] = MARK
            for key in list(value):
                if key != MARK:
                    value[key] = MARK
            changed += 1
        return changed
    if isinstance(value, (list, tuple)):
        for item in value:
            changed += mutate(item, depth + 1)
        if isinstance(value, list):
            value.append(MARK)
            changed += 1
        return changed
    if hasattr(value, "payload") and hasattr(value, "kind"):
        return mutate(value.payload, depth + 1)
    return 0


class Recorder(Agent):
    """Plays a legal move from its action mask (seeded) and records what it was handed;
    ``mutating=True`` then mutates all of it."""

    plays = {"gossip": {"*"}, "decrypto": {"*"}, "pennies": {"*"}}

    def __init__(self, mutating: bool = False):
        self.mutating = mutating
        self.seen: list[Any] = []
        self.changed = 0

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.rng = np.random.default_rng([seed, sum(map(ord, seat))])

    def act(self, observation: Any, messages: Sequence[Any], info: Mapping[str, Any]) -> Any:
        self.seen.append(snapshot({"obs": observation, "inbox": list(messages), "info": info}))
        action = self.choose(observation, info)
        if self.mutating:
            self.changed += mutate(observation) + mutate(info) + mutate(list(messages))
            self.changed += mutate(messages)
        return action

    def choose(self, observation: Any, info: Mapping[str, Any]) -> Any:
        if info.get("decision") is None:
            return None
        mask = observation["action_mask"]
        if isinstance(mask, tuple):  # one mask per hint position (the Decrypto encoder)
            return np.array([self.rng.choice(np.flatnonzero(m)) for m in mask])
        return int(self.rng.choice(np.flatnonzero(mask)))


def play(env_id: str, form: str, mutating: bool, seed: int):
    kwargs, seats = ENVS[env_id]
    agents = {seat: Recorder(mutating) for seat in seats}
    for seat, agent in agents.items():
        agent.reset(seat, seat, seed)
    spec = EpisodeSpec(
        env_id=env_id,
        seed=seed,
        seats={seat: {"kind": "recorder"} for seat in seats},
        env_kwargs=kwargs,
        form=form,
    )
    record = play_episode(spec, agents=agents)
    assert record.status == "done", record.error
    return record, agents


@pytest.mark.parametrize("form", ["parallel", "aec"])
@pytest.mark.parametrize("env_id", sorted(ENVS))
def test_an_agent_mutating_all_it_is_handed_changes_nothing_for_anyone_else(env_id, form):
    for seed in (0, 1):
        quiet, readers = play(env_id, form, mutating=False, seed=seed)
        loud, writers = play(env_id, form, mutating=True, seed=seed)
        assert sum(agent.changed for agent in writers.values()) > 0  # it did change things
        for seat, reader in readers.items():
            writer = writers[seat]
            assert len(writer.seen) == len(reader.seen) > 0
            for step, (before, after) in enumerate(zip(reader.seen, writer.seen, strict=True)):
                assert after == before, (env_id, form, seed, seat, step)
        assert loud.content() == quiet.content()
