"""What a chat completions request asks for, read from its JSON body: the structured-output form
and schema it carries, and whether its roles alternate as strict chat templates require. Shared
by the test server (:mod:`socialsim.testing.llm_server`) and the scripted policies that answer
through it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: what a strict chat template (Gemma's, Mistral's) raises for any other order of roles
ALTERNATION_ERROR = (
    "Conversation roles must alternate user/assistant/user/assistant/... "
    "(an optional system message first)"
)


def request_format(request: Mapping[str, Any]) -> str | None:
    """The structured-output form a request uses (a name of ``socialsim.llm.structured``)."""
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            return "openai"
        if response_format.get("type") == "json_object" and "schema" in response_format:
            return "llama_cpp_python"
    for field, name in (
        ("guided_json", "vllm"),
        ("json_schema", "llama_cpp"),
        ("grammar", "grammar"),
    ):
        if field in request:
            return name
    return None


def request_schema(request: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request asks for, in whichever form (None for none or a grammar)."""
    form = request_format(request)
    if form == "openai":
        return request["response_format"]["json_schema"]["schema"]
    if form == "llama_cpp_python":
        return request["response_format"]["schema"]
    if form == "vllm":
        return request["guided_json"]
    if form == "llama_cpp":
        return request["json_schema"]
    return None


def roles_alternate(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the roles are an optional system message, then user and assistant turns
    strictly alternating from a user turn (as Gemma's and Mistral's templates require)."""
    roles = [m.get("role") for m in messages]
    if roles and roles[0] == "system":
        roles = roles[1:]
    return bool(roles) and all(
        role == ("user" if i % 2 == 0 else "assistant") for i, role in enumerate(roles)
    )
