"""One human seat in the browser: its :class:`BrowserConsole` keeps what that seat may see now
(the view the human agent built from the seat's inbox and info, the request, the last refusal,
or the ending), checks an answer with the game's rules before the agent sees it, and wakes the
seat's live connections whenever its state changes. A :class:`~socialsim.web.sessions.Session`
holds one per human seat and tells it whom it waits for and where to log.

The game runs in its session's own thread and event loop, the pages in the server's: the
console is the one object both touch, so what it hands from one to the other crosses with
``call_soon_threadsafe`` (an answer to the game's loop, a change to each waiting page's loop).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from socialsim.agents.human.agent import HandOver
from socialsim.agents.human.request import Request


class IdleTimeout(Exception):
    """A person gave no answer within the session's idle timeout: the session ends."""


def _settle(future: asyncio.Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)


def _settle_error(future: asyncio.Future, error: Exception) -> None:
    if not future.done():
        future.set_exception(error)


class BrowserConsole:
    """One human seat's console: the state its page shows, and the answer it waits for.

    With ``idle_timeout`` (seconds), a seat asked for a move that sends nothing for that long
    (a refused answer counts as activity and restarts the clock) tells ``abandon`` (seat, why)
    and raises :class:`IdleTimeout` in its agent, which ends the game (see
    :class:`~socialsim.web.sessions.Session`). With ``handover`` (a study's seats), an idle seat
    and a seat whose person :meth:`leave` s raise :class:`~socialsim.agents.human.agent.HandOver`
    instead (``abandon`` told first, once, so the journal says so): the seat's filler agent plays
    on and the game goes on. ``gone`` (from the journal of a restarted game) hands the seat over
    once the replayed answers are used up."""

    def __init__(
        self,
        seat: str,
        waiting_text: str,
        replay: Sequence[Mapping[str, Any]] = (),
        journal: Callable[[str, Mapping[str, Any]], None] | None = None,
        idle_timeout: float | None = None,
        waiting: Callable[[str, Mapping[str, Any]], str] | None = None,
        abandon: Callable[[str, str], None] | None = None,
        handover: bool = False,
        gone: str | None = None,
    ):
        self.seat = seat
        self.replay = list(replay)  # answers given before a restart, in the order asked
        self.journal = journal
        self.idle_timeout = idle_timeout or None
        #: whom this seat waits for after answering the request of ``view``
        self.waiting = waiting or (lambda seat, view: "the other players")
        self.abandon = abandon or (lambda seat, reason: None)
        self.request: Request | None = None
        self.answer: asyncio.Future | None = None  # of the game's loop
        self.active = 0.0  # when the seat last sent an answer or was asked (time.monotonic)
        self.version = 0
        self.state: dict[str, Any] = {"status": "waiting", "waiting_for": waiting_text}
        self.invalid = 0
        self.idled: IdleTimeout | None = None  # why the seat ended its game, if it idled
        self.handover = handover
        self.gone = gone  # why the person's seat was handed to the filler
        self._told_gone = gone is not None
        self._lock = threading.Lock()  # the game's thread and the server's share this console
        self._watchers: list[asyncio.Future] = []  # pages waiting for a change, each its loop's

    def publish(self, state: dict[str, Any]) -> None:
        """Show ``state``; every page waiting for a change wakes (from any thread)."""
        with self._lock:
            self.state = state
            self.version += 1
            watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            try:
                watcher.get_loop().call_soon_threadsafe(_settle, watcher, None)
            except RuntimeError:  # that page's loop has closed: nobody waits there
                pass

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> Mapping[str, Any]:
        if self.replay and error is None:
            return self.replay.pop(0)
        if self.gone is not None:
            self._hand_over()
        self.replay.clear()  # a refused replayed answer: the journal no longer fits the game
        with self._lock:
            self.request = request
            self.answer = asyncio.get_running_loop().create_future()
            answer = self.answer
        self.publish(
            {
                "status": "your_turn",
                "view": dict(view),
                "request": request.to_json(),
                "error": error,
            }
        )
        self.active = time.monotonic()
        try:
            while not answer.done():
                left = None
                if self.idle_timeout is not None:
                    left = self.active + self.idle_timeout - time.monotonic()
                if left is not None and left <= 0:
                    with self._lock:  # an answer taken before this is on its way: wait for it
                        taken = self.request is not request
                        self.request = None
                    if taken:
                        await answer
                        break
                    reason = f"the {self.seat} gave no answer in {self.idle_timeout:g} s"
                    if self.handover:
                        self.gone = reason
                        self._hand_over()
                    self.abandon(self.seat, reason)  # on disk before the game ends
                    self.idled = IdleTimeout(reason)
                    raise self.idled
                await asyncio.wait({answer}, timeout=left)
            try:
                return answer.result()
            except HandOver:  # the person left (:meth:`leave`)
                self._hand_over()
        finally:
            with self._lock:
                self.request = None

    async def give(self, answer: Mapping[str, Any]) -> None:
        """Pass a checked answer to the waiting agent (``ValueError`` with the reason if the
        game's rules refuse it; ``LookupError`` if nothing is asked of this seat now)."""
        with self._lock:
            request, future = self.request, self.answer
            if request is None or future is None or future.done():
                raise LookupError(f"{self.seat}: nothing is asked of this seat now")
            self.active = time.monotonic()  # the person is there
            try:
                request.read(answer)  # the rules the agent applies, checked before it sees it
            except ValueError:
                self.invalid += 1
                raise
            self.request = None  # one answer a request: a second one is a LookupError
            view = self.state.get("view", {})
            if self.journal is not None:
                self.journal(self.seat, answer)
        # shown before the game has the answer: its next request must not be overwritten
        self.publish(
            {"status": "waiting", "view": view, "waiting_for": self.waiting(self.seat, view)}
        )
        future.get_loop().call_soon_threadsafe(_settle, future, dict(answer))

    def _hand_over(self):
        if not self._told_gone:
            self._told_gone = True
            self.abandon(self.seat, self.gone)  # on disk before the filler moves
        raise HandOver(self.gone)

    def leave(self, reason: str) -> None:
        """The person has gone (a study's seat): the seat's filler answers this request and every
        one after it (from any thread)."""
        with self._lock:
            self.gone = reason
            future, self.request = self.answer, None
        if future is not None and not future.done():
            future.get_loop().call_soon_threadsafe(_settle_error, future, HandOver(reason))

    def now_waiting_for(self, text: str) -> None:
        """Say whom the seat waits for, if it is waiting and that changed."""
        if self.state.get("status") == "waiting" and self.state.get("waiting_for") != text:
            self.publish({**self.state, "waiting_for": text})

    async def wait_change(self, version: int, timeout: float) -> None:
        """Return once the state is newer than ``version``, or after ``timeout`` seconds."""
        watcher = asyncio.get_running_loop().create_future()
        with self._lock:
            if self.version != version:
                return
            self._watchers.append(watcher)
        try:
            await asyncio.wait({watcher}, timeout=timeout)
        finally:
            with self._lock:
                if watcher in self._watchers:
                    self._watchers.remove(watcher)


__all__ = ["BrowserConsole", "IdleTimeout"]
