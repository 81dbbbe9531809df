"""Plain JSON: the one sanitiser (:func:`jsonable`) and the one canonical text (:func:`canonical_json`).

The episode log, the episode keys, the LLM cache key and the identity of a built model are all
:func:`canonical_json` text, so equal values give equal bytes, hence equal keys and hashes. This
module imports nothing of the project, so that every part of it may use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

_PLAIN = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """``value`` made of plain JSON values, as far as it can be.

    Numpy arrays and scalars become lists and Python numbers, tuples become lists, mapping keys
    become strings, sets become sorted lists, and an object with ``model_json_schema`` (a
    pydantic model class, as ``response_format`` takes) becomes ``{"json_schema_of": name,
    "schema": ...}``. Anything else is returned as it is.
    """
    kind = type(value)
    if kind in _PLAIN:  # most values of an episode: no further checks
        return value
    if kind is dict:
        return {str(k): v if type(v) in _PLAIN else jsonable(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _PLAIN else jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    schema = getattr(value, "model_json_schema", None)
    if callable(schema):
        return {"json_schema_of": getattr(value, "__name__", "model"), "schema": schema()}
    return value


def canonical_json(value: Any, *, allow_nan: bool = True) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are; a read-only mapping (a frozen bus
    payload) is encoded as the dict it wraps, other values not JSON go through :func:`jsonable`
    first. ``allow_nan=False`` refuses NaN and infinities (``ValueError``), as a
    request key must: no server takes them.
    """
    return (_CANONICAL if allow_nan else _FINITE).encode(value)


def _plain(value: Any) -> Any:
    if type(value) is MappingProxyType:  # a frozen bus payload: its dict, read by the encoder
        return value.copy()
    plain = jsonable(value)
    if plain is value:
        raise TypeError(f"{type(value).__name__} is not JSON-serialisable: {value!r:.80}")
    return plain


# Made once: json.dumps with options builds a new encoder at every call.
_OPTIONS = {
    "sort_keys": True,
    "check_circular": False,  # JSON data are trees: a cycle is a bug, and recurses until it raises
    "separators": (",", ":"),
    "ensure_ascii": False,
    "default": _plain,
}
_CANONICAL = json.JSONEncoder(allow_nan=True, **_OPTIONS)
_FINITE = json.JSONEncoder(allow_nan=False, **_OPTIONS)
