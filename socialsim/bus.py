"""The message bus: everything an agent perceives in a game reaches it as a message here.

A :class:`Message` is immutable once published. Its audience ``to`` is one of

* ``"*"`` — every agent of the episode,
* ``"team:NAME"`` — every member of a team the bus was created with,
* a tuple of agent ids.

The bus keeps one append-only log, and each message in one *stream* by its audience: the public
stream, a team's stream, or the streams of the agents it names. An agent follows the public
stream, its teams' and its own, with a read cursor on each, so publishing to everyone costs the
same whatever the number of agents. ``read(agent)`` returns the messages new since that agent
last looked. The log answers
the two questions theory-of-mind analysis and the information-hiding tests ask:
``audience_of(m)`` (which agents could see message ``m``) and ``visible_to(agent, turn)`` (what
could ``agent`` see up to turn ``t``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, NamedTuple

EVERYONE = "*"
ENV = "env"  # the sender id of messages the environment publishes


def team(name: str) -> str:
    """The audience string for every member of team ``name``."""
    return f"team:{name}"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def freeze(value: Any, where: str = "payload") -> Any:
    """Return a deeply immutable copy of a JSON-like value, or raise ``TypeError``.

    Dicts become read-only mappings, lists become tuples. Only JSON types are allowed (numpy
    scalars are converted), so that every message can be written to the episode log.
    """
    try:
        return _freeze(value)
    except TypeError:
        raise TypeError(_first_bad(value, where)) from None


def _freeze(value: Any) -> Any:
    # Raises a bare TypeError: the path of the bad part is only worked out on failure.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict or isinstance(value, Mapping):  # a plain dict skips the abc check
        frozen = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError
            frozen[key] = item if type(item) in _SCALARS else _freeze(item)
        return MappingProxyType(frozen)
    if kind is list or kind is tuple:
        items = tuple(value)
        if _SCALARS.issuperset(map(type, items)):  # the common list of numbers or words
            return items
        return tuple([item if type(item) in _SCALARS else _freeze(item) for item in items])
    if isinstance(value, (bool, str, int, float)):
        return value
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item) and getattr(value, "shape", None) == ():
        return _freeze(item())
    raise TypeError


def _first_bad(value: Any, where: str) -> str:
    """The error message for the first part of ``value`` that is not JSON."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}: keys must be strings, got {key!r}"
            try:
                _freeze(item)
            except TypeError:
                return _first_bad(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            try:
                _freeze(item)
            except TypeError:
                return _first_bad(item, f"{where}[{i}]")
    return f"{where}: {type(value).__name__} is not JSON-serialisable"


def thaw(value: Any) -> Any:
    """Plain ``dict``/``list`` copy of a frozen value (for JSON and for agents that mutate)."""
    kind = type(value)
    # By exact type first: the abc check of isinstance(value, Mapping) costs more than the copy.
    if kind is MappingProxyType or kind is dict:
        return {key: item if type(item) in _SCALARS else thaw(item) for key, item in value.items()}
    if kind is tuple:
        return [item if type(item) in _SCALARS else thaw(item) for item in value]
    if kind in _SCALARS or kind is list:
        return value
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


class Message(NamedTuple):
    """One published message: immutable (a named tuple of plain values and a frozen payload)."""

    id: int
    turn: int
    sender: str
    to: str | tuple[str, ...]
    channel: str
    kind: str
    payload: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "turn": self.turn,
            "sender": self.sender,
            "to": self.to if isinstance(self.to, str) else list(self.to),
            "channel": self.channel,
            "kind": self.kind,
            "payload": thaw(self.payload),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Message:
        to = data["to"]
        return cls(
            id=int(data["id"]),
            turn=int(data["turn"]),
            sender=data["sender"],
            to=to if isinstance(to, str) else tuple(to),
            channel=data["channel"],
            kind=data["kind"],
            payload=freeze(data["payload"]),
        )


# the named tuple's generated __new__ is a Python function; the tuple's own is not
_message = partial(tuple.__new__, Message)


class MessageBus:
    """Per-episode message log with per-agent inboxes.

    ``agents`` are the ids that can receive messages; ``teams`` maps a team name to its members.
    """

    def __init__(self, agents: Iterable[str], teams: Mapping[str, Iterable[str]] | None = None):
        self.agents: tuple[str, ...] = tuple(agents)
        self._everyone = frozenset(self.agents)
        if len(self._everyone) != len(self.agents):
            raise ValueError(f"agents: ids must be distinct, got {list(self.agents)}")
        self.teams: dict[str, frozenset[str]] = {}
        for name, members in (teams or {}).items():
            members = frozenset(members)
            if not members <= self._everyone:
                unknown = sorted(members - self._everyone)
                raise ValueError(
                    f"teams.{name}: unknown agents {unknown}; agents are {list(self.agents)}"
                )
            self.teams[name] = members
        self._log: list[Message] = []
        # the messages by audience: "*", "team:NAME" and one stream per agent id
        self._streams: dict[str, list[Message]] = {EVERYONE: []}
        for name in self.teams:
            self._streams[team(name)] = []
        for agent in self.agents:
            self._streams[agent] = []
        # each agent's [stream, messages of it already read] pairs, made at its first read
        self._inboxes: dict[str, tuple[list, ...]] = {}

    def _followed(self, agent: str) -> tuple[list[Message], ...]:
        """The streams ``agent`` follows: the public one, its teams' and its own."""
        if agent not in self._everyone:
            raise ValueError(f"agent: unknown agent {agent!r}; agents are {list(self.agents)}")
        teams = [self._streams[team(n)] for n, members in self.teams.items() if agent in members]
        return (self._streams[EVERYONE], *teams, self._streams[agent])

    def _inbox(self, agent: str) -> tuple[list, ...]:
        inbox = tuple([stream, 0] for stream in self._followed(agent))
        self._inboxes[agent] = inbox
        return inbox

    # -- publishing -------------------------------------------------------------------------

    def resolve(self, to: str | Sequence[str]) -> frozenset[str]:
        """The set of agent ids an audience designates; raises ``ValueError`` if it is unknown."""
        if isinstance(to, str):
            if to == EVERYONE:
                return self._everyone
            if to.startswith("team:"):
                name = to[5:]
                if name not in self.teams:
                    raise ValueError(f"to: unknown team {name!r}; teams are {sorted(self.teams)}")
                return self.teams[name]
            raise ValueError(
                f"to: {to!r} is not an audience; use '*', 'team:NAME' or a list of agent ids"
            )
        members = frozenset(to)
        if not members <= self._everyone:
            unknown = sorted(members - self._everyone)
            raise ValueError(f"to: unknown agents {unknown}; agents are {list(self.agents)}")
        return members

    def publish(
        self,
        *,
        turn: int,
        sender: str,
        to: str | Sequence[str],
        channel: str,
        kind: str,
        payload: Mapping[str, Any] | None = None,
        frozen: bool = False,
    ) -> Message:
        """Append a message to the log and to the streams of its audience ``to``.

        ``payload`` is frozen into the message (a deep, read-only copy). A trusted publisher
        (an env) whose payload is immutable already, as :func:`freeze` returns it or a
        read-only mapping of JSON scalars and tuples of them that nothing else holds, passes
        ``frozen=True`` and the bus keeps it as it is.
        """
        streams = self._streams
        if type(to) is str:
            if to not in streams or to in self._everyone:  # an agent id is no audience string
                self.resolve(to)  # raises the error that names the audience
            keys: tuple[str, ...] = (to,)
        else:
            keys = to = tuple(to)
            if not self._everyone.issuperset(to):
                self.resolve(to)
        if not frozen:
            payload = freeze(payload or {})
        log = self._log
        message = _message((len(log), int(turn), sender, to, channel, kind, payload))
        log.append(message)
        for key in keys:
            stream = streams[key]
            if not stream or stream[-1] is not message:  # an agent named twice gets it once
                stream.append(message)
        return message

    # -- reading ------------------------------------------------------------------------------

    def read(self, agent: str) -> list[Message]:
        """Messages ``agent`` may see that are new since its last ``read``, oldest first."""
        new: list[Message] = []
        sources = 0
        for cursor in self._inboxes.get(agent) or self._inbox(agent):
            stream, seen = cursor
            end = len(stream)
            if end > seen:
                new += stream[seen:]
                sources += 1
                cursor[1] = end
        if sources > 1:
            new.sort()  # several streams interleave; a message's id, its first field, is its order
        return new

    def peek(self, agent: str) -> list[Message]:
        """Like :meth:`read` but leaves the cursors where they are."""
        inbox = self._inboxes.get(agent) or self._inbox(agent)
        seen = [cursor[1] for cursor in inbox]
        new = self.read(agent)
        for cursor, count in zip(inbox, seen, strict=True):
            cursor[1] = count
        return new

    @property
    def log(self) -> tuple[Message, ...]:
        return tuple(self._log)

    def audience_of(self, message: Message | int) -> frozenset[str]:
        """Which agents could see ``message``."""
        index = message if isinstance(message, int) else message.id
        return self.resolve(self._log[index].to)

    def visible_to(self, agent: str, turn: int | None = None) -> list[Message]:
        """Everything ``agent`` could see up to and including ``turn`` (all turns if ``None``)."""
        seen = sorted(m for stream in self._followed(agent) for m in stream)
        return [m for m in seen if turn is None or m.turn <= turn]


def audience_of(
    message: Message, agents: Sequence[str], teams: Mapping[str, Iterable[str]]
) -> frozenset[str]:
    """Which agents could see a logged message, from an episode record (no live bus needed)."""
    return MessageBus(agents, teams).resolve(message.to)
