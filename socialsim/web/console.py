"""One human seat in the browser: its :class:`BrowserConsole` keeps what that seat may see now
(the view the human agent built from the seat's inbox and info, the request, the last refusal,
or the ending), checks an answer with the game's rules before the agent sees it, and wakes the
seat's live connections whenever its state changes. A :class:`~socialsim.web.sessions.Session`
holds one per human seat and tells it whom it waits for and where to log.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from socialsim.agents.human.request import Request


class IdleTimeout(Exception):
    """A person gave no answer within the session's idle timeout: the session ends."""


class BrowserConsole:
    """One human seat's console: the state its page shows, and the answer it waits for.

    With ``idle_timeout`` (seconds), a seat asked for a move that sends nothing for that long
    (a refused answer counts as activity and restarts the clock) tells ``abandon`` (seat, why)
    and raises :class:`IdleTimeout` in its agent, which ends the game (see
    :class:`~socialsim.web.sessions.Session`)."""

    def __init__(
        self,
        seat: str,
        waiting_text: str,
        replay: Sequence[Mapping[str, Any]] = (),
        journal: Callable[[str, Mapping[str, Any]], None] | None = None,
        idle_timeout: float | None = None,
        waiting: Callable[[str, Mapping[str, Any]], str] | None = None,
        abandon: Callable[[str, str], None] | None = None,
    ):
        self.seat = seat
        self.replay = list(replay)  # answers given before a restart, in the order asked
        self.journal = journal
        self.idle_timeout = idle_timeout or None
        #: whom this seat waits for after answering the request of ``view``
        self.waiting = waiting or (lambda seat, view: "the other players")
        self.abandon = abandon or (lambda seat, reason: None)
        self.request: Request | None = None
        self.answer: asyncio.Future | None = None
        self.active = 0.0  # when the seat last sent an answer or was asked (loop time)
        self.version = 0
        self.changed = asyncio.Condition()
        self.state: dict[str, Any] = {"status": "waiting", "waiting_for": waiting_text}
        self.invalid = 0
        self.idled: IdleTimeout | None = None  # why the seat ended its game, if it idled

    async def publish(self, state: dict[str, Any]) -> None:
        self.state = state
        self.version += 1
        async with self.changed:
            self.changed.notify_all()

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> Mapping[str, Any]:
        if self.replay and error is None:
            return self.replay.pop(0)
        self.replay.clear()  # a refused replayed answer: the journal no longer fits the game
        self.request = request
        self.answer = asyncio.get_running_loop().create_future()
        await self.publish(
            {
                "status": "your_turn",
                "view": dict(view),
                "request": request.to_json(),
                "error": error,
            }
        )
        loop = asyncio.get_running_loop()
        self.active = loop.time()
        try:
            while True:
                left = None
                if self.idle_timeout is not None:
                    left = self.active + self.idle_timeout - loop.time()
                    if left <= 0:
                        reason = f"the {self.seat} gave no answer in {self.idle_timeout:g} s"
                        self.abandon(self.seat, reason)  # on disk before the game ends
                        self.idled = IdleTimeout(reason)
                        raise self.idled
                done, _ = await asyncio.wait({self.answer}, timeout=left)
                if done:
                    return self.answer.result()
        finally:
            self.request = None

    async def give(self, answer: Mapping[str, Any]) -> None:
        """Pass a checked answer to the waiting agent (``ValueError`` with the reason if the
        game's rules refuse it; ``LookupError`` if nothing is asked of this seat now)."""
        if self.request is None or self.answer is None or self.answer.done():
            raise LookupError(f"{self.seat}: nothing is asked of this seat now")
        self.active = asyncio.get_running_loop().time()  # the person is there
        try:
            self.request.read(answer)  # the rules the agent applies, checked before it sees it
        except ValueError:
            self.invalid += 1
            raise
        view = self.state.get("view", {})
        if self.journal is not None:
            self.journal(self.seat, answer)
        self.answer.set_result(dict(answer))
        text = self.waiting(self.seat, view)
        await self.publish({"status": "waiting", "view": view, "waiting_for": text})

    async def now_waiting_for(self, text: str) -> None:
        """Say whom the seat waits for, if it is waiting and that changed."""
        if self.state.get("status") == "waiting" and self.state.get("waiting_for") != text:
            await self.publish({**self.state, "waiting_for": text})

    async def wait_change(self, version: int, timeout: float) -> None:
        async with self.changed:
            if self.version == version:
                try:
                    await asyncio.wait_for(self.changed.wait(), timeout)
                except TimeoutError:
                    pass


__all__ = ["BrowserConsole", "IdleTimeout"]
