"""The offline playground's model: one policy that answers every prompt of the bundled LLM
agents with a legal move, so that ``socialsim run`` of any bundled LLM experiment works with no
model and no network::

    python -m socialsim.testing.llm_server --play        # prints its URL
    socialsim run llm_align_donation --set 'seats.*.model.api_base=URL' \
        --set 'seats.*.model.model=openai/play' --set episodes=1 --out results/play

:class:`PlayPolicy` reads a chat as a model would and hands it to the scripted test policies:
Decrypto prompts to :class:`~socialsim.testing.decrypto_policies.DecryptoPolicy`, the gossip
games' to :class:`~socialsim.testing.gossip_policies.GossipPolicy`; the structured-output probe
gets the one answer its schema allows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.testing.decrypto_policies import DecryptoPolicy
from socialsim.testing.gossip_policies import GossipPolicy

#: what the Decrypto agents' system prompts all name, and the gossip games' never do
DECRYPTO_MARK = "decrypto"
#: the structured-output probe's question (:func:`socialsim.llm.server.probe_structured_output`)
PROBE = '{"ready": "yes"}'


class PlayPolicy:
    """A legal move for any bundled LLM prompt (see the module docstring)."""

    def __init__(self) -> None:
        self.decrypto = DecryptoPolicy()
        self.gossip = GossipPolicy()

    def __call__(self, messages: Sequence[Mapping[str, Any]], request: Mapping[str, Any]) -> str:
        chat = [dict(m) for m in messages]
        if len(chat) == 1 and PROBE in str(chat[0].get("content", "")):
            return json.dumps({"ready": "yes"})
        if any(DECRYPTO_MARK in str(m.get("content", "")).casefold() for m in chat[:2]):
            return self.decrypto(chat, dict(request))
        return self.gossip(chat, dict(request))
