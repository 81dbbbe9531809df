"""The offline playground's model: one policy that answers every prompt of the bundled LLM
agents with a legal move, so that ``socialsim run`` of any bundled LLM experiment works with no
model and no network::

    python -m socialsim.testing.llm_server --play        # prints its URL
    socialsim run llm_align_donation --set 'seats.*.model.api_base=URL' \
        --set 'seats.*.model.model=openai/play' --set episodes=1 --out results/play

:class:`PlayPolicy` reads a chat as a model would and hands it to the scripted test policies:
Decrypto prompts to :class:`~socialsim.testing.decrypto_policies.DecryptoPolicy`, the gossip
games' to :class:`~socialsim.testing.gossip_policies.GossipPolicy`, the culture donor game's to
:class:`~socialsim.testing.culture_policies.CulturePolicy`; the structured-output probe
gets the one answer its schema allows.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from socialsim.testing.culture_policies import CulturePolicy
from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.gossip_policies import GossipPolicy

#: what the Decrypto agents' system prompts all name, and the gossip games' never do
DECRYPTO_MARK = "decrypto"
#: what the culture donors' system prompt names (the gossip games speak of a donation game)
CULTURE_MARK = "players of a donor game"
#: the structured-output probe's question (:func:`socialsim.llm.server.probe_structured_output`)
PROBE = '{"ready": "yes"}'


class PlayPolicy:
    """A legal move for any bundled LLM prompt (see the module docstring)."""

    def __init__(self) -> None:
        self.decrypto = DecryptoPolicy()
        self.gossip = GossipPolicy()
        self.culture = CulturePolicy()

    def __call__(self, messages: Sequence[Mapping[str, Any]], request: Mapping[str, Any]) -> str:
        chat = [dict(m) for m in messages]
        if len(chat) == 1 and PROBE in str(chat[0].get("content", "")):
            return json.dumps({"ready": "yes"})
        if any(DECRYPTO_MARK in str(m.get("content", "")).casefold() for m in chat[:2]):
            return self.decrypto(chat, dict(request))
        if any(CULTURE_MARK in str(m.get("content", "")) for m in chat[:2]):
            return self.culture(chat, dict(request))
        return self.gossip(chat, dict(request))


#: the trained policies the RL files name are not in the repository: a scripted seat instead
STAND_INS = {
    "llm_rl_donor": ['seats.agent_0={kind="always_cooperate"}'],
    "llm_rl_interceptor": ['seats.interceptor={kind="decrypto_random_guesser"}'],
}


def play_overrides(name: str, url: str) -> list[str]:
    """The ``--set`` strings that play the bundled LLM experiment ``name`` on the playground at
    ``url``: one episode per cell, every LLM seat (the default seat, or each named one where
    the file has no default) on the server."""
    text = (resources.files("socialsim.experiments") / f"{name}.toml").read_text("utf-8")
    config = tomllib.loads(text)
    seats, grid = config["seats"], config.get("grid", {})
    # axes of whole seat tables (not of keys inside them)
    swept = [k.removeprefix("seats.") for k in grid if k.startswith("seats.") and k.count(".") == 1]
    names = ["*"] if "*" in seats else sorted(set(seats) - set(swept))
    sets = ["episodes=1", *STAND_INS.get(name, [])]
    for seat in names:
        sets += [f"seats.{seat}.model.api_base={url}", f"seats.{seat}.model.model=openai/play"]
    for seat in swept:  # a grid of whole seat tables: its LLM tables, on the server
        model = f'{{ model = "openai/play", api_base = "{url}" }}'
        tables = [
            f'{{ kind = "{spec["kind"]}", model = {model} }}'
            for spec in grid[f"seats.{seat}"]
            if "model" in spec
        ]
        sets.append(f"grid.seats.{seat}=[{', '.join(tables)}]")
    return sets
