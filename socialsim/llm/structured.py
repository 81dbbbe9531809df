"""Structured output: one JSON schema per decision, sent in the form the endpoint accepts.

A call asks for structured output with the override ``schema={"name": ..., "schema": {...}}``
(a JSON schema of an object); the model table's ``structured_format`` says how it goes on the
wire. The request's cache key holds the schema and the format, not the wire fields.

======================  =========================================================================
``structured_format``   what the request carries
======================  =========================================================================
``"openai"``            ``response_format = {"type": "json_schema", "json_schema": {"name", "schema",
                        "strict": true}}``: OpenAI and the providers litellm translates it for,
                        vLLM, SGLang, recent llama.cpp servers
``"llama_cpp_python"``  ``response_format = {"type": "json_object", "schema": schema}``:
                        llama-cpp-python's server (it answers ``json_schema`` with an HTTP 500)
``"vllm"``              ``guided_json = schema``: vLLM's own field (older vLLM versions)
``"llama_cpp"``         ``json_schema = schema``: llama.cpp's ``llama-server``
``"grammar"``           ``grammar = <GBNF>`` (:func:`gbnf`): llama.cpp and llama-cpp-python
``"auto"``              the default: ``"openai"`` through litellm; on the ``openai_http``
                        transport the server's own form, by what its ``GET /v1/models`` says
                        (:func:`socialsim.llm.server.server_info`): llama-cpp-python ->
                        ``"grammar"`` (see :data:`FAMILY_FORMATS`), llama.cpp ->
                        ``"llama_cpp"``, else ``"openai"``
======================  =========================================================================

Whether the server accepts the chosen form is checked by one request before the first
episode (:func:`socialsim.llm.server.probe_structured_output`, from the config check).

:func:`gbnf` writes a grammar for the schemas the agents use: objects (every property
required, in order), strings (``enum``, ``minLength``, ``maxLength``), arrays (``items``,
``minItems``, ``maxItems``), patterns of the forms ``^[^CHARS]{m,n}$`` and
``^[^CHARS]{m,n}( [^CHARS]{m,n}){0,k}$`` (words), numbers, integers and booleans. Anything else is a ValueError
naming the construct.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

FORMATS = ("auto", "openai", "llama_cpp_python", "vllm", "llama_cpp", "grammar")

#: the server family (see :mod:`socialsim.llm.server`) -> its format under ``"auto"``.
#: llama-cpp-python gets our grammar: its own schema converter (0.3.36) let SmolLM2 answer five
#: hints to a schema of exactly three, where the grammar of :func:`gbnf` held it to three (and
#: decoded about three times faster).
FAMILY_FORMATS = {"llama_cpp_python": "grammar", "llama_cpp": "llama_cpp"}


def check_format(value: Any) -> str:
    if value not in FORMATS:
        raise ValueError(
            f"structured_format: expected one of {', '.join(repr(f) for f in FORMATS)}, got {value!r}"
        )
    return value


def check_schema(schema: Any) -> dict[str, Any]:
    """A call's ``schema`` override: ``{"name": str, "schema": {"type": "object", ...}}``."""
    if (
        not isinstance(schema, Mapping)
        or not isinstance(schema.get("name"), str)
        or not isinstance(schema.get("schema"), Mapping)
        or schema["schema"].get("type") != "object"
    ):
        raise ValueError(
            "schema: expected {'name': str, 'schema': {'type': 'object', ...}}, got "
            f"{schema!r:.120}"
        )
    return {"name": schema["name"], "schema": dict(schema["schema"])}


