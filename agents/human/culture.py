"""What a person in a seat of the culture donor game (``culture_v0``) sees and answers, from the
seat's inbox and info only.

The view is plain JSON: the rules (from the public ``rules`` message), the round, the seat's
recipient, both stocks and the recipient's last decisions as a donor (the round's ``recipient``
message, as every agent gets it). The answer is a fraction of the seat's resources on the game's
grid (``0.3``, ``give 0.3``; ``punish 0.2`` where the rules allow it), checked with the
protocol's :func:`~socialsim.envs.culture.protocol.action_of`. A person writes no strategy text:
in an ``[evolution]`` run the seat keeps its place and nobody inherits from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.human.request import Field, Request
from socialsim.agents.human.text import RULE, clean
from socialsim.envs.culture import protocol as p

from socialsim.bus import Message

GAME = "culture_donor"  # the rules payload's game
RULES_GAME = GAME
#: the game as ``socialsim play`` names it -> its env
ENVS: Mapping[str, str] = {"culture": "culture_v0"}
#: the other seats when ``--with`` names none
OTHERS: Mapping[str, Mapping[str, str]] = {"*": {"kind": "culture_conditional"}}
#: only the terminal shows this game (the browser's seat pages have no board for it)
BROWSER = False


def _rules(messages: Sequence[Message]) -> Mapping[str, Any]:
    return next((m.payload for m in messages if m.kind == p.RULES), {})


def rules_text(rules: Mapping[str, Any]) -> list[str]:
    """The rules in force, told once."""
    lines = [
        f"The culture donor game: {len(rules.get('agents', ()))} players start with "
        f"{rules.get('initial_resources', 0):g} units each; {rules.get('rounds')} rounds.",
        "Each round half the players donate, each to a recipient drawn at random; the roles "
        "alternate. A donor gives a fraction of its units (0, 0.1, ... 1); the recipient gets "
        f"{rules.get('multiplier', 0):g} times what was given.",
        f"A donor sees its recipient's last {rules.get('trace_depth')} decisions as a donor.",
    ]
    if rules.get("punishment"):
        lines.append(
            "Instead of giving, a donor may punish: it spends a fraction of its units and its "
            f"recipient loses {rules.get('punishment_loss', 0):g} times as much."
        )
    lines.append(
        f"If everyone gave everything, the average final stock would be {rules.get('ceiling', 0):g}."
    )
    return lines


def view(
    seat: str,
    messages: Sequence[Message],
    info: Mapping[str, Any],
    moves: Sequence[tuple[Mapping[str, Any], Any]] = (),
) -> dict[str, Any]:
    """What ``seat`` may see now: its rules and its latest ``recipient`` message."""
    rules = _rules(messages)
    now = next((m.payload for m in reversed(messages) if m.kind == p.RECIPIENT), {})
    return {
        "game": "culture",
        "title": "culture donor game",
        "seat": seat,
        "rules": rules_text(rules),
        "decision": info.get("decision"),
        "turn": now.get("round"),
        "round": now.get("round"),
        "rounds": rules.get("rounds"),
        "recipient": now.get("recipient"),
        "resources": now.get("your_resources"),
        "recipient_resources": now.get("recipient_resources"),
        "trace": [dict(t) for t in now.get("trace", ())],
        "punishment": bool(rules.get("punishment")),
    }


def _choice(punishment: bool):
    allowed = "a fraction 0, 0.1, ... 1" + (", or punish 0.1 ... 1" if punishment else "")

    def check(text: str) -> int:
        words = text.strip().lower().split()
        if len(words) == 1:
            words = ["give", *words]
        if len(words) != 2 or words[0] not in (("give", "punish") if punishment else ("give",)):
            raise ValueError(f"{text.strip()!r}: type {allowed}")
        try:
            return p.action_of(words[0], float(words[1]))
        except ValueError:
            raise ValueError(f"{text.strip()!r}: type {allowed}") from None

    return check


def request(seat: str, messages: Sequence[Message], info: Mapping[str, Any]) -> Request:
    """The donation due: one field, the fraction (or ``punish`` and a fraction)."""
    rules = _rules(messages)
    now = next((m.payload for m in reversed(messages) if m.kind == p.RECIPIENT), {})
    punishment = bool(rules.get("punishment"))
    return Request(
        decision=p.DECISION,
        title=f"How much of your {now.get('your_resources', 0):g} units do you give to "
        f"{now.get('recipient')}?",
        fields=(Field("fraction", "Give", _choice(punishment), placeholder="0.5"),),
        build=lambda v: v["fraction"],
        help="A fraction of your units: 0, 0.1, ... 1"
        + ("; or 'punish 0.2' to spend 0.2 of them on punishing." if punishment else "."),
    )


def ending(record: Mapping[str, Any], seat: str) -> dict[str, Any]:
    """What a seat is told when the game is over (from the episode record)."""
    summary = record.get("summary") or {}
    stocks = summary.get("resources") or {}
    ranked = sorted(stocks, key=lambda a: -stocks[a])
    return {
        "game": "culture",
        "seat": seat,
        "over": True,
        "status": record.get("status"),
        "outcome": f"Average final resources {summary.get('mean_resources', 0):g} (everyone "
        f"giving everything: {summary.get('ceiling', 0):g}).",
        "return": (record.get("returns") or {}).get(seat, 0.0),
        "final": stocks.get(seat),
        "rank": ranked.index(seat) + 1 if seat in ranked else None,
        "players": len(ranked),
        "stocks": dict(stocks),
    }


def text(view: Mapping[str, Any]) -> str:
    """A seat's view as text (the terminal's screen)."""
    recipient = clean(view["recipient"])
    lines = [
        RULE,
        f"Round {view['round']} of {view['rounds']} - you are {clean(view['seat'])}, a donor",
        f"Your units: {view['resources']:g}   {recipient}'s units: {view['recipient_resources']:g}",
    ]
    if not view["trace"]:
        lines.append(f"{recipient} has no decisions as a donor yet.")
    else:
        lines.append(f"{recipient}'s last decisions as a donor:")
        for t in view["trace"]:
            lines.append(
                f"  round {t['round']}: {t['verb']} {t['fraction']:g} of its units "
                f"({t['amount']:g}) to {clean(t['recipient'])}"
            )
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
