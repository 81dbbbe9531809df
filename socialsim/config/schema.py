"""The shape of an experiment file: its keys, their types, and the error every check raises."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from socialsim.registry import nearest


class ConfigError(ValueError):
    """A bad experiment file or override; the CLI exits with status 2."""


TOP_KEYS = {
    "name": str,
    "description": str,
    "episodes": int,
    "seed": int,
    "max_concurrent": int,
    "workers": int,
    "backend": str,
    "cache": str,
    "env": dict,
    "seats": dict,
    "probes": list,
    "interventions": list,  # changes made on the bus while playing (socialsim.interventions)
    "grid": dict,
    "model_groups": dict,  # model name -> its group ("reasoning", "chat"): the report groups by it
    "evolution": dict,  # generations of scripted strategies: socialsim.config.evolution
    "decision_timeout": float,  # seconds an agent may take to decide (socialsim.deadline)
    "episode_timeout": float,  # seconds an episode may take
}
REQUIRED = ("name", "env", "seats")
ENV_KEYS = {"id": str, "form": str, "kwargs": dict}
DEFAULT_SEAT = "*"
BACKENDS = ("local", "ray")  # local: this process, or `workers` processes


def _type_name(kind: type) -> str:
    names = {str: "a string", int: "an integer", dict: "a table", list: "a list (array)"}
    return names.get(kind, "a number")


def check_type(where: str, value: Any, kind: type) -> None:
    kinds = (int, float) if kind is float else kind  # a TOML number of seconds: 5 or 0.5
    ok = isinstance(value, kinds) and not (kind in (int, float) and isinstance(value, bool))
    if not ok:
        raise ConfigError(
            f"{where}: expected {_type_name(kind)}, got {value!r} ({type(value).__name__})"
        )


def check_keys(where: str, table: Mapping[str, Any], allowed: Mapping[str, type]) -> None:
    for key, value in table.items():
        if key not in allowed:
            raise ConfigError(
                f"{where}{key}: unknown key {key!r}{nearest(key, allowed)}; allowed keys: "
                f"{', '.join(allowed)}"
            )
        check_type(f"{where}{key}", value, allowed[key])
