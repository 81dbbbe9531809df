"""The test kit, shipped so that users test their own env variants as the project tests its own.

* :func:`check_env` (:mod:`socialsim.testing.contract`) checks an env, by id, shim module or
  factory, against PettingZoo's API and seed tests and the socialsim env contract.
* :func:`run_pettingzoo_suite` (:mod:`socialsim.testing.pettingzoo_suite`): PettingZoo's whole
  test suite (API, seed, render, state, performance benchmark, the conversions), both forms.
* :class:`~socialsim.testing.llm_server.ScriptedChatServer`: a real OpenAI-compatible chat
  server on 127.0.0.1 with scripted replies and injected faults (stdlib only; also
  ``python -m socialsim.testing.llm_server``).
* Scripted "models" that read the LLM agents' prompts and answer legally:
  :mod:`socialsim.testing.gossip_policies` and :mod:`socialsim.testing.decrypto_policies`, both
  behind :mod:`socialsim.testing.playground` (``python -m socialsim.testing.llm_server --play``:
  any bundled LLM experiment offline).
* :mod:`socialsim.testing.cli`: ``socialsim`` run in a subprocess as a user runs it (offline,
  headless), for tests of experiment files and of the command line.

Importing this package loads none of them: each is imported on first use, so that a test of the
LLM layer does not pay for PettingZoo's test suite, nor a contract check for the server.
"""

from __future__ import annotations

from socialsim import lazy

_LAZY = {
    "check_env": "socialsim.testing.contract",
    "CHECKS": "socialsim.testing.contract",
    "ContractViolation": "socialsim.testing.contract",
    "ContractWarning": "socialsim.testing.contract",
    "ScriptedChatServer": "socialsim.testing.llm_server",
    "run_pettingzoo_suite": "socialsim.testing.pettingzoo_suite",
    "run_pettingzoo_test": "socialsim.testing.pettingzoo_suite",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy.attributes(__name__, _LAZY)
