"""How long an agent may take to decide, and an episode to be played: the experiment's
``decision_timeout`` and ``episode_timeout`` (seconds; unbounded when absent), for every agent
kind.

A synchronous decision (``act``) is bounded by an alarm (``SIGALRM``, armed only while it
runs, so it interrupts the agent's own code and nothing else); an asynchronous one (``aact``)
by ``asyncio.wait_for``. Either way the agent's seat fails the episode with a
:class:`DecisionTimeout`, and the run goes on. The alarm needs the main thread of a process
(``socialsim run`` and its workers play there); elsewhere (a browser game's thread) the
asynchronous driver runs a synchronous decision in a thread of its own under
``asyncio.wait_for``, left behind if it never returns. A person's seat (``paced_by_person``)
is not bounded here: its front end's idle timeout paces it.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


class DecisionTimeout(TimeoutError):
    """A decision, or the episode, took longer than its bound."""

    def __init__(self, seconds: float, key: str) -> None:
        what = "no decision within" if key == "decision_timeout" else "the episode ran out of"
        super().__init__(f"{what} {seconds:g} s ({key})")


class Deadline:
    """The bounds of one episode's decisions, its clock started by :meth:`start`."""

    def __init__(self, decision: float | None = None, episode: float | None = None) -> None:
        self.decision, self.episode = decision, episode
        self._end: float | None = None
        self._alarm = hasattr(signal, "setitimer")

    def __bool__(self) -> bool:
        return self.decision is not None or self.episode is not None

    def start(self) -> None:
        if self.episode is not None:
            self._end = time.monotonic() + self.episode

    def left(self) -> tuple[float, str, float]:
        """The seconds the next decision may take, the key that bounds it and that key's
        value; a :class:`DecisionTimeout` when the episode's time is already over."""
        bounds = []
        if self.decision is not None:
            bounds.append((self.decision, "decision_timeout", self.decision))
        if self._end is not None:
            bounds.append((self._end - time.monotonic(), "episode_timeout", self.episode))
        seconds, key, limit = min(bounds)
        if seconds <= 0:
            raise DecisionTimeout(limit, key)
        return seconds, key, limit

    def check(self) -> None:
        """A :class:`DecisionTimeout` when the episode's time is over."""
        if self._end is not None:
            self.left()

    def rings_here(self) -> bool:
        """Whether :meth:`bounding` can interrupt a decision made in this thread (an alarm
        rings only in a process's main thread)."""
        return self._alarm and threading.current_thread() is threading.main_thread()

    @contextmanager
    def bounding(self) -> Iterator[None]:
        """The block (one synchronous decision) interrupted by a :class:`DecisionTimeout` when
        it runs over its bound."""
        if not self or not self.rings_here():
            self.check()
            yield
            return
        seconds, key, limit = self.left()

        def ring(signum: int, frame: Any) -> None:
            raise DecisionTimeout(limit, key)

        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    async def in_own_thread(self, call: Callable[..., T], *args: Any) -> T:
        """``call(*args)`` (one synchronous decision) run in a daemon thread of its own and
        awaited within its bound: a call that never returns is left behind, holding neither the
        event loop nor its executor (whose threads the loop's end would wait for)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future = loop.create_future()

        def run() -> None:
            try:
                setter, value = future.set_result, call(*args)
            except BaseException as error:  # noqa: BLE001 - handed to the awaiting driver
                setter, value = future.set_exception, error

            def answer() -> None:
                if not future.done():  # cancelled when the bound ran out
                    setter(value)

            try:
                loop.call_soon_threadsafe(answer)
            except RuntimeError:  # the loop has ended: nobody waits for this decision now
                pass

        threading.Thread(target=run, name="decision", daemon=True).start()
        return await self.awaiting(future)

    async def awaiting(self, call: Awaitable[T]) -> T:
        """``call`` (one asynchronous decision) awaited within its bound."""
        if not self:
            return await call
        seconds, key, limit = self.left()
        try:
            return await asyncio.wait_for(call, seconds)
        except TimeoutError:
            raise DecisionTimeout(limit, key) from None
