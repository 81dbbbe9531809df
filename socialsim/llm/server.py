"""What an OpenAI-compatible server says about itself, and the one probe of its structured output.

=============================  ===============================================================
:class:`ServerInfo`            the family and window; :meth:`ServerInfo.facts` is what a run
                               records of it, once, before its first episode
                               (:func:`socialsim.llm.seats.resolve_servers`)
:func:`server_info`            ``GET {api_base}/models`` (and llama.cpp's ``GET /props``): the
                               server's family and the model's context window, once per
                               ``(api_base, model)`` per process
:func:`probe_structured_output`  one tiny constrained request in the seat's
                               ``structured_format``, before the first episode (the config
                               check calls it): a refusal is a configuration error
:func:`overflow_window`        the window an overflow error states (``"maximum context length is
                               4096 tokens"``), remembered for the next requests
=============================  ===============================================================

Families, from the models list: ``owned_by = "vllm"`` (its ``max_model_len`` is the window),
``"llamacpp"`` (llama.cpp's ``llama-server``; ``/props`` gives ``n_ctx``), ``"me"``
(llama-cpp-python's server, which states no window: the first overflow error does), else
``"openai_compatible"``. A server that cannot be reached is left to the run (its requests fail
as connection errors there); nothing is cached for it.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from socialsim.llm.structured import FAMILY_FORMATS, wire_fields

FAMILIES = {"vllm": "vllm", "llamacpp": "llama_cpp", "me": "llama_cpp_python"}
#: the families whose answers an agent's ``structured_output = "auto"`` constrains: self-hosted
#: servers (often small models, which need it) that take a schema in a form we know
CONSTRAINED_FAMILIES = frozenset(FAMILIES.values())

_OVERFLOW = re.compile(
    r"context[_ ](length|window)|maximum context|too many tokens|exceeds? (the )?(model'?s? )?context",
    re.I,
)
_STATED_WINDOW = re.compile(
    r"(?:maximum context length|context window|context length|n_ctx)\D{0,20}(\d{1,8})", re.I
)


@dataclass(frozen=True)
class ServerInfo:
    family: str
    context_window: int | None = None

    def facts(self) -> dict[str, Any]:
        """What a run records of the server (the manifest's ``llm[].config.server``, the reply
        cache's ``servers`` table): its family and window, and, for a reader, what
        ``"auto"`` means on it."""
        return {
            "family": self.family,
            "context_window": self.context_window,
            "structured_format": self.structured_format,
            "constrains": self.constrains,
        }

    @classmethod
    def from_facts(cls, facts: Any) -> ServerInfo:
        """The info :meth:`facts` recorded (a model table's ``server``); ValueError naming the
        field otherwise."""
        family = facts.get("family") if isinstance(facts, dict) else None
        window = facts.get("context_window") if isinstance(facts, dict) else None
        if family not in (*FAMILIES.values(), "openai_compatible") or not (
            window is None
            or (isinstance(window, int) and not isinstance(window, bool) and window > 0)
        ):
            raise ValueError(
                "server: expected a table {family = one of "
                f"{', '.join(repr(f) for f in (*FAMILIES.values(), 'openai_compatible'))}, "
                f"context_window = tokens or absent}} (what a run records), got {facts!r}"
            )
        return cls(family, window)

    @property
    def structured_format(self) -> str:
        """The form ``structured_format = "auto"`` takes on this server."""
        return FAMILY_FORMATS.get(self.family, "openai")

    @property
    def constrains(self) -> bool:
        """Whether an agent's ``structured_output = "auto"`` is on for this server."""
        return self.family in CONSTRAINED_FAMILIES


_INFO: dict[tuple[str, str], ServerInfo] = {}
_WINDOWS: dict[tuple[str, str], int] = {}  # learned from overflow errors
_PROBED: dict[tuple[str, str, str], str | None] = {}
_LOCK = threading.Lock()


def _get(url: str, timeout: float) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - http(s) only
        return json.load(response)


def server_info(api_base: str, model: str, timeout: float = 5.0) -> ServerInfo | None:
    """The family and window of ``model`` (its served name) at ``api_base``; None when the
    server cannot be reached or does not answer ``GET /models``."""
    key = (api_base.rstrip("/"), model)
    with _LOCK:
        if key in _INFO:
            return _INFO[key]
    try:
        listing = _get(f"{key[0]}/models", timeout)
    except urllib.error.HTTPError:
        listing = {}  # it answers, but lists no models: a plain OpenAI-compatible server
    except (OSError, ValueError):
        return None
    entries = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in entries or [] if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("id") == model), entries[0] if entries else {})
    family = FAMILIES.get(str(entry.get("owned_by")), "openai_compatible")
    window = entry.get("max_model_len")
    if family == "llama_cpp":
        root = key[0].removesuffix("/v1")
        try:
            props = _get(f"{root}/props", timeout)
            window = (props.get("default_generation_settings") or {}).get("n_ctx") or props.get(
                "n_ctx"
            )
        except (OSError, ValueError, AttributeError):
            window = None
    info = ServerInfo(family, int(window) if isinstance(window, int) and window > 0 else None)
    with _LOCK:
        _INFO[key] = info
    return info


