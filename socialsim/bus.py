"""The message bus: everything an agent perceives in a game reaches it as a message here.

A :class:`Message` is immutable once published. Its audience ``to`` is one of

* ``"*"`` — every agent of the episode,
* ``"team:NAME"`` — every member of a team the bus was created with,
* a tuple of agent ids.

The bus keeps one append-only log, and each message's id in one *stream* by its audience: the
public stream, a team's stream, or the streams of the agents it names. An agent follows the
public stream, its teams' and its own, counting how many of each it has read, so publishing to
everyone costs the same whatever the number of agents. ``read(agent)`` returns the messages new
since that agent last looked. The log holds plain values that the garbage collector need not
walk, and a :class:`Message` is made once, for all of its audience (see :class:`MessageBus`).
The log answers the two questions theory-of-mind analysis and the information-hiding tests ask:
``audience_of(m)`` (which agents could see message ``m``) and ``visible_to(agent, turn)`` (what
could ``agent`` see up to turn ``t``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, NamedTuple

EVERYONE = "*"
ENV = "env"  # the sender id of messages the environment publishes


def team(name: str) -> str:
    """The audience string for every member of team ``name``."""
    return f"team:{name}"


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any, where: str = "payload") -> Any:
    """Return a deep copy of a JSON-like value in the form the bus keeps, or raise ``TypeError``.

    Dicts stay dicts, lists become tuples, numpy scalars are converted; any other type is
    refused (naming ``where`` the bad part is), so that every message can be written to the
    episode log.
    """
    try:
        return _json_copy(value)
    except TypeError:
        raise TypeError(_first_bad(value, where)) from None


def freeze(value: Any, where: str = "payload") -> Any:
    """Return a deeply immutable copy of a JSON-like value, or raise ``TypeError``: as
    :func:`json_copy`, with every dict a read-only mapping."""
    return read_only(json_copy(value, where))


def _json_copy(value: Any) -> Any:
    # json_copy, raising a bare TypeError: the path of the bad part is only worked out on failure.
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is dict or isinstance(value, Mapping):  # a plain dict skips the abc check
        copy = {}
        for key, item in value.items():
            if type(key) is not str:
                raise TypeError
            copy[key] = item if type(item) in _SCALARS else _json_copy(item)
        return copy
    if kind is list or kind is tuple:
        items = tuple(value)
        if _SCALARS.issuperset(map(type, items)):  # the common list of numbers or words
            return items
        return tuple([item if type(item) in _SCALARS else _json_copy(item) for item in items])
    if isinstance(value, (bool, str, int, float)):
        return value
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item) and getattr(value, "shape", None) == ():
        return _json_copy(item())
    raise TypeError


def read_only(value: Any) -> Any:
    """A read-only view of a value of :func:`json_copy`'s form: each dict wrapped (not copied) in a
    read-only mapping, tuples of scalars as they are. Nothing may change ``value`` after."""
    kind = type(value)
    if kind is dict:
        if _SCALARS.issuperset(map(type, value.values())):  # a flat payload: the common case
            return MappingProxyType(value)
        return MappingProxyType(
            {
                key: item if type(item) in _SCALARS else read_only(item)
                for key, item in value.items()
            }
        )
    if kind is tuple and not _SCALARS.issuperset(map(type, value)):
        return tuple([item if type(item) in _SCALARS else read_only(item) for item in value])
    return value


def _first_bad(value: Any, where: str) -> str:
    """The error message for the first part of ``value`` that is not JSON."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}: keys must be strings, got {key!r}"
            try:
                _json_copy(item)
            except TypeError:
                return _first_bad(item, f"{where}.{key}")
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            try:
                _json_copy(item)
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

#: a logged message as the bus keeps it: ``(id, turn, sender, to, channel, kind)``, a plain
#: tuple of JSON scalars (``to`` a string or a tuple of them); its payload is kept apart
Entry = tuple


