"""What a line of ``episodes.jsonl`` must be to count as a record, and as the record of a spec.

:func:`problem` is the schema every reader applies to each line (the types of the record's
fields and of the entries of its messages and steps, not only its keys), so that no line that
parses as JSON can crash ``socialsim report`` or :func:`socialsim.load`: a line that fails it is
skipped like garbage. :func:`identity` is what must match between a record and the spec of its
key (``(cell, episode)``) for it to count as that episode: the experiment, the seed, the env, its
options and form, and the seats. A run sets aside a record whose identity is not its spec's and
plays its episode again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from socialsim.interventions import ACTIONS
from socialsim.plain_json import canonical_json

#: The keys every record line holds.
REQUIRED = ("experiment", "cell", "episode", "seed", "env_id", "env_kwargs", "form", "seats")
STATUSES = ("done", "failed")


def _int(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _dict_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, dict) and all(map(check, value.values()))


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(map(check, value))


def _message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and _int(value.get("id"))
        and _int(value.get("turn"))
        and isinstance(value.get("sender"), str)
        and isinstance(value.get("to"), str | list)
        and isinstance(value.get("channel"), str)
        and isinstance(value.get("kind"), str)
        and "payload" in value
    )


def _step(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and _int(value.get("turn"))
        and isinstance(value.get("actions"), dict)
        and _dict_of(_number)(value.get("rewards"))
        and isinstance(value.get("invalid", {}), dict)
    )


def _intervention(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("action") in ACTIONS
        and _int(value.get("intervention"))
        and _int(value.get("message"))
    )


def _dict(value: Any) -> bool:
    return isinstance(value, dict)


#: field -> (its check, what it must be, in words)
FIELDS: Mapping[str, tuple[Callable[[Any], bool], str]] = {
    "experiment": (lambda v: isinstance(v, str), "a string"),
    "cell": (_dict, "an object"),
    "episode": (lambda v: _int(v) and v >= 0, "an integer >= 0"),
    "seed": (_int, "an integer"),
    "env_id": (lambda v: isinstance(v, str), "a string"),
    "env_kwargs": (_dict, "an object"),
    "form": (lambda v: isinstance(v, str), "a string"),
    "seats": (_dict_of(_dict), "an object of seat objects"),
    "status": (lambda v: v in STATUSES, "done or failed"),
    "error": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "messages": (_list_of(_message), "a list of messages (id, turn, sender, to, channel...)"),
    "steps": (_list_of(_step), "a list of steps (turn, actions, rewards)"),
    "returns": (_dict_of(_number), "an object of numbers"),
    "summary": (_dict, "an object"),
    "counters": (_dict_of(_dict), "an object of objects"),
    "events": (_dict_of(_list_of(_dict)), "an object of lists of objects"),
    "probes": (_list_of(_dict), "a list of objects"),
    "interventions": (
        _list_of(_intervention),
        f"a list of interventions (action: {', '.join(ACTIONS)}; intervention, message)",
    ),
    "timing": (_dict, "an object"),
}


def problem(data: Any) -> str | None:
    """Why ``data`` (a parsed line) is not a record, in one phrase; ``None`` when it is one."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not a record"
    missing = [key for key in (*REQUIRED, "status") if key not in data]
    if missing:
        return f"missing {', '.join(missing)}"
    unknown = sorted(data.keys() - FIELDS.keys())
    if unknown:
        return f"unknown keys {', '.join(unknown)}"
    for name, value in data.items():
        check, allowed = FIELDS[name]
        if not check(value):
            return f"{name}: must be {allowed}, got {_shown(value)}"
    return None


def _shown(value: Any) -> str:
    text = canonical_json(value) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def identity(
    experiment: str,
    seed: int,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    form: str,
    seats: Mapping[str, Mapping[str, Any]],
) -> str:
    """What a record of one spec holds of that spec, as one text: equal for a record and its
    spec. A seat's ``model`` table is left out: the run completes it with what the server is
    (:func:`socialsim.config.resolve_models`), and the manifest records and checks it."""
    return canonical_json(
        [
            experiment,
            seed,
            env_id,
            env_kwargs,
            form,
            {s: {k: v for k, v in spec.items() if k != "model"} for s, spec in seats.items()},
        ]
    )


def identity_of(record: Any) -> str:
    """:func:`identity` of a spec, or of a record's parsed line (one that passed
    :func:`problem`)."""
    fields = record if isinstance(record, Mapping) else vars_of(record)
    return identity(
        fields["experiment"],
        fields["seed"],
        fields["env_id"],
        fields["env_kwargs"],
        fields["form"],
        fields["seats"],
    )


class Identities:
    """:func:`identity_of` for many records and their specs: a spec's found once per seating
    (the specs of a cell share their seats and env options; only the seed differs)."""

    def __init__(self) -> None:
        self._specs: dict[tuple[int, int, str, str, str], str] = {}

    def match(self, data: Mapping[str, Any], spec: Any) -> bool:
        """Whether the record ``data`` is the record of ``spec``."""
        seating = (id(spec.seats), id(spec.env_kwargs), spec.experiment, spec.env_id, spec.form)
        text = self._specs.get(seating)
        if text is None:
            text = self._specs[seating] = identity_of({**vars_of(spec), "seed": 0})
        return data["seed"] == spec.seed and identity_of({**data, "seed": 0}) == text


def not_its_spec(data: Mapping[str, Any], spec: Any, identities: Identities) -> str | None:
    """Why the record ``data`` (a parsed line that passed :func:`problem`) is not the record of
    ``spec``, in words; ``None`` when it is."""
    if identities.match(data, spec):
        return None
    return f"not the record of its spec: {differs(data, spec)}"


def vars_of(spec: Any) -> dict[str, Any]:
    """The identity's fields of a spec (:class:`~socialsim.episode.EpisodeSpec`)."""
    return {
        "experiment": spec.experiment,
        "seed": spec.seed,
        "env_id": spec.env_id,
        "env_kwargs": dict(spec.env_kwargs),
        "form": spec.form,
        "seats": {seat: dict(seat_spec) for seat, seat_spec in spec.seats.items()},
    }


def differs(data: Mapping[str, Any], spec: Any) -> str:
    """The first field of the record ``data`` whose value is not its spec's, in words."""
    expected = vars_of(spec)
    for name in ("experiment", "seed", "env_id", "env_kwargs", "form", "seats"):
        mine, theirs = data[name], expected[name]
        if name == "seats":
            mine, theirs = (
                {s: {k: v for k, v in x.items() if k != "model"} for s, x in seats.items()}
                for seats in (mine, theirs)
            )
        if canonical_json(mine) != canonical_json(theirs):
            return f"{name} {_shown(mine)}, not its spec's {_shown(theirs)}"
    return "its identity"
