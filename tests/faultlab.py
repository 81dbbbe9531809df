"""Agents that fail on purpose, for the fault suite (``kind = "faultlab:Dies"``).

A :class:`Dies` seat plays matching pennies (always heads) and, in the episodes whose agent seed
is in ``at``, fails the way ``how`` says: ``"exit"`` (``os._exit(3)``, a native crash's way out),
``"kill"`` (SIGKILL to its own process, as the OOM killer does), ``"reset"`` (raises in
``reset``), ``"act"`` (raises in ``act``), ``"hang"`` (never returns from ``act``, after
appending its pid to the file ``tally``), ``"slow"`` (0.2 s per decision). ``"init"``
raises in ``__init__`` on the ``nth`` agent built in its process (``__init__`` is given no seed),
after appending a line to the file ``tally``, so a test can count the raises.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

from socialsim.agent import Agent

_built: dict[int, int] = {}  # pid -> agents built in that process


class Dies(Agent):
    def __init__(self, how: str = "exit", at: list | tuple = (), nth: int = 0, tally: str = ""):
        self.how, self.at, self.tally = how, {int(seed) for seed in at}, tally
        if how == "init":
            pid = os.getpid()
            _built[pid] = _built.get(pid, 0) + 1
            if _built[pid] == nth:
                with open(tally, "a") as f:
                    f.write(f"{pid}\n")
                raise RuntimeError("the agent refused to be built")

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        if self.how == "reset" and seed in self.at:
            raise RuntimeError("the agent refused to reset")

    def act(self, observation, messages, info):
        if self.seed in self.at:
            if self.how == "exit":
                os._exit(3)
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if self.how == "act":
                raise RuntimeError("the agent refused to act")
            if self.how == "slow":
                time.sleep(0.2)
            if self.how == "hang":
                if self.tally:
                    with open(self.tally, "a") as f:
                        f.write(f"{os.getpid()}\n")
                while True:
                    time.sleep(3600)
        return 0


class DiesWaiting(Dies):
    """A :class:`Dies` that decides with ``aact``: in the episodes of ``at`` it waits for ever."""

    async def aact(self, observation, messages, info):
        if self.seed in self.at:
            await asyncio.sleep(3600)
        return 0