class MessageBus:
    """Per-episode message log with per-agent inboxes.

    ``agents`` are the ids that can receive messages; ``teams`` maps a team name to its members.

    Plain data, by message id (its place in the log): the log of entries (a tuple of scalars
    each), their payloads as :func:`json_copy` makes them (plain dicts and tuples, never handed
    out) and their :class:`Message` views once made (payloads read-only). A stream is the list of
    the ids sent to one audience (``"*"``, ``"team:NAME"``, or one agent), appended to only; an
    inbox holds, for each stream its agent follows, that stream (the list itself, no copy) and
    how many of its ids the agent has read.

    Kept so, a message with a flat payload (every value a JSON scalar) holds no object the
    garbage collector tracks (it untracks a tuple of scalars, and never a tuple holding a dict),
    so an episode's log, a few hundred thousand messages at a few hundred agents, does not make
    every full collection walk it. A message is made once, for all its readers: while nobody
    reads the bus (an RL loop never does), only when asked for (:attr:`log`, :meth:`visible_to`);
    once someone does, as it is posted (the first reader makes those logged before). ``views`` maps a payload kind to the function that shows such a payload
    read-only, for a trusted publisher that knows its shape (``MappingProxyType`` for a dict of
    scalars and tuples of them), used for the env's own messages (sender :data:`ENV`); other
    messages are inspected by :func:`read_only`.
    """

    def __init__(
        self,
        agents: Iterable[str],
        teams: Mapping[str, Iterable[str]] | None = None,
        views: Mapping[str, Callable[[Any], Mapping[str, Any]]] | None = None,
    ):
        self.agents: tuple[str, ...] = tuple(agents)
        # how a trusted publisher sees its payloads of a kind read-only, where it knows their
        # shape (``MappingProxyType`` for a dict of scalars and tuples of scalars); any other
        # kind is seen through read_only(), which inspects each payload
        self._kind_views = views or {}
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
        # by message id: its entry, its payload, and its Message or None until one is made
        self._log: list[Entry] = []
        self._payloads: list[Any] = []
        self._messages: list[Message | None] = []
        # by audience ("*", "team:NAME", an agent id): the ids of the messages sent to it
        self._streams: dict[str, list[int]] = {EVERYONE: []}
        for name in self.teams:
            self._streams[team(name)] = []
        for agent in self.agents:
            self._streams[agent] = []
        # by agent, made at its first read: [stream, how many of its ids the agent has read]
        # for each stream it follows
        self._inboxes: dict[str, tuple[list[Any], ...]] = {}

    def _followed(self, agent: str) -> tuple[str, ...]:
        """The streams ``agent`` follows: the public one, its teams' and its own."""
        if agent not in self._everyone:
            raise ValueError(f"agent: unknown agent {agent!r}; agents are {list(self.agents)}")
        teams = [team(n) for n, members in self.teams.items() if agent in members]
        return (EVERYONE, *teams, agent)

    def _inbox(self, agent: str) -> tuple[list[Any], ...]:
        """A new inbox for ``agent``, nothing read yet. The first makes every message logged so
        far: from then on, each is made as it is posted."""
        inbox = tuple([[self._streams[key], 0] for key in self._followed(agent)])
        if not self._inboxes:
            self._views(range(len(self._log)))
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
        """Append a message to the log and to the streams of its audience ``to``; return it.

        ``payload`` is copied into the log (:func:`json_copy`: a deep copy, JSON values only). A
        trusted publisher whose payload is in that form already and that nothing else holds or
        changes passes ``frozen=True``, and the bus keeps it as it is (see :meth:`post`).
        """
        if not frozen:
            payload = json_copy(payload or {})
        self.post(turn, to, channel, kind, payload, sender)
        return self._views([len(self._log) - 1])[0]

    def post(
        self,
        turn: int,
        to: str | Sequence[str],
        channel: str,
        kind: str,
        payload: Any,
        sender: str = ENV,
    ) -> None:
        """:meth:`publish` for a trusted publisher (the env; ``frozen=True``), returning nothing:
        ``payload`` is built fresh for this message, of dicts, tuples and JSON scalars."""
        streams = self._streams
        if type(to) is str:
            if to not in streams or to in self._everyone:  # an agent id is no audience string
                self.resolve(to)  # raises the error that names the audience
            keys: tuple[str, ...] = (to,)
        else:
            keys = to = tuple(to)
            if not self._everyone.issuperset(to):
                self.resolve(to)
        index = len(self._log)
        entry = (index, int(turn), sender, to, channel, kind)
        self._log.append(entry)
        self._payloads.append(payload)
        # a bus with readers makes the message now, once, for them
        self._messages.append(self._message(entry, payload) if self._inboxes else None)
        for key in keys:
            stream = streams[key]
            if not stream or stream[-1] != index:  # an agent named twice gets it once
                stream.append(index)

    # -- reading ------------------------------------------------------------------------------

    def read(self, agent: str) -> list[Message]:
        """Messages ``agent`` may see that are new since its last ``read``, oldest first."""
        new: list[int] = []
        sources = 0
        for place in self._inboxes.get(agent) or self._inbox(agent):
            stream, seen = place
            if len(stream) > seen:
                new += stream[seen:]
                place[1] = len(stream)
                sources += 1
        if not sources:
            return new
        if sources > 1:
            new.sort()  # several streams interleave: ids are publication order
        return list(map(self._messages.__getitem__, new))  # all made: the bus has a reader

    def rewind(self, agent: str) -> None:
        """Move ``agent``'s read counts back to the start: its next :meth:`read` returns all
        it could see (an agent that takes a seat in the middle of an episode: a fork)."""
        self._inbox(agent)

    def peek(self, agent: str) -> list[Message]:
        """Like :meth:`read` but leaves the read counts as they were."""
        inbox = self._inboxes.get(agent) or self._inbox(agent)
        self._inboxes[agent] = tuple([[stream, seen] for stream, seen in inbox])  # counts for read
        try:
            return self.read(agent)
        finally:
            self._inboxes[agent] = inbox

    @property
    def log(self) -> tuple[Message, ...]:
        return tuple(self._views(range(len(self._log))))

    def _views(self, ids: Iterable[int]) -> list[Message]:
        """The :class:`Message` of each id, made now unless it was made before."""
        messages, make = self._messages, self._make
        return [messages[index] or make(index) for index in ids]

    def _make(self, index: int) -> Message:
        """Make and keep the :class:`Message` of a logged message."""
        message = self._messages[index] = self._message(self._log[index], self._payloads[index])
        return message

    def _message(self, entry: Entry, payload: Any) -> Message:
        """The :class:`Message` of a logged entry: its payload seen through the env's view of
        its kind (an env's own message) or :func:`read_only`."""
        shown = self._kind_views.get(entry[5], read_only) if entry[2] == ENV else read_only
        return _message((*entry, shown(payload)))

    def fields(self) -> list[dict[str, Any]]:
        """Every logged message as the episode record holds it, a dict of its fields by name
        whose payload is the bus's own plain one (read them, never change them): what the
        record's encoder reads, without a :class:`Message` made for any."""
        return [
            {
                "channel": channel,
                "id": index,
                "kind": kind,
                "payload": payload,
                "sender": sender,
                "to": to,  # a tuple of agent ids is encoded as the list to_json makes
                "turn": turn,
            }
            for (index, turn, sender, to, channel, kind), payload in zip(
                self._log, self._payloads, strict=True
            )
        ]

    def audience_of(self, message: Message | int) -> frozenset[str]:
        """Which agents could see ``message``."""
        index = message if isinstance(message, int) else message.id
        return self.resolve(self._log[index][3])

    def visible_to(self, agent: str, turn: int | None = None) -> list[Message]:
        """Everything ``agent`` could see up to and including ``turn`` (all turns if ``None``)."""
        streams, log = self._streams, self._log
        seen = sorted(index for key in self._followed(agent) for index in streams[key])
        return self._views(index for index in seen if turn is None or log[index][1] <= turn)


def audience_of(
    message: Message, agents: Sequence[str], teams: Mapping[str, Iterable[str]]
) -> frozenset[str]:
    """Which agents could see a logged message, from an episode record (no live bus needed)."""
    return MessageBus(agents, teams).resolve(message.to)
