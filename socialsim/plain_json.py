"""Plain JSON: the one sanitiser (:func:`jsonable`) and the one canonical text (:func:`canonical_json`).

The episode log, the episode keys, the LLM cache key and the identity of a built model are all
:func:`canonical_json` text, so equal values give equal bytes, hence equal keys and hashes. This
module imports nothing of the project, so that every part of it may use it.
"""

from __future__ import annotations

import enum
import json
import re
import uuid
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import orjson

_PLAIN = frozenset({str, int, float, bool, type(None)})


def jsonable(value: Any) -> Any:
    """``value`` made of plain JSON values, as far as it can be.

    Numpy arrays and scalars become lists and Python numbers, tuples become lists, mapping keys
    become strings, sets become sorted lists, an enum member its value, a UUID its text, and an
    object with ``model_json_schema`` (a pydantic model class, as ``response_format`` takes)
    becomes ``{"json_schema_of": name, "schema": ...}``. Anything else is returned as it is.
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
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, uuid.UUID):
        return str(value)
    schema = getattr(value, "model_json_schema", None)
    if callable(schema):
        return {"json_schema_of": getattr(value, "__name__", "model"), "schema": schema()}
    return value


def canonical_json(value: Any, *, allow_nan: bool = True) -> str:
    """Sorted keys, no spaces, UTF-8 characters as they are: the standard library's ``json`` text
    with these options, and strict JSON (RFC 8259), which any parser reads (``jq``, a browser's
    ``JSON.parse``). A NaN or an infinity is written as ``null``, as :mod:`socialsim.analysis.stats`
    writes an undefined value; ``allow_nan=False`` refuses them (``ValueError``), as a request
    key must. A read-only mapping (a frozen bus payload) is encoded as the dict it wraps; other
    values not JSON go through :func:`jsonable` first.

    orjson writes the text, about six times faster than ``json`` (an episode's record is tens of
    KB). It writes the same text for every value but two kinds, which ``json`` writes instead:
    what orjson refuses (keys that are not strings, integers beyond 64 bits, lone surrogates),
    and floats below 1e-4 in magnitude, which orjson writes ``1e-5`` or ``0.00001`` where
    ``json`` writes ``1e-05`` (found in orjson's text, with a false alarm now and then for a string
    holding ``0.0000`` or a digit before ``e-``; a rule on the values costs more, see
    ``experiments/bench/canonical_json_bench.py``). ``tests/test_plain_json.py`` checks the two
    agree on generated values of every kind.
    """
    try:
        if not allow_nan:  # request keys: small, and refusing is the standard encoder's
            return _FINITE.encode(value)
        text = orjson_text(value)
        return text if text is not None else _standard(value)
    except RecursionError:  # the encoders do not look for cycles: JSON data are trees
        raise ValueError(
            f"not JSON: a {type(value).__name__} that contains itself, or nests too deep"
        ) from None


def orjson_text(value: Any) -> str | None:
    """:func:`canonical_json` of ``value`` as orjson writes it, or ``None`` where the standard
    encoder must write it: a key not a string (a ``str`` subclass included), an integer beyond 64
    bits, a lone surrogate, a float below 1e-4 in magnitude, or a value it cannot encode."""
    try:
        data = orjson.dumps(value, default=_encodable, option=_ORJSON)
    except TypeError as error:  # orjson.JSONEncodeError: refused, or _encodable's own error
        if not isinstance(error.__cause__, Exception | None):
            # orjson wraps whatever its callback raises, a Ctrl-C landing there too: not a refusal
            raise error.__cause__ from None
        return None
    if b"0.0000" in data or (b"e-" in data and _SMALL_FLOAT.search(data)):
        return None
    return data.decode()


def _standard(value: Any) -> str:
    """:func:`canonical_json` of ``value``, by the standard library's ``json``."""
    try:
        return _FINITE.encode(value)
    except ValueError:  # a NaN or an infinity: the same text with them as null
        nulled = json.loads(_CANONICAL.encode(value), parse_constant=lambda _: None)
        return _FINITE.encode(nulled)


def _encodable(value: Any) -> Any:
    """The encoders' ``default``: a value they can encode for one they cannot, or ``TypeError``."""
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
    "default": _encodable,
}
_CANONICAL = json.JSONEncoder(allow_nan=True, **_OPTIONS)
_FINITE = json.JSONEncoder(allow_nan=False, **_OPTIONS)
# orjson writes dataclasses and datetimes itself; passed through, they are refused as json does.
_ORJSON = orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_SMALL_FLOAT = re.compile(rb"[0-9]e-")
