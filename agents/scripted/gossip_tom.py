"""Answerers of the gossip theory-of-mind probes (:mod:`socialsim.envs.gossip.tom`): seats that
play as image-scoring discriminators (or under ``norm``) and answer the probes' questions. The
oracle is the upper bound; the others hold no beliefs about anyone, and every score is read
beside theirs (the report computes the same tricks on every seat's own items).

| kind | answers |
|---|---|
| `gossip_oracle` | from its own inbox (what it read, and what reached it unread, with each message's audience) and the rules, abstaining ("unknown") where they do not hold the answer: first-order questions (moves not yet made), whether a gossip about someone else is true, what a donor was privately told under `gossip_reach` < 1. It scores 1.0 wherever it is informed: an upper bound. |
| `gossip_constant_answerer` | the same word to every question of a probe: `answers` (probe -> word), by default the first word of each (cooperate, praising, good, cooperate, true, yes). |
| `gossip_rule_answerer` | the probe's rule that needs no mind (``tom_truth.rule_answer``): its own move -> the tone, the last tone -> the move, its own view for Y's, the rules' audience. |
| `gossip_abstainer` | "unknown" to everything. |
| `gossip_random_answerer` | a word of the probe's answers, uniformly from its own seeded stream. |
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialsim.agents.scripted.gossip import Discriminator
from socialsim.envs.gossip import norms, tom, tom_truth

from socialsim.agent import Question

KINDS = {
    "gossip_oracle": "socialsim.agents.scripted.gossip_tom:Oracle",
    "gossip_constant_answerer": "socialsim.agents.scripted.gossip_tom:ConstantAnswerer",
    "gossip_rule_answerer": "socialsim.agents.scripted.gossip_tom:RuleAnswerer",
    "gossip_abstainer": "socialsim.agents.scripted.gossip_tom:Abstainer",
    "gossip_random_answerer": "socialsim.agents.scripted.gossip_tom:RandomAnswerer",
}

UNKNOWN = "unknown"


class _Answerer(Discriminator):
    def __init__(self, norm: str = "image_scoring"):
        if norm not in norms.NORMS:
            raise ValueError(f"norm: must be one of {', '.join(norms.NORMS)}, got {norm!r}")
        self.norm = norm


class _InboxAnswerer(_Answerer):
    """Keeps every message that reached it and its own moves, to answer from."""

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

    def inbox_now(self, question: Question) -> list[dict[str, Any]]:
        return self.inbox + list(question.context.get("unread", ()))


class Oracle(_InboxAnswerer):
    """Answers from its inbox only; see the module docstring."""

    def answer(self, question: Question) -> str:
        context = question.context
        inbox = self.inbox_now(question)
        kind = question.kind
        if kind in tom_truth.SECOND_ORDER:
            if tom_truth.reach_of(inbox) < 1:
                return UNKNOWN  # what Y was told this round went to Y alone
            tones = [
                m["payload"]["tone"]
                for m in tom_truth.gossips(inbox)
                if m["payload"]["about"] == context["about"] and tom_truth.saw(m, context["viewer"])
            ]
            held = norms.reputation(tones, context["norm"])
            if kind == tom.REPUTATION:
                return tom_truth.reputation_word(held)
            return norms.decide(context["norm"], held)
        if kind == tom.HAS_SEEN:  # the question leaves out the audience: the rules tell it
            return tom_truth.rule_answer(kind, inbox, context)
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


class ConstantAnswerer(_Answerer):
    """Answers every question of a probe with one word: ``answers`` (probe -> word; the probes
    not named get their first word)."""

    def __init__(self, answers: Mapping[str, str] | None = None, norm: str = "image_scoring"):
        super().__init__(norm)
        if answers is not None and not isinstance(answers, Mapping):
            raise ValueError(f"answers: a table of probe = word, got {answers!r}")
        answers = dict(answers or {})
        for probe, word in answers.items():
            if probe not in tom.ANSWERS or word not in tom.ANSWERS[probe]:
                allowed = "; ".join(f"{p}: {', '.join(w)}" for p, w in tom.ANSWERS.items())
                raise ValueError(f"answers: {probe!r} = {word!r} is not allowed; {allowed}")
        self.answers = {p: answers.get(p, words[0]) for p, words in tom.ANSWERS.items()}

    def answer(self, question: Question) -> str:
        return self.answers.get(question.kind, UNKNOWN)


class RuleAnswerer(_InboxAnswerer):
    """Answers by the probe's rule that needs no mind (``tom_truth.rule_answer``)."""

    def answer(self, question: Question) -> str:
        if question.kind not in tom.ANSWERS:
            return UNKNOWN
        context = question.context
        own = self.moves.get((context.get("round"), context.get("author")))
        return tom_truth.rule_answer(question.kind, self.inbox_now(question), context, own)


class Abstainer(_Answerer):
    """Answers "unknown" to every question."""

    def answer(self, question: Question) -> str:
        return UNKNOWN


class RandomAnswerer(_Answerer):
    """Answers each probe with one of its words, uniformly at random."""

    def answer(self, question: Question) -> str:
        words = tom.ANSWERS.get(question.kind)
        if not words:
            return UNKNOWN
        return words[int(self.rng.integers(len(words)))]
