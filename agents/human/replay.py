"""Recorded Decrypto games replayed against models: the hints a person gave, given again.

``decrypto_replay_encoder`` plays the encoder seat of a game logged in a results directory (a
``socialsim play`` or ``socialsim serve`` game, or any run): at each turn it gives the hints
that the recorded encoder gave, so any agent can sit in the decoder or interceptor seat of a
human game (the Decrypto paper's replay of human games, its Table 1). The keywords and codes
come from the seed, which only the episode's seed sets; so the experiment must use the
recorded seed and at most the recorded turns, which :func:`replay_settings` gives::

    socialsim run decrypto_quickstart --set seed=SEED --set episodes=1 \\
        --set env.kwargs.max_turns=TURNS \\
        --set 'seats.encoder={kind="decrypto_replay_encoder", source="results/play_decrypto_..."}'

The agent checks at every turn that the keywords and the code are the recorded ones and raises
a ``ValueError`` naming the seed to use otherwise (the episode is then logged as failed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.envs.decrypto.protocol import render_code

from socialsim import records
from socialsim.agent import Agent
from socialsim.bus import Message


def recorded_game(source: str | os.PathLike, episode: int = 0) -> records.EpisodeRecord:
    """The logged Decrypto game ``episode`` of the results directory ``source``."""
    for record in records.read_records(source):
        if record.episode == episode and record.env_id == "decrypto_v0":
            return record
    raise ValueError(f"source: no finished Decrypto episode {episode} in {os.fspath(source)}")


def replay_settings(source: str | os.PathLike, episode: int = 0) -> dict[str, Any]:
    """The seed, turns and keywords a replay of the recorded game must use."""
    record = recorded_game(source, episode)
    return {
        "seed": record.seed,
        "max_turns": record.summary["turns"],
        "keywords": record.summary["keywords"],
        "human_seats": [s for s, spec in record.seats.items() if spec.get("kind") == "human"],
    }


class ReplayEncoder(Agent):
    """Gives, turn by turn, the hints of the encoder of a recorded game."""

    def __init__(self, source: str, episode: int = 0):
        if isinstance(episode, bool) or not isinstance(episode, int) or episode < 0:
            raise ValueError(f"episode: must be an integer >= 0, got {episode!r}")
        record = recorded_game(source, episode)
        self.source = os.fspath(source)
        self.recorded_seed = record.seed
        self.keywords = list(record.summary["keywords"])
        self.turns = record.summary["turn_log"]

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]):
        turn = int(info["turn"])
        where = f"{self.source} episode (seed {self.recorded_seed})"
        if list(info.get("keywords", [])) != self.keywords:
            raise ValueError(
                f"decrypto_replay_encoder: the keywords differ from the recorded game's; "
                f"run it with seed = {self.recorded_seed} ({where})"
            )
        if turn > len(self.turns):
            raise ValueError(
                f"decrypto_replay_encoder: the recorded game has {len(self.turns)} turns; set "
                f"env.kwargs.max_turns = {len(self.turns)}"
            )
        recorded = self.turns[turn - 1]
        if list(info["code"]) != list(recorded["code"]):
            raise ValueError(
                f"decrypto_replay_encoder: turn {turn}'s code is {render_code(info['code'])}, "
                f"not the recorded {render_code(recorded['code'])}; run it with seed = "
                f"{self.recorded_seed}"
            )
        return {"hints": list(recorded["hints"])}
