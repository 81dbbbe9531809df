"""How an experiment's table changes before it is checked: ``--set`` overrides (which always win
over a grid axis at the same path), ``seats.*`` reaching named seats, named seats filled from the
``"*"`` default, and ``${VARIABLES}`` expanded from the environment."""

from __future__ import annotations

import copy
import inspect
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from typing import Any

from socialsim import registry
from socialsim.config.schema import DEFAULT_SEAT, ConfigError


def parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def assignments(overrides: Iterable[str] | Mapping[str, Any]) -> list[str]:
    """Overrides as ``--set`` strings: given so, or a dict ``{"path.to.key": value}`` (the
    value a Python one: a number, a string, a bool, a list or a dict), each written as TOML."""
    if isinstance(overrides, str):
        return [overrides]
    if not isinstance(overrides, Mapping):
        return list(overrides)
    return [f"{path}={_toml(value, path)}" for path, value in overrides.items()]


def _toml(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v, where) for v in value) + "]"
    if isinstance(value, Mapping):
        pairs = (f"{json.dumps(str(k))} = {_toml(v, where)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise ConfigError(
        f"overrides[{where!r}]: a number, string, bool, list or dict, got {type(value).__name__}"
    )


def seat_assignment(text: str) -> tuple[str, dict[str, Any]]:
    """``--with SEAT=KIND`` or ``SEAT={kind = "...", ...}`` (a TOML inline table): the seat and
    its agent spec."""
    seat, _, value = text.partition("=")
    seat, value = seat.strip(), value.strip()
    if not seat or not value:
        raise ConfigError(
            f'--with: expected SEAT=KIND, SEAT={{kind = "...", ...}} or an experiment file, got {text!r}'
        )
    spec = parse_value(value)
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, dict):
        raise ConfigError(f"--with {seat}: expected a kind or a table, got {value!r}")
    return seat, spec


def apply_override(config: dict[str, Any], assignment: str) -> list[str]:
    """Apply one ``path.to.key=value`` override in place; return a line for each grid axis it
    replaces.

    An override always wins: a grid axis at the overridden path (or below it) is dropped, so the
    value set is the one that runs; ``grid.PATH=[...]`` sets the axis itself. ``seats.*.KEY``
    sets the ``"*"`` default and, as a grid axis over it does, the parameter ``KEY`` of every
    named seat whose own kind takes it and that does not set it itself (a named seat's own kind
    and parameters stay), and ``seats.*.TABLE.KEY`` is also merged into each ``TABLE`` a named seat
    has of its own (``seats.*.model.api_base`` reaches an interceptor with its own ``model``).
    """
    path, sep, text = assignment.partition("=")
    if not sep or not path.strip():
        raise ConfigError(f"--set: expected path.to.key=value, got {assignment!r}")
    value = parse_value(text.strip())
    path = path.strip()
    if path.startswith("grid."):
        config.setdefault("grid", {})[path[len("grid.") :]] = value
        return []
    keys = path.split(".")
    targets = [keys]
    seats = config.get("seats")
    if len(keys) > 3 and keys[:2] == ["seats", DEFAULT_SEAT] and isinstance(seats, dict):
        targets += [
            ["seats", seat, *keys[2:]]
            for seat, spec in seats.items()
            if seat != DEFAULT_SEAT
            and isinstance(spec, dict)
            and isinstance(spec.get(keys[2]), dict)
        ]
    notes = []
    for target in targets:
        notes += _replace_grid_axes(config, ".".join(target), assignment)
        set_path(config, target, value, "--set")
    reach_named_seats(config, path, value)
    return notes


def _replace_grid_axes(config: dict[str, Any], path: str, assignment: str) -> list[str]:
    """Drop the grid axes that ``--set path=...`` overrides; refuse one that would overwrite
    the override in every cell."""
    grid = config.get("grid")
    if not isinstance(grid, dict):
        return []
    notes = []
    for axis in list(grid):
        if axis == path or axis.startswith(path + "."):
            notes.append(
                f"--set {assignment.strip()} replaces the grid axis {axis} = {grid.pop(axis)!r}"
            )
        elif path.startswith(axis + "."):
            raise ConfigError(
                f"--set {assignment.strip()}: the grid sweeps {axis}, which holds {path}; "
                f"set the axis instead (--set 'grid.{axis}=[...]')"
            )
    if not grid:
        del config["grid"]
    return notes


def fill_named_seats(config: dict[str, Any]) -> None:
    """A seat named without a kind (``seats.agent_3.p = 1``) starts from the '*' spec, its own
    keys merged in, table into table (``seats.encoder.model.model = ...`` keeps the other keys
    of the default's ``model`` table)."""
    seats = config.get("seats")
    if not isinstance(seats, dict) or not isinstance(seats.get(DEFAULT_SEAT), dict):
        return
    for seat, spec in seats.items():
        if seat != DEFAULT_SEAT and isinstance(spec, dict) and "kind" not in spec:
            seats[seat] = _merged(seats[DEFAULT_SEAT], spec)


def reach_named_seats(config: dict[str, Any], path: str, value: Any) -> None:
    """A grid axis ``seats.*.KEY`` (a parameter, not the kind) also sets ``KEY`` on every named
    seat with a kind of its own that takes that parameter and does not set it itself: an axis
    over ``seats.*.norm`` gives the whole population the norm, the norm-less entrant keeps its own
    spec."""
    keys = path.split(".")
    if len(keys) != 3 or keys[:2] != ["seats", DEFAULT_SEAT] or keys[2] == "kind":
        return
    seats = config.get("seats", {})
    for seat, spec in list(seats.items()):
        if seat == DEFAULT_SEAT or not isinstance(spec, dict) or keys[2] in spec:
            continue
        if "kind" in spec and _takes(spec["kind"], keys[2]):
            # a new table: the spec may be a grid value that other cells share
            seats[seat] = {**spec, keys[2]: copy.deepcopy(value)}


def _takes(kind: Any, parameter: str) -> bool:
    try:
        target = registry.agent_class(kind)
    except Exception:  # an unknown kind is reported by check_cell, with its alternatives
        return False
    parameters = inspect.signature(target).parameters
    return parameter in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _merged(default: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``default`` with ``own`` merged in, table into table (``own`` wins)."""
    merged = copy.deepcopy(dict(default))
    for key, value in own.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def set_path(config: dict[str, Any], keys: list[str], value: Any, where: str) -> None:
    table = config
    for depth, key in enumerate(keys[:-1]):
        nxt = table.setdefault(key, {})
        if not isinstance(nxt, dict):
            raise ConfigError(
                f"{where} {'.'.join(keys)}: {'.'.join(keys[: depth + 1])} is not a table"
            )
        table = nxt
    table[keys[-1]] = value


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(value: Any, where: str = "", environ: Mapping[str, str] | None = None) -> Any:
    """Replace ``${NAME}`` and ``${NAME:-default}`` in every string of the file by the
    environment variable's value (e.g. ``model = "${SOCIALSIM_MODEL:-openai/gpt-4o-mini}"``),
    so that the manifest records the value actually used."""
    environ = os.environ if environ is None else environ
    if isinstance(value, dict):
        return {k: expand_variables(v, f"{where}{k}.", environ) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_variables(v, where, environ) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"{where.rstrip('.')}: the environment variable {name} is not set (write ${{{name}:-default}} for a default)"
        )

    return _VARIABLE.sub(substitute, value)
