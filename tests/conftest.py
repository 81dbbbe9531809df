"""Shared fixtures. litellm must read its bundled price table, never fetch one: the variable is
set here, before any test module can import litellm."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from socialsim.testing.llm_server import ScriptedChatServer

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"


@pytest.fixture
def llm_server() -> Iterator[ScriptedChatServer]:
    """A fresh OpenAI-compatible server on 127.0.0.1 (ephemeral port), echoing by default.

    Configure it in the test: ``llm_server.policy = ...``, ``llm_server.set_schedule([...])``,
    ``llm_server.latency_s = ...``, ``llm_server.fault_rates = {...}``.
    """
    server = ScriptedChatServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fresh_models() -> Iterator[None]:
    """Forget the models build_model memoised, before and after the test."""
    from socialsim.llm import forget_models

    forget_models()
    yield
    forget_models()
