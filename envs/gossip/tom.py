"""Theory-of-mind probes for the four gossip games: side questions asked during a game, never
part of it, and their ground truth, computed from the episode record alone.

A probe is listed in an experiment file (``[[probes]] name = "reputation"``); the episode calls
its ``before_decisions(ctx)`` before the acting agents decide, and stores what it records in the
record's ``probes`` list. Questions go to ``agent.aanswer(Question(kind, context))``; an answer
never enters the game, the bus or an agent's history. Each entry holds the asked ``seat``, the
question's subjects, ``seen`` (the bus log's length when it was asked: messages with a smaller id
had been delivered), the ``answer`` in the probe's words, or ``None`` with ``raw`` kept when the
answer was none of them (an abstention: "unknown", empty, a refusal, which never scores).

| probe | order | asked | question | answers | ground truth (:func:`truth`) |
|---|---|---|---|---|---|
| `counterpart_move` | first | A, when its counterpart B is about to move | will B cooperate now? | cooperate, defect | B's move this round (:func:`move_of`) |
| `recipient_tone` | first | A, when its counterpart B is about to gossip | which tone will B publish about you? | the five tones | the tone B published |
| `reputation` | second | an observer A, when Y is about to move towards X | which reputation does Y hold of X under Y's norm? | good, bad, unrated | :func:`held_reputation`: the tones about X that Y could see |
| `will_help` | second | the same A | would Y help X, under Y's norm? | cooperate, defect | ``norms.decide`` on that reputation |
| `gossip_true` | truth | A, when it acts, about the latest gossip it saw by someone else | is it true? | true, false | :func:`gossip_truth`: the tone against what its subject really did |
| `has_seen` | knowledge | A, when it acts, about the latest gossip it saw | has Y seen it? | yes, no | :func:`has_seen`: Y is in the message's audience |

Y's norm is its kind when that is a norm (``image_scoring``, ``simple_standing``,
``stern_judging``), else the probe's ``norm`` (default ``image_scoring``); the entry names it.
The observer A of a second-order question is the first agent, in the rules' order rotated by
the round, that is neither X nor Y. ``has_seen`` asks about the gossip's subject when that is
not A, else about the rotated observer. Every probe takes ``seats`` (the agents it may ask;
default all). "Could see" is the audience of a bus message (:func:`saw`); the private
``reputation`` messages of ``gossip_reach`` < 1 are not counted as seen tones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.protocol import GAMES, GOSSIP, TONES

from socialsim.agent import Agent, Question

COUNTERPART_MOVE = "counterpart_move"
RECIPIENT_TONE = "recipient_tone"
REPUTATION = "reputation"
WILL_HELP = "will_help"
GOSSIP_TRUE = "gossip_true"
HAS_SEEN = "has_seen"
GOSSIP_PROBES = (COUNTERPART_MOVE, RECIPIENT_TONE, REPUTATION, WILL_HELP, GOSSIP_TRUE, HAS_SEEN)
ORDERS = {
    COUNTERPART_MOVE: "first",
    RECIPIENT_TONE: "first",
    REPUTATION: "second",
    WILL_HELP: "second",
    GOSSIP_TRUE: "truth",
    HAS_SEEN: "knowledge",
}
#: the words each probe's answer is one of (anything else is an abstention)
ANSWERS: Mapping[str, tuple[str, ...]] = {
    COUNTERPART_MOVE: norms.ACTIONS,
    RECIPIENT_TONE: TONES,
    REPUTATION: ("good", "bad", "unrated"),
    WILL_HELP: norms.ACTIONS,
    GOSSIP_TRUE: ("true", "false"),
    HAS_SEEN: ("yes", "no"),
}
DEFAULT_NORM = "image_scoring"


# -- ground truth: pure functions of a record's messages --------------------------------------------


def _to(message: Mapping[str, Any]) -> Any:
    return message["to"]


def saw(message: Mapping[str, Any], agent: str) -> bool:
    """Whether ``agent`` is in the audience of ``message`` (a record's message: ``to`` is ``"*"``
    or a list of agent ids)."""
    to = _to(message)
    return to == "*" or (not isinstance(to, str) and agent in to)


def seen_by(messages: Sequence[Mapping[str, Any]], agent: str, seen: int) -> list[Mapping]:
    """The messages of ids below ``seen`` that ``agent`` could see, oldest first."""
    return [m for m in messages if m["id"] < seen and saw(m, agent)]


def gossips(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [m for m in messages if m["kind"] == GOSSIP]


def held_reputation(
    messages: Sequence[Mapping[str, Any]], viewer: str, about: str, norm: str, seen: int
) -> int | None:
    """The reputation ``viewer`` holds of ``about`` under ``norm`` (``norms.reputation``, the
    norm's own memory) from the tones about it that ``viewer`` could see before ``seen``."""
    tones = [
        m["payload"]["tone"]
        for m in gossips(seen_by(messages, viewer, seen))
        if m["payload"]["about"] == about
    ]
    return norms.reputation(tones, norm)


def reputation_word(reputation: int | None) -> str:
    """``None`` -> ``"unrated"``; good -> ``"good"``; bad (0 or below) -> ``"bad"``."""
    if reputation is None:
        return "unrated"
    return "good" if reputation > 0 else "bad"


def _action(messages, actor: str, target: str, round_: int) -> Any:
    for m in messages:
        p = m["payload"]
        if m["kind"] == "action" and p["round"] == round_ and p["actor"] == actor:
            if p["target"] == target:
                return p["action"]
    return None


def move_of(
    messages: Sequence[Mapping[str, Any]], game: str, actor: str, target: str, round_: int
) -> str | None:
    """What ``actor`` did to ``target`` in round ``round_``, as ``"cooperate"`` or ``"defect"``
    (``None`` if it did nothing to it). Named moves by the game's ``cooperative`` table (a
    market buyer's ``none`` defects); an investor that sent anything cooperated, a responder
    that returned at least what was invested cooperated (as the scripted players judge)."""
    action = _action(messages, actor, target, round_)
    if action is None:
        return None
    if isinstance(action, Mapping):
        if "invest" in action:
            return "cooperate" if action["invest"] > 0 else "defect"
        invested = _action(messages, target, actor, round_)
        sent = invested.get("invest", 0.0) if isinstance(invested, Mapping) else 0.0
        returned = action.get("return", 0.0)
        return "cooperate" if sent == 0 or returned >= sent - 1e-9 else "defect"
    cooperative = {c for c, _ in GAMES[game].cooperative.values()}
    return "cooperate" if action in cooperative else "defect"


def gossip_truth(messages: Sequence[Mapping[str, Any]], game: str, gossip_id: int) -> bool | None:
    """Whether gossip ``gossip_id`` is true: a praising tone about an agent that cooperated with
    its author that round, or a negative one (mocking, complaint, criticism) about one that
    defected. ``None`` for a neutral tone (it claims nothing) or when the subject did nothing to
    the author."""
    payload = messages[gossip_id]["payload"]
    value = norms.valence(payload["tone"])
    move = move_of(messages, game, payload["about"], payload["author"], payload["round"])
    if value == 0 or move is None:
        return None
    return (value > 0) == (move == "cooperate")


def has_seen(messages: Sequence[Mapping[str, Any]], viewer: str, gossip_id: int) -> bool:
    """Whether ``viewer`` is in the audience of message ``gossip_id``."""
    return saw(messages[gossip_id], viewer)


def published_tone(
    messages: Sequence[Mapping[str, Any]], author: str, about: str, round_: int
) -> str | None:
    for m in gossips(messages):
        p = m["payload"]
        if p["author"] == author and p["about"] == about and p["round"] == round_:
            return p["tone"]
    return None


def truth(record: Any, entry: Mapping[str, Any]) -> str | None:
    """The true answer to one probe entry of ``record`` (an ``EpisodeRecord``), in the probe's
    words, or ``None`` when the record does not settle it (then the entry is not scored)."""
    messages, probe = record.messages, entry["probe"]
    game = record.summary.get("game") or messages[0]["payload"]["game"]
    if probe == COUNTERPART_MOVE:
        return move_of(messages, game, entry["about"], entry["seat"], entry["round"])
    if probe == RECIPIENT_TONE:
        return published_tone(messages, entry["author"], entry["seat"], entry["round"])
    if probe in (REPUTATION, WILL_HELP):
        held = held_reputation(
            messages, entry["viewer"], entry["about"], entry["norm"], entry["seen"]
        )
        if probe == REPUTATION:
            return reputation_word(held)
        return norms.decide(entry["norm"], held)
    if probe == GOSSIP_TRUE:
        verdict = gossip_truth(messages, game, entry["gossip"])
        return None if verdict is None else ("true" if verdict else "false")
    if probe == HAS_SEEN:
        return "yes" if has_seen(messages, entry["viewer"], entry["gossip"]) else "no"
    raise ValueError(f"probe: {probe!r} is not a gossip probe; allowed: {', '.join(GOSSIP_PROBES)}")


def informed(record: Any, entry: Mapping[str, Any]) -> bool:
    """Whether the asked seat's inbox held the answer when it was asked: every message the truth
    reads had reached it. First-order questions are about moves not yet made: never."""
    messages, probe, seat = record.messages, entry["probe"], entry["seat"]
    if probe in (REPUTATION, WILL_HELP):
        theirs = [
            m
            for m in gossips(seen_by(messages, entry["viewer"], entry["seen"]))
            if m["payload"]["about"] == entry["about"]
        ]
        return all(saw(m, seat) for m in theirs)
    if probe == GOSSIP_TRUE:
        payload = messages[entry["gossip"]]["payload"]
        return seat in (payload["author"], payload["about"])
    if probe == HAS_SEEN:
        return saw(messages[entry["gossip"]], seat)
    return False


# -- the probes -------------------------------------------------------------------------------------


def norm_of(agent: Any, default: str) -> str:
    kind = getattr(agent, "kind", "") or ""
    return kind if kind in norms.NORMS else default


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
                # every gossip in its inbox with its audience (a recipient sees a message's `to`)
                context["inbox_gossip"] = [
                    m.to_json() for m in env.bus.visible_to(seat) if m.kind == GOSSIP
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
        observer = _observer(agents, info.get("round") or 0, {actor, counterpart})
        norm = norm_of(self._agents[actor], self.norm)
        return [(observer, {"viewer": actor, "about": counterpart, "norm": norm})]

    def before_decisions(self, ctx):  # Y's norm is read from the live agent's kind
        self._agents = ctx.agents
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
        about = message.payload["about"]
        viewer = about if about != actor else _observer(agents, info.get("round") or 0, {actor})
        return {"gossip": message.id, "viewer": viewer}


PROBES = {
    COUNTERPART_MOVE: "socialsim.envs.gossip.tom:CounterpartMove",
    RECIPIENT_TONE: "socialsim.envs.gossip.tom:RecipientTone",
    REPUTATION: "socialsim.envs.gossip.tom:HeldReputation",
    WILL_HELP: "socialsim.envs.gossip.tom:WillHelp",
    GOSSIP_TRUE: "socialsim.envs.gossip.tom:GossipTrue",
    HAS_SEEN: "socialsim.envs.gossip.tom:HasSeen",
}
