"""Building a model stack from a plain table, as experiment TOML files give it.

.. code-block:: toml

    [seats."*".model]             # whatever table the LLM agent passes to build_model
    model = "openai/gpt-4o-mini"  # litellm's model name (required)
    api_base = "http://127.0.0.1:8000/v1"   # for an OpenAI-compatible server
    transport = "openai_http"     # the default with an api_base; "litellm" without one
    structured_format = "auto"    # how a schema goes on the wire (socialsim.llm.structured)
    context_window = 4096         # tokens; default: what the server says (socialsim.llm.server)
    api_key_env = "OPENAI_API_KEY"          # the variable that holds the key
    temperature = 0.7
    max_tokens = 512
    seed = 0
    timeout = 60                  # seconds per request
    max_retries = 5               # retries of transient failures (0 = none)
    backoff = 1.0                 # seconds before the first retry, doubling, capped at 30
    concurrency = 8               # requests in flight per (model, api_base); 0 = no limit
    cache = true                  # true: <run_dir>/llm_cache.sqlite (or the shared cache); a path; false
    budget = 2000                 # max requests; or {calls = 2000, tokens = 1e6, cost = 5.0}
    max_reply_chars = 12000       # a longer reply is an invalid answer; default 16 per max_tokens
    [seats."*".model.params]      # provider parameters, sent as they are
    reasoning_effort = "low"

``server = {family = "llama_cpp_python", context_window = 2048}`` states what the server at
``api_base`` is, so that the model never asks it (``GET /models``): a run fills it in for every
seat before its first episode, from its manifest or by asking once, and records it there
(:func:`socialsim.llm.seats.resolve_servers`).

The stack, outermost first:
``Accounting(Cache(ReplyLimit(Retry(CallBudget(ConcurrencyLimit(provider))))))``, each layer
present only when configured (``ReplyLimit`` always). The provider is chosen by ``transport``
(:func:`transport_of`):

* ``"openai_http"`` (the default when the table has an ``api_base``):
  :class:`~socialsim.llm.OpenAICompatibleModel`, a plain HTTP client for an OpenAI-compatible
  server (vLLM, llama.cpp, the test server) at ``api_base`` (required), for experiments with
  many requests in flight: under 1 ms of CPU per call where litellm spends about 14
  (``experiments/bench/llm_decrypto_bench.py``). Its replies have no cost (None);
* ``"litellm"`` (the default without an ``api_base``): :class:`~socialsim.llm.LiteLLMModel`,
  any provider litellm reaches by name (a local server too, by ``api_base``, if asked for).

The transport is not part of the cache key: the same request gives the same reply whichever
transport sends it, so a cache filled through one serves the other.

Equal configs (with the same ``run_dir``) built in one process give the *same* model object, so
all agents and episodes of a run that name one model share its budget, accounting, cache
connection and concurrency limit. Vary ``seed`` per call (``complete(messages, seed=...)``),
not per config, to keep that sharing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from socialsim.llm.cache import Cache, forget_stores
from socialsim.llm.litellm_model import LiteLLMModel, load_litellm
from socialsim.llm.model import ChatModel
from socialsim.llm.openai_http import OpenAICompatibleModel
from socialsim.llm.server import forget_servers
from socialsim.llm.wrappers import Accounting, CallBudget, ConcurrencyLimit, ReplyLimit, Retry
from socialsim.plain_json import canonical_json

CONFIG_KEYS = (
    "model",
    "api_base",
    "transport",
    "api_key_env",
    "temperature",
    "max_tokens",
    "seed",
    "timeout",
    "max_retries",
    "backoff",
    "concurrency",
    "cache",
    "budget",
    "params",
    "structured_format",
    "context_window",
    "max_reply_chars",
    "server",
)

DEFAULTS: dict[str, Any] = {
    "transport": None,  # openai_http with an api_base, else litellm (see transport_of)
    "structured_format": "auto",
    "context_window": None,
    "timeout": 60.0,
    "max_retries": 5,
    "backoff": 1.0,
    "concurrency": 8,
    "cache": True,
    "budget": None,
    "params": {},
    "max_reply_chars": None,  # 16 characters per token of max_tokens (ReplyLimit)
    "server": None,  # asked of the server when needed (socialsim.llm.server)
}

BUDGET_KEYS = ("calls", "tokens", "cost")

#: ``transport`` -> the provider class it builds.
TRANSPORTS: dict[str, type[ChatModel]] = {
    "litellm": LiteLLMModel,
    "openai_http": OpenAICompatibleModel,
}

#: Where ``cache = true`` puts replies when there is no run directory.
CACHE_ENV = "SOCIALSIM_LLM_CACHE"
CACHE_FILE = "llm_cache.sqlite"

_BUILT: dict[str, ChatModel] = {}
_BUILT_LOCK = threading.Lock()


def default_cache_path() -> Path:
    """``$SOCIALSIM_LLM_CACHE`` if set, else ``~/.cache/socialsim/llm_cache.sqlite``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    return Path.home() / ".cache" / "socialsim" / CACHE_FILE


def cache_path(cache: Any, run_dir: str | os.PathLike | None) -> Path | None:
    """Where the ``cache`` setting puts the reply cache (None: no cache)."""
    if cache is False or cache is None:
        return None
    if cache is True:
        return Path(run_dir) / CACHE_FILE if run_dir is not None else default_cache_path()
    if isinstance(cache, (str, os.PathLike)) and str(cache):
        path = Path(cache).expanduser()
        return path if path.is_absolute() or run_dir is None else Path(run_dir) / path
    raise ValueError(f"cache: expected true, false or a file path, got {cache!r}")


