"""The LLM layer: the only code in socialsim that talks to litellm or to a model server.

=========================  ====================================================================
Interface                  :class:`ChatModel`: ``await model.complete(messages, **overrides) -> Reply``
Provider                   :class:`LiteLLMModel` (any model litellm reaches by name), the default
                           without an ``api_base`` (``transport = "litellm"``)
Lightweight provider       :class:`OpenAICompatibleModel` (``transport = "openai_http"``, the default
                           with an ``api_base``): plain HTTP to an OpenAI-compatible server, no
                           litellm, a fraction of its CPU per call; ``cost`` is None
Wrappers                   :class:`Retry`, :class:`ConcurrencyLimit`, :class:`CallBudget`,
                           :class:`Accounting`, :class:`ReplyLimit` (an oversized reply is an
                           invalid answer), :class:`Cache` (SQLite reply cache, only a cache:
                           bypassed with one :class:`CacheUnavailable` warning when it fails)
From a config table        :func:`build_model` ``(config, run_dir=None)``
Per-call log entry         :meth:`Reply.event`, :meth:`ProviderError.event`
In-process test model      :class:`ScriptedModel` (no HTTP); :mod:`socialsim.testing.llm_server` is the HTTP one
Structured output          a call's ``schema`` override, sent in the table's ``structured_format``
                           (:mod:`socialsim.llm.structured`); :func:`gbnf`, :func:`wire_fields`
Servers                    :func:`server_info` (family, context window), :func:`probe_structured_output`;
                           :func:`check_seat_models` (the config check of an experiment's LLM seats);
                           :func:`resolve_servers` (what each seat's server is, once per run)
Answer parsing             :func:`extract_answer`, :func:`extract_json`, :func:`require_fields`,
                           :class:`AnswerParseError`
Errors                     :class:`ProviderError` (after retries), :class:`BudgetExceeded`
=========================  ====================================================================

An LLM agent builds its model once and logs every call into its episode record. The agents
in ``socialsim.agents.llm`` do so through ``LLMAgent.ask`` (the answer loop: parse, re-prompt,
fallback); an agent of one's own does the same in a few lines::

    from socialsim.llm import AnswerParseError, ProviderError, build_model, extract_answer

    class MyAgent(Agent):
        def __init__(self, model: dict):
            self.model = build_model(model)   # equal configs share one model (budget, limit)

        async def aact(self, observation, messages, info):
            chat = [{"role": "system", "content": ...}, {"role": "user", "content": ...}]
            for attempt in range(3):
                try:
                    # a repeated request must differ, or it is a cache hit; 31 bits suit every server
                    reply = await self.model.complete(chat, seed=(self.seed + attempt) % 2**31)
                except ProviderError as error:  # it outlived its retries: the episode fails
                    self.events.append(error.event())
                    raise
                self.events.append({**reply.event(), "purpose": "act", "try": attempt})
                try:
                    if reply.invalid:  # over max_reply_chars: its text is only the opening
                        raise AnswerParseError(reply.invalid)
                    return decide(extract_answer(reply.text))   # the JSON after "ANSWER:"
                except AnswerParseError as error:
                    self.count("invalid_answers")
                    chat += [{"role": "assistant", "content": reply.text},
                             {"role": "user", "content": f"Invalid answer: {error}. ..."}]
            return fallback  # logged and counted

Messages are OpenAI chat messages (``{"role": ..., "content": ...}``). A call's ``overrides``
set ``temperature``, ``max_tokens``, ``seed``, ``timeout``, ``schema`` (structured output, see
:mod:`socialsim.llm.structured`) or any provider parameter for that call only; all but
``timeout`` are part of the cache key.

Arguments (of :func:`build_model`'s table; see :mod:`socialsim.llm.build`): ``model``,
``api_base``, ``transport``, ``api_key_env``, ``temperature``, ``max_tokens``, ``seed``,
``timeout``, ``max_retries``, ``backoff``, ``concurrency``, ``cache``, ``budget``, ``params``,
``structured_format``, ``context_window``, ``max_reply_chars``, ``server``.
The transport is not part of the cache key: the same request gives the same reply whichever
transport sends it.

Version History

* v0: first version.
* v0.1: ``transport = "openai_http"`` and :class:`OpenAICompatibleModel`.
* v0.2: ``openai_http`` is the default with an ``api_base``; structured output in five dialects
  (``structured_format``, the ``schema`` override); ``context_window`` and
  :meth:`ChatModel.context_window`; ``context_overflow`` errors; ``finish_reason`` in every
  call event.
* v0.3: ``max_reply_chars`` and :class:`ReplyLimit`; the cache is only a cache (bypassed when
  it fails, rows checksummed, an edited row refused); ``server`` (what the server is, resolved
  once per run and recorded: :func:`resolve_servers`); ``structured_refused`` errors.
"""

from socialsim.llm.build import (
    CONFIG_KEYS,
    build_model,
    cache_path,
    default_cache_path,
    forget_models,
    transport_of,
)
from socialsim.llm.cache import (
    Cache,
    CacheUnavailable,
    RefusedCacheRow,
    ReplyStore,
    open_store,
    recorded_server,
)
from socialsim.llm.litellm_model import LiteLLMModel, load_litellm
from socialsim.llm.model import (
    BudgetExceeded,
    ChatMessage,
    ChatModel,
    LLMError,
    Provider,
    ProviderError,
    Reply,
    Settings,
    TransientProviderError,
    Wrapper,
    prompt_hash,
)
from socialsim.llm.openai_http import OpenAICompatibleModel
from socialsim.llm.parsing import (
    AnswerParseError,
    extract_answer,
    extract_json,
    json_objects,
    require_fields,
)
from socialsim.llm.scripted import ScriptedModel
from socialsim.llm.seats import check_seat_models, resolve_servers
from socialsim.llm.server import (
    ServerInfo,
    forget_servers,
    probe_structured_output,
    server_info,
)
from socialsim.llm.structured import FORMATS, gbnf, wire_fields
from socialsim.llm.wrappers import Accounting, CallBudget, ConcurrencyLimit, ReplyLimit, Retry

__all__ = [
    "CONFIG_KEYS",
    "FORMATS",
    "Accounting",
    "AnswerParseError",
    "BudgetExceeded",
    "Cache",
    "CacheUnavailable",
    "CallBudget",
    "ChatMessage",
    "ChatModel",
    "ConcurrencyLimit",
    "LLMError",
    "LiteLLMModel",
    "OpenAICompatibleModel",
    "Provider",
    "ProviderError",
    "RefusedCacheRow",
    "Reply",
    "ReplyLimit",
    "ReplyStore",
    "Retry",
    "ScriptedModel",
    "ServerInfo",
    "Settings",
    "TransientProviderError",
    "Wrapper",
    "build_model",
    "cache_path",
    "check_seat_models",
    "default_cache_path",
    "extract_answer",
    "extract_json",
    "forget_models",
    "forget_servers",
    "gbnf",
    "json_objects",
    "load_litellm",
    "open_store",
    "probe_structured_output",
    "prompt_hash",
    "recorded_server",
    "require_fields",
    "resolve_servers",
    "server_info",
    "transport_of",
    "wire_fields",
]
