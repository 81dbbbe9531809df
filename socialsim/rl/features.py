"""Extra observation keys a seat can compute from what it perceives, for policies to learn from.

A feature is built from exactly what the runner hands any agent at a decision — its numeric
observation, the bus messages new in its inbox, and its info — so a trained policy computes the
same features when it plays as an ordinary agent (the ``rl`` kind) as when it trained in a
:class:`~socialsim.rl.view.SeatView`. A feature object is reset once per episode with the seat's
agent id and keeps what it needs of the inbox.

| name          | games  | value (float32)                                                       |
|---------------|--------|-----------------------------------------------------------------------|
| `counterpart` | gossip | the tone counts published about this decision's counterpart (5, in the protocol's tone order), then the one-hot of the latest tone published about it (5), then 1 if nothing has been published about it (1); all zeros with no counterpart |

Features that need data of the agents package (word vectors) live there and are handed to the
view as objects: ``hint_history`` (Decrypto guessers, :mod:`socialsim.agents.rl.decrypto`). The
``rl`` kind knows both kinds by name (``socialsim.agents.rl.policy.FEATURES``).

Why ``counterpart``: the gossip observation holds every agent's tone counts and the
counterpart's one-hot, so a policy must learn a product of the two to read the counterpart's
reputation; and the counts lose the order that the ``simple_standing`` and ``stern_judging``
norms judge by (the latest non-neutral tone). The feature hands over both, as any agent that
reads its inbox knows them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from socialsim.envs.gossip.protocol import GOSSIP, TONE_INDEX, TONES


class CounterpartTones:
    """The ``counterpart`` feature (see the module docstring)."""

    name = "counterpart"
    space = spaces.Box(0.0, np.inf, shape=(2 * len(TONES) + 1,), dtype=np.float32)

    def reset(self, agent_id: str) -> None:
        self.agent_id = agent_id
        self.counts: dict[str, np.ndarray] = {}
        self.latest: dict[str, int] = {}

    def __call__(
        self, observation: Any, messages: Sequence[Any], info: Mapping[str, Any]
    ) -> np.ndarray:
        for message in messages:
            if message.kind == GOSSIP:
                about, tone = message.payload["about"], TONE_INDEX[message.payload["tone"]]
                counts = self.counts.get(about)
                if counts is None:
                    counts = self.counts[about] = np.zeros(len(TONES), dtype=np.float32)
                counts[tone] += 1.0
                self.latest[about] = tone
        value = np.zeros(self.space.shape, dtype=np.float32)
        counterpart = info.get("counterpart")
        if counterpart is None:
            return value
        counts = self.counts.get(counterpart)
        if counts is None:
            value[-1] = 1.0
        else:
            value[: len(TONES)] = counts
            value[len(TONES) + self.latest[counterpart]] = 1.0
        return value


#: feature name -> its class
FEATURES: dict[str, type] = {CounterpartTones.name: CounterpartTones}


def build(features: Sequence[Any], table: Mapping[str, type] = FEATURES) -> list[Any]:
    """Fresh feature objects: a name is looked up in ``table`` (an unknown one is a
    ``ValueError`` naming the allowed ones); anything else is taken as a feature object already
    built (``name``, ``space``, ``reset(agent_id)``, and called with what a seat perceives), as
    the features that need agents' data are (``socialsim.agents.rl``)."""
    built = []
    for feature in features:
        if not isinstance(feature, str):
            built.append(feature)
        elif feature in table:
            built.append(table[feature]())
        else:
            raise ValueError(
                f"features: unknown feature {feature!r}; allowed: {', '.join(sorted(table))}"
            )
    return built
