"""Interventions: changes to what the agents perceive, made on the bus by the engine while an
episode is played, and recorded in its record (``interventions``) so that the bus log still says
who could see what after the change.

An experiment lists them as ``[[interventions]]`` tables, each with an ``action``:

| action | keys | what |
|---|---|---|
| `hide` | `from` (agent ids), filters | a matching message reaches its audience minus `from` (its logged `to` says so) |
| `inject` | `round`, `as`, `about`, `tone`, `message` (optional), `to` (default everyone) | a gossip message published as if by agent `as` about `about`, at the start of round `round` (before its first message) |
| `change` | `tone` and/or `message`, filters | a matching gossip is published with that tone or text instead |

Any of them may have a ``label`` (text the report shows). Filters (all optional): `round` (or `turn`: the bus turn; a gossip game's turn is its round),
`kind` (the message kind, default `gossip`), `author`, `about` (payload fields). Every message
an intervention changes or adds is named in the record with what it was before, e.g.
``{"intervention": 0, "action": "hide", "message": 12, "round": 3, "to_before": "*"}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.bus import EVERYONE

ACTIONS = ("hide", "inject", "change")
FILTERS = ("round", "turn", "kind", "author", "about")
KEYS = {
    "hide": {"action", "label", "from", *FILTERS},
    "inject": {"action", "label", "round", "turn", "as", "about", "tone", "message", "to"},
    "change": {"action", "label", "tone", "message", *FILTERS},
}
GOSSIP = "gossip"


def check(index: int, spec: Any, agents: Sequence[str] | None = None) -> dict[str, Any]:
    """One intervention table, checked (its agent ids against ``agents``, when given); a
    ``ValueError`` names the field, the value and what is allowed."""
    where = f"interventions[{index}]"
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where}: an intervention is a table, got {spec!r}")
    action = spec.get("action")
    if action not in ACTIONS:
        raise ValueError(f"{where}.action: {action!r}; allowed: {', '.join(ACTIONS)}")
    unknown = sorted(set(spec) - KEYS[action])
    if unknown:
        raise ValueError(
            f"{where}: unknown key {unknown[0]!r} for a {action}; allowed: "
            f"{', '.join(sorted(KEYS[action]))}"
        )
    for key in ("round", "turn"):
        value = spec.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{where}.{key}: an integer, got {value!r}")
    if action == "hide":
        hidden = spec.get("from")
        if (
            not isinstance(hidden, list)
            or not hidden
            or not all(isinstance(a, str) for a in hidden)
        ):
            raise ValueError(f"{where}.from: a non-empty list of agent ids, got {hidden!r}")
    if action == "inject":
        if _when(spec) is None:
            raise ValueError(f"{where}.round: an inject needs the round it happens at")
        for key in ("as", "about", "tone"):
            if not isinstance(spec.get(key), str):
                raise ValueError(f"{where}.{key}: a string, got {spec.get(key)!r}")
    if action == "change" and "tone" not in spec and "message" not in spec:
        raise ValueError(f"{where}: a change sets 'tone' or 'message' (or both)")
    if "tone" in spec:
        from socialsim.envs.gossip.protocol import TONES

        if spec["tone"] not in TONES:
            raise ValueError(f"{where}.tone: {spec['tone']!r}; allowed: {', '.join(TONES)}")
    if agents is not None:
        for key in ("from", "as", "about", "author", "to"):
            value = spec.get(key)
            for agent in [value] if isinstance(value, str) else value or ():
                if agent not in agents and agent != EVERYONE:
                    raise ValueError(
                        f"{where}.{key}: no agent {agent!r}; the env's agents are {list(agents)}"
                    )
    return dict(spec)


def _when(spec: Mapping[str, Any]) -> int | None:
    return spec.get("round", spec.get("turn"))


def _matches(spec: Mapping[str, Any], turn: int, kind: str, payload: Any) -> bool:
    when = _when(spec)
    if when is not None and when != turn:
        return False
    if kind != spec.get("kind", GOSSIP):
        return False
    for key in ("author", "about"):
        if key in spec and (not isinstance(payload, Mapping) or payload.get(key) != spec[key]):
            return False
    return True


class Interventions:
    """The interventions of one episode; :meth:`install` puts them on an env's bus."""

    def __init__(self, specs: Sequence[Mapping[str, Any]]):
        self.specs = [check(i, spec) for i, spec in enumerate(specs)]
        self.applied: list[dict[str, Any]] = []
        self._injected: set[int] = set()

    def __bool__(self) -> bool:
        return bool(self.specs)

    def install(self, bus: Any) -> None:
        """Route every later :meth:`MessageBus.post` of ``bus`` through the interventions."""
        post = bus.post
        everyone = list(bus.agents)
        logged = [len(bus.log)]  # the id the next message gets (the log only grows)

        def counted(*args) -> None:
            post(*args)
            logged[0] += 1

        def intervened(turn, to, channel, kind, payload, sender="env"):
            self._inject(counted, turn, logged[0])
            for index, spec in enumerate(self.specs):
                if spec["action"] == "inject" or not _matches(spec, turn, kind, payload):
                    continue
                note = {"intervention": index, "action": spec["action"], "message": logged[0]}
                note["round"] = turn
                if spec["action"] == "hide":
                    audience = everyone if to == EVERYONE else list(to)
                    kept = tuple(a for a in audience if a not in spec["from"])
                    note["to_before"] = to if isinstance(to, str) else list(to)
                    to = kept
                else:
                    changed = {k: spec[k] for k in ("tone", "message") if k in spec}
                    note["before"] = {k: payload.get(k) for k in changed}
                    payload = {**payload, **changed}
                self.applied.append(note)
            counted(turn, to, channel, kind, payload, sender)

        bus.post = intervened

    def _inject(self, post, turn: int, next_id: int) -> None:
        for index, spec in enumerate(self.specs):
            if spec["action"] != "inject" or index in self._injected or _when(spec) != turn:
                continue
            self._injected.add(index)
            payload = {
                "round": turn,
                "author": spec["as"],
                "about": spec["about"],
                "tone": spec["tone"],
                "message": spec.get("message"),
            }
            to = spec.get("to", EVERYONE)
            self.applied.append(
                {"intervention": index, "action": "inject", "message": next_id, "round": turn}
            )
            next_id += 1
            post(turn, to if isinstance(to, str) else tuple(to), GOSSIP, GOSSIP, payload)
