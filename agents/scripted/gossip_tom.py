"""Two bounds for the gossip theory-of-mind probes (:mod:`socialsim.envs.gossip.tom`): seats
that play as image-scoring discriminators (or under ``norm``) and answer the probes' questions.

| kind | answers |
|---|---|
| `gossip_oracle` | from its own inbox (what it read, and what reached it unread, with each message's audience), abstaining ("unknown") where its inbox does not hold the answer: first-order questions (moves not yet made), and whether a gossip about someone else is true. It scores 1.0 wherever its inbox holds the answer: an upper bound. |
| `gossip_random_answerer` | a word of the probe's answers, uniformly from its own seeded stream: a lower bound. |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialsim.agents.scripted.gossip import Discriminator
from socialsim.envs.gossip import norms, tom

from socialsim.agent import Question

KINDS = {
    "gossip_oracle": "socialsim.agents.scripted.gossip_tom:Oracle",
    "gossip_random_answerer": "socialsim.agents.scripted.gossip_tom:RandomAnswerer",
}

UNKNOWN = "unknown"


class _Answerer(Discriminator):
    def __init__(self, norm: str = "image_scoring"):
        if norm not in norms.NORMS:
            raise ValueError(f"norm: must be one of {', '.join(norms.NORMS)}, got {norm!r}")
        self.norm = norm


class Oracle(_Answerer):
    """Answers from its inbox only; see the module docstring."""

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.inbox: list[dict[str, Any]] = []
        self.moves: dict[tuple[int, str], str] = {}  # (round, counterpart) -> cooperate/defect

    def read(self, messages) -> None:
        super().read(messages)
        self.inbox += [m.to_json() for m in messages]

    def cooperates(self, counterpart, decision, info) -> str:
        move = super().cooperates(counterpart, decision, info)
        self.moves[(info["round"], counterpart)] = move
        return move

    def answer(self, question: Question) -> str:
        context = question.context
        inbox = self.inbox + list(context.get("unread", ()))
        kind = question.kind
        if kind in (tom.REPUTATION, tom.WILL_HELP):
            tones = [
                m["payload"]["tone"]
                for m in tom.gossips(inbox)
                if m["payload"]["about"] == context["about"] and tom.saw(m, context["viewer"])
            ]
            held = norms.reputation(tones, context["norm"])
            if kind == tom.REPUTATION:
                return tom.reputation_word(held)
            return norms.decide(context["norm"], held)
        if kind == tom.HAS_SEEN:
            message = _by_id(inbox, context["gossip"])
            if message is None:
                return UNKNOWN
            return "yes" if tom.saw(message, context["viewer"]) else "no"
        if kind == tom.GOSSIP_TRUE:
            message = _by_id(inbox, context["gossip"])
            if message is None or message["payload"]["about"] != self.agent_id:
                return UNKNOWN  # only my own moves are in what I know
            payload = message["payload"]
            move = self.moves.get((payload["round"], payload["author"]))
            value = norms.valence(payload["tone"])
            if move is None or value == 0:
                return UNKNOWN
            return "true" if (value > 0) == (move == "cooperate") else "false"
        return UNKNOWN  # first-order: moves not yet made are in no inbox


def _by_id(inbox: list[Mapping[str, Any]], message_id: int) -> Mapping[str, Any] | None:
    return next((m for m in inbox if m["id"] == message_id), None)


class RandomAnswerer(_Answerer):
    """Answers each probe with one of its words, uniformly at random."""

    def answer(self, question: Question) -> str:
        words = tom.ANSWERS.get(question.kind)
        if not words:
            return UNKNOWN
        return words[int(self.rng.integers(len(words)))]