def build_model(config: Mapping[str, Any], run_dir: str | os.PathLike | None = None) -> ChatModel:
    """The model stack a config table describes (see the module docstring for the keys).

    Unknown keys raise ValueError naming the key and the allowed keys. Equal ``(config,
    run_dir)`` pairs return the same object (see :func:`forget_models`).
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"model config: expected a table with at least 'model', got {config!r}")
    unknown = [key for key in config if key not in CONFIG_KEYS]
    if unknown:
        raise ValueError(
            f"model config: unknown key {unknown[0]!r}; allowed keys: {', '.join(CONFIG_KEYS)}"
        )
    if "model" not in config:
        raise ValueError(
            f"model config: 'model' is required (e.g. 'openai/gpt-4o-mini'); got keys {list(config)}"
        )
    settings = {**DEFAULTS, **config}
    identity = canonical_json(
        {"config": settings, "run_dir": str(Path(run_dir).resolve()) if run_dir else None},
        allow_nan=False,
    )
    with _BUILT_LOCK:
        model = _BUILT.get(identity)
        if model is None:
            model = _BUILT[identity] = _build(settings, run_dir)
        return model


def forget_models() -> None:
    """Forget the models built so far: the next :func:`build_model` builds afresh (fresh
    budget and accounting, the cache file opened again), and what servers said about
    themselves."""
    with _BUILT_LOCK:
        _BUILT.clear()
    forget_servers()
    forget_stores()


def transport_of(config: Mapping[str, Any]) -> str:
    """The transport a table uses: its own, else ``openai_http`` when it has an ``api_base``
    (an OpenAI-compatible server: vLLM, llama.cpp, the test server), else ``litellm``."""
    transport = config.get("transport")
    if transport is not None:
        return transport
    return "openai_http" if config.get("api_base") else "litellm"


def missing_key(config: Mapping[str, Any]) -> str | None:
    """The environment variable a model reached through litellm by name (no ``api_base``, no
    ``api_key_env``) reads its key from, when it is not set: litellm's own answer for the
    provider (``OPENAI_API_KEY`` for ``openai/...``); ``None`` when none is missing."""
    model = config.get("model")
    if config.get("api_key_env") or config.get("api_base") or not isinstance(model, str):
        return None
    if transport_of(config) != "litellm":
        return None
    try:
        found = load_litellm().validate_environment(model=model)
    except Exception:  # noqa: BLE001 - a provider litellm cannot tell about: the call will say
        return None
    missing = [name for name in found.get("missing_keys", []) if name.endswith("_API_KEY")]
    return missing[0] if missing else None


def _build(config: dict[str, Any], run_dir: str | os.PathLike | None) -> ChatModel:
    params = config["params"]
    if not isinstance(params, Mapping):
        raise ValueError(f"params: expected a table of provider parameters, got {params!r}")
    transport = transport_of(config)
    if transport not in TRANSPORTS:
        raise ValueError(
            f"transport: expected one of {', '.join(repr(t) for t in TRANSPORTS)}, got {transport!r}"
        )
    if transport == "openai_http" and not config.get("api_base"):
        raise ValueError(
            "api_base: transport 'openai_http' reaches an OpenAI-compatible server and needs its "
            "endpoint (e.g. 'http://127.0.0.1:8000/v1'); without one use transport 'litellm', "
            "which reaches providers by model name"
        )
    model: ChatModel = TRANSPORTS[transport](
        config["model"],
        api_base=config.get("api_base"),
        api_key_env=config.get("api_key_env"),
        temperature=config.get("temperature"),
        max_tokens=config.get("max_tokens"),
        seed=config.get("seed"),
        timeout=config["timeout"],
        params=params,
        structured_format=config["structured_format"],
        context_window=config["context_window"],
        server=config["server"],
    )
    concurrency = config["concurrency"]
    if concurrency not in (None, 0):
        model = ConcurrencyLimit(model, concurrency)
    budget = config["budget"]
    if budget is not None:
        model = CallBudget(model, **_budget_limits(budget))
    max_retries = config["max_retries"]
    if max_retries:
        backoff = config["backoff"]
        if not (isinstance(backoff, (int, float)) and backoff >= 0):
            raise ValueError(f"backoff: expected seconds >= 0, got {backoff!r}")
        model = Retry(
            model,
            max_retries,
            base_delay=float(backoff),
            max_delay=max(30.0, float(backoff)),
            seed=config.get("seed") or 0,
        )
    elif not (isinstance(max_retries, int) and max_retries == 0):
        raise ValueError(f"max_retries: expected an integer >= 0, got {max_retries!r}")
    model = ReplyLimit(model, config["max_reply_chars"])
    path = cache_path(config["cache"], run_dir)
    if path is not None:
        model = Cache(model, path)
    return Accounting(model)


def _budget_limits(budget: Any) -> dict[str, Any]:
    if isinstance(budget, int) and not isinstance(budget, bool):
        return {"max_calls": budget}
    if isinstance(budget, Mapping):
        unknown = [key for key in budget if key not in BUDGET_KEYS]
        if unknown:
            raise ValueError(
                f"budget: unknown key {unknown[0]!r}; allowed keys: {', '.join(BUDGET_KEYS)}"
            )
        return {f"max_{key}": value for key, value in budget.items()}
    raise ValueError(
        f"budget: expected a number of requests or a table with {', '.join(BUDGET_KEYS)}, got {budget!r}"
    )
