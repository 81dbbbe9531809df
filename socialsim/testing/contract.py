"""The socialsim env contract, checked in one call: ``check_env("donation_v0")``.

:func:`check_env` runs PettingZoo's own tests (``parallel_api_test`` / ``api_test`` and
``parallel_seed_test`` / ``seed_test``) and then plays episodes of seeded random legal actions
(chosen from the action mask) to check what socialsim's runner, agents and analysis rely on.
Each check has a name (:data:`CHECKS`); a broken rule is a hard failure, collected over all the
checks and raised at the end as one :class:`ContractViolation` (an ``AssertionError``) naming
the check, the form, the agent and the value; what is only doubtful is a :class:`ContractWarning`.

The contract, on top of PettingZoo's API (``socialsim.envs``'s docstring states it for authors):

``episode``
    An episode of random legal actions runs to its end without an error.
``decisions``
    Every info holds ``"decision"``, a str or ``None``; while the episode runs at least one live
    agent has a decision (the Parallel form needs actions only from those).
``masks``
    Where observations carry an ``action_mask``, an agent without a decision gets a mask that
    allows only the no-op, its space's first action (index 0; the env ignores it), and an agent
    with a decision gets a mask allowing at least one action (every decision has a mask; one
    vector per sub-action for a ``MultiDiscrete`` space).
``forbidden_action``
    A well-formed action the mask forbids is no error: the env plays the decision's fallback and
    sets ``infos[agent]["invalid_action"] = {"reason": str, "fallback": ...}``; a legal action
    is never flagged.
``malformed_action``
    A value outside the action space (the string ``"garbage"``, an index past the end) raises
    ``ValueError`` and changes nothing: the bus log, the turn, the live agents and the AEC
    selection stay as they were, and the next legal step works.
``bus``
    ``env.unwrapped.bus`` exists after reset; its first message is the public ``rules`` message
    (``kind == "rules"``, ``to == "*"``, turn 1); every audience is ``"*"``, a team of the bus or
    named agents of the bus, and no agent's inbox holds a message whose audience excludes it.
``seeding``
    Two envs reset with the same seed and given the same actions return the same observations,
    rewards, terminations and bus log; so does the first env reset again with that seed.
``frozen_observations``
    An observation, once returned, never changes as the episode goes on.
``render``
    ``render_mode="ansi"`` is accepted (and listed in ``metadata["render_modes"]``) and
    ``render()`` returns a non-empty str after reset and after a step.
``spaces``
    ``observation_space(agent)`` is the same object on every call (``action_space`` too, or a
    warning).
``aec_selection``
    The AEC form selects only agents that have a decision.
``pettingzoo_api``, ``pettingzoo_seed``
    PettingZoo's API test and seed test of the form pass.

The checks know no game: they read only the PettingZoo API, the infos, the masks and the bus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

from socialsim.testing.checks import RUNNERS
from socialsim.testing.findings import (
    CHECKS,
    FORMS,
    OBSERVED,
    Context,
    ContractWarning,
    Findings,
    Violation,
    describe,
)

__all__ = ["CHECKS", "FORMS", "ContractViolation", "ContractWarning", "Violation", "check_env"]


class ContractViolation(AssertionError):
    """Every hard failure of one :func:`check_env` call, in ``violations``."""

    def __init__(self, env_name: str, violations: list[Violation]):
        self.env_name = env_name
        self.violations = violations
        lines = "\n".join(f"  {v}" for v in violations)
        super().__init__(
            f"{env_name}: {len(violations)} check(s) of the socialsim env contract failed\n{lines}"
        )

    @property
    def failed(self) -> set[tuple[str, str]]:
        """``{(form, check), ...}`` of the failures."""
        return {(v.form, v.check) for v in self.violations}


def check_env(
    env: str | ModuleType | Callable[..., Any],
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    form: str | None = None,
    checks: Iterable[str] | None = None,
    seed: int = 0,
    max_steps: int = 1000,
    num_cycles: int = 100,
) -> None:
    """Check an env against PettingZoo's tests and the socialsim env contract (module docstring).

    Arguments:
        env: an env id of :func:`socialsim.registry.env_ids` (``"donation_v0"``), a shim module
            with ``parallel_env()`` and ``env()`` (both forms are checked), or a factory such as
            ``donation_v0.parallel_env`` or your own class (the form it builds is checked).
        env_kwargs: keyword arguments for every construction (``{"multiplier": 1.5}``).
        form: ``"parallel"`` or ``"aec"`` to check one form only; ``None`` checks all given.
        checks: names from :data:`CHECKS` to run; ``None`` runs them all.
        seed: the reset seed, and the seed of the Generator choosing the actions.
        max_steps: the longest episode played; a longer one is cut there, with a warning.
        num_cycles: the ``num_cycles`` of PettingZoo's tests.

    Raises:
        ContractViolation: listing every failed check (form, check, agent, value).
        ValueError: for an unknown form or check name.
    """
    kwargs = dict(env_kwargs or {})
    name, factories = _factories(env, kwargs)
    if form is not None:
        if form not in factories:
            raise ValueError(f"form: {form!r} is not available; allowed: {', '.join(factories)}")
        factories = {form: factories[form]}
    wanted = tuple(CHECKS if checks is None else checks)
    unknown = sorted(set(wanted) - set(CHECKS))
    if unknown:
        raise ValueError(f"checks: unknown check {unknown[0]!r}; allowed: {', '.join(CHECKS)}")
    violations: list[Violation] = []
    for form_name, factory in factories.items():
        findings = Findings(form_name, name)

        def make(_factory=factory, **extra: Any) -> Any:
            return _factory(**{**kwargs, **extra})

        context = Context(make, form_name, seed, max_steps, num_cycles, findings)
        for check, run in RUNNERS:
            names = OBSERVED if check == "episode" else (check,)
            if not any(n in wanted for n in names):
                continue
            try:
                run(context, wanted)
            except Exception as error:  # noqa: BLE001 - a crash is a failure of the check running
                findings.fail(check, f"raised {describe(error)}")
        violations += findings.violations
    if violations:
        raise ContractViolation(name, violations)


def _factories(env: Any, kwargs: Mapping[str, Any]) -> tuple[str, dict[str, Callable[..., Any]]]:
    if isinstance(env, str):
        from socialsim import registry

        module = registry.env_module(env)
        return env, {"parallel": module.parallel_env, "aec": module.env}
    if callable(getattr(env, "parallel_env", None)) and callable(getattr(env, "env", None)):
        name = getattr(env, "__name__", type(env).__name__).rsplit(".", 1)[-1]
        return name, {"parallel": env.parallel_env, "aec": env.env}
    if callable(env):
        from pettingzoo import AECEnv, ParallelEnv

        probe = env(**kwargs)
        if not isinstance(probe, (AECEnv, ParallelEnv)):
            raise ValueError(f"env: the factory built {probe!r}, not a PettingZoo env")
        name = (getattr(probe, "metadata", None) or {}).get("name") or env.__name__
        probe.close()
        return name, {("aec" if isinstance(probe, AECEnv) else "parallel"): env}
    raise ValueError(f"env: expected an env id, a shim module or a factory, got {env!r}")
