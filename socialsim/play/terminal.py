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

from socialsim.agents.human.agent import view_module
from socialsim.agents.human.request import Request
from socialsim.agents.human.text import RULE

#: clear the screen and, where the terminal keeps one, its scrollback (so scrolling up shows
#: nothing of the previous seat), then go home
CLEAR = "\x1b[2J\x1b[3J\x1b[H"


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
    """A seat's view as text, in its game's words (the game's view module)."""
    return view_module(view["game"]).text(view)


def render_ending(ending: Mapping[str, Any]) -> str:
    """What a seat is told at the end, as text."""
    return view_module(ending["game"]).ending_text(ending)
