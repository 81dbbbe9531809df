"""canonical_json: orjson's text where it writes the standard encoder's, the standard encoder's
everywhere else, so that records, episode keys and cache keys keep their bytes; strict JSON."""

from __future__ import annotations

import enum
import json
import math
import struct
import uuid
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np
import orjson
import pytest

from socialsim.plain_json import (
    _CANONICAL,
    _FINITE,
    _ORJSON,
    _encodable,
    canonical_json,
    orjson_text,
)


class Colour(enum.Enum):
    RED = "red"


def random_float(rng: np.random.Generator) -> float:
    pick = rng.integers(4)
    if pick == 0:  # any bit pattern: subnormals, NaNs, infinities, every exponent
        return struct.unpack("<d", rng.bytes(8))[0]
    if pick == 1:
        return float(rng.random() * 10.0 ** rng.integers(-30, 30))
    if pick == 2:
        return round(float(rng.uniform(-100, 100)), int(rng.integers(0, 8)))
    return float(rng.choice([0.0, -0.0, 1e-5, 2.5e-7, 1e16, 1e22, 0.1 + 0.2, math.inf, math.nan]))


def random_text(rng: np.random.Generator) -> str:
    ranges = [(0x20, 0x7F), (0, 0x20), (0x80, 0x800), (0x800, 0xD800), (0xD800, 0xE000),
              (0xE000, 0x110000)]  # fmt: skip
    weights = [0.8, 0.01, 0.08, 0.08, 0.002, 0.028]
    chars = []
    for _ in range(int(rng.integers(0, 12))):
        low, high = ranges[rng.choice(len(ranges), p=weights)]
        chars.append(chr(int(rng.integers(low, high))))
    return "".join(chars)


def random_key(rng: np.random.Generator):
    if rng.random() < 0.99:
        return random_text(rng)
    return [1, True, None, 2.5][int(rng.integers(4))]  # the standard encoder converts these


def random_value(rng: np.random.Generator, depth: int = 0):
    pick = int(rng.integers(12 if depth < 4 else 6))
    if pick == 0:
        return random_float(rng)
    if pick == 1:
        return int(rng.integers(-(2**62), 2**62)) * int(
            rng.choice([1, 1, 10 ** int(rng.integers(30))])
        )
    if pick == 2:
        return random_text(rng)
    if pick == 3:
        return [True, False, None][int(rng.integers(3))]
    if pick == 4:
        kinds = [
            np.float32(rng.random()),
            np.int64(rng.integers(100)),
            Colour.RED,
            uuid.UUID(int=7),
        ]
        return kinds[int(rng.integers(len(kinds)))]
    if pick == 5:
        return int(rng.integers(1000))
    size = int(rng.integers(0, 5))
    if pick in (6, 7):
        return {random_key(rng): random_value(rng, depth + 1) for _ in range(size)}
    if pick == 8:
        return MappingProxyType(
            {random_text(rng): random_value(rng, depth + 1) for _ in range(size)}
        )
    if pick == 9:
        return tuple(random_value(rng, depth + 1) for _ in range(size))
    if pick == 10:
        return np.arange(size, dtype=np.float32) / 3
    return [random_value(rng, depth + 1) for _ in range(size)]


def standard(value):
    """The standard library's text, NaN and infinities as null (its own parser reads them)."""
    try:
        text = _CANONICAL.encode(value)
    except (TypeError, ValueError) as error:
        return type(error)
    return _FINITE.encode(json.loads(text, parse_constant=lambda _: None))


def test_the_text_is_the_standard_encoders_for_generated_values():
    rng = np.random.default_rng(20261201)
    orjson_texts = 0
    for _ in range(2000):
        value = {random_key(rng): random_value(rng) for _ in range(int(rng.integers(1, 6)))}
        expected = standard(value)
        try:
            ours = canonical_json(value)
        except (TypeError, ValueError) as error:
            ours = type(error)
        assert ours == expected, value
        try:
            text = orjson.dumps(value, default=_encodable, option=_ORJSON).decode()
        except TypeError:
            continue
        if "0.0000" not in text and "e-" not in text:  # orjson's text is kept: the standard's
            assert text == expected, value
            orjson_texts += 1
    assert orjson_texts > 1000  # most values take orjson's path, so the check above means something


def test_allow_nan_false_is_the_standard_encoders_refusal():
    assert (
        canonical_json({"b": [1.5, None], "a": "x"}, allow_nan=False) == '{"a":"x","b":[1.5,null]}'
    )
    with pytest.raises(ValueError, match="Out of range float"):
        canonical_json([math.inf], allow_nan=False)


def test_exact_texts_of_the_cases_the_standard_encoder_writes():
    assert canonical_json({"b": 1, "a": [1.0, 1e-05, 2.5e-7]}) == '{"a":[1.0,1e-05,2.5e-07],"b":1}'
    assert canonical_json({"k": "tab\there, bell\x07"}) == '{"k":"tab\\there, bell\\u0007"}'
    assert canonical_json({2: "x", 10: "y"}) == '{"2":"x","10":"y"}'  # sorted as numbers
    assert canonical_json({True: "x"}) == '{"true":"x"}'  # jsonable would write "True"
    assert canonical_json("\ud800") == '"\ud800"'  # a lone surrogate, as the standard writes it
    assert canonical_json(2**80) == "1208925819614629174706176"
    with pytest.raises(TypeError, match="object is not JSON-serialisable"):
        canonical_json({"x": object()})
    cyclic: list = [1]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="a list that contains itself"):
        canonical_json(cyclic)


def test_nan_and_infinities_are_null_on_both_paths():
    assert canonical_json([math.nan, -math.inf, 1.0]) == "[null,null,1.0]"  # orjson's path
    assert canonical_json([math.nan, 1e-05]) == "[null,1e-05]"  # the standard encoder's
    assert canonical_json({1: math.inf}) == '{"1":null}'


def test_frozen_payloads_numpy_enums_and_uuids():
    frozen = MappingProxyType({"z": (1, MappingProxyType({"b": 2})), "é": "ü"})
    assert canonical_json(frozen) == '{"z":[1,{"b":2}],"é":"ü"}'
    assert canonical_json(np.arange(3, dtype=np.int8)) == "[0,1,2]"
    assert canonical_json(np.float32(0.1)) == "0.10000000149011612"  # as .item() gives it
    assert canonical_json([Colour.RED, uuid.UUID(int=1)]) == (
        '["red","00000000-0000-0000-0000-000000000001"]'
    )


class _Interrupted(Mapping):
    """A mapping whose reading is where a Ctrl-C lands (orjson reads it in its callback)."""

    def __getitem__(self, key):
        raise KeyError(key)

    def __iter__(self):
        raise KeyboardInterrupt

    def __len__(self):
        return 1


def test_a_ctrl_c_in_the_encoders_callback_stops_the_encoding_and_is_not_a_refusal():
    # orjson turns whatever its callback raises into its TypeError; read as a refusal, the
    # interrupt was lost and the standard encoder took over (a run kept going after Ctrl-C)
    with pytest.raises(KeyboardInterrupt):
        canonical_json({"summary": _Interrupted()})
    with pytest.raises(KeyboardInterrupt):
        orjson_text({"summary": _Interrupted()})
    assert orjson_text({"summary": {1: "a"}}) is None  # a refusal (a key not a string) still is
