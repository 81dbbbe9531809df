"""PettingZoo's own test suite (``pettingzoo.test``) over an env, in both forms, one call each.

``run_pettingzoo_test("donation_v0", "state")`` runs one test of :data:`TESTS`;
``run_pettingzoo_suite(module)`` runs them all on a shim module of your own (with ``env()`` and
``parallel_env()``). A failure is PettingZoo's own ``AssertionError`` (or the env's error),
raised as it is. The tests, each on the form it takes:

``api`` / ``parallel_api``
    ``api_test(env())`` / ``parallel_api_test(parallel_env())``.
``seed`` / ``parallel_seed``
    ``seed_test(env)`` / ``parallel_seed_test(parallel_env)``.
``render``
    ``render_test`` over the AEC form in every render mode the env lists.
``state``
    ``state_test(env(), parallel_env())``: ``state_space`` and ``state()`` of both forms.
``performance``
    ``performance_benchmark(env())``, which steps the AEC form for five seconds with a random
    legal action from each flat ``action_mask``; here its clock is a counter (each reading 10 ms
    later) and its ``random`` a seeded ``random.Random``, so the run is short and the same every
    time. It prints nothing but the rate; passing means no step raised.
``parallel_to_aec``
    ``api_test(parallel_to_aec(parallel_env()))``: PettingZoo's generic AEC form, which selects
    every live agent, so an agent without a decision steps with its no-op.
``aec_to_parallel``
    ``parallel_api_test`` of the AEC form converted back: ``aec_to_parallel`` where the AEC form
    is ``is_parallelizable`` (every agent decides at every step), otherwise
    ``turn_based_aec_to_parallel`` (one selected agent per step), the conversion PettingZoo
    offers for AEC envs that select only some agents.

``max_cycles_test`` is for envs with a ``max_cycles`` argument; socialsim's envs have none (an
episode's length is the game's), so it does not apply.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import random
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

TESTS = (
    "api",
    "parallel_api",
    "seed",
    "parallel_seed",
    "render",
    "state",
    "performance",
    "parallel_to_aec",
    "aec_to_parallel",
)


class _Clock:
    """A stand-in for the ``time`` module: each ``time()`` is 10 ms after the last."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        self.now += 0.01
        return self.now


def _performance(module: ModuleType, num_cycles: int) -> None:
    # the module, not the function of the same name that pettingzoo.test exports
    benchmark = importlib.import_module("pettingzoo.test.performance_benchmark")
    saved = benchmark.time, benchmark.random
    benchmark.time, benchmark.random = _Clock(), random.Random(0)
    try:
        benchmark.performance_benchmark(module.env())
    finally:
        benchmark.time, benchmark.random = saved


def _render(module: ModuleType, num_cycles: int) -> None:
    from pettingzoo.test import render_test

    def make(render_mode: str | None = None) -> Any:
        return module.env(render_mode=render_mode)

    render_test(make)


def _state(module: ModuleType, num_cycles: int) -> None:
    from pettingzoo.test import state_test

    env = module.env()
    env.reset(seed=0)
    for agent in env.possible_agents:  # the test samples actions: from seeded spaces
        env.action_space(agent).seed(0)
    state_test(env, module.parallel_env(), num_cycles=num_cycles)


def _aec_to_parallel(module: ModuleType, num_cycles: int) -> None:
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

    env = module.env()
    convert = (
        aec_to_parallel if env.metadata.get("is_parallelizable") else turn_based_aec_to_parallel
    )
    parallel_api_test(convert(env), num_cycles=num_cycles)


def _runners() -> dict[str, Callable[[ModuleType, int], None]]:
    from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
    from pettingzoo.utils.conversions import parallel_to_aec

    return {
        "api": lambda m, n: api_test(m.env(), num_cycles=n),
        "parallel_api": lambda m, n: parallel_api_test(m.parallel_env(), num_cycles=n),
        "seed": lambda m, n: seed_test(m.env, num_cycles=n),
        "parallel_seed": lambda m, n: parallel_seed_test(m.parallel_env, num_cycles=n),
        "render": _render,
        "state": _state,
        "performance": _performance,
        "parallel_to_aec": lambda m, n: api_test(parallel_to_aec(m.parallel_env()), num_cycles=n),
        "aec_to_parallel": _aec_to_parallel,
    }


def run_pettingzoo_test(env: str | ModuleType, test: str, num_cycles: int = 50) -> None:
    """Run PettingZoo's ``test`` (a name of :data:`TESTS`) on ``env``, an env id or a shim
    module; its output is swallowed, its failure raised."""
    if test not in TESTS:
        raise ValueError(f"test: unknown test {test!r}; allowed: {', '.join(TESTS)}")
    if isinstance(env, str):
        from socialsim import registry

        env = registry.env_module(env)
    with contextlib.redirect_stdout(io.StringIO()):
        _runners()[test](env, num_cycles)


def run_pettingzoo_suite(
    env: str | ModuleType, tests: Iterable[str] = TESTS, num_cycles: int = 50
) -> None:
    """Run every test of ``tests`` on ``env`` (see :func:`run_pettingzoo_test`)."""
    for test in tests:
        run_pettingzoo_test(env, test, num_cycles)
