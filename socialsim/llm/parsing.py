"""Reading a JSON answer out of a model's free-text reply.

Models wrap their answers in prose, code fences and markdown, and sometimes write Python-style
dicts, curly quotes or trailing commas. These helpers find the answer anyway, or raise
:class:`AnswerParseError` whose message is short and says what was wrong, ready to be sent back
to the model in a re-prompt.

* :func:`extract_answer` — the last complete JSON object after the last marker (``"ANSWER:"``,
  case-insensitive) that has one; the Decrypto format ``ANSWER: {"guess": "4-1-3"}``.
* :func:`extract_json` — the last JSON object anywhere, for replies asked to be JSON only.
* :func:`json_objects` — every top-level JSON object in a text, in order.
* :func:`require_fields` — check an answer has the fields of a role's schema, with their types.

Objects are read with the JSON decoder itself, so nested braces and braces inside strings are
handled exactly; a span that is not strict JSON gets a second, lenient reading (curly quotes
straightened, trailing commas dropped, Python literals such as ``{'a': True}``).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

_DECODER = json.JSONDecoder()
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_CLOSING = {'"': '"', "'": "'", "\u201c": "\u201d"}  # opening quote -> closing quote
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


class AnswerParseError(ValueError):
    """The reply holds no usable answer; ``str(error)`` says why in one sentence."""

    def __init__(self, reason: str, text: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.text = text


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order of appearance."""
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        value, end = _object_at(text, i)
        if value is not None:
            found.append(value)
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return found


def _object_at(text: str, start: int) -> tuple[dict[str, Any] | None, int]:
    """The object starting at ``text[start] == "{"`` and the index after it, or (None, start)."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        pass
    else:
        return (value, end) if isinstance(value, dict) else (None, start)
    end = _balanced_end(text, start)
    if end is None:
        return None, start
    value = _lenient(text[start:end])
    return (value, end) if isinstance(value, dict) else (None, start)


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the brace that closes ``text[start]``, skipping quoted strings."""
    depth = 0
    quote: str | None = None
    i = start
    while i < len(text):
        char = text[i]
        if quote is not None:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in _CLOSING:
            quote = _CLOSING[char]
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _lenient(span: str) -> Any:
    candidate = _TRAILING_COMMA.sub(r"\1", span.translate(_CURLY))
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(candidate)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def extract_answer(
    text: str | None, marker: str = "ANSWER:", *, require_marker: bool = True
) -> dict[str, Any]:
    """The answer object of a reply of the form ``... <marker> {json}``.

    Takes the last marker (case-insensitive) that is followed by a complete JSON object, and
    the last complete object after it; code fences and prose around it are ignored. With
    ``require_marker=False`` a reply without the marker falls back to :func:`extract_json`.
    """
    if text is None or not text.strip():
        raise AnswerParseError("the reply is empty", text or "")
    starts = [m.end() for m in re.finditer(re.escape(marker), text, flags=re.IGNORECASE)]
    if not starts:
        if not require_marker:
            return extract_json(text)
        raise AnswerParseError(
            f"the reply has no {marker!r}; end it with {marker} followed by one JSON object", text
        )
    for start in reversed(starts):
        objects = json_objects(text[start:])
        if objects:
            return objects[-1]
    after = text[starts[-1] :].lstrip().lstrip("`").removeprefix("json").lstrip()
    try:
        value, _ = _DECODER.raw_decode(after)
    except json.JSONDecodeError:
        raise AnswerParseError(
            f"no complete JSON object follows {marker!r} (check the braces and the double quotes)",
            text,
        ) from None
    raise AnswerParseError(
        f"the answer after {marker!r} must be a JSON object {{...}}, not {_json_type(type(value))} {_show(value)}",
        text,
    )


def extract_json(text: str | None) -> dict[str, Any]:
    """The last complete JSON object anywhere in the reply."""
    if text is None or not text.strip():
        raise AnswerParseError("the reply is empty", text or "")
    objects = json_objects(text)
    if not objects:
        raise AnswerParseError("the reply holds no complete JSON object {...}", text)
    return objects[-1]


def require_fields(
    answer: Mapping[str, Any], fields: Mapping[str, type | tuple[type, ...]]
) -> dict[str, Any]:
    """``answer`` as a dict if it has every field of ``fields`` with the given type(s).

    Extra fields are allowed. ``bool`` does not pass for ``int`` or ``float``.
    """
    missing = [name for name in fields if name not in answer]
    if missing:
        names = ", ".join(f'"{name}"' for name in missing)
        raise AnswerParseError(
            f"the answer lacks the field{'s' if len(missing) > 1 else ''} {names}"
        )
    for name, kinds in fields.items():
        value = answer[name]
        kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
        wrong_bool = isinstance(value, bool) and bool not in kinds_tuple
        if wrong_bool or not isinstance(value, kinds_tuple):
            wanted = " or ".join(_json_type(k) for k in kinds_tuple)
            raise AnswerParseError(
                f'the field "{name}" must be {wanted}, not {_json_type(type(value))} {_show(value)}'
            )
    return dict(answer)


def _json_type(kind: type) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }.get(kind, kind.__name__)


def _show(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
