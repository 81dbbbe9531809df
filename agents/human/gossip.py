"""What a person in a gossip-game seat sees and answers, from the seat's inbox and info only.

The inbox is read by the protocol's one parser (:class:`~socialsim.envs.gossip.notebook.Notebook`),
as every agent family does. The view is plain JSON: the game and round, this round's role and
counterpart, both stocks as they are at the decision (the round's start, from the ``match``
message; at a gossip decision, plus the round's payoffs: a recipient gossips with the donation
it just received counted), what the counterpart did to the seat this round, the public gossip
about the counterpart and about the seat, and ``names``: the name each agent goes by in LLM
seats' prompts and gossip (:meth:`Notebook.name`), which the front ends show beside the ids of
the record ("John (agent_0)"). Moves are checked against the game's action table (names and aliases), amounts
against what the seat may send, tones against the five tones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.human.request import Field, Request
from socialsim.agents.human.text import RULE, clean
from socialsim.envs.gossip.notebook import Notebook
from socialsim.envs.gossip.protocol import GAMES, GOSSIP, TONE_INDEX, TONES, trust_received

from socialsim.bus import Message

__all__ = [
    "BOARD",
    "ENVS",
    "FIRST_WAIT",
    "GAMES",
    "KEYWORD_SEATS",
    "OTHERS",
    "awaiting",
    "ending",
    "ending_text",
    "offered_seat",
    "request",
    "rules_text",
    "text",
    "view",
    "waiting_for",
]

#: each game as the front ends name it -> the env they play (``socialsim play donation``)
ENVS: Mapping[str, str] = {
    "donation": "donation_v0",
    "prisoners": "prisoners_v0",
    "trust": "trust_v0",
    "market": "market_v0",
}
#: the other seats when the front end is told none
OTHERS: Mapping[str, Mapping[str, str]] = {"*": {"kind": "image_scoring"}}
#: its seat page's script, ``boards/gossip.js`` (see :func:`.agent.board_scripts`)
BOARD = "gossip"
#: what every seat waits for before the game's first decision
FIRST_WAIT = "the first round"
#: the seats that see keywords: none, a gossip game has none
KEYWORD_SEATS: tuple[str, ...] = ()

#: how a move's choice is said to a person
SAID = {
    "cooperate": "cooperate (give)",
    "defect": "defect (keep)",
    "C": "C (cooperate)",
    "D": "D (defect)",
    "H": "H (high quality)",
    "L": "L (low quality)",
    "c": "c (buy customised)",
    "s": "s (buy standard)",
    "none": "none (buy nothing)",
}


def _notebook(seat: str, messages: Sequence[Message]) -> Notebook:
    notebook = Notebook(seat)
    notebook.read(messages)
    return notebook


def rules_text(notebook: Notebook) -> list[str]:
    """The rules of the game in force, told once."""
    rules = notebook.rules or {}
    game = notebook.game
    lines = [
        f"The {game.title}: {rules.get('n_agents')} players, {rules.get('rounds')} rounds. "
        "Each round some players are paired; you learn your role and your counterpart."
    ]
    if game.name == "donation":
        lines.append(
            f"The donor may cooperate (pay {rules.get('cost'):g} so that the recipient gets "
            f"{rules.get('benefit'):g}) or defect (nothing changes hands)."
        )
    elif game.name == "prisoners":
        lines.append(
            f"Both players choose C or D at once: each C costs its player {rules.get('cost'):g} "
            f"and gives the other {rules.get('benefit'):g}."
        )
    elif game.name == "trust":
        lines.append(
            "The investor sends any amount up to its resources; the responder receives "
            f"{rules.get('multiplier'):g} times it and returns any part of what it received."
        )
    else:
        lines.append(
            "The seller offers high (H) or low (L) quality without the buyer seeing it; the "
            "buyer buys customised (c), standard (s) or nothing. (seller, buyer) payoffs: "
            "H+c 2,3; H+s 0,2; L+c 3,0; L+s 1,1; none 0,0."
        )
    if rules.get("gossip") and rules.get("gossip_reach", 1.0) < 1:
        lines.append(
            "After a meeting, each player gossips about the other: a tone ("
            + ", ".join(TONES)
            + ") and a short message that reach only its author and the player it is about. "
            "As a round starts, a donor may be told every tone published so far about its "
            f"recipient (probability {rules['gossip_reach']:g})."
        )
    elif rules.get("gossip"):
        lines.append(
            "After a meeting, gossip is published for everyone to read: a tone ("
            + ", ".join(TONES)
            + ") and a short message about the other player. Gossip is how reputations form."
        )
    else:
        lines.append("Gossip is off in this game: nobody hears about anybody else's moves.")
    public = rules.get("gossip_reach", 1.0) >= 1
    lines.append(
        "Your moves are seen only by your counterpart"
        + ("; gossip is public." if public else "; gossip is not public.")
    )
    return lines


def _gossip_json(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "round": g["round"],
            "author": g["author"],
            "about": g["about"],
            "tone": g["tone"],
            "message": g.get("message"),
        }
        for g in items
    ]


def who(notebook: Notebook, agent_id: str | None) -> str | None:
    """``"John (agent_0)"``: the name LLM seats use and the id of the record."""
    if agent_id is None:
        return None
    name = notebook.name(agent_id)
    return agent_id if name == agent_id else f"{name} ({agent_id})"


def _stocks_now(notebook: Notebook, meeting: Any, decision: str | None) -> tuple[Any, Any]:
    """(own, counterpart's) stock now: the round's start, plus the round's payoffs at a gossip
    decision (every move of the round is made by then: the counterpart's is on the inbox, the
    seat's own noted from its answers)."""
    if meeting is None:
        return None, None
    if decision == GOSSIP:
        try:
            mine, theirs = notebook.payoffs(meeting)
        except (KeyError, TypeError, ValueError):  # a move this seat was not told of
            return meeting.own, meeting.theirs
        return meeting.own + mine, meeting.theirs + theirs
    return meeting.own, meeting.theirs


def _note_moves(notebook: Notebook, moves: Sequence[tuple[Mapping[str, Any], Any]]) -> None:
    """The seat's own earlier moves (``(info, action)`` of each answer): not on its inbox."""
    for info, action in moves:
        decision = info.get("decision")
        if decision == GOSSIP or not isinstance(action, Mapping):
            continue
        choice = action.get("action", action.get("amount"))
        notebook.note_move(int(info["round"]), decision, choice)


def view(
    seat: str,
    messages: Sequence[Message],
    info: Mapping[str, Any],
    moves: Sequence[tuple[Mapping[str, Any], Any]] = (),
) -> dict[str, Any]:
    """What ``seat`` may see now: read from its ``info``, its inbox and its own earlier answers
    (``moves``: ``(info, action)`` of each), nothing else."""
    notebook = _notebook(seat, messages)
    _note_moves(notebook, moves)
    game = notebook.game
    number = int(info["round"])
    counterpart = info.get("counterpart")
    meeting = notebook.meetings.get(number)
    stock = "total payoff" if game.name in ("prisoners", "market") else "resources"
    own, theirs = _stocks_now(notebook, meeting, info.get("decision"))
    n_agents = int(notebook.rule("n_agents", 0) or 0)
    known = {seat, *(f"agent_{i}" for i in range(n_agents)), *notebook.tones}
    known |= {g["author"] for g in notebook.gossip} | {m.other for m in notebook.meetings.values()}
    if counterpart is not None:
        known.add(counterpart)
    entrant = notebook.rule("entrant")
    if entrant:
        known.add(entrant)
    out: dict[str, Any] = {
        "game": game.name,
        "title": game.title,
        "seat": seat,
        "rules": rules_text(notebook),
        "decision": info.get("decision"),
        "turn": number,
        "round": number,
        "rounds": notebook.rule("rounds"),
        "role": info.get("role"),
        "counterpart": counterpart,
        "stock_name": stock,
        "resources": own,
        "counterpart_resources": theirs,
        "received": dict(meeting.received) if meeting else {},
        "about_counterpart": _gossip_json(
            [g for g in notebook.gossip if g["about"] == counterpart]
        ),
        "about_me": _gossip_json([g for g in notebook.gossip if g["about"] == seat]),
        # what this round's ``reputation`` message told of the counterpart (gossip_reach < 1):
        # exactly what a scripted judge reads; None when nothing was told
        "told": notebook.told.get((number, counterpart)),
        "names": {agent: notebook.name(agent) for agent in sorted(known)},
    }
    return out


def _move_check(choices: Mapping[str, str], shown: Sequence[str]):
    def check(text: str) -> str:
        key = text.strip()
        value = choices.get(key, choices.get(key.lower()))
        if value is None:
            raise ValueError(f"{key!r} is not a move here: type one of {', '.join(shown)}")
        return value

    return check


def _amount_check(limit: float):
    def check(text: str) -> float:
        try:
            amount = float(text.strip())
        except ValueError:
            raise ValueError(
                f"{text.strip()!r} is not a number: type an amount from 0 to {limit:g}"
            ) from None
        if not math.isfinite(amount) or not 0.0 <= amount <= limit + 1e-9:
            raise ValueError(f"{amount:g} is out of range: send from 0 to {limit:g}")
        return min(amount, limit)

    return check


def _tone(text: str) -> str:
    key = text.strip().lower()
    if key.isdigit() and 1 <= int(key) <= len(TONES):
        return TONES[int(key) - 1]
    if key in TONE_INDEX:
        return key
    numbered = ", ".join(f"{i} {t}" for i, t in enumerate(TONES, 1))
    raise ValueError(f"{text.strip()!r} is not a tone: type one of {numbered}")


def _message(text: str) -> str | None:
    return text.strip() or None


def request(seat: str, messages: Sequence[Message], info: Mapping[str, Any]) -> Request:
    """The decision due, as fields the person fills in."""
    notebook = _notebook(seat, messages)
    game = notebook.game
    decision = info["decision"]
    counterpart = who(notebook, info.get("counterpart"))
    if decision == GOSSIP:
        return Request(
            decision=GOSSIP,
            title=f"Gossip about {counterpart}: everyone will read it",
            fields=(
                Field("tone", "Tone", _tone, choices=TONES, placeholder="neutral"),
                Field("message", "Message", _message, placeholder=f"what {counterpart} did"),
            ),
            build=lambda v: {"tone": v["tone"], "message": v["message"]},
            help="A tone (" + ", ".join(TONES) + ", or its number 1-5) and a short message.",
        )
    if decision in ("invest", "return"):
        meeting = notebook.current(int(info["round"]))
        if decision == "invest":
            limit = max(meeting.own, 0.0)
            title = f"How much do you invest with {counterpart}? (0 to {limit:g})"
        else:
            invested = float(meeting.received.get("invest", 0.0))
            limit = trust_received(invested, notebook.rule("multiplier"))
            title = (
                f"{counterpart} invested {invested:g}; you received {limit:g}. "
                f"How much do you return? (0 to {limit:g})"
            )
        return Request(
            decision=decision,
            title=title,
            fields=(Field("amount", "Amount", _amount_check(limit), placeholder="0"),),
            build=lambda v: {"amount": v["amount"]},
            help=f"A number from 0 to {limit:g}.",
        )
    names = game.move_choices(decision)
    choices: dict[str, str] = {}
    for name in names:
        choices[name] = name
        choices.setdefault(name.lower(), name)
    for alias, name in game.aliases.items():
        if name in names:
            choices.setdefault(alias, name)
            choices.setdefault(alias.lower(), name)
    if decision in game.cooperative:
        good, bad = game.cooperative[decision]
        for word, name in (("cooperate", good), ("defect", bad)):
            choices.setdefault(word, name)
    shown = [SAID.get(n, n) for n in names]
    return Request(
        decision=decision,
        title=f"Your move with {counterpart}: " + " or ".join(shown),
        fields=(Field("move", "Move", _move_check(choices, names), choices=tuple(names)),),
        build=lambda v: {"action": v["move"]},
        help="One of: " + ", ".join(names) + ".",
    )


def ending(record: Mapping[str, Any], seat: str) -> dict[str, Any]:
    """What a seat is told when the game is over (from the episode record)."""
    summary = record.get("summary") or {}
    stocks = summary.get("resources") or summary.get("payoffs") or {}
    rules = next((m["payload"] for m in record.get("messages", []) if m["kind"] == "rules"), {})
    ranked = sorted(stocks, key=lambda a: -stocks[a])
    return {
        "game": summary.get("game"),
        "seat": seat,
        "over": True,
        "status": record.get("status"),
        "outcome": f"The game is over after {rules.get('rounds')} rounds.",
        "return": (record.get("returns") or {}).get(seat, 0.0),
        "final": stocks.get(seat),
        "rank": ranked.index(seat) + 1 if seat in ranked else None,
        "players": len(ranked),
        "stocks": dict(stocks),  # everyone's final stock (the rank already orders them)
    }


def waiting_for(view: Mapping[str, Any]) -> str:
    """What a seat waits for after its move."""
    return "the other players"


def awaiting(seat: str, who: str) -> str:
    """Another seat deciding now, as a waiting seat is told: ``who`` plays it."""
    return f"{seat} ({who}) to decide"


def _who(view: Mapping[str, Any], agent_id: Any) -> str:
    """``John (agent_0)``: the name the LLM seats use, beside the id of the record."""
    name = (view.get("names") or {}).get(agent_id)
    return clean(f"{name} ({agent_id})" if name and name != agent_id else str(agent_id))


def _gossip_lines(items, view: Mapping[str, Any]) -> list[str]:
    return [
        f"  round {g['round']}, {_who(view, g['author'])} ({g['tone']}): {clean(g['message'] or '')}"
        for g in items
    ]


def text(view: Mapping[str, Any]) -> str:
    """A seat's view as text (the terminal's screen)."""
    stock = view["stock_name"]
    other = _who(view, view.get("counterpart"))
    lines = [
        RULE,
        f"Round {view['round']} of {view['rounds']} - you are {_who(view, view['seat'])}, "
        f"the {view['role']}",
        f"Counterpart: {other}",
        f"Your {stock}: {view['resources']:g}   {other}'s {stock}: {view['counterpart_resources']:g}",
    ]
    received = view.get("received") or {}
    for decision, choice in received.items():
        lines.append(f"{other} did to you this round: {decision} {choice}")
    lines.append(f"Gossip about {other}:")
    lines += _gossip_lines(view["about_counterpart"], view) or ["  (none yet)"]
    if view.get("told") is not None:
        lines.append(f"You were told the tones about {other} so far: {', '.join(view['told'])}")
    if view["about_me"]:
        lines.append("Gossip about you:")
        lines += _gossip_lines(view["about_me"], view)
    return "\n".join(lines)


def ending_text(ending: Mapping[str, Any]) -> str:
    """What :func:`ending` tells a seat, as text."""
    return "\n".join(
        [
            RULE,
            "Game over. " + ending["outcome"],
            f"{ending['seat']}: final {ending['final']:g}, rank {ending['rank']} of "
            f"{ending['players']} (return {ending['return']:g}).",
        ]
    )


def offered_seat(seats: Sequence[str]) -> str:
    """The seat the host page offers a person first: the second to last, a resident (with an
    entrant, the entrant is the last agent)."""
    return seats[-2] if len(seats) > 1 else seats[0]
