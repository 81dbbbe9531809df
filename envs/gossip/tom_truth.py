"""The ground truth of the gossip theory-of-mind probes (:mod:`socialsim.envs.gossip.tom`), and
the answers of the answerers that hold no beliefs, as pure functions of an episode record's
messages: what an agent could see, what it holds, what really happened.

**What Y holds of X** (:func:`held_tones`) is what the game's rules let Y know when it moves:
with public gossip (``gossip_reach`` 1) the tones about X that reached Y (a hidden message did
not); with ``gossip_reach`` < 1 (:mod:`.reach`) the tones the private ``reputation`` message of
this round told Y (every tone published about X so far), and none when Y was not told: a stranger.
That is the view a scripted discriminator acts on, so ``will_help``'s truth is its move.

**What is so** (:func:`second_order`): the tones of every gossip published about X, each lie (a
tone :func:`gossip_truth` finds false) turned into the tone of what X really did. A
``reputation`` or ``will_help`` item is a *false-belief* item when Y's view and the reality give
different answers (Y missed a tone, a message was hidden from it, it was told a lie), else a
*true-belief* item (:func:`item_set`).

**The tricks** (:func:`rule_answer`): answers that need no model of another mind, one per probe:

| probe | rule |
|---|---|
| `counterpart_move` | the last tone about the counterpart in my inbox: negative -> defect, else cooperate |
| `recipient_tone` | my own move this round -> its tone (cooperate -> praising, defect -> criticism) |
| `reputation`, `will_help` | my own view: the tones about X in my inbox, under Y's norm |
| `gossip_true` | true unless the other tones about its subject in my inbox lean the other way |
| `has_seen` | the rules' audience: everyone with public gossip, else its author and subject |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.protocol import GAMES, GOSSIP, TONES
from socialsim.envs.gossip.reach import REPUTATION as TOLD

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
#: the item sets: a second-order item is a false- or a true-belief item; the others are all one
FALSE_BELIEF, TRUE_BELIEF, ALL = "false_belief", "true_belief", "all"
ITEM_SETS = (FALSE_BELIEF, TRUE_BELIEF, ALL)
SECOND_ORDER = (REPUTATION, WILL_HELP)


# -- who could see what ----------------------------------------------------------------------------


def saw(message: Mapping[str, Any], agent: str) -> bool:
    """Whether ``agent`` is in the audience of ``message`` (a record's message: ``to`` is ``"*"``
    or a list of agent ids)."""
    to = message["to"]
    return to == "*" or (not isinstance(to, str) and agent in to)


def seen_by(
    messages: Sequence[Mapping[str, Any]], agent: str, seen: int, kinds: Iterable[str] = ()
) -> list[Mapping]:
    """The messages of ids below ``seen`` (a record's message ``i`` has id ``i``) that ``agent``
    could see, oldest first; only those of ``kinds``, when given."""
    wanted = set(kinds)
    return [m for m in messages[:seen] if (not wanted or m["kind"] in wanted) and saw(m, agent)]


def gossips(messages: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [m for m in messages if m["kind"] == GOSSIP]


def reach_of(messages: Sequence[Mapping[str, Any]]) -> float:
    """The game's ``gossip_reach`` as its ``rules`` message states it (1.0 when it does not)."""
    for m in messages:
        if m["kind"] == "rules":
            return float(m["payload"].get("gossip_reach", 1.0))
    return 1.0


def _tones_about(messages: Sequence[Mapping[str, Any]], about: str) -> list[str]:
    return [m["payload"]["tone"] for m in gossips(messages) if m["payload"]["about"] == about]


def held_tones(
    messages: Sequence[Mapping[str, Any]], viewer: str, about: str, seen: int, round_: int
) -> list[str]:
    """The tones about ``about`` that ``viewer`` knows when it moves in round ``round_`` (the
    module's "what Y holds"), oldest first."""
    if reach_of(messages) < 1:
        told = [
            m
            for m in seen_by(messages, viewer, seen, (TOLD,))
            if m["payload"]["about"] == about and m["payload"]["round"] == round_
        ]
        return list(told[-1]["payload"]["tones"]) if told else []
    return _tones_about(seen_by(messages, viewer, seen, (GOSSIP,)), about)


def inbox_tones(inbox: Sequence[Mapping[str, Any]], about: str) -> list[str]:
    """Every tone about ``about`` an inbox holds, oldest first: its gossip, and what its
    ``reputation`` messages told (each lists every tone published so far, so it replaces the
    list; later gossip adds to it)."""
    tones: list[str] = []
    for m in inbox:
        payload = m["payload"]
        if m["kind"] == TOLD and payload["about"] == about:
            tones = list(payload["tones"])
        elif m["kind"] == GOSSIP and payload["about"] == about:
            tones.append(payload["tone"])
    return tones


def held_reputation(
    messages: Sequence[Mapping[str, Any]],
    viewer: str,
    about: str,
    norm: str,
    seen: int,
    round_: int = 0,
) -> int | None:
    """The reputation ``viewer`` holds of ``about`` under ``norm`` (``norms.reputation``, the
    norm's own memory) from :func:`held_tones`."""
    return norms.reputation(held_tones(messages, viewer, about, seen, round_), norm)


def reputation_word(reputation: int | None) -> str:
    """``None`` -> ``"unrated"``; good -> ``"good"``; bad (0 or below) -> ``"bad"``."""
    if reputation is None:
        return "unrated"
    return "good" if reputation > 0 else "bad"


def _view(probe: str, tones: Sequence[str], norm: str) -> str:
    held = norms.reputation(tones, norm)
    return reputation_word(held) if probe == REPUTATION else norms.decide(norm, held)


# -- what happened ---------------------------------------------------------------------------------


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


def true_tone(messages: Sequence[Mapping[str, Any]], game: str, gossip_id: int) -> str:
    """The gossip's tone, or, for a lie, the tone of what its subject really did."""
    tone = messages[gossip_id]["payload"]["tone"]
    if gossip_truth(messages, game, gossip_id) is False:
        return "criticism" if norms.valence(tone) > 0 else "praising"
    return tone


def copies(messages: Sequence[Mapping[str, Any]], gossip_id: int) -> list[Mapping[str, Any]]:
    """The messages that carry gossip ``gossip_id`` (with ``gossip_reach`` < 1 the author and
    the subject each get their own copy)."""
    said = messages[gossip_id]["payload"]
    return [
        m
        for m in gossips(messages)
        if all(m["payload"][k] == said[k] for k in ("round", "author", "about", "tone"))
    ]


def audience(messages: Sequence[Mapping[str, Any]], gossip_id: int) -> Any:
    """Whom gossip ``gossip_id`` reached: ``"*"``, or the sorted agents of all its copies."""
    tos = [m["to"] for m in copies(messages, gossip_id)]
    if "*" in tos:
        return "*"
    return sorted({agent for to in tos for agent in to})


def has_seen(messages: Sequence[Mapping[str, Any]], viewer: str, gossip_id: int) -> bool:
    """Whether ``viewer`` is in the audience of gossip ``gossip_id`` (of any of its copies)."""
    return any(saw(m, viewer) for m in copies(messages, gossip_id))


def published_tone(
    messages: Sequence[Mapping[str, Any]], author: str, about: str, round_: int
) -> str | None:
    for m in gossips(messages):
        p = m["payload"]
        if p["author"] == author and p["about"] == about and p["round"] == round_:
            return p["tone"]
    return None


def game_of(record: Any) -> str:
    return record.summary.get("game") or record.messages[0]["payload"]["game"]


def truth(record: Any, entry: Mapping[str, Any]) -> str | None:
    """The true answer to one probe entry of ``record`` (an ``EpisodeRecord``), in the probe's
    words, or ``None`` when the record does not settle it (then the entry is not scored)."""
    messages, probe = record.messages, entry["probe"]
    if probe == COUNTERPART_MOVE:
        return move_of(messages, game_of(record), entry["about"], entry["seat"], entry["round"])
    if probe == RECIPIENT_TONE:
        return published_tone(messages, entry["author"], entry["seat"], entry["round"])
    if probe in SECOND_ORDER:
        return second_order(messages, game_of(record), entry)[0]
    if probe == GOSSIP_TRUE:
        verdict = gossip_truth(messages, game_of(record), entry["gossip"])
        return None if verdict is None else ("true" if verdict else "false")
    if probe == HAS_SEEN:
        return "yes" if has_seen(messages, entry["viewer"], entry["gossip"]) else "no"
    raise ValueError(f"probe: {probe!r} is not a gossip probe; allowed: {', '.join(GOSSIP_PROBES)}")


def true_tones(messages: Sequence[Mapping[str, Any]], game: str) -> dict[int, str]:
    """:func:`true_tone` of every gossip, by message id."""
    return {m["id"]: true_tone(messages, game, m["id"]) for m in gossips(messages)}


def second_order(
    messages: Sequence[Mapping[str, Any]],
    game: str,
    entry: Mapping[str, Any],
    corrected: Mapping[int, str] | None = None,
) -> tuple[str, str]:
    """A second-order entry's (``probe``, ``viewer`` Y, ``about`` X, ``norm``, ``seen``,
    ``round``) answer from Y's view, and from what is so: every tone published about X, each
    lie corrected (see the module; ``corrected``: :func:`true_tones`, when already known)."""
    probe, about, seen = entry["probe"], entry["about"], entry["seen"]
    view = held_tones(messages, entry["viewer"], about, seen, entry["round"])
    real = [
        corrected[m["id"]] if corrected is not None else true_tone(messages, game, m["id"])
        for m in gossips(messages[:seen])
        if m["payload"]["about"] == about
    ]
    return _view(probe, view, entry["norm"]), _view(probe, real, entry["norm"])


def item_set(record: Any, entry: Mapping[str, Any]) -> str:
    """``false_belief`` when a second-order entry's truth (Y's view) is not what is so,
    ``true_belief`` when it is; ``all`` for the other probes."""
    if entry["probe"] not in SECOND_ORDER:
        return ALL
    view, real = second_order(record.messages, game_of(record), entry)
    return FALSE_BELIEF if view != real else TRUE_BELIEF


def rules_audience(messages: Sequence[Mapping[str, Any]], gossip_id: int) -> Any:
    """Whom the rules send a gossip to: everyone, or (``gossip_reach`` < 1) its author and the
    agent it is about."""
    if reach_of(messages) >= 1:
        return "*"
    payload = messages[gossip_id]["payload"]
    return sorted({payload["author"], payload["about"]})


def informed(record: Any, entry: Mapping[str, Any]) -> bool:
    """Whether what the asked seat could know settles the answer: the messages the truth reads
    had all reached it (with their audiences), or the rules do. First-order questions are about
    moves not yet made: never. Under ``gossip_reach`` < 1 a second-order answer rests on Y's
    private ``reputation`` message (or its absence): never."""
    messages, probe, seat = record.messages, entry["probe"], entry["seat"]
    if probe in SECOND_ORDER:
        if reach_of(messages) < 1:
            return False
        theirs = [
            m
            for m in seen_by(messages, entry["viewer"], entry["seen"], (GOSSIP,))
            if m["payload"]["about"] == entry["about"]
        ]
        return all(saw(m, seat) for m in theirs)
    if probe == GOSSIP_TRUE:
        payload = messages[entry["gossip"]]["payload"]
        return seat in (payload["author"], payload["about"])
    if probe == HAS_SEEN:  # the question does not show the audience: only the rules tell it
        return audience(messages, entry["gossip"]) == rules_audience(messages, entry["gossip"])
    return False


# -- the tricks ------------------------------------------------------------------------------------


def rule_answer(
    probe: str,
    inbox: Sequence[Mapping[str, Any]],
    subjects: Mapping[str, Any],
    own_move: str | None = None,
) -> str:
    """The answer of the probe's rule that needs no mind (see the module), from the asked
    seat's ``inbox`` (every message that had reached it, oldest first, its ``rules`` first),
    the question's ``subjects`` (``about``, ``viewer``, ``norm``, ``gossip``) and, for
    ``recipient_tone``, the seat's ``own_move`` towards the author this round."""
    if probe == COUNTERPART_MOVE:
        tones = _tones_about(inbox, subjects["about"])
        return "defect" if tones and norms.valence(tones[-1]) < 0 else "cooperate"
    if probe == RECIPIENT_TONE:
        return "neutral" if own_move is None else norms.assess("image_scoring", own_move, None)
    if probe in SECOND_ORDER:
        return _view(probe, inbox_tones(inbox, subjects["about"]), subjects["norm"])
    message = next((m for m in inbox if m["id"] == subjects["gossip"]), None)
    if probe == GOSSIP_TRUE:
        if message is None:
            return "true"
        value = norms.valence(message["payload"]["tone"])
        others = sum(
            norms.valence(m["payload"]["tone"])
            for m in gossips(inbox)
            if m["payload"]["about"] == message["payload"]["about"] and m["id"] != message["id"]
        )
        return "false" if others * value < 0 else "true"
    if probe == HAS_SEEN:
        if reach_of(inbox) >= 1 or message is None:
            return "yes"
        payload = message["payload"]
        return "yes" if subjects["viewer"] in (payload["author"], payload["about"]) else "no"
    raise ValueError(f"probe: {probe!r} is not a gossip probe; allowed: {', '.join(GOSSIP_PROBES)}")


def rule_answer_of(record: Any, entry: Mapping[str, Any]) -> str:
    """:func:`rule_answer` for one entry of ``record``, from the asked seat's inbox then."""
    messages, seat = record.messages, entry["seat"]
    own = None
    if entry["probe"] == RECIPIENT_TONE:
        own = move_of(messages, game_of(record), seat, entry["author"], entry["round"])
    inbox = seen_by(messages, seat, entry["seen"], ("rules", GOSSIP, TOLD))
    return rule_answer(entry["probe"], inbox, entry, own)
