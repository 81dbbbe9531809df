"""The terminal front end: a human seat's view as text, its answer read from the keyboard.

One :class:`Terminal` serves every human seat of a game (hot-seat play): before a different
seat's turn it clears the screen and waits until the next person presses Enter, so nobody sees
another seat's keywords or code. Each field is checked as it is typed, with the game's own rules
(the request's checks), and asked again with the reason. Reading blocks the event loop on
purpose: Ctrl-C then lands in the main thread, between whole moves, and nothing is logged.
Text that other players typed (hints, gossip) is shown with control characters removed.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

from socialsim.agents.human.request import Request

#: clear the screen and, where the terminal keeps one, its scrollback (so scrolling up shows
#: nothing of the previous seat), then go home
CLEAR = "\x1b[2J\x1b[3J\x1b[H"
RULE = "=" * 72


def clean(text: Any) -> str:
    """Another player's text, safe to print: no escape sequences or control characters."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


class Terminal:
    """A console (see :class:`socialsim.agents.human.agent.Console`) on a text stream pair."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, hot_seat=False):
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.hot_seat = hot_seat
        self.current: str | None = None
        self.told: set[str] = set()

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def read(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    def hand_over(self, seat: str) -> None:
        """Between two people: hide the screen until ``seat``'s player is at the keyboard."""
        self.stdout.write(CLEAR)
        self.read(f"Pass the keyboard to {seat}. {seat}, press Enter when ready. ")
        self.stdout.write(CLEAR)

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> dict[str, str]:
        if error is None:
            if self.hot_seat and seat != self.current:
                self.hand_over(seat)
            self.current = seat
            if seat not in self.told:
                self.told.add(seat)
                self.say(RULE)
                for line in view["rules"]:
                    self.say(line)
            self.say(render(view))
        else:
            self.say(f"  ! {error}")
        self.say(request.title)
        if request.help:
            self.say(f"  ({request.help})")
        answer = {}
        for field in request.fields:
            while True:
                text = self.read(f"{field.label}: ")
                try:
                    request.check_field(field.name, text)
                except ValueError as refused:
                    self.say(f"  ! {refused}")
                    continue
                answer[field.name] = text
                break
        return answer


def render(view: Mapping[str, Any]) -> str:
    """A seat's view as text."""
    if view.get("game") == "decrypto":
        return _decrypto(view)
    if view.get("game") == "culture":
        return _culture(view)
    return _gossip(view)


def _culture(view: Mapping[str, Any]) -> str:
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


def _decrypto(view: Mapping[str, Any]) -> str:
    lines = [
        RULE,
        f"Turn {view['turn']} of {view['max_turns']} - you are the {view['title']}",
        f"Tokens: miscommunications {view['miscommunications']}/{view['tokens_to_lose']}, "
        f"interceptions {view['interceptions']}/{view['tokens_to_lose']}",
    ]
    keywords = view.get("keywords")
    if keywords:
        lines.append(
            "Keywords: " + "   ".join(f"{i} {clean(k)}" for i, k in enumerate(keywords, 1))
        )
    last = view.get("last_turn")
    if last:
        lines.append(
            f"Last turn ({last['turn']}): code {last['code']}, hints "
            + ", ".join(clean(h) for h in last["hints"])
            + f"; decoder guessed {last['decoder_guess']}, interceptor guessed "
            + f"{last['interceptor_guess'] or 'nothing'}"
            + (" - a miscommunication!" if last["miscommunication"] else "")
            + (" - intercepted!" if last["interception"] else "")
        )
    lines.append("Hint history by keyword:")
    for i, hints in enumerate(view["hint_history"], 1):
        name = f" {clean(keywords[i - 1])}" if keywords else ""
        lines.append(f"  {i}{name}: " + (", ".join(clean(h) for h in hints) or "-"))
    if view.get("code_history"):
        lines.append("Codes so far: " + ", ".join(view["code_history"]))
    if view.get("code"):
        lines.append(f"Your code this turn: {view['code']}")
    if view.get("hints"):
        lines.append(
            "This turn's hints: "
            + "   ".join(f"{chr(97 + i)}) {clean(h)}" for i, h in enumerate(view["hints"]))
        )
    return "\n".join(lines)


def _who(view: Mapping[str, Any], agent_id: Any) -> str:
    """``John (agent_0)``: the name the LLM seats use, beside the id of the record."""
    name = (view.get("names") or {}).get(agent_id)
    return clean(f"{name} ({agent_id})" if name and name != agent_id else str(agent_id))


def _gossip_lines(items, view: Mapping[str, Any]) -> list[str]:
    return [
        f"  round {g['round']}, {_who(view, g['author'])} ({g['tone']}): {clean(g['message'] or '')}"
        for g in items
    ]


def _gossip(view: Mapping[str, Any]) -> str:
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


def render_ending(ending: Mapping[str, Any]) -> str:
    lines = [RULE, "Game over. " + ending["outcome"]]
    if ending.get("game") == "decrypto":
        lines.append(
            f"Miscommunications {ending['miscommunications']}, interceptions "
            f"{ending['interceptions']}, turns {ending['turns']}."
        )
        if ending.get("keywords"):
            lines.append(
                "The keywords were: "
                + "   ".join(f"{i} {clean(k)}" for i, k in enumerate(ending["keywords"], 1))
            )
        lines.append(f"{ending['seat']}: " + ("you win!" if ending["won"] else "you lose."))
    else:
        lines.append(
            f"{ending['seat']}: final {ending['final']:g}, rank {ending['rank']} of "
            f"{ending['players']} (return {ending['return']:g})."
        )
    return "\n".join(lines)
