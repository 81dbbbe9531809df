"""Theory-of-mind probes for the four gossip games: side questions asked during a game, never
part of it, and their ground truth, computed from the episode record alone.

A probe is listed in an experiment file (``[[probes]] name = "reputation"``); the episode calls
its ``before_decisions(ctx)`` before the acting agents decide, and stores what it records in the
record's ``probes`` list. Questions go to ``agent.aanswer(Question(kind, context))``; an answer
never enters the game, the bus or an agent's history. Each entry holds the asked ``seat``, the
question's subjects, ``seen`` (the bus log's length when it was asked: messages with a smaller id
had been delivered), the ``answer`` in the probe's words, or ``None`` with ``raw`` kept when the
answer was none of them (an abstention: "unknown", empty, a refusal, which never scores).

| probe | order | asked | question | answers | ground truth (:mod:`.tom_truth`) |
|---|---|---|---|---|---|
| `counterpart_move` | first | A, when its counterpart B is about to move | will B cooperate now? | cooperate, defect | B's move this round (``move_of``) |
| `recipient_tone` | first | A, when its counterpart B is about to gossip | which tone will B publish about you? | the five tones | the tone B published |
| `reputation` | second | every agent A but X and Y, when Y is about to move towards X | which reputation does Y hold of X under Y's norm? | good, bad, unrated | ``held_tones``: what Y knows of X when it moves (with ``gossip_reach`` < 1, what this round's private ``reputation`` message told it) |
| `will_help` | second | the same A | would Y help X, under Y's norm? | cooperate, defect | ``norms.decide`` on that reputation |
| `gossip_true` | truth | A, when it acts, about the latest gossip it saw by someone else | is it true? | true, false | ``gossip_truth``: the tone against what its subject really did |
| `has_seen` | knowledge | A, when it acts, about the latest gossip it saw | has Y seen it? | yes, no | Y is in the message's audience |

A second-order entry is a *false-belief* item when Y's view and what is so (every tone
published about X, lies corrected) answer differently, else a *true-belief* item
(``tom_truth.item_set``); the analysis scores the two sets apart.

Y's norm is its kind when that is a norm (``image_scoring``, ``simple_standing``,
``stern_judging``), else its own ``norm`` (a scripted answerer's), else the probe's ``norm``
(default ``image_scoring``); the entry names it. A second-order question is asked of every agent
but X and Y (false beliefs are rare, and which seats are asked must not tell them apart).
``has_seen`` asks about an agent other than A, rotated by the message (the author and the
subject among them); the question shows the gossip but not its audience. Every probe takes
``seats`` (the agents it may ask; default all). "Could see" is the audience of a bus message
(``tom_truth.saw``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.protocol import GOSSIP
from socialsim.envs.gossip.tom_truth import (
    ANSWERS,
    COUNTERPART_MOVE,
    GOSSIP_PROBES,
    GOSSIP_TRUE,
    HAS_SEEN,
    ORDERS,
    RECIPIENT_TONE,
    REPUTATION,
    WILL_HELP,
    gossip_truth,
    gossips,
    has_seen,
    held_reputation,
    informed,
    move_of,
    reputation_word,
    saw,
    seen_by,
    truth,
)

from socialsim.agent import Agent, Question

# the probes' words and their ground truth stay readable here, where they always were
__all__ = [
    "ANSWERS",
    "COUNTERPART_MOVE",
    "GOSSIP_PROBES",
    "GOSSIP_TRUE",
    "HAS_SEEN",
    "ORDERS",
    "PROBES",
    "RECIPIENT_TONE",
    "REPUTATION",
    "WILL_HELP",
    "CounterpartMove",
    "GossipProbe",
    "GossipTrue",
    "HasSeen",
    "HeldReputation",
    "RecipientTone",
    "WillHelp",
    "answers",
    "gossip_truth",
    "gossips",
    "has_seen",
    "held_reputation",
    "informed",
    "move_of",
    "norm_of",
    "parse_answer",
    "reputation_word",
    "saw",
    "seen_by",
    "truth",
]

DEFAULT_NORM = "image_scoring"


# -- the probes -------------------------------------------------------------------------------------


def norm_of(agent: Any, default: str) -> str:
    """The norm ``agent`` plays by: its kind when that is a norm, else its ``norm`` (a scripted
    answerer's), else ``default``."""
    for norm in (getattr(agent, "kind", None), getattr(agent, "norm", None)):
        if norm in norms.NORMS:
            return norm
    return default


def _observer(agents: Sequence[str], round_: int, exclude: set[str]) -> str | None:
    others = [a for a in agents if a not in exclude]
    return others[round_ % len(others)] if others else None


def answers(agent: Any) -> bool:
    """Whether ``agent`` answers side questions (its class overrides ``answer`` or ``aanswer``):
    a seat that does not is not asked."""
    kind = type(agent)
    return kind.answer is not Agent.answer or kind.aanswer is not Agent.aanswer


def parse_answer(probe: str, answer: Any) -> str | None:
    """The answer in the probe's words (case and surrounding space ignored), else ``None``."""
    if not isinstance(answer, str):
        return None
    word = answer.strip().strip(".").casefold()
    return word if word in ANSWERS[probe] else None


def _gossip_env(env: Any) -> Any:
    return getattr(env, "parallel", env)


class GossipProbe:
    """One gossip probe (its ``name`` says which). ``seats``: the agents it may ask (default
    every agent); ``norm``: Y's norm when Y's kind is not one."""

    name = ""
    #: asked again each round (a move's question), or once per subject (a gossip's)
    per_round = True

    def __init__(self, seats: Sequence[str] | None = None, norm: str = DEFAULT_NORM):
        if norm not in norms.NORMS:
            raise ValueError(f"norm: unknown norm {norm!r}; allowed: {', '.join(norms.NORMS)}")
        if seats is not None and (
            isinstance(seats, str) or not all(isinstance(s, str) for s in seats)
        ):
            raise ValueError(f"seats: a list of agent ids, got {seats!r}")
        self.seats = None if seats is None else set(seats)
        self.norm = norm
        self._asked: set[tuple] = set()

    def may_ask(self, seat: str | None) -> bool:
        return seat is not None and (self.seats is None or seat in self.seats)

    async def before_decisions(self, ctx: Any) -> None:
        env = _gossip_env(ctx.env)
        seen = len(env.bus.log)
        agents = list(env.possible_agents)
        for actor in ctx.acting:
            info = ctx.infos.get(actor) or {}
            decision, counterpart = info.get("decision"), info.get("counterpart")
            if decision is None or counterpart is None:
                continue
            for seat, subjects in self.questions(env, agents, actor, decision, counterpart, info):
                key = (
                    seat,
                    info.get("round") if self.per_round else None,
                    *sorted(subjects.items()),
                )
                if key in self._asked or not self.may_ask(seat) or not answers(ctx.agents[seat]):
                    continue
                self._asked.add(key)
                context = {
                    "game": env.bus.log[0].payload["game"],
                    "round": info.get("round"),
                    "you": seat,
                    **subjects,
                }
                context.update(self.facts(env, subjects, seen))
                # what reached the seat since it last decided: in its inbox, not yet read
                context["unread"] = [m.to_json() for m in env.bus.peek(seat)]
                # every gossip in its inbox with its audience (a recipient sees a message's `to`),
                # but the one whose audience is the question
                hidden = subjects.get("gossip") if self.name == HAS_SEEN else None
                context["inbox_gossip"] = [
                    m.to_json()
                    for m in env.bus.visible_to(seat)
                    if m.kind == GOSSIP and m.id != hidden
                ]
                answer = await ctx.agents[seat].aanswer(Question(self.name, context))
                entry: dict[str, Any] = {
                    "probe": self.name,
                    "seat": seat,
                    "round": info.get("round"),
                    "seen": seen,
                    **subjects,
                    "answer": parse_answer(self.name, answer),
                }
                if entry["answer"] is None:  # kept for inspection; never scored
                    entry["raw"] = (
                        answer if answer is None or isinstance(answer, str) else repr(answer)
                    )
                ctx.record(entry)

    def questions(self, env, agents, actor, decision, counterpart, info):
        """(seat asked, the question's subjects) for one acting agent."""
        raise NotImplementedError

    def facts(self, env: Any, subjects: Mapping[str, Any], seen: int) -> dict[str, Any]:
        """What the question shows beside its subjects (a gossip's text, the norm's name)."""
        if "gossip" in subjects:
            message = env.bus.log[subjects["gossip"]].to_json()
            return {"gossip_said": message["payload"], "gossip_to": message["to"]}
        return {}


class CounterpartMove(GossipProbe):
    name = COUNTERPART_MOVE

    def questions(self, env, agents, actor, decision, counterpart, info):
        if decision == GOSSIP:
            return []
        return [(counterpart, {"about": actor, "decision": decision})]


class RecipientTone(GossipProbe):
    name = RECIPIENT_TONE

    def questions(self, env, agents, actor, decision, counterpart, info):
        if decision != GOSSIP:
            return []
        return [(counterpart, {"author": actor})]


class HeldReputation(GossipProbe):
    name = REPUTATION

    def questions(self, env, agents, actor, decision, counterpart, info):
        if decision == GOSSIP:
            return []
        norm = norm_of(self._agents[actor], self.norm)
        subjects = {"viewer": actor, "about": counterpart, "norm": norm}
        # every agent but X and Y, whether Y's view is true or not: who is asked says nothing
        return [(a, subjects) for a in agents if a not in (actor, counterpart)]

    def before_decisions(self, ctx):
        self._agents = ctx.agents  # Y's norm is read from the live agent
        return super().before_decisions(ctx)


class WillHelp(HeldReputation):
    name = WILL_HELP


class _LatestGossip(GossipProbe):
    per_round = False

    def questions(self, env, agents, actor, decision, counterpart, info):
        latest = None
        for message in env.bus.log:
            if message.kind == GOSSIP and saw(message.to_json(), actor):
                if message.payload["author"] != actor:
                    latest = message
        if latest is None:
            return []
        return [(actor, self.subjects(agents, info, actor, latest))]

    def subjects(self, agents, info, actor, message) -> dict[str, Any]:
        return {"gossip": message.id}


class GossipTrue(_LatestGossip):
    name = GOSSIP_TRUE


class HasSeen(_LatestGossip):
    name = HAS_SEEN

    def subjects(self, agents, info, actor, message):
        # any agent but the asked one, its author and subject among them, so the truth varies
        viewer = _observer(agents, message.id, {actor})
        return {"gossip": message.id, "viewer": viewer}

    def facts(self, env: Any, subjects: Mapping[str, Any], seen: int) -> dict[str, Any]:
        return {"gossip_said": env.bus.log[subjects["gossip"]].to_json()["payload"]}


PROBES = {
    COUNTERPART_MOVE: "socialsim.envs.gossip.tom:CounterpartMove",
    RECIPIENT_TONE: "socialsim.envs.gossip.tom:RecipientTone",
    REPUTATION: "socialsim.envs.gossip.tom:HeldReputation",
    WILL_HELP: "socialsim.envs.gossip.tom:WillHelp",
    GOSSIP_TRUE: "socialsim.envs.gossip.tom:GossipTrue",
    HAS_SEEN: "socialsim.envs.gossip.tom:HasSeen",
}
