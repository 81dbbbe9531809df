"""The ``human`` agent kind: a person in a seat, through a front end (terminal or browser).

A person is an agent like any other: the runner hands the seat its observation, its new inbox
messages and its info, and the agent returns an action that goes through the env's own
validation. What the person is shown (the *view*) is built from that inbox and info only, by
the game's view module (:mod:`.decrypto`, :mod:`.gossip`; :func:`view_module`), never from the
env.

The agent talks to the person through a :class:`Console`, found in the run's shared resources
under :data:`CONSOLES` (seat -> console), which the front ends fill in (``socialsim play``,
``socialsim serve``). The console shows the view and returns the person's answer to a
:class:`Request` (named text fields); the agent checks the answer with the game's rules and asks
again, with the reason, until it is valid. Invalid answers are counted (``invalid_inputs``).

A seat given a ``filler`` (an agent spec, as a study gives it) is handed to that agent when the
console raises :class:`HandOver` (the person left or stopped answering): the filler is built,
reset with the seat's id and seed, given every message the seat has received, and plays the
seat from that decision on. The seat's events say from which turn (``{"handover": turn,
"reason": ...}``) and its counters hold ``handed_over_at_turn`` and the filler's own
counters as ``filler_NAME``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, Protocol

from socialsim.agents.human.request import Request

from socialsim.agent import Agent
from socialsim.bus import Message

#: the key of ``RunContext.shared`` holding ``{seat: Console}``
CONSOLES = "human_consoles"


class HandOver(Exception):
    """Raised by a console: the person has gone; the seat's filler plays on (see above)."""


class Console(Protocol):
    """A front end for one or more human seats."""

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> Mapping[str, Any]:
        """Show ``view`` (and ``error``, the reason the last answer was refused) and return the
        person's answer to ``request``: field name -> text."""
        ...


class Human(Agent):
    """A person's seat. ``name`` is how the front ends greet them (recorded in the seat spec)."""

    #: an [evolution] run keeps the seat every generation: never selected out, nobody's parent
    keeps_seat = True
    #: no decision_timeout: the front end's idle timeout (and a study's handover) paces a person
    paced_by_person = True

    def __init__(self, name: str = "", filler: Mapping[str, Any] | None = None):
        if not isinstance(name, str) or len(name) > 60:
            raise ValueError(f"name: must be a string of at most 60 characters, got {name!r}")
        if filler is not None and (not isinstance(filler, Mapping) or "kind" not in filler):
            raise ValueError(f"filler: an agent spec with a kind, got {filler!r}")
        self.name = name
        self.filler = dict(filler) if filler is not None else None

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.inbox: list[Message] = []
        #: ``(info, action)`` of each answer: the seat's own moves, which no inbox holds
        self.moves: list[tuple[dict[str, Any], Any]] = []
        self.game: Any = None  # the game's view module, chosen from the rules message
        self.stand_in: Agent | None = None  # the filler, once the person has gone

    def console(self) -> Console:
        consoles = getattr(self, "run", None) and self.run.shared.get(CONSOLES)
        console = consoles.get(self.agent_id) if consoles else None
        if console is None:
            raise RuntimeError(
                f"{self.agent_id}: a human seat needs a front end; play it with "
                "`socialsim play` or `socialsim serve`"
            )
        return console

    async def aact(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> Any:
        if self.stand_in is not None:
            return await self._filled(observation, messages, info)
        self.inbox.extend(messages)
        if self.game is None:
            self.game = game_module(self.inbox)
        view = self.game.view(self.agent_id, self.inbox, info, self.moves)
        request = self.game.request(self.agent_id, self.inbox, info)
        console = self.console()
        error = None
        started = time.monotonic()
        while True:
            try:
                answer = await console.ask(self.agent_id, view, request, error)
            except HandOver as gone:
                if self.filler is None:
                    raise
                return await self._hand_over(view.get("turn"), str(gone), observation, info)
            try:
                action = request.read(answer)
            except ValueError as refused:
                error = str(refused)
                self.count("invalid_inputs")
                continue
            self.events.append(
                {
                    "turn": view.get("turn"),
                    "decision": request.decision,
                    "seconds": round(time.monotonic() - started, 3),
                }
            )
            self.moves.append((dict(info), action))
            return action

    async def _hand_over(
        self, turn: Any, reason: str, observation: Any, info: Mapping[str, Any]
    ) -> Any:
        from socialsim import registry

        stand_in = registry.build_agent(self.filler)
        stand_in.attach(self.run)
        stand_in.reset(self.agent_id, self.seat, self.seed)
        self.stand_in = stand_in
        self.events.append({"turn": turn, "handover": self.filler["kind"], "reason": reason})
        self.counters["handed_over_at_turn"] = turn if isinstance(turn, int | float) else -1
        return await self._filled(observation, list(self.inbox), info)

    async def _filled(self, observation: Any, messages: Sequence[Message], info) -> Any:
        """The stand-in's move; its counters kept beside the seat's as ``filler_NAME``."""
        action = await self.stand_in.aact(observation, messages, info)
        for name, value in getattr(self.stand_in, "counters", {}).items():
            self.counters[f"filler_{name}"] = value
        return action


def view_modules(browser: bool = False) -> tuple:
    """Every game's view module: what a person in a seat of it sees and answers, and how the
    front ends word it. Each declares ``ENVS`` (its games as the front ends name them -> the env
    id they play), ``OTHERS`` (the other seats when none are named), ``BOARD`` (its seat page's
    script under ``boards/``), ``FIRST_WAIT`` and ``KEYWORD_SEATS``, and ``view``, ``request``,
    ``ending``, ``text``, ``ending_text``, ``waiting_for``, ``awaiting`` and ``offered_seat``.
    A module whose rules message names its game otherwise says so in ``RULES_GAME``; one that
    only the terminal shows sets ``BROWSER = False`` and needs no board (``browser=True`` leaves
    it out)."""
    from socialsim.agents.human import culture, decrypto, gossip

    modules = (decrypto, gossip, culture)
    return tuple(m for m in modules if getattr(m, "BROWSER", True)) if browser else modules


def view_module(game: str):
    """The view module of ``game`` (the ``game`` of its rules message: ``decrypto``,
    ``donation``, ...; see :func:`view_modules`)."""
    for module in view_modules():
        if game in module.ENVS or game == getattr(module, "RULES_GAME", None):
            return module
    raise ValueError(f"human: no view for the game {game!r}")


def board_scripts() -> str:
    """Every game's seat-page script (``boards/BOARD.js``), one after the other: each registers
    its board by name with the page's ``registerBoard``."""
    folder = resources.files("socialsim.agents.human") / "boards"
    boards = dict.fromkeys(module.BOARD for module in view_modules(browser=True))
    return "\n".join((folder / f"{board}.js").read_text(encoding="utf-8") for board in boards)


def game_module(messages: Sequence[Message]):
    """The view module of the game whose ``rules`` message is among ``messages``."""
    for message in messages:
        if message.kind == "rules":
            return view_module(message.payload.get("game"))
    raise ValueError("human: no 'rules' message reached this seat before its first decision")