def known_info(api_base: str, model: str) -> ServerInfo | None:
    """What :func:`server_info` found before, without asking (None if it has not)."""
    with _LOCK:
        return _INFO.get((api_base.rstrip("/"), model))


_REFUSED_STRUCTURE = re.compile(
    r"response_format|json_schema|guided_json|grammar|structured output|schema", re.I
)


def is_structure_refusal(text: str, status: int | None) -> bool:
    """Whether an error answer to a request that carried a schema refuses the schema's form
    (not credentials, a rate limit or an overflow)."""
    return (
        status is not None
        and status not in (401, 403, 429)
        and status >= 400
        and not is_overflow(text)
        and bool(_REFUSED_STRUCTURE.search(text))
    )


def is_overflow(text: str) -> bool:
    """Whether an error text says the request does not fit the model's context window."""
    return bool(_OVERFLOW.search(text))


def overflow_window(api_base: str | None, model: str, text: str) -> int | None:
    """The window an overflow error states, remembered for ``(api_base, model)``."""
    found = _STATED_WINDOW.search(text)
    if found is None:
        return None
    window = int(found.group(1))
    with _LOCK:
        _WINDOWS[(str(api_base).rstrip("/"), model)] = window
    return window


def learned_window(api_base: str | None, model: str) -> int | None:
    with _LOCK:
        return _WINDOWS.get((str(api_base).rstrip("/"), model))


def forget_servers() -> None:
    """Forget what servers said (tests start fresh servers on reused ports)."""
    with _LOCK:
        _INFO.clear()
        _WINDOWS.clear()
        _PROBED.clear()


PROBE_SCHEMA = {
    "name": "probe",
    "schema": {
        "type": "object",
        "properties": {"ready": {"type": "string", "enum": ["yes"]}},
        "required": ["ready"],
        "additionalProperties": False,
    },
}


def probe_structured_output(
    api_base: str,
    model: str,
    structured_format: str,
    *,
    api_key: str | None = None,
    timeout: float = 60.0,
) -> str | None:
    """Send one constrained request; return None if the server honoured the format, else the
    reason (an HTTP error, or a reply that is not the one JSON answer the schema allows).

    ``structured_format = "auto"`` is resolved first. A server that cannot be reached gives
    None: the run meets it. Each ``(api_base, model, format)`` is probed once per process.
    """
    if structured_format == "auto":
        info = server_info(api_base, model)
        if info is None:
            return None
        structured_format = info.structured_format
    key = (api_base.rstrip("/"), model, structured_format)
    with _LOCK:
        if key in _PROBED:
            return _PROBED[key]
    body = {
        "model": model,
        "messages": [{"role": "user", "content": 'Answer with {"ready": "yes"}.'}],
        "temperature": 0.0,
        "max_tokens": 16,
        **wire_fields(structured_format, PROBE_SCHEMA),
    }
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(
        f"{key[0]}/chat/completions", data=json.dumps(body).encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            data = json.load(response)
    except urllib.error.HTTPError as error:
        text = error.read().decode("utf-8", errors="replace")[:300]
        reason: str | None = f"HTTP {error.code}: {text}"
    except (OSError, ValueError):
        return None  # unreachable or cut off: not a verdict on the format
    else:
        text = None
        try:
            text = data["choices"][0]["message"]["content"]
            answer = json.loads(text)
        except (KeyError, IndexError, TypeError, ValueError):
            answer = None
        reason = (
            None
            if answer == {"ready": "yes"}
            else f"the reply {str(text)[:80]!r} is not the JSON the schema allows (the server ignored the format)"
            if isinstance(data, dict) and data.get("choices")
            else "the reply has no choices"
        )
    with _LOCK:
        _PROBED[key] = reason
    return reason