def wire_fields(structured_format: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The request fields that ask for ``schema`` in ``structured_format`` (not ``"auto"``)."""
    body = schema["schema"]
    if structured_format == "openai":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema["name"], "schema": body, "strict": True},
            }
        }
    if structured_format == "llama_cpp_python":
        return {"response_format": {"type": "json_object", "schema": body}}
    if structured_format == "vllm":
        return {"guided_json": body}
    if structured_format == "llama_cpp":
        return {"json_schema": body}
    if structured_format == "grammar":
        return {"grammar": gbnf(body)}
    raise ValueError(f"structured_format: {structured_format!r} has no wire form (resolve 'auto')")


# -- GBNF -----------------------------------------------------------------------------------------

_BASE_RULES = {
    "ws": "[ ]?",
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt]',
    "string": r'"\"" char* "\""',
    "number": '"-"? [0-9]+ ("." [0-9]+)?',
    "integer": '"-"? [0-9]+',
    "boolean": '"true" | "false"',
}


#: the kinds of ``pattern`` :func:`gbnf` writes: characters excluded, a length range, and
#: optionally more words of that kind after single spaces
_EXCLUDING = re.compile(
    r"\^\[\^([^\]\\]+)\]\{(\d+),(\d+)\}(?:\( \[\^\1\]\{(\d+),(\d+)\}\)\{0,(\d+)\})?\$"
)


def _literal(text: str) -> str:
    """A GBNF string literal matching exactly ``text``."""
    return json.dumps(text)


def gbnf(schema: Mapping[str, Any]) -> str:
    """A GBNF grammar (llama.cpp's) that admits exactly the JSON texts of ``schema``'s subset
    (see the module docstring), written compactly: ``{"a": 1, "b": "x"}``."""
    rules: dict[str, str] = {}
    used: set[str] = set()

    def rule(node: Mapping[str, Any], name: str) -> str:
        kind = node.get("type")
        if "enum" in node:
            values = node["enum"]
            if not values or not all(isinstance(v, str) for v in values):
                raise ValueError(f"schema {name}: only enums of strings are supported")
            return " | ".join(_literal(json.dumps(v)) for v in values)
        if kind == "object":
            properties = node.get("properties") or {}
            if set(node.get("required", properties)) != set(properties):
                raise ValueError(f"schema {name}: every property must be required")
            parts = ['"{"']
            for i, (key, sub) in enumerate(properties.items()):
                child = f"{name}-{i}"
                rules[child] = rule(sub, child)
                sep = ", " if i else ""
                parts.append(f"{_literal(sep + json.dumps(key) + ': ')} {child}")
            parts.append('"}"')
            return " ".join(parts)
        if kind == "string" and "pattern" in node:
            found = _EXCLUDING.fullmatch(node["pattern"])
            if found is None:
                raise ValueError(
                    f"schema {name}: the grammar writer takes only patterns of the forms "
                    f"^[^CHARS]{{m,n}}$ and ^[^CHARS]{{m,n}}( [^CHARS]{{m,n}}){{0,k}}$, "
                    f"not {node['pattern']!r}"
                )
            banned, low, high, more_low, more_high, more = found.groups()
            char = f"{name}-char"
            rules[char] = rf'[^"\\\x7F\x00-\x1F{banned}] | "\\" ["\\/bfnrt]'
            words = f"{char}{{{low},{high}}}"
            if more is not None:
                words += f' (" " {char}{{{more_low},{more_high}}}){{0,{more}}}'
            return rf'"\"" {words} "\""'
        if kind == "string":
            used.update(("char",))
            low, high = int(node.get("minLength", 0)), node.get("maxLength")
            if high is None:
                return f'"\\"" char{{{low},}} "\\""' if low else '"\\"" char* "\\""'
            return f'"\\"" char{{{low},{int(high)}}} "\\""'
        if kind == "array":
            child = f"{name}-item"
            rules[child] = rule(node.get("items") or {"type": "string"}, child)
            low, high = int(node.get("minItems", 0)), node.get("maxItems")
            used.add("ws")
            more = f'("," ws {child})'
            if high is not None and int(high) == 0:
                return '"[]"'
            if low == 0:
                tail = f"{more}{{0,{int(high) - 1}}}" if high is not None else f"{more}*"
                return f'"[" ( {child} {tail} )? "]"'
            rest_low = low - 1
            tail = (
                f"{more}{{{rest_low},{int(high) - 1}}}"
                if high is not None
                else f"{more}{{{rest_low},}}"
            )
            return f'"[" {child} {tail} "]"'
        if kind in ("number", "integer", "boolean"):
            used.add(kind)
            return kind
        raise ValueError(f"schema {name}: type {kind!r} is not supported by the grammar writer")

    rules["root"] = rule(schema, "root")
    lines = [f"root ::= {rules.pop('root')}"]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    lines += [f"{name} ::= {_BASE_RULES[name]}" for name in sorted(used)]
    return "\n".join(lines) + "\n"
