"""The agent protocol shared by every kind of player: scripted, embedding, LLM, RL and human.

An agent is reset once per episode with its id, its seat (role) and a seed, and then maps
``(observation, new inbox messages, info)`` to an action. It never touches the env or the bus:
the runner hands it what it may see and passes its action on.

* Scripted agents implement :meth:`Agent.act` only.
* Language agents implement :meth:`Agent.aact` (the async twin) so that agents that decide at
  the same time can wait on their model concurrently; ``act`` then runs ``aact`` to completion.
* Side questions (theory-of-mind probes, see ``socialsim.envs.decrypto.tom``) are asked with
  :meth:`Agent.answer` / :meth:`Agent.aanswer`. They never enter the game.

Per-episode counters (``counters``) and logs (``events``, e.g. one entry per LLM call) are
copied into the episode record by the runner.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from socialsim.bus import Message


@dataclass
class RunContext:
    """What every agent of one experiment run shares.

    ``directory`` is the results directory (``None`` outside ``socialsim run``); ``shared`` is a
    dict for resources built once per run, keyed by what identifies them.
    """

    directory: Path | None = None
    shared: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """A side question put to an agent outside the game (it does not change the game state).

    ``kind`` names the protocol (e.g. ``"predict_interceptor_guess"``); ``context`` carries the
    facts the question is about, JSON-like.
    """

    kind: str
    context: Mapping[str, Any] = field(default_factory=dict)


class Agent:
    """Base class. Subclasses override :meth:`act` (sync) or :meth:`aact` (async)."""

    #: the name this class is registered under (set by the registry tables)
    kind: str = ""
    #: env family (``"gossip"``, ``"decrypto"``, ``"pennies"``...) -> the decisions this agent
    #: can make in it (``"*"``: every one). The runner refuses a seat whose env or decision is
    #: not declared here before anything is written; ``None`` (an agent of one's own, a trained
    #: policy, a person) is not checked.
    plays: ClassVar[Mapping[str, Collection[str]] | None] = None
    #: the seats it can take, when fewer than its decisions allow (a decoder that reads the
    #: keywords makes the interceptor's decision too, but is never shown them); ``None``: any
    only_seats: ClassVar[tuple[str, ...] | None] = None
    #: the parameters that name files: a relative one in an experiment file is read against
    #: the file's folder (one given on the command line, against the working directory)
    file_params: ClassVar[tuple[str, ...]] = ()

    def check_seat(self, agent_id: str, observation_space: Any, action_space: Any) -> None:
        """Raise ``ValueError`` if this agent cannot play seat ``agent_id`` of an env with these
        spaces: called when an experiment is checked, before anything is written (a trained
        policy checks its file's spaces). Any seat is accepted by default."""

    def attach(self, run: RunContext) -> None:
        """Called once before :meth:`reset` with what the whole run shares (its directory, and
        resources such as one LLM client per model, whose concurrency limit spans episodes)."""
        self.run = run

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        self.agent_id = agent_id
        self.seat = seat
        self.seed = seed
        self.counters: dict[str, float] = {}
        self.events: list[dict[str, Any]] = []

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]) -> Any:
        if decides_synchronously(type(self)):
            raise NotImplementedError(f"{type(self).__name__} implements neither act nor aact")
        return asyncio.run(self.aact(observation, messages, info))

    async def aact(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> Any:
        return self.act(observation, messages, info)

    def answer(self, question: Question) -> Any:
        """Answer a side question. Agents that take part in a probe override this."""
        if type(self).aanswer is not Agent.aanswer:
            return asyncio.run(self.aanswer(question))
        raise NotImplementedError(
            f"{type(self).__name__} does not answer {question.kind!r} questions"
        )

    async def aanswer(self, question: Question) -> Any:
        return self.answer(question)

    def count(self, name: str, amount: float = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount


def decides_synchronously(kind: type) -> bool:
    """Whether agents of class ``kind`` decide with a plain ``act`` (no ``aact`` of their own):
    an episode of such agents needs no event loop. The one place this is decided."""
    return kind.aact is Agent.aact
